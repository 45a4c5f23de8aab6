"""Which files a report reads: one index per tree, built once, shared by every stage.

Maintainers: the only place that walks a snapshot's paths to decide what is on
which surface. Checks, the graph and the report ask it for the paths of a
kind or language; nobody else iterates a whole snapshot. The one raw-text read
here (`files_naming`) picks candidate files by the names they mention, before
anything is parsed; an unreadable file is always a candidate (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from impact.git import Snapshot
from impact.kinds import Language, SurfaceKind
from impact.surface import SurfaceMap

_MEMO: dict[tuple[str, str], TreeIndex] = {}
_MEMO_LIMIT = 64


class TreeIndex:
    """One snapshot's surface paths, sorted by kind and by language."""

    def __init__(self, snapshot: Snapshot, surface: SurfaceMap) -> None:
        self.snapshot = snapshot
        self.surface = surface
        self._by_kind: dict[SurfaceKind | str, list[str]] = {}
        self._kind_of: dict[str, SurfaceKind | str] = {}
        for path in snapshot:
            entry = surface.classify(path)
            if entry is None:
                continue
            self._kind_of[path] = entry.kind
            self._by_kind.setdefault(entry.kind, []).append(path)

    @classmethod
    def of(cls, snapshot: Snapshot, surface: SurfaceMap) -> TreeIndex:
        """The index of `snapshot`, memoised by tree id (views share trees)."""
        if snapshot.tree_id is None:
            return cls(snapshot, surface)
        key = (surface.sha256, snapshot.tree_id)
        if key not in _MEMO:
            if len(_MEMO) >= _MEMO_LIMIT:
                _MEMO.clear()
            _MEMO[key] = cls(snapshot, surface)
        return _MEMO[key]

    def kind(self, path: str) -> SurfaceKind | str:
        """The surface kind of `path` (OUTSIDE when no entry matches or it is absent)."""
        return self._kind_of.get(path, SurfaceKind.OUTSIDE)

    def paths(self, *kinds: SurfaceKind | str) -> list[str]:
        """Every path of the given kinds, sorted."""
        if len(kinds) == 1:
            return list(self._by_kind.get(kinds[0], ()))
        return sorted(p for k in kinds for p in self._by_kind.get(k, ()))

    @cached_property
    def _by_language(self) -> dict[Language, list[str]]:
        languages = {e.kind: e.language for e in self.surface.entries}
        out: dict[Language, list[str]] = {}
        for kind, paths in self._by_kind.items():
            out.setdefault(languages[kind], []).extend(paths)
        return {lang: sorted(paths) for lang, paths in out.items()}

    def language_paths(self, language: Language) -> list[str]:
        """Every surface path (of any kind) read by the `language` extractors, sorted."""
        return list(self._by_language.get(language, ()))

    def surface_paths(self) -> list[str]:
        """Every path on some surface, sorted."""
        return sorted(self._kind_of)

    def files_naming(self, names: Iterable[str], kinds: Iterable[SurfaceKind | str]) -> set[str]:
        """The files of `kinds` whose text mentions any of `names` (as bytes); a file that
        cannot be read is included, so the caller parses it and reports it unreadable."""
        needles = [n.encode() for n in set(names) if n]
        found: set[str] = set()
        if not needles:
            return found
        for path in self.paths(*kinds):
            try:
                text = self.snapshot.read(path)
            except Exception:  # a missing blob, a gitlink: let the parser say so
                found.add(path)
                continue
            if any(needle in text for needle in needles):
                found.add(path)
        return found
