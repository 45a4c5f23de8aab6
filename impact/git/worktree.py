"""The working tree and index as an in-memory tree, for `--worktree`.

Maintainers: reads the index and the files of the working tree; hashes changed
files into the repository object's scratch store (memory), never into the
repository, and never updates the index.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator

from dulwich.ignore import IgnoreFilterManager
from dulwich.index import (
    ConflictedIndexEntry,
    Index,
    blob_from_path_and_stat,
    cleanup_mode,
    commit_tree,
    get_unstaged_changes,
)

from impact.errors import BadUsage
from impact.git.repository import Repository
from impact.git.snapshot import REGULAR, Entry

SPECIAL_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                 (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
"""Files of a work tree that are not files: never opened (opening a FIFO blocks until a
writer comes), skipped with a note in the report's coverage."""


def special_kind(mode: int) -> str | None:
    """What a non-regular, non-symlink, non-folder file is ('a FIFO'), or None."""
    for test, kind in SPECIAL_KINDS:
        if test(mode):
            return kind
    return None


def unreadable_sha(path: str) -> str:
    """The stand-in blob id of a work-tree file that could not be read: named by its path,
    so it differs from every real blob and the file reads as changed, and reading it gives
    the reason (`Repository.unreadable_work`), so the `unreadable` check names the file."""
    return hashlib.sha1(b"impact: unreadable work-tree file\0" + path.encode()).hexdigest()


def _working_entry(repository: Repository, root: str, path: str) -> Entry | None:
    """The working file at `path` hashed into the scratch store; None when it is gone or is
    not a file (a FIFO, socket or device: recorded in `repository.skipped_work`, never
    opened). A file that cannot be read gets a stand-in entry whose read names why."""
    full = os.path.join(root, path)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None
    except OSError as exc:  # a folder on the way that cannot be searched
        return _unreadable(repository, path, exc)
    if stat.S_ISDIR(st.st_mode):
        # A directory where the index had a file: the file is gone from the work.
        return None
    kind = special_kind(st.st_mode)
    if kind is not None:
        repository.skipped_work[path] = kind
        return None
    try:
        blob = blob_from_path_and_stat(os.fsencode(full), st)
    except FileNotFoundError:  # gone between the listing and the read
        return None
    except OSError as exc:  # permission denied, an I/O error
        return _unreadable(repository, path, exc)
    repository.scratch.add_object(blob)
    return Entry(blob.id.decode(), cleanup_mode(st.st_mode))


def _unreadable(repository: Repository, path: str, exc: OSError) -> Entry:
    sha = unreadable_sha(path)
    repository.unreadable_work[sha] = (f"work-tree file {path} could not be read "
                                       f"({exc.strerror or type(exc).__name__})")
    return Entry(sha, REGULAR)


def _tracked_now_special(root: str, entries: dict[str, Entry], seen: set[str]) -> set[str]:
    """Tracked files that are now a FIFO, socket or device. dulwich's unstaged scan passes
    over any file that is neither regular nor a link, so without this look such a file
    would read as unchanged (fail open); `_working_entry` then records it, unopened."""
    found = set()
    for path, entry in entries.items():
        if path in seen or entry.is_submodule:
            continue
        try:
            mode = os.lstat(os.path.join(root, path)).st_mode
        except OSError:
            continue  # gone or unreachable: dulwich's scan has already judged it
        if special_kind(mode) is not None:
            found.add(path)
    return found


