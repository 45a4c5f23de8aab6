"""A Snapshot: one tree as path -> blob id, with content read lazily.

Maintainers: a Snapshot never touches the repository itself; it asks the
reader it was built with, so unit tests can hand one an in-memory tree. A
snapshot of a git tree reads its folders on demand (`impact.git.trees`): a path
lookup reads the folders on that path, `walk(prefix)` the folders under one,
and only iterating the whole snapshot reads every folder (once, memoised).
"""

from __future__ import annotations

import bisect
import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dulwich.diff_tree import tree_changes
from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob

if TYPE_CHECKING:
    from impact.git.trees import Trees

REGULAR = 0o100644
EXECUTABLE = 0o100755
SYMLINK = 0o120000
GITLINK = 0o160000

BlobReader = Callable[[str], bytes]


@dataclass(frozen=True, order=True, slots=True)
class Entry:
    """One path's blob id and git file mode."""

    sha: str
    mode: int = REGULAR

    @property
    def is_submodule(self) -> bool:
        return stat.S_IFMT(self.mode) == GITLINK


@dataclass(frozen=True)
class Folder:
    """One folder of a snapshot: its tree id (None for a tree held in memory), the names
    of its files, and its subfolders' names with their tree ids (None in memory)."""

    tree_id: str | None
    files: tuple[str, ...]
    folders: Mapping[str, str | None]


class Snapshot(Mapping[str, Entry]):
    """An immutable tree: repository-relative paths ('a/b.py') mapped to entries.

    Built from a mapping (in memory: `from_files`, the working tree) or from a git
    tree (`from_tree`: folders read on demand). Lookups, `walk` and `paths_under`
    read only the folders they need; `__iter__`, `__len__` and `items()` read them
    all, once.
    """

    def __init__(
        self,
        entries: Mapping[str, Entry],
        reader: BlobReader,
        *,
        label: str,
        tree_id: str | None = None,
        conflicted: frozenset[str] = frozenset(),
    ) -> None:
        self._entries: dict[str, Entry] | None = dict(entries)
        self._sorted: list[str] | None = None
        self._folders: dict[str, Folder] | None = None
        self._trees: Trees | None = None
        self._reader = reader
        self.label = label
        self.tree_id = tree_id
        self.conflicted = conflicted

    @classmethod
    def from_tree(cls, trees: Trees, tree_id: str, reader: BlobReader, *, label: str,
                  conflicted: frozenset[str] = frozenset()) -> Snapshot:
        """A snapshot of git tree `tree_id`, its folders read from `trees` when asked."""
        snap = cls({}, reader, label=label, tree_id=tree_id, conflicted=conflicted)
        snap._entries = None
        snap._trees = trees
        return snap

    @classmethod
    def from_files(cls, files: Mapping[str, bytes | str], *, label: str = "memory") -> Snapshot:
        """A snapshot of in-memory files, for tests and for trees not in git."""
        blobs: dict[str, bytes] = {}
        entries: dict[str, Entry] = {}
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            sha = Blob.from_string(data).id.decode()
            blobs[sha] = data
            entries[path] = Entry(sha)
        return cls(entries, blobs.__getitem__, label=label, tree_id=tree_id_of(entries))

    def relabelled(self, label: str, *, conflicted: frozenset[str] | None = None) -> Snapshot:
        """The same tree and reader under another label (the role a view gives it)."""
        conflicted = self.conflicted if conflicted is None else conflicted
        if self._trees is not None and self.tree_id is not None:
            snap = Snapshot.from_tree(self._trees, self.tree_id, self._reader, label=label,
                                      conflicted=conflicted)
            snap._entries, snap._sorted = self._entries, self._sorted
            return snap
        entries = self._all()
        return Snapshot(entries, self._reader, label=label,
                        tree_id=self.tree_id if self.tree_id is not None
                        else tree_id_of(entries),
                        conflicted=conflicted)

    @property
    def lazy(self) -> bool:
        """Whether this snapshot reads a git tree folder by folder."""
        return self._trees is not None

    def _all(self) -> dict[str, Entry]:
        """Every path, read once (a git tree's every folder)."""
        if self._entries is None:
            assert self._trees is not None and self.tree_id is not None
            self._entries = dict(self._trees.walk(self.tree_id))
            self._sorted = list(self._entries)  # a tree walk yields sorted paths
        return self._entries

    def _paths(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self._all())
        return self._sorted

    def __getitem__(self, path: str) -> Entry:
        if self._entries is not None:
            return self._entries[path]
        assert self._trees is not None and self.tree_id is not None
        entry = self._trees.lookup(self.tree_id, path)
        if entry is None:
            raise KeyError(path)
        return entry

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, str):
            return False
        try:
            self[path]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths())

    def __len__(self) -> int:
        return len(self._all())

    def walk(self, prefix: str = "") -> Iterator[tuple[str, Entry]]:
        """(path, entry) for every file under folder `prefix` ('' for all), sorted by
        path; a git tree reads only the folders under `prefix`."""
        folder = prefix.strip("/")
        if self._entries is None:
            assert self._trees is not None and self.tree_id is not None
            tree_id = self._trees.folder(self.tree_id, folder)
            if tree_id is not None:
                yield from self._trees.walk(tree_id, f"{folder}/" if folder else "")
            return
        paths = self._paths()
        if not folder:
            yield from ((p, self._entries[p]) for p in paths)
            return
        start = f"{folder}/"
        for i in range(bisect.bisect_left(paths, start), len(paths)):
            path = paths[i]
            if not path.startswith(start):
                break
            yield path, self._entries[path]

    def names_its_parts(self, path: str) -> bool:
        """Whether every '/' of `path` separates two entries of the tree: False for a
        path an entry's own name made (dulwich stores `a/b` as one name; no checkout
        writes it), which a writer must refuse rather than write as folders."""
        if self._trees is None or self.tree_id is None:
            return path in self  # a tree held in memory is made of paths, not names
        parent, _, name = path.rpartition("/")
        tree_id = self._trees.folder(self.tree_id, parent)
        return tree_id is not None and name in self._trees.node(tree_id).files

    def folder(self, path: str, tree_id: str | None = None) -> Folder | None:
        """The folder at `path` ('' for the root), reading that folder only; None when the
        snapshot has no such folder. `tree_id`, the id a parent Folder gave for it, saves
        the walk from the root. A caller walks a tree folder by folder with it, and may
        memoise what it learns of a folder by the folder's path and tree id."""
        path = path.strip("/")
        if self._entries is None:
            assert self._trees is not None and self.tree_id is not None
            if tree_id is None:
                tree_id = self._trees.folder(self.tree_id, path)
                if tree_id is None:
                    return None
            node = self._trees.node(tree_id)
            return Folder(tree_id, tuple(node.files), node.folders)
        return self._memory_folders().get(path)

    def _memory_folders(self) -> dict[str, Folder]:
        """Every folder of a tree held in memory, built once from its paths."""
        if self._folders is None:
            files: dict[str, list[str]] = {"": []}
            folders: dict[str, list[str]] = {"": []}
            for path in self._paths():
                parent, _, name = path.rpartition("/")
                if parent not in files:
                    parts = parent.split("/")
                    for depth in range(len(parts)):
                        here = "/".join(parts[:depth + 1])
                        if here not in files:
                            files[here], folders[here] = [], []
                            folders["/".join(parts[:depth])].append(parts[depth])
                files[parent].append(name)
            self._folders = {path: Folder(None, tuple(sorted(names)),
                                          dict.fromkeys(sorted(folders[path])))
                             for path, names in files.items()}
        return self._folders

    def paths_under(self, prefix: str) -> Iterator[str]:
        """Every file path under folder `prefix` ('' for all), sorted."""
        return (path for path, _ in self.walk(prefix))

    def read(self, path: str) -> bytes:
        """The content of `path`; blobs are cached by id by the reader."""
        entry = self[path]
        if entry.is_submodule:
            raise ValueError(f"{path} is a submodule pointer where a file should be "
                             "(its content is not in this repository)")
        return self._reader(entry.sha)


