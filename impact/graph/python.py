"""The Python domain of a snapshot's graph: modules, definitions, classes and their bases,
imports and re-exports, the names each function reads, and what reaches what.

Maintainers: builds its nodes (`module:`, `py:`) and edges (`defines`, `imports`,
`reads`, `inherits`) into the shared graph of `core.py` from Python facts only, and
answers with the records of `records.py`; it knows nothing of descriptors or C++ (the
other domains ask it what a name resolves to, where a module is, what a function
reaches).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property

from impact.facts import Fact
from impact.graph.core import DEFINITION_KINDS, Nodes, module_name_for, module_node, symbol_node
from impact.graph.records import (
    Assignment,
    Definition,
    DefinitionSite,
    FunctionParam,
    Reader,
    ReadHow,
)
from impact.kinds import FactKind, Language, SurfaceKind

NAME_EDGES = frozenset({"reads", "inherits"})
MODULE = "module"  # the node kind of a module (the definitions' kinds are fact kinds)


@dataclass
class _ModuleInfo:
    path: str
    bindings: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    local_bindings: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)
    reexports: dict[str, str] = field(default_factory=dict)
    reads: dict[str, list[str]] = field(default_factory=dict)
    bases: dict[str, list[str]] = field(default_factory=dict)


class PythonGraph:
    """One snapshot's Python modules and definitions, with the imports, reads and bases
    between them."""

    def __init__(self, nodes: Nodes) -> None:
        self.nodes = nodes
        self._modules: dict[str, _ModuleInfo] = {}
        roots = list(nodes.surface.python_roots)
        for path, facts in nodes.files(Language.PYTHON):
            self._add(module_name_for(path, roots) or f"<{path}>", path, facts)
        for module in self._modules:  # bases first: reads of members follow them
            self._link_bases(module)
        for module in self._modules:
            self._link(module)

    # ----------------------------------------------------------------- building
    def _add(self, module: str, path: str, facts: list[Fact]) -> None:
        graph = self.nodes.graph
        info = _ModuleInfo(path)
        self._modules[module] = info
        mod = module_node(module)
        graph.add_node(mod, kind=MODULE, module=module, path=path)
        for fact in facts:
            if fact.kind in DEFINITION_KINDS:
                node = symbol_node(module, fact.name)
                if node not in graph:
                    graph.add_node(node, kind=fact.kind, module=module, name=fact.name,
                                   path=path, sites=[])
                graph.nodes[node]["sites"].append({"line": fact.line, **fact.data})
                self.nodes.edge(mod, node, "defines")
                if fact.kind == FactKind.CLASS:
                    info.bases[fact.name] = list(fact.data.get("bases", []))
            elif fact.kind == FactKind.IMPORT and not fact.data.get("star"):
                target = fact.data.get("module") or ""
                if target and not target.startswith("."):  # relative ones come resolved
                    function = fact.data.get("function")
                    scope = (info.local_bindings.setdefault(function, {}) if function
                             else info.bindings)
                    scope[fact.name] = (target, fact.data.get("name"))
            elif fact.kind == FactKind.RE_EXPORT:
                info.reexports[fact.name] = str(fact.data.get("module"))
            elif fact.kind == FactKind.READS:
                info.reads[fact.name] = list(fact.data.get("names", []))
            elif fact.kind == FactKind.PARAM:
                node = symbol_node(module, str(fact.data["function"]))
                graph.add_node(node)
                graph.nodes[node].setdefault("params", []).append(
                    {"line": fact.line, **fact.data})
            elif fact.kind == FactKind.PARAM_UNREAD:
                node = symbol_node(module, fact.name)
                graph.add_node(node)
                graph.nodes[node].setdefault("unread_params", []).append(
                    {"line": fact.line, **fact.data})
            elif fact.kind == FactKind.SIGNATURE_BUILDER:
                node = symbol_node(module, fact.name)
                graph.add_node(node)
                graph.nodes[node]["signature"] = list(fact.data.get("entries", []))

    def _link(self, module: str) -> None:
        info = self._modules[module]
        mod = module_node(module)
        local = [b for scope in info.local_bindings.values() for b in scope.values()]
        for target_module, name in [*info.bindings.values(), *local]:
            for imported in self._imported_modules(target_module, name):
                self.nodes.edge(mod, module_node(imported), "imports")
        for function, names in info.reads.items():
            reader = symbol_node(module, function)
            for name in names:
                target = self.resolve(module, name, function=function)
                if target is not None and target != reader:
                    self.nodes.edge(reader, target, "reads", name=name)

    def _link_bases(self, module: str) -> None:
        for cls, bases in self._modules[module].bases.items():
            for base in bases:
                target = self.resolve(module, base)
                if target is not None:
                    self.nodes.edge(symbol_node(module, cls), target, "inherits")

    def _imported_modules(self, target: str, name: str | None) -> list[str]:
        """Every repository module an import statement runs or reaches: the target, its
        parent packages, a submodule imported by name, and the module a package
        re-exports the name from."""
        found = []
        parts = target.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in self._modules:
                found.append(prefix)
        if name is not None:
            if f"{target}.{name}" in self._modules:
                found.append(f"{target}.{name}")
            defining = self._defining_module(target, name)
            if defining is not None:
                found.append(defining)
        return found

    # --------------------------------------------------------------- resolution
    def _is_definition(self, node: str) -> bool:
        return self.nodes.data(node).get("kind") in DEFINITION_KINDS

    def _defining_module(self, module: str, name: str, depth: int = 0) -> str | None:
        """Follow package re-exports from `module` to the module that defines `name`."""
        info = self._modules.get(module)
        if info is None or depth > 20:
            return None
        if self._is_definition(symbol_node(module, name)):
            return module
        if name in info.reexports:
            return self._defining_module(info.reexports[name], name, depth + 1)
        if name in info.bindings:
            target, imported = info.bindings[name]
            if imported is not None:
                return self._defining_module(target, imported, depth + 1)
        return None

    def resolve(self, module: str, dotted: str, *, function: str | None = None) -> str | None:
        """The node a name read in `module` (inside `function`, whose own imports bind
        first) stands for, following imports, module aliases and package re-exports;
        None when it leaves the repository or is a local variable."""
        info = self._modules.get(module)
        if info is None:
            return None
        parts = dotted.split(".")
        bindings = {**info.bindings, **info.local_bindings.get(function or "", {})}
        if parts[0] not in bindings and self._is_definition(symbol_node(module, parts[0])):
            return self._member(module, parts[0], parts[1:])
        for cut in range(len(parts), 0, -1):
            bound = ".".join(parts[:cut])
            if bound not in bindings:
                continue
            target, name = bindings[bound]
            rest = parts[cut:]
            if name is None:
                return self._in_module(target, rest)
            defining = self._defining_module(target, name)
            if defining is not None:
                return self._member(defining, name, rest)
            if f"{target}.{name}" in self._modules:
                return self._in_module(f"{target}.{name}", rest)
            return None
        return None

    def _in_module(self, module: str, rest: list[str]) -> str | None:
        if module not in self._modules:
            return None
        if not rest:
            return module_node(module)
        if f"{module}.{rest[0]}" in self._modules:
            return self._in_module(f"{module}.{rest[0]}", rest[1:])
        defining = self._defining_module(module, rest[0])
        if defining is None:
            return None
        return self._member(defining, rest[0], rest[1:])

    def _member(self, module: str, name: str, rest: list[str]) -> str:
        """`name` in `module`, or its member `rest[0]` when it is a class that defines or
        inherits one (the member read through a subclass is the base class's)."""
        node = symbol_node(module, name)
        if not rest:
            return node
        graph = self.nodes.graph
        todo, seen = deque([node]), {node}
        while todo:
            cls = todo.popleft()
            data = self.nodes.data(cls)
            member = symbol_node(str(data.get("module")), f"{data.get('name')}.{rest[0]}")
            if data.get("kind") == FactKind.CLASS and member in graph:
                return member
            for base in self.nodes.edges_of(cls, {"inherits"}) if cls in graph else ():
                if base not in seen:
                    seen.add(base)
                    todo.append(base)
        return node

    # ---------------------------------------------------------- modules, bindings
    def modules(self) -> list[str]:
        return sorted(self._modules)

    def module_path(self, module: str) -> str | None:
        info = self._modules.get(module)
        return info.path if info else None

    @cached_property
    def _module_by_path(self) -> dict[str, str]:
        return {str(self.module_path(m)): m for m in self.modules()}

    def module_at(self, path: str) -> str | None:
        """The module name the graph gave the Python file `path`, or None."""
        return self._module_by_path.get(path)

    def functions_of(self, module: str) -> list[str]:
        info = self._modules.get(module)
        return sorted(info.reads) if info else []

    def reads_of(self, module: str, function: str) -> list[str]:
        info = self._modules.get(module)
        return list(info.reads.get(function, [])) if info else []

    def export_chain(self, module: str, name: str) -> list[str]:
        """The modules an import of `name` from `module` passes through, following package
        re-exports and re-imports by name, whether or not the name is still defined."""
        chain = [module]
        while len(chain) < 20:
            info = self._modules.get(chain[-1])
            if info is None:
                break
            if name in info.reexports:
                chain.append(info.reexports[name])
            elif name in info.bindings and info.bindings[name][1] == name:
                chain.append(info.bindings[name][0])
            else:
                break
        return chain

    def bindings_to(self, module: str, target: str, name: str) -> list[str]:
        """Local names in `module` still bound to `name` of `target`, directly or through
        package re-exports, even when `target` no longer defines it."""
        info = self._modules.get(module)
        if info is None:
            return []
        return sorted(local for local, (t, n) in info.bindings.items()
                      if n == name and target in self.export_chain(t, n))

    def packer_modules(self) -> set[str]:
        """The modules of the descriptor packer (every arch ships what it reaches)."""
        index = self.nodes.index()
        return {m for m, info in self._modules.items()
                if index.kind(info.path) == SurfaceKind.HKP_PACK}

    def module_closure(self, modules: Iterable[str]) -> set[str]:
        """Modules reachable from `modules` through imports (re-exports included)."""
        seen: set[str] = set()
        todo = deque(m for m in modules if m in self._modules)
        seen.update(todo)
        while todo:
            current = todo.popleft()
            for nxt in self.nodes.edges_of(module_node(current), {"imports"}):
                name = self.nodes.graph.nodes[nxt]["module"]
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
        return seen

    # ---------------------------------------------------- definitions and readers
    # Records the checks read instead of nodes: a check never sees networkx and never
    # builds or splits a node id (`id` fields are opaque: compare, sort or print them).
    def _definition(self, node: str) -> Definition | None:
        data = self.nodes.data(node)
        if data.get("kind") not in DEFINITION_KINDS:
            return None
        kind = FactKind(str(data["kind"]))
        sites = tuple(
            DefinitionSite(
                int(site.get("line", 0)),
                site.get("value_digest") if kind == FactKind.ASSIGNMENT else site.get("digest"),
                tuple(FunctionParam(str(p.get("name")), str(p.get("kind", "")),
                                    p.get("default") is not None)
                      for p in site.get("params", [])))
            for site in data.get("sites", []))
        return Definition(node, kind, str(data.get("module")), str(data.get("name")),
                          str(data.get("path")), sites)

    def definitions(self, module: str) -> list[Definition]:
        """Every function, class and assignment `module` defines, by name."""
        found = (self._definition(n)
                 for n in self.nodes.edges_of(module_node(module), {"defines"}))
        return sorted((d for d in found if d is not None), key=lambda d: d.name)

    def definition(self, module: str, name: str) -> Definition | None:
        """The definition of `name` (a qualname) in `module`, or None."""
        return self._definition(symbol_node(module, name))

    def readers_of(self, node: str) -> set[str]:
        """Functions that read `node` by name and modules that import it."""
        readers = self.nodes.edges_of(node, NAME_EDGES, reverse=True)
        data = self.nodes.data(node)
        module, name = data.get("module"), data.get("name")
        if module and name:
            for other, info in self._modules.items():
                if any(self._defining_module(t, n) == module and n == name.split(".")[0]
                       for t, n in info.bindings.values() if n is not None):
                    readers.add(module_node(other))
        return readers

    def readers(self, definition: Definition) -> list[Reader]:
        """Who reads `definition`: functions and classes by name, modules by import."""
        found = []
        for node in self.readers_of(definition.id):
            data = self.nodes.graph.nodes[node]
            module = str(data.get("module"))
            if data.get("kind") == MODULE:
                found.append(Reader(node, module, None, str(data.get("path")), 0,
                                    ReadHow.IMPORTS))
                continue
            reads = definition.id in self.nodes.edges_of(node, {"reads"})
            reader = self._definition(node)
            found.append(Reader(
                node, module, str(data.get("name")), str(data.get("path")),
                reader.line if reader is not None else 0,
                ReadHow.READS if reads else ReadHow.INHERITS))
        return sorted(found)

    def reach(self, node: str) -> set[str]:
        """Every definition `node` reaches by name within the repository (not itself)."""
        seen: set[str] = set()
        todo = deque([node])
        while todo:
            current = todo.popleft()
            for nxt in self.nodes.edges_of(current, NAME_EDGES):
                if not self._is_definition(nxt):
                    continue  # a module read through an alias is not itself a definition
                if nxt not in seen and nxt != node:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def entry_points(self, definition: Definition,
                     stop: Callable[[str], bool] = lambda _node: False,
                     ) -> list[Definition] | None:
        """The definitions through which `definition` can run: those that reach it by name
        (itself included) and that no definition reads in turn, the climb ending at a node
        `stop` names (a builder the descriptors ship, say: what calls it is that builder's
        concern). None when something that is not a definition of this graph reads one of
        them (an import binding it in a module's own code): what runs it is then not a
        definition, so no caller of it can answer for it."""
        seen, todo, roots = {definition.id}, deque([definition.id]), set()
        while todo:
            current = todo.popleft()
            if stop(current):
                roots.add(current)
                continue
            readers = self.nodes.edges_of(current, NAME_EDGES, reverse=True) - {current}
            if any(not self._is_definition(r) for r in readers):
                return None
            if not readers:
                roots.add(current)
            for reader in readers - seen:
                seen.add(reader)
                todo.append(reader)
        found = (self._definition(n) for n in sorted(roots))
        return [d for d in found if d is not None]

    def reached(self, definition: Definition) -> list[Definition]:
        """Every definition `definition` reaches by name in the repository (not itself)."""
        found = (self._definition(n) for n in sorted(self.reach(definition.id)))
        return [d for d in found if d is not None]

    def assignment(self, module: str, dotted: str) -> Assignment | None:
        """The one simple module-level assignment `dotted`, read in `module`, resolves to
        (following imports); None when it is anything else or assigned more than once."""
        target = self.resolve(module, dotted)
        if target is None or target not in self.nodes.graph:
            return None
        data = self.nodes.graph.nodes[target]
        if data.get("kind") != FactKind.ASSIGNMENT or len(data.get("sites", [])) != 1:
            return None
        value = data["sites"][0].get("value")
        if not isinstance(value, str):
            return None
        return Assignment(str(data.get("module")), str(data.get("name")), value)
