"""Which files a report reads: one index per tree, built once, shared by every stage.

Maintainers: the only place that walks a snapshot's paths to decide what is on
which surface. Checks, the graph and the report ask it for the paths of a
kind or language; nobody else iterates a whole snapshot. The one raw-text read
here (`files_naming`) picks candidate files by the names they mention, before
anything is parsed; an unreadable file is always a candidate (fail closed).

An index classifies lazily: a kind all of whose patterns start with a literal folder
(`src/engines/**`) is found by walking those folders only; a kind with a pattern that
can match anywhere (`**/CMakeLists.txt`) makes the first question about it walk the
whole tree, once. `IMPACT_FULL_PATH=1` (impact/shortcuts.py) classifies the whole tree
up front, as before, so a test can require the same report both ways.

What an index learns outlives it in an `IndexMemo` (the indexes by tree, the folders
classified, the plans per map, the trees loaded from the store), which a Session owns
(impact/session.py) and makes active for the length of a report; this module keeps no
cache of its own. An index made with no memo and none active gets a fresh one.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from impact import shortcuts
from impact.git import Folder, Snapshot
from impact.kinds import Language, SurfaceKind
from impact.sourcetext import searchable_as_bytes
from impact.surface import SurfaceMap, literal_ends, literal_folder

_Found = tuple[tuple[tuple[str, SurfaceKind | str], ...], tuple[tuple[str, str], ...]]
"""A folder's surface paths, and the (path, tree id) of the folders below it a walk enters."""
_ANCHORED, _WHOLE = False, True  # which plan a walk follows


class IndexStore(Protocol):
    """Where a tree's classification persists between reports (impact/factstore.py's
    FactStore): the index is below the store, so it is handed one, never imports it."""

    def load_index(self, surface_sha256: str, tree_id: str) -> list[tuple[str, str]] | None: ...

    def load_index_folders(self, surface_sha256: str, tree_id: str,
                           ) -> list[tuple[str, str]] | None: ...

    def save_index(self, surface_sha256: str, tree_id: str, pairs: list[tuple[str, str]],
                   folders: list[tuple[str, str]]) -> None: ...


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

    def __init__(self, surface: SurfaceMap, anchored: bool = False) -> None:
        self.at: dict[str, list[_Guard]] = {}
        self.rank: dict[_Guard, int] = {}
        # A plan of the anchored kinds only finds candidates: the first entry of the whole
        # map that matches one decides its kind (`decide`).
        self.decide = surface if anchored else None
        self.excluded = surface.excluded if surface.exclude else None
        rooted = rooted_kinds(surface)
        for entry in surface.entries:
            if anchored and entry.kind in rooted:
                continue
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


def rooted_kinds(surface: SurfaceMap) -> frozenset[SurfaceKind | str]:
    """The kinds with a pattern that can match anywhere in the tree (no literal folder
    starts it): asking for one of them walks the whole tree."""
    return frozenset(entry.kind for entry in surface.entries
                     if any(not literal_folder(p) for p in entry.patterns))


_Classified = list[tuple[str, SurfaceKind | str]]


