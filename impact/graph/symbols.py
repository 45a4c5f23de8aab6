"""The symbol graph of one snapshot: its domains, composed.

Maintainers: composes, decides nothing. `graph.python` (modules, definitions, imports,
readers, reach), `graph.descriptors` (descriptor files, KDP families, variants and their
archs, launch surfaces, symbol strings) and `graph.kernels` (builders, the copies of
their argument lists, paired; includes) share one networkx graph (`core.py`), built
together, in that order, the first time any of them is asked for: a variant's edges
lead to the modules and builders it ships, a list's pairing to a builder. The bindings
domain, `graph.bindings` (the op copies of the aiter and flash-attention family),
`graph.builds` (the extension modules the build files declare, and what each compiles)
and `graph.strings` (the symbol strings of descriptors and packs) hold no networkx graph
and parse only the files a question names, so asking for them builds nothing else.

The networkx part is a function of the tree and the map: given `shared` (a Session's
`Caches.graphs`), it is built once per (map, tree) for every report of the Session. A
report that takes it from there reads again, through its own cache, the files the build
could not read, so that it names them as a report that built it would; the per-question
domains always read through the report's own cache.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from impact.extract import FactCache
from impact.git import Snapshot
from impact.graph.bindings import BindingsGraph
from impact.graph.builds import BuildsGraph
from impact.graph.core import Nodes
from impact.graph.descriptors import DescriptorGraph
from impact.graph.kernels import KernelGraph
from impact.graph.python import PythonGraph
from impact.graph.strings import SymbolStrings

if TYPE_CHECKING:
    from collections.abc import Iterable, MutableMapping

    import networkx as nx

Domains = tuple[Nodes, PythonGraph, DescriptorGraph, KernelGraph]
SHARED_LIMIT = 8
"""Trees whose networkx domains a Session keeps (the base and head of a few reports)."""


class SymbolGraph:
    """One snapshot's domains: `python`, `descriptors`, `kernels` (one networkx graph,
    built on first use, or taken from `shared`), and `bindings`, `builds` and `strings`
    (read file by file, as asked)."""

    def __init__(self, snapshot: Snapshot, cache: FactCache,
                 shared: MutableMapping[tuple[str, str], Domains] | None = None) -> None:
        self.snapshot = snapshot
        self.cache = cache
        self.shared = shared

    @cached_property
    def _domains(self) -> Domains:
        key = (self.cache.surface.sha256, self.snapshot.tree_id or "")
        if self.shared is not None and self.snapshot.tree_id and key in self.shared:
            domains = self.shared[key]
            for path in domains[0].unreadable:  # recorded in this report's cache again
                self.cache.facts(self.snapshot, path)
            return domains
        nodes = Nodes(self.snapshot, self.cache)
        python = PythonGraph(nodes)
        descriptors = DescriptorGraph(nodes, python)
        domains = nodes, python, descriptors, KernelGraph(nodes, python, descriptors)
        if self.shared is not None and self.snapshot.tree_id:
            if len(self.shared) >= SHARED_LIMIT:
                self.shared.clear()
            self.shared[key] = domains
        return domains

    @property
    def python(self) -> PythonGraph:
        return self._domains[1]

    @property
    def descriptors(self) -> DescriptorGraph:
        return self._domains[2]

    @property
    def kernels(self) -> KernelGraph:
        return self._domains[3]

    @cached_property
    def bindings(self) -> BindingsGraph:
        graph = BindingsGraph(self.snapshot, self.cache)
        graph.modules_of = self._modules_of  # an op's identity: what the build produces
        return graph

    def _modules_of(self, path: str) -> frozenset[str]:
        """The extension modules the build compiles `path` into; none (pair by name, fail
        closed) when a build file could not be read."""
        builds = self.builds
        return builds.modules_of(path) if builds.readable else frozenset()

    @cached_property
    def builds(self) -> BuildsGraph:
        return BuildsGraph(self.snapshot, self.cache)

    @cached_property
    def strings(self) -> SymbolStrings:
        return SymbolStrings(self.snapshot, self.cache)

    @property
    def parse_failures(self) -> dict[str, str]:
        """Path -> why, for every file the shared graph was built from that did not parse."""
        return self._domains[0].parse_failures

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The shared networkx graph (for impact/graph/ and its tests only)."""
        return self._domains[0].graph

    def edges_of(self, node: str, kinds: Iterable[str], *, reverse: bool = False) -> set[str]:
        """The nodes `node`'s edges of `kinds` lead to (from, when `reverse`)."""
        return self._domains[0].edges_of(node, kinds, reverse=reverse)


def build_graph(snapshot: Snapshot, cache: FactCache,
                shared: MutableMapping[tuple[str, str], Domains] | None = None
                ) -> SymbolGraph:
    """The symbol graph of `snapshot`; facts come from (and stay in) `cache`; its networkx
    domains are kept in, or taken from, `shared` when given."""
    return SymbolGraph(snapshot, cache, shared)
