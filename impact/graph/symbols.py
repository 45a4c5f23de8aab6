"""The symbol graph of one snapshot, built with networkx, and the queries checks need.

Maintainers: builds from facts only (through a FactCache); never reads git or
parses source itself. Nodes are strings with a `kind` attribute; edges carry a
`kind` too. Names the graph cannot resolve inside the repository (the standard
library, third-party packages) simply get no edge. Outside this module a node id
is an opaque string: queries hand out the frozen records of `records.py` (a
builder with its parameters, a list or launch() call with its pairing, a
variant), and pairing copies of an argument list with their builder happens here,
by the rules of `pairing.py`, and nowhere else. No other module touches networkx or
parses an id.

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

import posixpath
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from impact.extract import FactCache
from impact.facts import Fact
from impact.git import Snapshot
from impact.graph.pairing import (
    closest,
    equal_names,
    launch_by_list,
    launch_by_names,
    launch_closest,
)
from impact.graph.records import (
    ALWAYS,
    AotArgument,
    AotKernel,
    ArgList,
    Assignment,
    Builder,
    Definition,
    DefinitionSite,
    FunctionParam,
    Kdp,
    KpackSignature,
    LaunchArgument,
    LaunchCall,
    LaunchSurfaceEntry,
    ListEntry,
    Locator,
    PairedBy,
    Pairing,
    Param,
    Reader,
    ReadHow,
    SignatureEntry,
    SymbolString,
    Unread,
    Variant,
    VariantLaunch,
)
from impact.index import TreeIndex
from impact.kinds import FactKind, Language, SurfaceKind

if TYPE_CHECKING:
    import networkx as nx

# networkx, the C++ include resolver and the Python module namer (and the parsers their
# packages load) are imported when a graph is first built, never at import: a report on
# a change outside every surface builds no graph and loads none of them.


def module_name_for(path: str, roots: list[str]) -> str | None:
    """The dotted module of a Python file under `roots` (impact/python decides)."""
    from impact.python import module_name_for as name_for

    return name_for(path, roots)

DEFINITION_KINDS = (FactKind.FUNCTION, FactKind.CLASS, FactKind.ASSIGNMENT)
NAME_EDGES = frozenset({"reads", "inherits"})
_NOT_IN_GRAPH = frozenset({SurfaceKind.DVC_POINTER, SurfaceKind.DESCRIPTOR_ELSEWHERE})
_ROCKE_LAUNCH, _KPACK_LAUNCH = "rocke", "kpack"  # a variant launch's `kind`
# The graph's own node kinds besides the fact kinds it holds (definitions, lists, ...).
_MODULE, _CPP_FILE, _DESCRIPTOR_FILE = "module", "cpp-file", "descriptor-file"


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
        import networkx

        self.graph: nx.MultiDiGraph = networkx.MultiDiGraph()
        self.parse_failures: dict[str, str] = {}
        self._modules: dict[str, _ModuleInfo] = {}
        self._kdps: list[Kdp] = []
        self._build()

    # ----------------------------------------------------------------- building
    def _files(self, language: Language) -> Iterator[tuple[str, list[Fact]]]:
        """Every file of `language` whose facts the graph holds. DVC pointers and stray
        descriptors are judged file by file (their kinds may lie anywhere in the tree, so
        listing them would walk the whole monorepo) and give the graph nothing."""
        index = TreeIndex.of(self.snapshot, self.surface, self.cache.store)
        kinds = [entry.kind for entry in self.surface.entries if entry.language == language
                 and entry.kind not in _NOT_IN_GRAPH]
        for path in index.paths(*dict.fromkeys(kinds)):
            facts = self.cache.facts(self.snapshot, path)
            for fact in facts:
                if fact.kind == FactKind.PARSE_FAILURE:
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

    def _add_python(self, module: str, path: str, facts: list[Fact]) -> None:
        info = _ModuleInfo(path)
        self._modules[module] = info
        mod = module_node(module)
        self.graph.add_node(mod, kind=_MODULE, module=module, path=path)
        for fact in facts:
            if fact.kind in DEFINITION_KINDS:
                node = symbol_node(module, fact.name)
                if node not in self.graph:
                    self.graph.add_node(node, kind=fact.kind, module=module, name=fact.name,
                                        path=path, sites=[])
                self.graph.nodes[node]["sites"].append({"line": fact.line, **fact.data})
                self._edge(mod, node, "defines")
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
                self.graph.add_node(node)
                self.graph.nodes[node].setdefault("params", []).append(
                    {"line": fact.line, **fact.data})
            elif fact.kind == FactKind.SIGNATURE_BUILDER:
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
            if data.get("kind") == FactKind.CLASS and member in self.graph:
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
                self.graph.add_node(file_node, kind=_DESCRIPTOR_FILE, path=path)
                for fact in facts:
                    self._add_descriptor_fact(path, file_node, fact)

    def _add_descriptor_fact(self, path: str, file_node: str, fact: Fact) -> None:
        if fact.kind == FactKind.VARIANT:
            node = f"variant:{path}:{fact.name}"
            self.graph.add_node(node, kind=FactKind.VARIANT, path=path, line=fact.line,
                                label=fact.name, **fact.data)
            self._edge(file_node, node, "contains")
            for launch in fact.data.get("launches", []):
                source, builder = launch.get("source"), launch.get("builder")
                if launch.get("kind") != _ROCKE_LAUNCH or not isinstance(source, str):
                    continue
                self._edge(node, module_node(source), "ships")
                if isinstance(builder, str):
                    self._edge(node, symbol_node(source, builder), "builds",
                               launch=launch.get("launch"))
        elif fact.kind == FactKind.SYMBOL:
            self.graph.add_node(f"symbol:{fact.name}", kind=FactKind.SYMBOL, value=fact.name)
            self._edge(file_node, f"symbol:{fact.name}", "names-symbol", line=fact.line,
                       **fact.data)
        elif fact.kind == FactKind.AOT_KERNEL:
            node = f"aot:{path}:{fact.name}"
            self.graph.add_node(node, kind=FactKind.AOT_KERNEL, path=path, line=fact.line,
                                label=fact.name, **fact.data)
            self._edge(file_node, node, "contains")
        elif fact.kind == FactKind.KDP:
            self._kdps.append(Kdp(fact.name, path, fact.line))
        elif fact.kind == FactKind.LAUNCH_SURFACE:
            node = f"surface:{path}:{fact.name}"
            self.graph.add_node(node, kind=FactKind.LAUNCH_SURFACE, path=path, line=fact.line,
                                **fact.data)
            self._edge(file_node, node, "contains")

    def _add_cpp(self) -> None:
        from impact.cpp import resolve_include

        files = dict(self._files(Language.CPP))
        existing = set(files)
        roots = list(self.surface.include_roots)
        for path, facts in files.items():
            node = f"cpp:{path}"
            self.graph.add_node(node, kind=_CPP_FILE, path=path)
            for fact in facts:
                if fact.kind == FactKind.INCLUDE:
                    target = resolve_include(path, fact.name, bool(fact.data.get("quoted")),
                                             existing, roots)
                    if target is not None:
                        self._edge(node, f"cpp:{target}", "includes", line=fact.line)
                elif fact.kind == FactKind.KERNEL_ARGUMENT_LIST:
                    child = f"cpplist:{path}:{fact.name}"
                    self.graph.add_node(child, kind=FactKind.KERNEL_ARGUMENT_LIST, path=path,
                                        line=fact.line, label=fact.name, **fact.data)
                    self._edge(node, child, "contains")
                elif fact.kind == FactKind.LAUNCH_CALL:
                    child = f"launch:{path}:{fact.name}"
                    self.graph.add_node(child, kind=FactKind.LAUNCH_CALL, path=path,
                                        line=fact.line, label=fact.name, **fact.data)
                    self._edge(node, child, "contains")
                elif fact.kind == FactKind.CONSTEXPR_STRING:
                    value = str(fact.data.get("value"))
                    if f"symbol:{value}" in self.graph:
                        self._edge(node, f"symbol:{value}", "declares-symbol", line=fact.line)

    # ------------------------------------------------------------- list pairing
    # Every copy of an argument list is paired with the builder it restates here, and
    # only here: declared by a profile, else equal names, else (given `prefer`) the
    # builder it restated at the base, else the closest b.param builder.
    def builders(self) -> list[str]:
        """Ids of the functions that declare kernel arguments with b.param (or build a
        signature)."""
        return sorted(n for n, d in self.graph.nodes(data=True)
                      if d.get("params") or d.get("signature"))

    def builder(self, builder_id: str | None) -> Builder | None:
        """The builder `builder_id` names, or None when it declares no arguments."""
        if builder_id is None or builder_id not in self.graph:
            return None
        return self._builders.get(builder_id)

    def param_builders(self) -> list[Builder]:
        """The b.param builders, by id."""
        return [b for _id, b in sorted(self._builders.items()) if b.uses_param]

    @cached_property
    def _builders(self) -> dict[str, Builder]:
        found = {}
        for node in self.builders():
            data = self.graph.nodes[node]
            params = tuple(Param(str(p["param"]), str(p.get("type") or ""),
                                 str(p.get("guard") or ALWAYS), int(p["index"]), int(p["line"]))
                           for p in sorted(data.get("params") or [], key=lambda p: p["index"]))
            signature = tuple(
                SignatureEntry(str(e.get("name")), e.get("type"), str(e.get("guard", ALWAYS)),
                               str(e.get("method") or "")) for e in data.get("signature") or [])
            sites = data.get("sites") or []
            line = int(sites[0]["line"]) if sites else int(params[0].line if params else 0)
            found[node] = Builder(node, str(data.get("module") or node.split(":", 2)[1]),
                                  str(data.get("name") or node.split(":", 2)[2]),
                                  str(data.get("path") or ""), line, params, signature)
        return found

    def _declared_pairs(self) -> dict[tuple[str, str], str]:
        """(cpp path, mirror symbol) -> builder id, from profile launch_surface entries."""
        pairs = {}
        roots = list(self.surface.python_roots)
        for _node, data in self.graph.nodes(data=True):
            if data.get("kind") != FactKind.LAUNCH_SURFACE:
                continue
            mirror, source = data.get("cpp_mirror"), data.get("python_source")
            if not (isinstance(mirror, dict) and isinstance(source, dict)):
                continue
            module = module_name_for(str(source.get("file")), roots)
            if module and mirror.get("file") and mirror.get("symbol") and source.get("symbol"):
                pairs[(str(mirror["file"]), str(mirror["symbol"]))] = symbol_node(
                    module, str(source["symbol"]))
        return pairs

    def _pair_list(self, key: tuple[str, str], names: list[str], declared: dict[
            tuple[str, str], str], preferred: str | None) -> Pairing:
        """A list's builder: declared, else equal names (a b.param builder either way);
        else the one preferred (as at the base) while it is readable; else the closest."""
        builders = self.param_builders()
        if key in declared:
            found = self.builder(declared[key])
            if found is not None and found.uses_param:
                return Pairing(found, PairedBy.DECLARED)
        else:
            exact = equal_names(names, list(self._builders.values()))
            if exact is not None and exact.uses_param:
                return Pairing(exact, PairedBy.NAMES)
        if preferred is not None:
            found = self.builder(preferred)
            if found is not None and found.uses_param:
                return Pairing(found, PairedBy.AS_AT_BASE)
            path = self.module_path(self._node_module(preferred))
            if path is not None and path in self.parse_failures:
                # Its builder's file no longer parses: pairing it with some other builder
                # would invent a disagreement. The surface row reports the file as changed.
                return Pairing(None, PairedBy.BUILDER_UNREADABLE)
        return Pairing(closest(names, builders), PairedBy.CLOSEST)

    def _node_module(self, node: str) -> str:
        data = self.graph.nodes[node] if node in self.graph else {}
        return str(data.get("module") or node.split(":", 2)[1] if ":" in node else "")

    def argument_lists(self, prefer: Mapping[str, str] | None = None) -> list[ArgList]:
        """Every C++ KernelArgument list, paired. `prefer` maps a list's subject to the
        builder id it restated at the base (what `argument_lists` said there)."""
        key = frozenset((prefer or {}).items())
        if key not in self._paired_lists:  # kernargs asks once per view for lists and calls
            self._paired_lists[key] = self._lists(prefer or {})
        return self._paired_lists[key]

    @cached_property
    def _paired_lists(self) -> dict[frozenset[tuple[str, str]], list[ArgList]]:
        return {}

    def _lists(self, prefer: Mapping[str, str]) -> list[ArgList]:
        declared = self._declared_pairs()
        found = []
        for node, data in sorted(self.graph.nodes(data=True)):
            if data.get("kind") != FactKind.KERNEL_ARGUMENT_LIST:
                continue
            entries = tuple(ListEntry(e.get("kind"), e.get("size"), str(e.get("name")),
                                      int(e.get("line") or 0)) for e in data.get("entries", []))
            path, name = str(data["path"]), str(data["label"])
            function = str(data.get("function") or name)
            pairing = self._pair_list((path, function), [e.name for e in entries], declared,
                                      prefer.get(f"{path}:{name}"))
            unread = tuple(Unread(int(u.get("line") or 0), str(u.get("construct")))
                           for u in data.get("unread") or [])
            found.append(ArgList(node, path, name, function, int(data.get("line") or 0),
                                 entries, bool(data.get("dynamic")), pairing, unread))
        return [self._pair_nameless(a, found, prefer) for a in found]

    def _pair_nameless(self, arglist: ArgList, lists: list[ArgList],
                       prefer: Mapping[str, str]) -> ArgList:
        """A list whose entries carry no names (a signature pin that writes kinds and sizes
        only): the builder it restated at the base; else that of the one named list with
        the same kinds and sizes in order (several builders that fit: none)."""
        if not arglist.entries or any(e.name not in ("", "None") for e in arglist.entries):
            return arglist
        preferred = self.builder(prefer.get(arglist.subject))
        pairing = Pairing(None)
        if preferred is not None and preferred.uses_param:
            pairing = Pairing(preferred, PairedBy.AS_AT_BASE)
        else:
            shape = [(e.kind, e.size) for e in arglist.entries]
            fits = {other.pairing.builder.id: other.pairing.builder for other in lists
                    if other is not arglist and other.pairing.builder is not None
                    and other.pairing.how in (PairedBy.NAMES, PairedBy.DECLARED)
                    and [(e.kind, e.size) for e in other.entries] == shape}
            if len(fits) == 1:
                pairing = Pairing(next(iter(fits.values())), PairedBy.SAME_SHAPE)
        return replace(arglist, pairing=pairing)

    def launch_calls(self, prefer: Mapping[str, str] | None = None) -> list[LaunchCall]:
        """Every positional launch() call, by file and line, paired with the builder the
        profile declares for its function, else with that of the list of its own pack
        (the only one; else the one its launcher is named for; else by position).
        `prefer` is what `argument_lists` takes: the lists' pairings decide."""
        declared = self._declared_pairs()
        lists: dict[str, list[ArgList]] = {}
        for arglist in self.argument_lists(prefer):
            if arglist.pairing.builder is not None:
                lists.setdefault(arglist.path, []).append(arglist)
        calls = sorted(((n, d) for n, d in self.graph.nodes(data=True)
                        if d.get("kind") == FactKind.LAUNCH_CALL),
                       key=lambda nd: (str(nd[1]["path"]), int(nd[1].get("line") or 0)))
        found = []
        prefer = prefer or {}
        for node, data in calls:
            path = str(data["path"])
            arguments = tuple(
                LaunchArgument(str(a.get("text")), a.get("name"), a.get("kind"), a.get("size"),
                               int(a.get("line") or 0))
                for a in data.get("kernel_arguments") or [] if isinstance(a, dict))
            names = [a.name for a in arguments]
            pairing = Pairing(None)
            for symbol in (f"{data.get('class')}::{data.get('function')}",
                           str(data.get("function"))):
                builder = self.builder(declared.get((path, symbol)))
                if builder is not None and builder.uses_param:
                    pairing = Pairing(builder, PairedBy.DECLARED)
                    break
            if pairing.builder is None and lists.get(path):
                peers = [n for n, d in calls if d["path"] == path]
                pairing = launch_by_list(str(data.get("receiver") or ""), peers.index(node),
                                         len(peers), sorted(lists[path], key=lambda a: a.line),
                                         names)
            elif pairing.builder is None:
                pairing = self._pair_listless_launch(f"{path}:{data['label']}", names, prefer)
            found.append(LaunchCall(node, path, str(data["label"]), str(data.get("function")),
                                    str(data.get("class")), str(data.get("receiver") or ""),
                                    int(data.get("line") or 0),
                                    tuple(str(a) for a in data.get("arguments", [])), pairing,
                                    arguments,
                                    tuple(str(p) for p in data.get("launch_parameters") or [])))
        return found

    def _pair_listless_launch(self, subject: str, names: list[str | None],
                              prefer: Mapping[str, str]) -> Pairing:
        """A launch() in a pack that keeps no KernelArgument list (the older era): the
        builder it passed at the base while that still declares arguments; else the
        builder (or signature factory) whose names it passes; else the closest b.param
        builder by names."""
        preferred = self.builder(prefer.get(subject))
        if preferred is not None:
            return Pairing(preferred, PairedBy.AS_AT_BASE)
        exact = launch_by_names(names, list(self._builders.values()))
        if exact is not None:
            return Pairing(exact, PairedBy.NAMES)
        near = launch_closest(names, self.param_builders())
        return Pairing(near, PairedBy.CLOSEST) if near is not None else Pairing(None)

    def kpack_signatures(self, prefer: Mapping[str, str] | None = None) -> list[KpackSignature]:
        """Packed descriptors' recorded signatures (`kind: kpack`), one per distinct
        signature in each descriptor file, paired with the builder `prefer` names for
        its subject (as at the base), else the closest b.param builder."""
        prefer = prefer or {}
        builders = self.param_builders()
        seen: dict[tuple[Any, ...], KpackSignature] = {}
        for variant in self.variant_records():
            for launch in variant.launches:
                if launch.kind != _KPACK_LAUNCH or launch.signature is None:
                    continue
                entries = tuple(ListEntry(e.get("kind"), e.get("size"), str(e.get("name")),
                                          variant.line) for e in launch.signature)
                key = (variant.path, tuple((e.kind, e.size, e.name) for e in entries))
                if key in seen:
                    continue
                subject = f"{variant.path}:kpack-signature:{variant.name}"
                preferred = next((b for b in builders if b.id == prefer.get(subject)), None)
                pairing = (Pairing(preferred, PairedBy.BASE_PAIRING) if preferred is not None
                           else Pairing(closest([e.name for e in entries], builders),
                                        PairedBy.CLOSEST_NAMES))
                if pairing.builder is None:
                    continue
                seen[key] = KpackSignature(variant.path, variant.name, variant.line, entries,
                                           pairing)
        return list(seen.values())

    def aot_kernels(self) -> list[AotKernel]:
        """AOT catalog kernels, paired with the b.param builder a producer script in the
        same folder calls itself, else the first it reaches through others."""
        nodes = dict(self.graph.nodes(data=True))
        found = []
        for node, data in sorted(nodes.items()):
            if data.get("kind") != FactKind.AOT_KERNEL:
                continue
            folder = posixpath.dirname(str(data["path"]))
            producers = [n for n, d in nodes.items() if d.get("kind") == FactKind.FUNCTION
                         and posixpath.dirname(str(d.get("path"))) == folder]
            reached = sorted({t for n in producers for t in self.edges_of(n, {"reads"})
                              if nodes.get(t, {}).get("params")}) or sorted(
                {t for n in producers for t in self.reach(n) if nodes.get(t, {}).get("params")})
            builder = self.builder(reached[0]) if reached else None
            arguments = tuple(AotArgument(str(a["name"]), str(a["type"]))
                              for a in data.get("args", []))
            found.append(AotKernel(node, str(data["path"]), str(data["label"]),
                                   int(data.get("line") or 0), arguments,
                                   Pairing(builder, PairedBy.PRODUCER if builder else
                                           PairedBy.NONE)))
        return found

    def assignment(self, module: str, dotted: str) -> Assignment | None:
        """The one simple module-level assignment `dotted`, read in `module`, resolves to
        (following imports); None when it is anything else or assigned more than once."""
        target = self.resolve(module, dotted)
        if target is None or target not in self.graph:
            return None
        data = self.graph.nodes[target]
        if data.get("kind") != FactKind.ASSIGNMENT or len(data.get("sites", [])) != 1:
            return None
        value = data["sites"][0].get("value")
        if not isinstance(value, str):
            return None
        return Assignment(str(data.get("module")), str(data.get("name")), value)

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

    @cached_property
    def _module_by_path(self) -> dict[str, str]:
        return {str(self.module_path(m)): m for m in self.modules()}

    def module_at(self, path: str) -> str | None:
        """The module name the graph gave the Python file `path`, or None."""
        return self._module_by_path.get(path)

    def _definition(self, node: str) -> Definition | None:
        data = self.graph.nodes[node] if node in self.graph else {}
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
        return Definition(node, kind, str(data.get("module")),
                                      str(data.get("name")), str(data.get("path")), sites)

    def definitions(self, module: str) -> list[Definition]:
        """Every function, class and assignment `module` defines, by name."""
        found = (self._definition(n) for n in self.edges_of(module_node(module), {"defines"}))
        return sorted((d for d in found if d is not None), key=lambda d: d.name)

    def definition(self, module: str, name: str) -> Definition | None:
        """The definition of `name` (a qualname) in `module`, or None."""
        return self._definition(symbol_node(module, name))

    def readers(self, definition: Definition) -> list[Reader]:
        """Who reads `definition`: functions and classes by name, modules by import."""
        found = []
        for node in self.readers_of(definition.id):
            data = self.graph.nodes[node]
            module = str(data.get("module"))
            if data.get("kind") == "module":
                found.append(Reader(node, module, None, str(data.get("path")), 0,
                                                ReadHow.IMPORTS))
                continue
            reads = definition.id in self.edges_of(node, {"reads"})
            reader = self._definition(node)
            found.append(Reader(
                node, module, str(data.get("name")), str(data.get("path")),
                reader.line if reader is not None else 0,
                ReadHow.READS if reads else ReadHow.INHERITS))
        return sorted(found)

    def reached(self, definition: Definition) -> list[Definition]:
        """Every definition `definition` reaches by name in the repository (not itself)."""
        found = (self._definition(n) for n in sorted(self.reach(definition.id)))
        return [d for d in found if d is not None]

    def launch_surfaces(self) -> list[LaunchSurfaceEntry]:
        """Every profile's launch-surface entries, by profile and name."""
        found = []
        for node, data in self.graph.nodes(data=True):
            if data.get("kind") != FactKind.LAUNCH_SURFACE:
                continue
            path = str(data.get("path"))
            name = str(data.get("name") or node.removeprefix(f"surface:{path}:"))
            found.append(LaunchSurfaceEntry(
                path, name, int(data.get("line") or 0), self._locator(data.get("python_source")),
                self._locator(data.get("cpp_mirror")),
                tuple(str(f) for f in data.get("kmd_fields") or ()),
                _text(data.get("guard")), _text(data.get("test"))))
        return sorted(found, key=lambda e: (e.profile, e.name))

    @staticmethod
    def _locator(raw: Any) -> Locator | None:
        if not isinstance(raw, dict):
            return None
        symbol = raw.get("symbol")
        return Locator(str(raw.get("raw")), str(raw.get("file")), str(symbol) if symbol else None)

    def symbol_names(self, paths: Iterable[str]) -> list[SymbolString]:
        """The native symbol strings the descriptor files `paths` name."""
        return sorted(
            SymbolString(fact.name, path, fact.line, str(fact.data.get("role", "")))
            for path in paths if path in self.snapshot
            for fact in self.cache.facts(self.snapshot, path) if fact.kind == FactKind.SYMBOL)

    def symbol_declarations(self, paths: Iterable[str]) -> list[SymbolString]:
        """The `constexpr` strings the C++ files `paths` declare."""
        return sorted(
            SymbolString(str(fact.data.get("value")), path, fact.line, fact.name)
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
        return sorted(n for n, d in self.graph.nodes(data=True)
                      if d.get("kind") == FactKind.VARIANT)

    def packer_modules(self) -> set[str]:
        index = TreeIndex.of(self.snapshot, self.surface, self.cache.store)
        return {m for m, info in self._modules.items()
                if index.kind(info.path) == SurfaceKind.HKP_PACK}

    def shipped_closure(self) -> set[str]:
        """Every module a shipped variant imports, directly or through re-exports, and
        every module the packer reaches."""
        modules = self._modules_nodes()
        roots = {self.graph.nodes[m]["module"] for v in self.variants()
                 for m in self.edges_of(v, {"ships"}) if m in modules}
        return self.module_closure(roots | self.packer_modules())

    def _modules_nodes(self) -> set[str]:
        return {module_node(m) for m in self._modules}

    def all_archs(self) -> set[str]:
        return {a for v in self.variants() for a in self.graph.nodes[v].get("arch_expanded", [])}

    @cached_property
    def _archs_by_module(self) -> dict[str, frozenset[str]]:
        """Module -> the architectures that ship it, computed once per graph: every arch
        for what the packer reaches, else those of the variants whose imports reach it."""
        shipped: dict[str, set[str]] = {}
        closures: dict[frozenset[str], set[str]] = {}
        modules = self._modules_nodes()
        for variant in self.variants():
            sources = frozenset(str(self.graph.nodes[m].get("module")) for m in self.edges_of(
                variant, {"ships"}) if m in modules)
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

    # ------------------------------------------------------- variants and descriptors
    def variant_records(self, path: str | None = None) -> list[Variant]:
        """The shipped variants (those a descriptor file `path` holds, when given), by id."""
        if path is not None:
            node = f"descriptor:{path}"
            ids = sorted(self.edges_of(node, {"contains"})) if node in self.graph else []
            return [self._variants[v] for v in ids if v in self._variants]
        return [self._variants[v] for v in sorted(self._variants)]

    @cached_property
    def _variants(self) -> dict[str, Variant]:
        found = {}
        for node in self.variants():
            data = self.graph.nodes[node]
            launches = tuple(
                VariantLaunch(str(launch.get("kind")), _text(launch.get("source")),
                              _text(launch.get("builder")), _text(launch.get("launch")),
                              tuple(e for e in launch["signature"] if isinstance(e, dict))
                              if isinstance(launch.get("signature"), list) else None)
                for launch in data.get("launches", []) if isinstance(launch, dict))
            found[node] = Variant(node, str(data["path"]), str(data["label"]),
                                  int(data.get("line") or 0),
                                  tuple(data.get("arch_expanded", [])),
                                  _text(data.get("kdp")), launches)
        return found

    def variants_building(self, builder_id: str) -> list[Variant]:
        """The shipped variants whose launches name `builder_id`, by id."""
        ids = self.edges_of(builder_id, {"builds"}, reverse=True) if builder_id in self.graph \
            else set()
        return [self._variants[v] for v in sorted(ids) if v in self._variants]

    def descriptor_files(self) -> list[str]:
        """The descriptor (JSON and YAML) files of the snapshot, parsed or not, sorted."""
        return sorted(str(d["path"]) for _n, d in self.graph.nodes(data=True)
                      if d.get("kind") == _DESCRIPTOR_FILE)

    def kdps(self) -> list[Kdp]:
        """The KDPs the descriptor files declare, by file and line."""
        return sorted(self._kdps, key=lambda k: (k.path, k.line, k.name))


def build_graph(snapshot: Snapshot, cache: FactCache) -> SymbolGraph:
    """The symbol graph of `snapshot`; facts come from (and stay in) `cache`."""
    return SymbolGraph(snapshot, cache)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
