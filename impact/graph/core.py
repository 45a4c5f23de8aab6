"""The one networkx graph a snapshot's Python, descriptor and kernel domains share.

Maintainers: holds the graph, the files it is built from and the node-id spelling; it
decides nothing about what a node means (the domains do: `python.py`, `descriptors.py`,
`kernels.py`). Builds from facts only (through a FactCache); never reads git or parses
source itself. Nodes are strings with a `kind` attribute; edges carry a `kind` too.
Names the graph cannot resolve inside the repository (the standard library,
third-party packages) simply get no edge. Outside `impact/graph/` a node id is an
opaque string, and nothing outside this package touches networkx.

Node ids:
    module:<dotted>                 a Python module or package
    py:<module>:<qualname>          a function, class or module-level assignment
    cpp:<path>                      a C++ file
    cpplist:<path>:<name>           a KernelArgument list
    launch:<path>:<name>            a positional launch() call
    aot:<path>:<name>               an AOT catalog kernel
    descriptor:<path>               a descriptor (JSON or YAML) file
    variant:<path>:<name>           a shipped descriptor variant
    surface:<path>:<name>           a profile's launch-surface entry
    symbol:<value>                  a symbol string named by descriptors or packs
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from impact.extract import FactCache
from impact.facts import Fact
from impact.git import Snapshot
from impact.index import TreeIndex
from impact.kinds import FactKind, Language, SurfaceKind

if TYPE_CHECKING:
    import networkx as nx

# networkx, the C++ include resolver and the Python module namer (and the parsers their
# packages load) are imported when a graph is first built, never at import: a report on
# a change outside every surface builds no graph and loads none of them.

DEFINITION_KINDS = (FactKind.FUNCTION, FactKind.CLASS, FactKind.ASSIGNMENT)
_NOT_IN_GRAPH = frozenset({SurfaceKind.DVC_POINTER, SurfaceKind.DESCRIPTOR_ELSEWHERE})


def module_name_for(path: str, roots: list[str]) -> str | None:
    """The dotted module of a Python file under `roots` (impact/python decides)."""
    from impact.python import module_name_for as name_for

    return name_for(path, roots)


def module_node(module: str) -> str:
    return f"module:{module}"


def symbol_node(module: str, name: str) -> str:
    return f"py:{module}:{name}"


class Nodes:
    """A snapshot's networkx graph, the files it is built from, and the parse failures
    met while reading them."""

    def __init__(self, snapshot: Snapshot, cache: FactCache) -> None:
        import networkx

        self.snapshot = snapshot
        self.cache = cache
        self.surface = cache.surface
        self.graph: nx.MultiDiGraph = networkx.MultiDiGraph()
        self.parse_failures: dict[str, str] = {}
        # The files the graph was built from whose content could not be read: a report
        # that reuses the graph reads them again, so that its own record names them.
        self.unreadable: list[str] = []

    def index(self) -> TreeIndex:
        return TreeIndex.of(self.snapshot, self.surface, self.cache.store)

    def files(self, language: Language) -> Iterator[tuple[str, list[Fact]]]:
        """Every file of `language` whose facts the graph holds. DVC pointers and stray
        descriptors are judged file by file (their kinds may lie anywhere in the tree, so
        listing them would walk the whole monorepo) and give the graph nothing."""
        kinds = [entry.kind for entry in self.surface.entries if entry.language == language
                 and entry.kind not in _NOT_IN_GRAPH]
        for path in self.index().paths(*dict.fromkeys(kinds)):
            facts = self.cache.facts(self.snapshot, path)
            if self.cache.was_unreadable(self.snapshot, path):
                self.unreadable.append(path)
            for fact in facts:
                if fact.kind == FactKind.PARSE_FAILURE:
                    self.parse_failures[path] = str(fact.data.get("reason", ""))
            yield path, facts

    def edge(self, source: str, target: str, kind: str, **attrs: Any) -> None:
        if not self.graph.has_edge(source, target, key=kind):
            self.graph.add_edge(source, target, key=kind, kind=kind, **attrs)

    def edges_of(self, node: str, kinds: Iterable[str], *, reverse: bool = False) -> set[str]:
        wanted = set(kinds)
        edges = self.graph.in_edges(node, keys=True) if reverse else self.graph.out_edges(
            node, keys=True)
        return {(u if reverse else v) for u, v, k in edges if k in wanted}

    def data(self, node: str) -> dict[str, Any]:
        """A node's attributes (empty for a node the graph does not hold)."""
        return self.graph.nodes[node] if node in self.graph else {}

    def of_kind(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every node of `kind` with its attributes, in the order they were added."""
        return ((n, d) for n, d in self.graph.nodes(data=True) if d.get("kind") == kind)


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