def worktree_entries(repository: Repository) -> dict[str, Entry]:
    """Path -> entry for HEAD's successor: staged, unstaged, deleted and untracked work.

    Untracked files count unless git would ignore them.
    """
    repo = repository.repo
    if repo.bare:
        raise BadUsage(
            f"'{repository.path}' is a bare repository with no working tree",
            "run --worktree inside a checkout, or compare commits with --base/--head",
        )
    root = repo.path
    index = repo.open_index() if os.path.exists(repo.index_path()) else Index(
        repo.index_path(), read=False
    )
    entries: dict[str, Entry] = {}
    conflicted: list[str] = []
    for raw_path, value in index.items():
        path = raw_path.decode()
        if isinstance(value, ConflictedIndexEntry):
            conflicted.append(path)
            continue
        entries[path] = Entry(value.sha.decode(), cleanup_mode(value.mode))
    submodules = {p for p, e in entries.items() if e.is_submodule}

    try:
        unstaged = {p.decode() for p in get_unstaged_changes(index, root)}
    except OSError:
        # A tracked file dulwich could not read (permission denied, gone mid-read): look at
        # every tracked file one at a time, each failure named by `_working_entry`.
        unstaged = set(entries)
    changed = unstaged | set(conflicted) | _tracked_now_special(root, entries, unstaged)
    for path in sorted(changed - submodules):
        working = _working_entry(repository, root, path)
        if working is None:
            entries.pop(path, None)
        else:
            entries[path] = working

    for rel in untracked_paths(repository, index):
        if rel in entries:
            continue
        working = _working_entry(repository, root, rel)
        if working is not None:
            entries[rel] = working
    for path in sorted(set(repository.skipped_work) & set(entries)):
        # A tracked file now a FIFO or socket: its content is unknown, so it reads as
        # changed and unreadable rather than as deleted.
        entries[path] = _unreadable(repository, path, OSError(0, repository.skipped_work[path]))
    return entries


def untracked_paths(repository: Repository, index: Index) -> Iterator[str]:
    """Files of the working tree the index lacks and git does not ignore, as tree paths.

    The rules of dulwich's `get_untracked_paths` (a folder an ignore pattern excludes by
    name is not entered; an untracked file is kept unless it is ignored), with paths
    built by joining names rather than by `relpath` per file and ignore rules asked only
    of untracked folders and files (100,000 files: 3 s -> 0.5 s), and without entering
    a nested repository or a submodule's checkout, whose files are not this
    repository's (git lists such a folder as one entry; dulwich skipped its top files
    but walked its subfolders).
    """
    repo = repository.repo
    root = repo.path
    ignores = IgnoreFilterManager.from_repo(repo, config=repo.get_config_stack())
    tracked = _folders(os.fsdecode(path) for path in index.paths())
    def unlisted(exc: OSError) -> None:
        rel = os.path.relpath(exc.filename or root, root).replace(os.sep, "/")
        repository.skipped_work[f"{rel}/"] = (
            f"a folder that could not be listed ({exc.strerror or type(exc).__name__})")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlisted):
        folder = os.path.relpath(dirpath, root).replace(os.sep, "/")
        base = "" if folder == "." else f"{folder}/"
        if ".git" in dirnames:
            dirnames.remove(".git")
            if base:
                dirnames.clear()
                continue
        if ".git" in filenames and base:
            dirnames.clear()
            continue
        # A folder holding tracked files is entered without asking: an untracked file in
        # it is asked `is_ignored`, which counts an excluded parent as git does.
        dirnames[:] = [name for name in dirnames if f"{base}{name}" in tracked
                       or not ignores.may_prune_directory(f"{base}{name}/")]
        for name in filenames:
            rel = base + name
            if name != ".git" and os.fsencode(rel) not in index and not ignores.is_ignored(rel):
                yield rel


def _folders(paths: Iterable[str]) -> set[str]:
    """Every folder that holds one of `paths`, at any depth."""
    found: set[str] = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in found:
            found.add(folder)
            folder = folder.rpartition("/")[0]
    return found


def write_tree(repository: Repository, entries: dict[str, Entry]) -> str:
    """Store `entries` as tree objects in the scratch store; the root tree id."""
    blobs = [(p.encode(), e.sha.encode(), e.mode) for p, e in sorted(entries.items())]
    return commit_tree(repository.scratch, blobs).decode()
