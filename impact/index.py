"""Which files a report reads: one index per tree, built once, shared by every stage.

Maintainers: the only place that walks a snapshot's paths to decide what is on
which surface. Checks, the graph and the report ask it for the paths of a
kind or language; nobody else iterates a whole snapshot. The one raw-text read
here (`files_naming`) picks candidate files by the names they mention, before
anything is parsed; an unreadable file is always a candidate (fail closed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from impact.git import Folder, Snapshot
from impact.kinds import Language, SurfaceKind
from impact.surface import SurfaceMap, literal_ends, literal_folder

_MEMO: dict[tuple[str, str], TreeIndex] = {}
_MEMO_LIMIT = 64
_FOLDERS: dict[tuple[str, str, str], tuple[tuple[str, SurfaceKind | str], ...]] = {}
_FOLDERS_LIMIT = 200_000
"""Surface paths per (map sha, folder tree id, folder path): base, head and merged trees
share most folders, so a tree after the first is classified along its changed folders."""


@dataclass(frozen=True)
class _Guard:
    """One surface pattern of an entry's kind, with what a path must start and end with
    before its regex runs, and whether it matches below the folder it is looked for in
    (`deep`) or only the files directly in it."""

    kind: SurfaceKind | str
    prefix: str
    suffix: str
    regex: re.Pattern[bytes]
    deep: bool

    def matches(self, path: str) -> bool:
        return (path.startswith(self.prefix) and path.endswith(self.suffix)
                and self.regex.fullmatch(path.encode()) is not None)


class _Plan:
    """Which patterns can match in which folder, for one map.

    A match of a pattern starts with its literal start, so it lies under that start's
    folder; `*`, `?` and `[...]` never match '/', so a pattern whose rest holds neither
    '/' nor '**' matches only files directly in that folder. Only patterns whose literal
    start holds no '/' (`**/x`, `*.py`) are looked for from the root.
    """

    def __init__(self, surface: SurfaceMap) -> None:
        self.at: dict[str, list[_Guard]] = {}
        self.rank: dict[_Guard, int] = {}
        for entry in surface.entries:
            for pattern, regex in zip(entry.patterns, entry.regexes, strict=True):
                folder = literal_folder(pattern)
                rest = pattern[len(folder) + 1:] if folder else pattern
                prefix, suffix = literal_ends(pattern)
                guard = _Guard(entry.kind, prefix, suffix, regex, "/" in rest or "**" in rest)
                self.rank.setdefault(guard, len(self.rank))
                self.at.setdefault(folder, []).append(guard)
        # Every folder on the way to a pattern's folder: the walk enters only these
        # unless a pattern above already reaches deeper.
        self.toward = {"/".join(parts[:i]) for folder in self.at if folder
                       for parts in [folder.split("/")] for i in range(1, len(parts) + 1)}


_PLANS: dict[str, _Plan] = {}


def _plan(surface: SurfaceMap) -> _Plan:
    if surface.sha256 not in _PLANS:
        _PLANS[surface.sha256] = _Plan(surface)
    return _PLANS[surface.sha256]


def _classified(snapshot: Snapshot, surface: SurfaceMap) -> list[tuple[str, SurfaceKind | str]]:
    """(path, kind) for every surface path of `snapshot`, each path classified once,
    reading only the folders a pattern can reach."""
    root = snapshot.folder("")
    if root is None:
        return []
    return list(_in_folder(snapshot, surface.sha256, _plan(surface), "", root, ()))


def _in_folder(snapshot: Snapshot, sha: str, plan: _Plan, path: str, folder: Folder,
               inherited: tuple[_Guard, ...]) -> tuple[tuple[str, SurfaceKind | str], ...]:
    """The surface paths under `folder` (at `path`), with `inherited` the patterns of the
    folders above that match below them, in map order (the first match decides)."""
    here = plan.at.get(path)
    if here:
        for_files = tuple(sorted((*inherited, *here), key=plan.rank.__getitem__))
        deeper = tuple(g for g in for_files if g.deep)
    else:
        for_files = deeper = inherited
    found: list[tuple[str, SurfaceKind | str]] = []
    base = f"{path}/" if path else ""
    if for_files:
        # One C call rules out the files no pattern's literal end fits (most of them).
        ends = tuple({guard.suffix for guard in for_files})
        for name in folder.files:
            full = base + name
            if not full.endswith(ends):
                continue
            for guard in for_files:
                if guard.matches(full):
                    found.append((full, guard.kind))
                    break
    for name, tree_id in folder.folders.items():
        sub = base + name
        if not deeper and sub not in plan.toward:
            continue
        key = (sha, tree_id, sub) if tree_id is not None else None
        if key is not None and key in _FOLDERS:
            found.extend(_FOLDERS[key])
            continue
        child = snapshot.folder(sub, tree_id)
        if child is None:
            continue
        paths = _in_folder(snapshot, sha, plan, sub, child, deeper)
        if key is not None:
            if len(_FOLDERS) >= _FOLDERS_LIMIT:
                _FOLDERS.clear()
            _FOLDERS[key] = paths
        found.extend(paths)
    return tuple(found)


class TreeIndex:
    """One snapshot's surface paths, sorted by kind and by language."""

    def __init__(self, snapshot: Snapshot, surface: SurfaceMap) -> None:
        self.snapshot = snapshot
        self.surface = surface
        self._by_kind: dict[SurfaceKind | str, list[str]] = {}
        self._kind_of: dict[str, SurfaceKind | str] = {}
        for path, kind in sorted(_classified(snapshot, surface)):
            self._kind_of[path] = kind
            self._by_kind.setdefault(kind, []).append(path)

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
