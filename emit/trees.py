"""The folders a revision's child needs, as git tree ids and as files written out.

Maintainers: reads git objects only (a Snapshot), never the work tree; writes only into the
folder it is given (the revision's own, under the run's temporary folder). Which folders
comes from the surface map (its Python and descriptor roots), never spelled here.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore

from impact.git import Snapshot, Views
from impact.kinds import ViewName
from impact.safefile import unsafe_tree_path
from impact.surface import SurfaceMap

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def roots_of(surface: SurfaceMap) -> tuple[str, ...]:
    """The folders the child needs: the Python roots and the descriptor roots."""
    return tuple(sorted(set(surface.python_roots) | set(surface.descriptor_roots)))


def tree_ids(snapshot: Snapshot, roots: tuple[str, ...]) -> dict[str, str]:
    """The git tree id of each root folder in `snapshot` (the empty tree when absent): a
    committed tree's own id for the folder (one folder read per path level), else the id
    its files would have, computed from the files under that folder only."""
    ids = {}
    for root in roots:
        folder = root.strip("/")
        found = snapshot.folder(folder) if snapshot.lazy else None
        if found is not None and found.tree_id is not None:
            ids[root] = found.tree_id
            continue
        prefix = folder + "/"
        entries = [(p[len(prefix):].encode(), entry.sha.encode(), entry.mode)
                   for p, entry in snapshot.walk(folder)]
        ids[root] = commit_tree(MemoryObjectStore(), entries).decode() if entries else EMPTY_TREE
    return ids


def expected_trees(views: Views, surface: SurfaceMap) -> dict[str, dict[str, str]]:
    """The tree ids an emit file for `views` must record (what `report --emit` checks)."""
    roots = roots_of(surface)
    return {ViewName.BASE: tree_ids(views.base, roots),
            ViewName.HEAD: tree_ids(views.head, roots)}


def materialise(snapshot: Snapshot, roots: tuple[str, ...], into: Path) -> list[str]:
    """Write every file under `roots` from git objects into `into` (symlinks as files);
    the paths refused, each with why: a path no checkout writes (`..`, a `/` in a name,
    `.git`: impact/safefile.py `unsafe_tree_path`), or one whose folder is not a folder
    of its own under `into`. Nothing is ever written outside `into`."""
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    refused = []
    for path in snapshot:
        if not path.startswith(prefixes) or snapshot[path].is_submodule:
            continue
        why = unsafe_tree_path(path) or (
            None if snapshot.names_its_parts(path) else "a '/' inside an entry's name")
        if why is None:
            try:
                write_new_file(into, path, snapshot.read(path))
                continue
            except OSError as exc:
                why = exc.strerror or str(exc)
        refused.append(f"{path} ({why})")
    return refused


def write_new_file(root: Path, path: str, data: bytes, mode: int = 0o644) -> None:
    """Write `data` at `root`/`path` (a path `unsafe_tree_path` accepts), making its
    folders as real folders, never through a symlink, never over an existing file."""
    folder, name = _open_parent(root, path)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode, dir_fd=folder)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    finally:
        os.close(folder)


def write_new_link(root: Path, path: str, target: str) -> None:
    """A new symlink at `root`/`path` holding `target`, its folders made as in
    `write_new_file` (the link itself is never followed by the writer)."""
    folder, name = _open_parent(root, path)
    try:
        os.symlink(target, name, dir_fd=folder)
    finally:
        os.close(folder)


_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_parent(root: Path, path: str) -> tuple[int, str]:
    """A descriptor of `path`'s folder under `root` (made where missing, each part opened
    without following a link) and the file's name."""
    *parts, name = path.split("/")
    folder = os.open(root, _FOLDER)
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=folder)
            inner = os.open(part, _FOLDER, dir_fd=folder)
            os.close(folder)
            folder = inner
    except BaseException:
        os.close(folder)
        raise
    return folder, name
