"""The symbol graph of one snapshot: its four domains, composed.

Maintainers: composes, decides nothing. `graph.python` (modules, definitions, imports,
readers, reach), `graph.descriptors` (descriptor files, KDP families, variants and their
archs, launch surfaces, symbol strings) and `graph.kernels` (builders, the copies of
their argument lists, paired; includes) share one networkx graph (`core.py`), built
together, in that order, the first time any of them is asked for: a variant's edges
lead to the modules and builders it ships, a list's pairing to a builder. The bindings
domain, `graph.bindings` (the op copies of the aiter and flash-attention family), holds
no networkx graph and parses only the files a question names, so asking for it builds
nothing else.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from impact.extract import FactCache
from impact.git import Snapshot
from impact.graph.bindings import BindingsGraph
from impact.graph.core import Nodes
from impact.graph.descriptors import DescriptorGraph
from impact.graph.kernels import KernelGraph
from impact.graph.python import PythonGraph

if TYPE_CHECKING:
    from collections.abc import Iterable

    import networkx as nx


class SymbolGraph:
    """One snapshot's domains: `python`, `descriptors`, `kernels` (one networkx graph,
    built on first use) and `bindings` (built file by file, as asked)."""

    def __init__(self, snapshot: Snapshot, cache: FactCache) -> None:
        self.snapshot = snapshot
        self.cache = cache

    @cached_property
    def _domains(self) -> tuple[Nodes, PythonGraph, DescriptorGraph, KernelGraph]:
        nodes = Nodes(self.snapshot, self.cache)
        python = PythonGraph(nodes)
        descriptors = DescriptorGraph(nodes, python)
        return nodes, python, descriptors, KernelGraph(nodes, python, descriptors)

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
        return BindingsGraph(self.snapshot, self.cache)

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


def build_graph(snapshot: Snapshot, cache: FactCache) -> SymbolGraph:
    """The symbol graph of `snapshot`; facts come from (and stay in) `cache`."""
    return SymbolGraph(snapshot, cache)
