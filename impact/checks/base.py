"""What every check receives: the report's views, map, facts and graphs.

Maintainers: checks read views, facts and graphs through the CheckContext; they
never touch git or parse files themselves. The `Check` base they derive from, and
the per-view `Scope` they work in, live in `impact/checks/check.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from impact.caches import Caches, active_caches
from impact.extract import FactCache
from impact.facts import CONTENT, PARSE_FAILURE, Fact
from impact.git import Snapshot, View, Views
from impact.index import TreeIndex
from impact.kinds import SurfaceKind, ViewName
from impact.surface import SurfaceMap

if TYPE_CHECKING:
    from impact.checks.check import Declarations
    from impact.graph import SymbolGraph

# The graph (networkx), the arch queries and the Python module namer load when a check
# first asks for them: a report on a change outside every surface loads none of them.


@dataclass
class CheckContext:
    """The views, the surface map, facts (cached by blob) and one graph per snapshot.

    What outlives the report (the fact store, the facts parsed, the tree indexes) comes
    from `caches`, a Session's (impact/session.py; else the active one, else fresh). What
    is this report's own stays here: the files it could not read (`cache.unreadable`), its
    graphs (whose networkx domains are the Session's, `caches.graphs`, shared by every
    report of the same tree: see impact/graph/symbols.py for how such a report still names
    every file it could not read) and the merged view's head part."""

    views: Views
    surface: SurfaceMap
    caches: Caches = field(default_factory=lambda: active_caches() or Caches())
    cache: FactCache = field(init=False)
    _graphs: dict[int, SymbolGraph] = field(default_factory=dict, init=False)
    _head_part: dict[str, frozenset[str]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.cache = FactCache(self.surface, caches=self.caches)

    def available_views(self) -> Iterator[View]:
        """The views that hold a snapshot to compare."""
        return (v for v in self.views.views if v.new is not None)

    def own_paths(self, view: View) -> tuple[str, ...]:
        """The paths of `view`'s diff a check starts from: every one in the head view; in
        the merged view, the head's part (`head_part`) and the paths the merge left
        conflicted. A file the target tip alone changed can only give pre-existing rows
        (see `charged`), so it is not analysed: a stale branch costs what its own change
        touches, not the tip's history since. A race is still found, because it is
        reached from the head's own copy and compared with the tip's copy in the merged
        tree."""
        if view.name != ViewName.MERGED:
            return view.diff.paths
        part = self.head_part(view)
        return tuple(p for p in view.diff.paths if p in part or p in view.conflicts)

    def head_part(self, view: View) -> frozenset[str]:
        """The files whose change in the merged `view` is the head's: those the head
        changed, less those the target tip changed too whose merged copy is the tip's but
        for comments and layout (`_tips_own`). The head's part of such a file did not
        survive the merge but as layout, which its head-view row already says; what the
        merged copy does differently from the base is the tip's. Only a copy in one of
        these files charges a merged-view row (`charged`)."""
        if view.name not in self._head_part:
            head = self.views.view(ViewName.HEAD)
            paths = head.diff.paths if head is not None else view.diff.paths
            self._head_part[view.name] = frozenset(
                p for p in paths if not self._tips_own(view, p))
        return self._head_part[view.name]

    def _tips_own(self, view: View, path: str) -> bool:
        """Whether the target tip changed `path` too and the merged copy equals the tip's
        but for comments and layout (the layout-blind content digests agree, both parsed).
        Unsure is False: a file not understood, or one whose kind records no digest, stays
        the head's own; so does a file on no surface (no row names it), which is not read."""
        tip, merged, base = view.tip, view.new, view.old
        if tip is None or merged is None or self.surface.classify(path) is None:
            return False  # classified first: a path on no surface costs no tree read
        if not (path in tip and path in merged and path in base):
            return False
        if tip[path].sha == base[path].sha or tip[path].mode != merged[path].mode:
            return False  # the tip left it alone: what the merge holds is the head's
        if tip[path].sha == merged[path].sha:
            return True
        at_tip, at_merge = self.facts(tip, path), self.facts(merged, path)
        if self.parse_failure(at_tip) is not None or self.parse_failure(at_merge) is not None:
            return False
        digest = self.content(at_tip)
        return digest is not None and digest == self.content(at_merge)

    def index(self, snapshot: Snapshot) -> TreeIndex:
        """Which paths of `snapshot` are on which surface (built once per tree)."""
        return TreeIndex.of(snapshot, self.surface, self.cache.store, self.caches.indexes)

    def paths(self, snapshot: Snapshot, *kinds: SurfaceKind) -> list[str]:
        """The paths of `snapshot` of the given surface kinds, sorted."""
        return self.index(snapshot).paths(*kinds)

    def facts(self, snapshot: Snapshot, path: str) -> list[Fact]:
        return self.cache.facts(snapshot, path) if path in snapshot else []

    def unreadable(self, snapshot: Snapshot) -> dict[str, str]:
        """Path -> why, for every file of `snapshot` whose content could not be read when a
        check or the graph asked for its facts (a missing or corrupt blob, a gitlink where
        a file should be): `run_checks` names each in a row of its own."""
        return self.cache.unreadable_in(snapshot)

    def graph(self, snapshot: Snapshot) -> SymbolGraph:
        key = id(snapshot)
        if key not in self._graphs:
            from impact.graph import build_graph

            with self.caches.active():  # the graph's own index look-ups share the memo
                self._graphs[key] = build_graph(snapshot, self.cache, self.caches.graphs)
        return self._graphs[key]

    @staticmethod
    def parse_failure(facts: list[Fact]) -> Fact | None:
        return next((f for f in facts if f.kind == PARSE_FAILURE), None)

    @staticmethod
    def content(facts: list[Fact]) -> str | None:
        return next((str(f.data["digest"]) for f in facts if f.kind == CONTENT), None)

    def module_of(self, path: str) -> str | None:
        from impact.python import module_name_for

        return module_name_for(path, list(self.surface.python_roots))

    @cached_property
    def all_archs(self) -> frozenset[str]:
        """Every architecture a variant ships at the base or the head (impact/archs.py)."""
        from impact import archs

        return archs.all_archs(self)

    def archs_for(self, path: str, *snapshots: Snapshot) -> tuple[str, ...]:
        """The GPU architectures a change to `path` reaches in any of `snapshots`
        (impact/archs.py decides: the variants that ship its module or that a descriptor
        holds; else the arch its path names; else every arch, in the map's label)."""
        from impact import archs

        return archs.archs_for(self, path, *snapshots)

    @cached_property
    def declarations(self) -> Declarations:
        """What the registered checks declare (impact/checks/check.py): the kinds whose
        file-level rows a check owns or whose facts it settles, what the emit fold may
        turn inert and what it may not."""
        from impact.checks import REGISTRY
        from impact.checks.check import Declarations

        return Declarations(REGISTRY)