def tree_id_of(entries: Mapping[str, Entry]) -> str:
    """The git tree id these entries would have, computed without any repository, so a
    tree held in memory is named (and its per-tree indexes memoised) like a committed one."""
    items = [(path.encode(), entry.sha.encode(), entry.mode)
             for path, entry in sorted(entries.items())]
    return commit_tree(MemoryObjectStore(), items).decode()


@dataclass(frozen=True)
class SnapshotDiff:
    """What changed between two snapshots, each list sorted."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    renamed: tuple[tuple[str, str], ...] = field(default=())

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the diff touches, old and new names of renames included."""
        names = set(self.added) | set(self.removed) | set(self.modified)
        for old, new in self.renamed:
            names.update((old, new))
        return tuple(sorted(names))

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified or self.renamed)


def diff_snapshots(old: Mapping[str, Entry], new: Mapping[str, Entry]) -> SnapshotDiff:
    """Added, removed, modified and renamed paths from `old` to `new`.

    A rename is a removed path and an added path with equal content and mode;
    when several paths share that content they are paired in sorted order.
    Two git trees of one store are compared by tree id, folder by folder
    (`dulwich.diff_tree.tree_changes` skips folders with equal ids); the result
    is the one comparing every path would give.
    """
    if (isinstance(old, Snapshot) and isinstance(new, Snapshot) and old.lazy
            and old._trees is new._trees):
        return _pair(*_changed_entries(old, new))
    return _pair(old, new)


def _changed_entries(old: Snapshot, new: Snapshot) -> tuple[dict[str, Entry],
                                                             dict[str, Entry]]:
    """The entries of the paths that differ, on each side; every other path is equal."""
    assert old._trees is not None and old.tree_id is not None and new.tree_id is not None
    before: dict[str, Entry] = {}
    after: dict[str, Entry] = {}
    for change in tree_changes(old._trees, old.tree_id.encode(),  # type: ignore[arg-type]
                               new.tree_id.encode(), change_type_same=True):
        if change.old is not None and change.old.path is not None:
            before[change.old.path.decode()] = Entry(change.old.sha.decode(), change.old.mode)
        if change.new is not None and change.new.path is not None:
            after[change.new.path.decode()] = Entry(change.new.sha.decode(), change.new.mode)
    return before, after


def _pair(old: Mapping[str, Entry], new: Mapping[str, Entry]) -> SnapshotDiff:
    """The diff of two maps; paths missing from both are taken as equal."""
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    modified = sorted(p for p in set(old) & set(new) if old[p] != new[p])

    added_by_entry: dict[Entry, list[str]] = {}
    for path in added:
        added_by_entry.setdefault(new[path], []).append(path)
    renamed: list[tuple[str, str]] = []
    for path in removed:
        candidates = added_by_entry.get(old[path])
        if candidates:
            renamed.append((path, candidates.pop(0)))
    renamed_old = {o for o, _ in renamed}
    renamed_new = {n for _, n in renamed}
    return SnapshotDiff(
        added=tuple(p for p in added if p not in renamed_new),
        removed=tuple(p for p in removed if p not in renamed_old),
        modified=tuple(modified),
        renamed=tuple(sorted(renamed)),
    )
