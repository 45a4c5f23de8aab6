"""A Snapshot: one tree as path -> blob id, with content read lazily.

Maintainers: a Snapshot never touches the repository itself; it asks the
reader it was built with, so unit tests can hand one an in-memory tree.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob

REGULAR = 0o100644
EXECUTABLE = 0o100755
SYMLINK = 0o120000
GITLINK = 0o160000

BlobReader = Callable[[str], bytes]


@dataclass(frozen=True, order=True)
class Entry:
    """One path's blob id and git file mode."""

    sha: str
    mode: int = REGULAR

    @property
    def is_submodule(self) -> bool:
        return stat.S_IFMT(self.mode) == GITLINK


class Snapshot(Mapping[str, Entry]):
    """An immutable tree: repository-relative paths ('a/b.py') mapped to entries."""

    def __init__(
        self,
        entries: Mapping[str, Entry],
        reader: BlobReader,
        *,
        label: str,
        tree_id: str | None = None,
        conflicted: frozenset[str] = frozenset(),
    ) -> None:
        self._entries = dict(entries)
        self._reader = reader
        self.label = label
        self.tree_id = tree_id
        self.conflicted = conflicted

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
        return Snapshot(self._entries, self._reader, label=label,
                        tree_id=self.tree_id if self.tree_id is not None
                        else tree_id_of(self._entries),
                        conflicted=self.conflicted if conflicted is None else conflicted)

    def __getitem__(self, path: str) -> Entry:
        return self._entries[path]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, path: str) -> bytes:
        """The content of `path`; blobs are cached by id by the reader."""
        entry = self._entries[path]
        if entry.is_submodule:
            raise ValueError(f"{path} is a submodule; its content is not in this repository")
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
    """
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