class IndexMemo:
    """What tree indexes learn, kept for as long as the Session that owns it: the index of
    each (map, tree), the surface paths of each folder classified (base, head and merged
    trees share most folders, so a tree after the first is classified along its changed
    folders), each map's walk plans, and the trees loaded from the store (whose folders a
    whole walk of another tree memoises first). Each table has a bound past which it
    starts afresh."""

    TREES_LIMIT = 64
    FOLDERS_LIMIT = 200_000
    STORED_LIMIT = 4  # trees per map

    def __init__(self) -> None:
        self.trees: dict[tuple[str, str], TreeIndex] = {}
        # (map sha, whole plan or anchored one, folder tree id, folder path) -> its paths
        self.folders: dict[tuple[str, bool, str, str], _Found] = {}
        self.plans: dict[tuple[str, bool], _Plan] = {}
        # map sha -> tree id -> (its store, its classification)
        self.stored: dict[str, dict[str, tuple[IndexStore, _Classified]]] = {}

    def plan(self, surface: SurfaceMap, whole: bool) -> _Plan:
        key = (surface.sha256, whole)
        if key not in self.plans:
            self.plans[key] = _Plan(surface, anchored=not whole)
        return self.plans[key]

    def remember(self, key: tuple[str, bool, str, str], found: _Found) -> None:
        if len(self.folders) >= self.FOLDERS_LIMIT:
            self.folders.clear()
        self.folders[key] = found

    def loaded(self, sha: str, tree_id: str, store: IndexStore, pairs: _Classified) -> None:
        """Note a tree whose classification came from `store`."""
        held = self.stored.setdefault(sha, {})
        if len(held) >= self.STORED_LIMIT:
            held.pop(next(iter(held)))
        held[tree_id] = (store, pairs)

    def prime(self, sha: str) -> None:
        """Memoise, for the whole plan of map `sha`, the folders of the trees loaded from
        the store: a folder's surface paths are those of its tree under its path, and the
        folders below it follow it in the stored walk order."""
        for tree_id, (store, pairs) in self.stored.pop(sha, {}).items():
            folders = store.load_index_folders(sha, tree_id)
            if folders is None:
                continue
            paths = sorted(pairs)
            names = [path for path, _kind in paths]
            for at, (path, folder_id) in enumerate(folders):
                key = (sha, _WHOLE, folder_id, path)
                if key in self.folders:
                    continue
                start = bisect.bisect_left(names, f"{path}/")
                end = bisect.bisect_left(names, f"{path}0")  # '0' sorts right after '/'
                last = at + 1
                while last < len(folders) and folders[last][0].startswith(f"{path}/"):
                    last += 1
                self.remember(key, (tuple(paths[start:end]), tuple(folders[at + 1:last])))


_ACTIVE: ContextVar[IndexMemo | None] = ContextVar("impact.index.active", default=None)
"""The memo of the Session whose report is running (impact/session.py): for the callers
that make an index without being handed one (the graph, the emitter's rules)."""


@contextmanager
def memo_in_use(memo: IndexMemo) -> Iterator[IndexMemo]:
    """Within the block, an index made without a memo of its own uses `memo`."""
    token = _ACTIVE.set(memo)
    try:
        yield memo
    finally:
        _ACTIVE.reset(token)


def _classified(snapshot: Snapshot, surface: SurfaceMap, memo: IndexMemo,
                whole: bool = _WHOLE, folders: list[tuple[str, str]] | None = None,
                ) -> _Classified:
    """(path, kind) for every surface path of `snapshot` (of the anchored kinds only,
    unless `whole`), each path classified once, reading only the folders a pattern of
    those kinds can reach; `folders`, when given, receives (path, tree id) of each folder
    such a walk enters, in walk order (the same whatever was memoised)."""
    root = snapshot.folder("")
    if root is None:
        return []
    paths, below = _in_folder(snapshot, memo, (surface.sha256, whole),
                              memo.plan(surface, whole), "", root, ())
    if folders is not None:
        folders.extend(below)
    return list(paths)


def _in_folder(snapshot: Snapshot, memo: IndexMemo, sha: tuple[str, bool], plan: _Plan,
               path: str, folder: Folder, inherited: tuple[_Guard, ...]) -> _Found:
    """The surface paths under `folder` (at `path`), with `inherited` the patterns of the
    folders above that match below them, in map order (the first match decides); and the
    (path, tree id) of every folder below it the walk enters, in walk order."""
    here = plan.at.get(path)
    if here:
        for_files = tuple(sorted((*inherited, *here), key=plan.rank.__getitem__))
        deeper = tuple(g for g in for_files if g.deep)
    else:
        for_files = deeper = inherited
    found: list[tuple[str, SurfaceKind | str]] = []
    walked: list[tuple[str, str]] = []
    base = f"{path}/" if path else ""
    if for_files:
        # One C call rules out the files no pattern's literal end fits (most of them).
        ends = tuple({guard.suffix for guard in for_files})
        for name in folder.files:
            full = base + name
            if not full.endswith(ends):
                continue
            if plan.excluded is not None and plan.excluded(full):
                continue
            for guard in for_files:
                if guard.matches(full):
                    entry = plan.decide.classify(full) if plan.decide is not None else guard
                    found.append((full, entry.kind if entry is not None else guard.kind))
                    break
    for name, tree_id in folder.folders.items():
        sub = base + name
        if not deeper and sub not in plan.toward:
            continue
        key = (*sha, tree_id, sub) if tree_id is not None else None
        if key is not None and key in memo.folders:
            paths, below = memo.folders[key]
        else:
            child = snapshot.folder(sub, tree_id)
            if child is None:
                continue
            paths, below = _in_folder(snapshot, memo, sha, plan, sub, child, deeper)
            if key is not None:
                memo.remember(key, (paths, below))
        found.extend(paths)
        if tree_id is not None:
            walked.append((sub, tree_id))
        walked.extend(below)
    return tuple(found), tuple(walked)


