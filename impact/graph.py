"""The symbol graph of one snapshot, built with networkx, and the queries checks need.

Maintainers: builds from facts only (through a FactCache); never reads git or
parses source itself. Nodes are strings with a `kind` attribute; edges carry a
`kind` too. Names the graph cannot resolve inside the repository (the standard
library, third-party packages) simply get no edge.

Node ids:
    module:<dotted>                 a Python module or package
    py:<module>:<qualname>          a function, class or module-level assignment
    cpp:<path>                      a C++ file
    cpplist:<path>:<name>           a KernelArgument list
    launch:<path>:<name>            a positional launch() call
    variant:<path>:<name>           a shipped descriptor variant
    symbol:<value>                  a symbol string named by descriptors or packs
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import networkx as nx

from impact.cpp import resolve_include
from impact.extract import FactCache
from impact.facts import PARSE_FAILURE, Fact
from impact.git import Snapshot
from impact.index import TreeIndex
from impact.kinds import FactKind, Language
from impact.python import module_name_for

DEFINITION_KINDS = ("function", "class", "assignment")
NAME_EDGES = frozenset({"reads", "inherits"})


def module_node(module: str) -> str:
    return f"module:{module}"


def symbol_node(module: str, name: str) -> str:
    return f"py:{module}:{name}"


@dataclass
class _ModuleInfo:
    path: str
    bindings: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    local_bindings: dict[str, dict[str, tuple[str, str | None]]] = field(default_factory=dict)
    reexports: dict[str, str] = field(default_factory=dict)
    reads: dict[str, list[str]] = field(default_factory=dict)
    bases: dict[str, list[str]] = field(default_factory=dict)


class SymbolGraph:
    """One snapshot's modules, definitions, imports, C++ lists and calls, headers and
    descriptor variants, with the edges between them."""

    def __init__(self, snapshot: Snapshot, cache: FactCache) -> None:
        self.snapshot = snapshot
        self.cache = cache
        self.surface = cache.surface
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.parse_failures: dict[str, str] = {}
        self._modules: dict[str, _ModuleInfo] = {}
        self._build()

    # ----------------------------------------------------------------- building
    def _files(self, language: Language) -> Iterator[tuple[str, list[Fact]]]:
        for path in TreeIndex.of(self.snapshot, self.surface).language_paths(language):
            facts = self.cache.facts(self.snapshot, path)
            for fact in facts:
                if fact.kind == PARSE_FAILURE:
                    self.parse_failures[path] = str(fact.data.get("reason", ""))
            yield path, facts

    def _edge(self, source: str, target: str, kind: str, **attrs: Any) -> None:
        if not self.graph.has_edge(source, target, key=kind):
            self.graph.add_edge(source, target, key=kind, kind=kind, **attrs)

    def _build(self) -> None:
        roots = list(self.surface.python_roots)
        for path, facts in self._files(Language.PYTHON):
            module = module_name_for(path, roots) or f"<{path}>"
            self._add_python(module, path, facts)
        for module in self._modules:  # bases first: reads of members follow them
            self._link_bases(module)
        for module in self._modules:
            self._link_python(module)
        self._add_descriptors()
        self._add_cpp()
        self._pair_lists()

    def _add_python(self, module: str, path: str, facts: list[Fact]) -> None:
        info = _ModuleInfo(path)
        self._modules[module] = info
        mod = module_node(module)
        self.graph.add_node(mod, kind="module", module=module, path=path)
        for fact in facts:
            if fact.kind in DEFINITION_KINDS:
                node = symbol_node(module, fact.name)
                if node not in self.graph:
                    self.graph.add_node(node, kind=fact.kind, module=module, name=fact.name,
                                        path=path, sites=[])
                self.graph.nodes[node]["sites"].append({"line": fact.line, **fact.data})
                self._edge(mod, node, "defines")
                if fact.kind == "class":
                    info.bases[fact.name] = list(fact.data.get("bases", []))
            elif fact.kind == "import" and not fact.data.get("star"):
                target = fact.data.get("module") or ""
                if target and not target.startswith("."):  # relative ones come resolved
                    function = fact.data.get("function")
                    scope = (info.local_bindings.setdefault(function, {}) if function
                             else info.bindings)
                    scope[fact.name] = (target, fact.data.get("name"))
            elif fact.kind == "re-export":
                info.reexports[fact.name] = str(fact.data.get("module"))
            elif fact.kind == "reads":
                info.reads[fact.name] = list(fact.data.get("names", []))
            elif fact.kind == "param":
                node = symbol_node(module, str(fact.data["function"]))
                self.graph.add_node(node)
                self.graph.nodes[node].setdefault("params", []).append(
                    {"line": fact.line, **fact.data})
            elif fact.kind == "signature-builder":
                node = symbol_node(module, fact.name)
                self.graph.add_node(node)
                self.graph.nodes[node]["signature"] = list(fact.data.get("entries", []))

    def _link_python(self, module: str) -> None:
        info = self._modules[module]
        mod = module_node(module)
        local = [b for scope in info.local_bindings.values() for b in scope.values()]
        for target_module, name in [*info.bindings.values(), *local]:
            for imported in self._imported_modules(target_module, name):
                self._edge(mod, module_node(imported), "imports")
        for function, names in info.reads.items():
            reader = symbol_node(module, function)
            for name in names:
                target = self.resolve(module, name, function=function)
                if target is not None and target != reader:
                    self._edge(reader, target, "reads", name=name)

    def _link_bases(self, module: str) -> None:
        for cls, bases in self._modules[module].bases.items():
            for base in bases:
                target = self.resolve(module, base)
                if target is not None:
                    self._edge(symbol_node(module, cls), target, "inherits")

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

    def _defining_module(self, module: str, name: str, depth: int = 0) -> str | None:
        """Follow package re-exports from `module` to the module that defines `name`."""
        info = self._modules.get(module)
        if info is None or depth > 20:
            return None
        if symbol_node(module, name) in self.graph and self.graph.nodes[
                symbol_node(module, name)].get("kind") in DEFINITION_KINDS:
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
        local = symbol_node(module, parts[0])
        if parts[0] not in bindings and local in self.graph and self.graph.nodes[local].get(
                "kind") in DEFINITION_KINDS:
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
        todo, seen = deque([node]), {node}
        while todo:
            cls = todo.popleft()
            data = self.graph.nodes[cls] if cls in self.graph else {}
            member = symbol_node(str(data.get("module")), f"{data.get('name')}.{rest[0]}")
            if data.get("kind") == "class" and member in self.graph:
                return member
            for base in self.edges_of(cls, {"inherits"}) if cls in self.graph else ():
                if base not in seen:
                    seen.add(base)
                    todo.append(base)
        return node

    def _add_descriptors(self) -> None:
        for language in (Language.JSON, Language.YAML):
            for path, facts in self._files(language):
                file_node = f"descriptor:{path}"
                self.graph.add_node(file_node, kind="descriptor-file", path=path)
                for fact in facts:
                    self._add_descriptor_fact(path, file_node, fact)

    def _add_descriptor_fact(self, path: str, file_node: str, fact: Fact) -> None:
        if fact.kind == "variant":
            node = f"variant:{path}:{fact.name}"
            self.graph.add_node(node, kind="variant", path=path, line=fact.line, **fact.data)
            self._edge(file_node, node, "contains")
            for launch in fact.data.get("launches", []):
                source, builder = launch.get("source"), launch.get("builder")
                if launch.get("kind") != "rocke" or not isinstance(source, str):
                    continue
                self._edge(node, module_node(source), "ships")
                if isinstance(builder, str):
                    self._edge(node, symbol_node(source, builder), "builds",
                               launch=launch.get("launch"))
        elif fact.kind == "symbol":
            self.graph.add_node(f"symbol:{fact.name}", kind="symbol", value=fact.name)
            self._edge(file_node, f"symbol:{fact.name}", "names-symbol", line=fact.line,
                       **fact.data)
        elif fact.kind == "aot-kernel":
            node = f"aot:{path}:{fact.name}"
            self.graph.add_node(node, kind="aot-kernel", path=path, line=fact.line, **fact.data)
            self._edge(file_node, node, "contains")
        elif fact.kind == "launch-surface":
            node = f"surface:{path}:{fact.name}"
            self.graph.add_node(node, kind="launch-surface", path=path, line=fact.line,
                                **fact.data)
            self._edge(file_node, node, "contains")

    def _add_cpp(self) -> None:
        files = dict(self._files(Language.CPP))
        existing = set(files)
        roots = list(self.surface.include_roots)
        for path, facts in files.items():
            node = f"cpp:{path}"
            self.graph.add_node(node, kind="cpp-file", path=path)
            for fact in facts:
                if fact.kind == "include":
                    target = resolve_include(path, fact.name, bool(fact.data.get("quoted")),
                                             existing, roots)
                    if target is not None:
                        self._edge(node, f"cpp:{target}", "includes", line=fact.line)
                elif fact.kind == "kernel-argument-list":
                    child = f"cpplist:{path}:{fact.name}"
                    self.graph.add_node(child, kind="kernel-argument-list", path=path,
                                        line=fact.line, **fact.data)
                    self._edge(node, child, "contains")
                elif fact.kind == "launch-call":
                    child = f"launch:{path}:{fact.name}"
                    self.graph.add_node(child, kind="launch-call", path=path, line=fact.line,
                                        **fact.data)
                    self._edge(node, child, "contains")
                elif fact.kind == "constexpr-string":
                    value = str(fact.data.get("value"))
                    if f"symbol:{value}" in self.graph:
                        self._edge(node, f"symbol:{value}", "declares-symbol", line=fact.line)

    # ------------------------------------------------------------- list pairing
    def builders(self) -> list[str]:
        """Functions that declare kernel arguments with b.param (or build a signature)."""
        return sorted(n for n, d in self.graph.nodes(data=True)
                      if d.get("params") or d.get("signature"))

    @staticmethod
    def builder_names(data: dict[str, Any]) -> list[str]:
        if data.get("params"):
            return [p["param"] for p in sorted(data["params"], key=lambda p: p["index"])]
        return [str(e.get("name")) for e in data.get("signature", [])]

    def _declared_pairs(self) -> dict[tuple[str, str], str]:
        """(cpp path, mirror function) -> builder node, from profile launch_surface entries."""
        pairs = {}
        roots = list(self.surface.python_roots)
        for _node, data in self.graph.nodes(data=True):
            if data.get("kind") != "launch-surface":
                continue
            mirror, source = data.get("cpp_mirror"), data.get("python_source")
            if not (isinstance(mirror, dict) and isinstance(source, dict)):
                continue
            module = module_name_for(str(source.get("file")), roots)
            if module and mirror.get("file") and mirror.get("symbol") and source.get("symbol"):
                pairs[(mirror["file"], mirror["symbol"])] = symbol_node(module, source["symbol"])
        return pairs

    @staticmethod
    def always_names(data: dict[str, Any]) -> list[str]:
        """The arguments a builder declares on every path (guard 'always')."""
        if data.get("params"):
            ordered = sorted(data["params"], key=lambda p: p["index"])
            return [p["param"] for p in ordered if p.get("guard") == "always"]
        return [str(e.get("name")) for e in data.get("signature", [])
                if e.get("guard", "always") == "always"]

    def _pair_lists(self) -> None:
        declared = self._declared_pairs()
        builders = {
            b: (self.builder_names(self.graph.nodes[b]), self.always_names(self.graph.nodes[b]),
                bool(self.graph.nodes[b].get("params")))
            for b in self.builders()
        }
        for node, data in list(self.graph.nodes(data=True)):
            if data.get("kind") != "kernel-argument-list":
                continue
            key = (data["path"], str(data.get("function") or node.rsplit(":", 1)[-1]))
            if key in declared:
                self._edge(node, declared[key], "restates", how="declared")
                continue
            names = [str(e.get("name")) for e in data.get("entries", [])]
            best = _best_builder(names, builders)
            if best is not None:
                self._edge(node, best[0], "restates", how=best[1])

    # ------------------------------------------------------------------ queries
    def include_closure(self, paths: Iterable[str]) -> set[str]:
        """Every C++ file `paths` include, directly or not (the paths themselves too)."""
        seen = {p for p in paths if f"cpp:{p}" in self.graph}
        todo = deque(seen)
        while todo:
            current = todo.popleft()
            for nxt in self.edges_of(f"cpp:{current}", {"includes"}):
                path = str(self.graph.nodes[nxt].get("path", nxt.removeprefix("cpp:")))
                if path not in seen:
                    seen.add(path)
                    todo.append(path)
        return seen

    def module_path(self, module: str) -> str | None:
        info = self._modules.get(module)
        return info.path if info else None

    def binding_of(self, module: str, local: str) -> tuple[str, str | None] | None:
        """What the module-level name `local` of `module` is imported as: (module, name)."""
        info = self._modules.get(module)
        return info.bindings.get(local) if info else None

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

    def modules(self) -> list[str]:
        return sorted(self._modules)

    def functions_of(self, module: str) -> list[str]:
        info = self._modules.get(module)
        return sorted(info.reads) if info else []

    def reads_of(self, module: str, function: str) -> list[str]:
        info = self._modules.get(module)
        return list(info.reads.get(function, [])) if info else []

    def edges_of(self, node: str, kinds: Iterable[str], *, reverse: bool = False) -> set[str]:
        wanted = set(kinds)
        edges = self.graph.in_edges(node, keys=True) if reverse else self.graph.out_edges(
            node, keys=True)
        return {(u if reverse else v) for u, v, k in edges if k in wanted}

    def readers_of(self, node: str) -> set[str]:
        """Functions that read `node` by name and modules that import it."""
        readers = self.edges_of(node, {"reads", "inherits"}, reverse=True)
        module = self.graph.nodes[node].get("module") if node in self.graph else None
        name = self.graph.nodes[node].get("name") if node in self.graph else None
        if module and name:
            for other, info in self._modules.items():
                if any(self._defining_module(t, n) == module and n == name.split(".")[0]
                       for t, n in info.bindings.values() if n is not None):
                    readers.add(module_node(other))
        return readers

    # ---- queries: definitions, readers, launch surfaces, symbols
    # Records the checks read instead of nodes: a check never sees networkx and never
    # builds or splits a node id (`id` fields are opaque: compare, sort or print them).

    @dataclass(frozen=True)
    class Param:
        """One parameter of a function definition."""

        name: str
        kind: str  # "positional", "var-positional", "keyword-only", "var-keyword"
        has_default: bool

    @dataclass(frozen=True)
    class Site:
        """One place a definition is made (a name may be defined under each branch)."""

        line: int
        digest: str | None  # the body's digest; the value's for an assignment
        params: tuple[SymbolGraph.Param, ...] = ()

    @dataclass(frozen=True)
    class Definition:
        """A function, class or module-level assignment of one module, every site of it."""

        id: str
        kind: FactKind
        module: str
        name: str  # the qualname: `f`, `Cls`, `Cls.method`
        path: str
        sites: tuple[SymbolGraph.Site, ...]

        @property
        def line(self) -> int:
            """The first site's line (0 when the graph holds no site)."""
            return self.sites[0].line if self.sites else 0

        @property
        def signature(self) -> str:
            """The parameter lists of every site, as one comparable text."""
            return " | ".join(
                "(" + ", ".join(f"{p.kind[:3]} {p.name}" + ("=" if p.has_default else "")
                                for p in site.params) + ")"
                for site in self.sites)

    class ReadHow(enum.StrEnum):
        """How a reader reaches a definition."""

        IMPORTS = "imports"    # a module binds it by an import
        READS = "reads"        # a function reads it by name
        INHERITS = "inherits"  # a class derives from it

    @dataclass(frozen=True, order=True)
    class Reader:
        """A module that imports a definition, or a function or class that reads it."""

        id: str
        module: str
        function: str | None  # None for a module-level import
        path: str
        line: int  # the reading definition's first line; 0 for a module
        how: SymbolGraph.ReadHow

    @dataclass(frozen=True)
    class Locator:
        """A profile's `file:symbol` (symbol None when it names the whole file)."""

        raw: str
        file: str
        symbol: str | None

    @dataclass(frozen=True)
    class LaunchSurfaceEntry:
        """One `launch_surface:` entry of a tool profile; a None locator was `none`."""

        profile: str
        name: str
        line: int
        python_source: SymbolGraph.Locator | None
        cpp_mirror: SymbolGraph.Locator | None
        kmd_fields: tuple[str, ...]
        guard: str | None
        test: str | None

    @dataclass(frozen=True, order=True)
    class SymbolString:
        """A native symbol string at one site: named by a descriptor (`holder` is the
        field's role) or declared by a C++ constant (`holder` is the constant's name)."""

        value: str
        path: str
        line: int
        holder: str

    @cached_property
    def _module_by_path(self) -> dict[str, str]:
        return {str(self.module_path(m)): m for m in self.modules()}

    def module_at(self, path: str) -> str | None:
        """The module name the graph gave the Python file `path`, or None."""
        return self._module_by_path.get(path)

    def _definition(self, node: str) -> SymbolGraph.Definition | None:
        data = self.graph.nodes[node] if node in self.graph else {}
        if data.get("kind") not in DEFINITION_KINDS:
            return None
        kind = FactKind(str(data["kind"]))
        sites = tuple(
            SymbolGraph.Site(
                int(site.get("line", 0)),
                site.get("value_digest") if kind == FactKind.ASSIGNMENT else site.get("digest"),
                tuple(SymbolGraph.Param(str(p.get("name")), str(p.get("kind", "")),
                                        p.get("default") is not None)
                      for p in site.get("params", [])))
            for site in data.get("sites", []))
        return SymbolGraph.Definition(node, kind, str(data.get("module")),
                                      str(data.get("name")), str(data.get("path")), sites)

    def definitions(self, module: str) -> list[SymbolGraph.Definition]:
        """Every function, class and assignment `module` defines, by name."""
        found = (self._definition(n) for n in self.edges_of(module_node(module), {"defines"}))
        return sorted((d for d in found if d is not None), key=lambda d: d.name)

    def definition(self, module: str, name: str) -> SymbolGraph.Definition | None:
        """The definition of `name` (a qualname) in `module`, or None."""
        return self._definition(symbol_node(module, name))

    def readers(self, definition: SymbolGraph.Definition) -> list[SymbolGraph.Reader]:
        """Who reads `definition`: functions and classes by name, modules by import."""
        found = []
        for node in self.readers_of(definition.id):
            data = self.graph.nodes[node]
            module = str(data.get("module"))
            if data.get("kind") == "module":
                found.append(SymbolGraph.Reader(node, module, None, str(data.get("path")), 0,
                                                SymbolGraph.ReadHow.IMPORTS))
                continue
            reads = definition.id in self.edges_of(node, {"reads"})
            reader = self._definition(node)
            found.append(SymbolGraph.Reader(
                node, module, str(data.get("name")), str(data.get("path")),
                reader.line if reader is not None else 0,
                SymbolGraph.ReadHow.READS if reads else SymbolGraph.ReadHow.INHERITS))
        return sorted(found)

    def reached(self, definition: SymbolGraph.Definition) -> list[SymbolGraph.Definition]:
        """Every definition `definition` reaches by name in the repository (not itself)."""
        found = (self._definition(n) for n in sorted(self.reach(definition.id)))
        return [d for d in found if d is not None]

    def launch_surfaces(self) -> list[SymbolGraph.LaunchSurfaceEntry]:
        """Every profile's launch-surface entries, by profile and name."""
        found = []
        for node, data in self.graph.nodes(data=True):
            if data.get("kind") != FactKind.LAUNCH_SURFACE:
                continue
            path = str(data.get("path"))
            name = str(data.get("name") or node.removeprefix(f"surface:{path}:"))
            found.append(SymbolGraph.LaunchSurfaceEntry(
                path, name, int(data.get("line") or 0), self._locator(data.get("python_source")),
                self._locator(data.get("cpp_mirror")),
                tuple(str(f) for f in data.get("kmd_fields") or ()),
                self._text(data.get("guard")), self._text(data.get("test"))))
        return sorted(found, key=lambda e: (e.profile, e.name))

    @staticmethod
    def _locator(raw: Any) -> SymbolGraph.Locator | None:
        if not isinstance(raw, dict):
            return None
        symbol = raw.get("symbol")
        return SymbolGraph.Locator(str(raw.get("raw")), str(raw.get("file")),
                                   str(symbol) if symbol else None)

    @staticmethod
    def _text(value: Any) -> str | None:
        return value if isinstance(value, str) else None

    def symbol_names(self, paths: Iterable[str]) -> list[SymbolGraph.SymbolString]:
        """The native symbol strings the descriptor files `paths` name."""
        return sorted(
            SymbolGraph.SymbolString(fact.name, path, fact.line, str(fact.data.get("role", "")))
            for path in paths if path in self.snapshot
            for fact in self.cache.facts(self.snapshot, path) if fact.kind == FactKind.SYMBOL)

    def symbol_declarations(self, paths: Iterable[str]) -> list[SymbolGraph.SymbolString]:
        """The `constexpr` strings the C++ files `paths` declare."""
        return sorted(
            SymbolGraph.SymbolString(str(fact.data.get("value")), path, fact.line, fact.name)
            for path in paths if path in self.snapshot
            for fact in self.cache.facts(self.snapshot, path)
            if fact.kind == FactKind.CONSTEXPR_STRING)

    def reach(self, node: str) -> set[str]:
        """Every definition `node` reaches by name within the repository (not itself)."""
        seen: set[str] = set()
        todo = deque([node])
        while todo:
            current = todo.popleft()
            for nxt in self.edges_of(current, NAME_EDGES):
                if self.graph.nodes[nxt].get("kind") not in DEFINITION_KINDS:
                    continue  # a module read through an alias is not itself a definition
                if nxt not in seen and nxt != node:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def module_closure(self, modules: Iterable[str]) -> set[str]:
        """Modules reachable from `modules` through imports (re-exports included)."""
        seen: set[str] = set()
        todo = deque(m for m in modules if m in self._modules)
        seen.update(todo)
        while todo:
            current = todo.popleft()
            for nxt in self.edges_of(module_node(current), {"imports"}):
                name = self.graph.nodes[nxt]["module"]
                if name not in seen:
                    seen.add(name)
                    todo.append(name)
        return seen

    def variants(self) -> list[str]:
        return sorted(n for n, d in self.graph.nodes(data=True) if d.get("kind") == "variant")

    def packer_modules(self) -> set[str]:
        return {m for m, info in self._modules.items()
                if self.surface.describe(info.path).kind == "hkp-pack"}

    def shipped_closure(self) -> set[str]:
        """Every module a shipped variant imports, directly or through re-exports, and
        every module the packer reaches."""
        roots = {self.graph.nodes[m]["module"] for v in self.variants()
                 for m in self.edges_of(v, {"ships"}) if m in self._modules_nodes()}
        return self.module_closure(roots | self.packer_modules())

    def _modules_nodes(self) -> set[str]:
        return {module_node(m) for m in self._modules}

    def all_archs(self) -> set[str]:
        return {a for v in self.variants() for a in self.graph.nodes[v].get("arch_expanded", [])}

    def archs_of_descriptor(self, path: str) -> set[str]:
        """Architectures of the variants a descriptor file holds."""
        node = f"descriptor:{path}"
        if node not in self.graph:
            return set()
        return {a for v in self.edges_of(node, {"contains"})
                for a in self.graph.nodes[v].get("arch_expanded", [])}

    @cached_property
    def _archs_by_module(self) -> dict[str, frozenset[str]]:
        """Module -> the architectures that ship it, computed once per graph: every arch
        for what the packer reaches, else those of the variants whose imports reach it."""
        shipped: dict[str, set[str]] = {}
        closures: dict[frozenset[str], set[str]] = {}
        for variant in self.variants():
            sources = frozenset(str(self.graph.nodes[m].get("module")) for m in self.edges_of(
                variant, {"ships"}) if m in self._modules_nodes())
            if sources not in closures:
                closures[sources] = self.module_closure(sources)
            for module in closures[sources]:
                shipped.setdefault(module, set()).update(
                    self.graph.nodes[variant].get("arch_expanded", []))
        everything = frozenset(self.all_archs())
        result = {m: frozenset(a) for m, a in shipped.items()}
        for module in self.module_closure(self.packer_modules()):
            result[module] = everything
        return result

    def archs_of(self, module: str) -> set[str]:
        """Architectures that ship `module`: every arch when the packer reaches it, else
        those of the variants whose imports reach it."""
        return set(self._archs_by_module.get(module, ()))


def _best_builder(names: list[str],
                  builders: dict[str, tuple[list[str], list[str], bool]]) -> tuple[str, str] | None:
    """The builder a C++ list restates by its argument names: a list equal to all its
    arguments or to those it always declares (b.param builders before signature
    factories), then the largest overlap that shares at least two names and half of
    the list's own."""
    if not names:
        return None
    exact = sorted((not uses_param, b) for b, (params, always, uses_param) in builders.items()
                   if names in (params, always))
    if exact:
        return exact[0][1], "names"
    scored = []
    for builder, (params, _always, _uses_param) in builders.items():
        common = len(set(names) & set(params))
        if common >= 2 and common * 2 >= len(names):
            scored.append((-common, abs(len(params) - len(names)), builder))
    if not scored:
        return None
    return min(scored)[2], "closest"


def build_graph(snapshot: Snapshot, cache: FactCache) -> SymbolGraph:
    """The symbol graph of `snapshot`; facts come from (and stay in) `cache`."""
    return SymbolGraph(snapshot, cache)