class TreeIndex:
    """One snapshot's surface paths, sorted by kind and by language, classified lazily:
    the anchored kinds when first asked about, the whole tree when a question needs a
    kind that can lie anywhere (see the module docstring). What it learns goes to `memo`
    (else the active one, else a fresh one)."""

    def __init__(self, snapshot: Snapshot, surface: SurfaceMap,
                 store: IndexStore | None = None, memo: IndexMemo | None = None) -> None:
        self.snapshot = snapshot
        self.surface = surface
        self.store = store
        self.memo = memo if memo is not None else _ACTIVE.get() or IndexMemo()
        self._rooted = rooted_kinds(surface)
        self._by_kind: dict[SurfaceKind | str, list[str]] = {}
        self._kind_of: dict[str, SurfaceKind | str] = {}
        self._anchored_done = self._whole_done = False
        # A map widened by what the builds compile classifies as the map it widens, plus
        # the compiled files: that map's index does the walking (and is shared).
        self._under = (TreeIndex.of(snapshot, surface.widens, store, memo)
                       if surface.widens is not None else None)
        if not shortcuts.enabled():
            self._whole()

    def _widened(self, whole: bool) -> bool:
        """Classify as the widened map's own map does, then add the compiled files the
        snapshot holds; False when this map widens none."""
        under = self._under
        if under is None:
            return False
        if whole:
            under._whole()
        else:
            under._anchored()
        kind = self.surface.entries[-1].kind
        self._fill([*under._kind_of.items(),
                    *((p, kind) for p in sorted(self.surface.compiled) if p in self.snapshot)])
        self._anchored_done, self._whole_done = True, under._whole_done
        return True

    def _fill(self, classified: Iterable[tuple[str, SurfaceKind | str]]) -> None:
        self._by_kind, self._kind_of = {}, {}
        for path, kind in sorted(classified):
            self._kind_of[path] = kind
            self._by_kind.setdefault(kind, []).append(path)
        self.__dict__.pop("_by_language", None)

    def _anchored(self) -> None:
        """Classify the kinds every pattern of which starts with a literal folder."""
        if self._anchored_done or self._whole_done or self._widened(False):
            return
        found = self._load(False)
        self._fill(found if found is not None
                   else _classified(self.snapshot, self.surface, self.memo, _ANCHORED))
        self._anchored_done = True

    def _whole(self) -> None:
        """Classify every path of the tree."""
        if self._whole_done or self._widened(True):
            return
        found = self._load(True)
        if found is None:
            self.memo.prime(self.surface.sha256)
            folders: list[tuple[str, str]] = []
            found = _classified(self.snapshot, self.surface, self.memo, _WHOLE, folders)
            self._save(found, folders)
        self._fill(found)
        self._whole_done = True

    def _load(self, whole: bool) -> list[tuple[str, SurfaceKind | str]] | None:
        """The whole tree's classification from the persistent store, when it holds it
        (the anchored kinds are a subset of it); None when it does not."""
        store = self.store
        if store is None or self.snapshot.tree_id is None:
            return None
        kinds = {str(entry.kind): entry.kind for entry in self.surface.entries}
        stored = store.load_index(self.surface.sha256, self.snapshot.tree_id)
        if stored is None or any(kind not in kinds for _path, kind in stored):
            return None
        pairs = [(path, kinds[kind]) for path, kind in stored]
        self.memo.loaded(self.surface.sha256, self.snapshot.tree_id, store, pairs)
        if not whole:
            pairs = [(path, kind) for path, kind in pairs if kind not in self._rooted]
        return pairs

    def _save(self, found: list[tuple[str, SurfaceKind | str]],
              folders: list[tuple[str, str]]) -> None:
        store = self.store
        if store is not None and self.snapshot.tree_id is not None:
            store.save_index(self.surface.sha256, self.snapshot.tree_id,
                             sorted((path, str(kind)) for path, kind in found), folders)

    def _for(self, kinds: Iterable[SurfaceKind | str]) -> None:
        """Classify what answering a question about `kinds` needs."""
        if any(kind in self._rooted for kind in kinds):
            self._whole()
        else:
            self._anchored()

    @classmethod
    def of(cls, snapshot: Snapshot, surface: SurfaceMap, store: IndexStore | None = None,
           memo: IndexMemo | None = None) -> TreeIndex:
        """The index of `snapshot`, memoised by tree id (views share trees) in `memo`, else
        in the active one (with neither, a fresh index); `store`, when given, keeps the
        whole tree's classification between reports."""
        memo = memo if memo is not None else _ACTIVE.get()
        if snapshot.tree_id is None or memo is None:
            return cls(snapshot, surface, store, memo)
        key = (surface.sha256, snapshot.tree_id)
        trees = memo.trees
        if key not in trees:
            if len(trees) >= memo.TREES_LIMIT:
                trees.clear()
            trees[key] = cls(snapshot, surface, store, memo)
        elif store is not None and trees[key].store is None:
            trees[key].store = store
        return trees[key]

    def kind(self, path: str) -> SurfaceKind | str:
        """The surface kind of `path` (OUTSIDE when no entry matches or it is absent)."""
        if self._whole_done:
            return self._kind_of.get(path, SurfaceKind.OUTSIDE)
        entry = self.surface.classify(path)
        return entry.kind if entry is not None and path in self.snapshot else SurfaceKind.OUTSIDE

    def paths(self, *kinds: SurfaceKind | str) -> list[str]:
        """Every path of the given kinds, sorted."""
        self._for(kinds)
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
        self._for(e.kind for e in self.surface.entries if e.language == language)
        return list(self._by_language.get(language, ()))

    def surface_paths(self) -> list[str]:
        """Every path on some surface, sorted."""
        self._whole()
        return sorted(self._kind_of)

    def holds_a_surface_path(self) -> bool:
        """Whether some path of the tree is on a surface: the anchored kinds are looked
        for first, the whole tree only when they find none."""
        self._anchored()
        return bool(self._kind_of) or bool(self.surface_paths())

    def files_naming(self, names: Iterable[str],
                     kinds: Iterable[SurfaceKind | str] | None) -> set[str]:
        """The files of `kinds` (None: every file of the tree, on a surface or not, but a
        submodule's pointer) whose text mentions any of `names` (as bytes) as a whole
        word: a needle that starts or ends with a word character must not continue into
        one there, so `fwd` finds `m.def("fwd", ...)` but not every `mha_fwd_kernel`. A
        file that cannot be read is included, so the caller parses it and reports it
        unreadable."""
        needles = [n.encode() for n in sorted(set(names)) if n]
        found: set[str] = set()
        if not needles:
            return found
        if kinds is not None:
            paths: Iterable[str] = self.paths(*kinds)
        else:  # a submodule's pointer is no file of this tree: its text is elsewhere
            paths = (p for p in self.snapshot.paths_under("")
                     if not self.snapshot[p].is_submodule)
        for path in paths:
            try:
                text = self.snapshot.read(path)
            except Exception:  # a missing blob, a gitlink: let the parser say so
                found.add(path)
                continue
            # The substring test first: one C call per needle rules out most files.
            if any(needle in text and _as_word(text, needle) for needle in needles) \
                    or not searchable_as_bytes(path, text):
                found.add(path)
        return found


def _as_word(text: bytes, needle: bytes) -> bool:
    """Whether `needle` occurs in `text` where it does not continue an identifier: a
    needle that starts (ends) with a word character must not follow (precede) one."""
    check_before = _WORD.fullmatch(needle[:1]) is not None
    check_after = _WORD.fullmatch(needle[-1:]) is not None
    at = text.find(needle)
    while at >= 0:
        end = at + len(needle)
        if not (check_before and at > 0 and _WORD.fullmatch(text[at - 1:at])) and \
                not (check_after and end < len(text) and _WORD.fullmatch(text[end:end + 1])):
            return True
        at = text.find(needle, at + 1)
    return False


_WORD = re.compile(rb"[A-Za-z0-9_]")
