"""The kernel domain of a snapshot's graph: the builders that declare kernel arguments
(`b.param` sequences, SignatureBuilder factories), every copy of their argument lists
(C++ KernelArgument lists, launch() calls, kpack signatures, AOT kernels), each paired
with the builder it restates, and the C++ include closure.

Maintainers: builds its nodes (`cpp:`, `cpplist:`, `launch:`) and edges (`includes`,
`contains`, `declares-symbol`) into the shared graph of `core.py` from C++ facts only.
Every copy of an argument list is paired with its builder here, by the rules of
`pairing.py`, and nowhere else: declared by a profile, else equal names, else (given
`prefer`) the builder it restated at the base, else the closest b.param builder; by
names (equal or closest) never a builder whose path names another arch than the copy's.
Asks the Python domain where a builder's module is and what a function reaches, and
the descriptor domain for the shipped variants' kpack signatures.
"""

from __future__ import annotations

import posixpath
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import cached_property
from typing import Any

from impact.graph.core import Nodes, module_name_for, symbol_node, text_or_none
from impact.graph.descriptors import DescriptorGraph, family_key
from impact.graph.pairing import (
    closest,
    equal_names,
    launch_by_list,
    launch_by_names,
    launch_closest,
    list_for_launch,
    of_arch,
)
from impact.graph.python import PythonGraph
from impact.graph.records import (
    ALWAYS,
    AotArgument,
    AotKernel,
    ArgList,
    Builder,
    KpackSignature,
    LaunchArgument,
    LaunchCall,
    ListEntry,
    MetadataRead,
    PairedBy,
    Pairing,
    Param,
    SignatureEntry,
    Unread,
)
from impact.kinds import DescriptorType, FactKind, Language, LaunchKind

CPP_FILE = "cpp-file"  # the node kind of a C++ file


class KernelGraph:
    """One snapshot's kernel-argument builders and the copies of their lists, paired."""

    def __init__(self, nodes: Nodes, python: PythonGraph, descriptors: DescriptorGraph) -> None:
        self.nodes = nodes
        self.python = python
        self.descriptors = descriptors
        self._paired_lists: dict[frozenset[tuple[str, str]], list[ArgList]] = {}
        self._reads: list[MetadataRead] = []
        self._strings: dict[str, set[str]] = {}  # path -> the constexpr strings it declares
        self._build()

    def _build(self) -> None:
        from impact.cpp import resolve_include

        graph, edge = self.nodes.graph, self.nodes.edge
        files = dict(self.nodes.files(Language.CPP))
        existing = set(files)
        roots = list(self.nodes.surface.include_roots)
        for path, facts in files.items():
            node = f"cpp:{path}"
            graph.add_node(node, kind=CPP_FILE, path=path)
            for fact in facts:
                if fact.kind == FactKind.INCLUDE:
                    target = resolve_include(path, fact.name, bool(fact.data.get("quoted")),
                                             existing, roots)
                    if target is not None:
                        edge(node, f"cpp:{target}", "includes", line=fact.line)
                elif fact.kind == FactKind.KERNEL_ARGUMENT_LIST:
                    child = f"cpplist:{path}:{fact.name}"
                    graph.add_node(child, kind=FactKind.KERNEL_ARGUMENT_LIST, path=path,
                                   line=fact.line, label=fact.name, **fact.data)
                    edge(node, child, "contains")
                elif fact.kind == FactKind.LAUNCH_CALL:
                    child = f"launch:{path}:{fact.name}"
                    graph.add_node(child, kind=FactKind.LAUNCH_CALL, path=path,
                                   line=fact.line, label=fact.name, **fact.data)
                    edge(node, child, "contains")
                elif fact.kind == FactKind.METADATA_READ:
                    data = fact.data
                    self._reads.append(MetadataRead(
                        path, fact.line, text_or_none(data.get("field")),
                        text_or_none(data.get("field_constant")), text_or_none(data.get("via")),
                        text_or_none(data.get("construct")), text_or_none(data.get("function"))))
                elif fact.kind == FactKind.CONSTEXPR_STRING:
                    value = str(fact.data.get("value"))
                    self._strings.setdefault(path, set()).add(value)
                    if f"symbol:{value}" in graph:
                        edge(node, f"symbol:{value}", "declares-symbol", line=fact.line)

    # ------------------------------------------------------------ metadata reads
    def metadata_reads(self, path: str | None = None) -> list[MetadataRead]:
        """The KMD metadata reads of the C++ files (of `path`, when given), by file, line."""
        return sorted((r for r in self._reads if path is None or r.path == path),
                      key=lambda r: (r.path, r.line, r.field or "", r.construct or ""))

    def kmds_read(self, path: str) -> tuple[list[str], str]:
        """The KMD files whose fields the pack `path` reads, and how they were found: the
        KMDs whose id is the `metadata` of a UED naming a symbol the pack declares
        ("engine"); else those whose file is named for the pack's family ("family")."""
        declared = self._strings.get(path, set())
        ids = {e.metadata for e in self.descriptors.engines()
               if e.metadata and declared & set(e.symbols)}
        kmds = sorted({d.path for d in self.descriptors.descriptor_ids()
                       if d.type == DescriptorType.KMD and d.id in ids})
        if kmds:
            return kmds, "engine"
        suffix = self.nodes.surface.conventions.pack_suffix
        stem = posixpath.basename(path)
        key = family_key(stem.removesuffix(suffix) if suffix else stem.split(".")[0])
        kmds = sorted({d.path for d in self.descriptors.descriptor_ids()
                       if d.type == DescriptorType.KMD
                       and family_key(posixpath.basename(d.path).split(".")[0]) == key})
        return kmds, "family" if kmds else ""

    def include_closure(self, paths: Iterable[str]) -> set[str]:
        """Every C++ file `paths` include, directly or not (the paths themselves too)."""
        graph = self.nodes.graph
        seen = {p for p in paths if f"cpp:{p}" in graph}
        todo = deque(seen)
        while todo:
            current = todo.popleft()
            for nxt in self.nodes.edges_of(f"cpp:{current}", {"includes"}):
                path = str(graph.nodes[nxt].get("path", nxt.removeprefix("cpp:")))
                if path not in seen:
                    seen.add(path)
                    todo.append(path)
        return seen

    # ------------------------------------------------------------------ builders
    def builders(self) -> list[str]:
        """Ids of the functions that declare kernel arguments with b.param (or build a
        signature)."""
        return sorted(n for n, d in self.nodes.graph.nodes(data=True)
                      if d.get("params") or d.get("signature"))

    def builder(self, builder_id: str | None) -> Builder | None:
        """The builder `builder_id` names, or None when it declares no arguments."""
        if builder_id is None or builder_id not in self.nodes.graph:
            return None
        return self._builders.get(builder_id)

    def param_builders(self) -> list[Builder]:
        """The b.param builders, by id."""
        return [b for _id, b in sorted(self._builders.items()) if b.uses_param]

    @cached_property
    def _builders(self) -> dict[str, Builder]:
        found = {}
        for node in self.builders():
            data = self.nodes.graph.nodes[node]
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
                                  str(data.get("path") or ""), line, params, signature,
                                  self._unread(node))
        return found

    def _unread(self, node: str) -> tuple[Unread, ...]:
        """What keeps the builder `node`'s arguments from being read (`Builder.unread`):
        its own `b.param` calls the reader cannot place, and every definition it reaches
        that declares arguments on a builder passed to it or that the reader cannot place."""
        graph = self.nodes.graph
        found = [Unread(int(u["line"]), str(u.get("construct")))
                 for u in graph.nodes[node].get("unread_params") or [] if not u.get("placed")]
        for other in sorted(self.python.reach(node)):
            for u in graph.nodes[other].get("unread_params") or []:
                if u.get("passed_in") or not u.get("placed"):
                    found.append(Unread(int(u["line"]), f"{other.split(':', 2)[-1]}: "
                                                        f"{u.get('construct')}"))
        return tuple(found)

    # ------------------------------------------------------------- list pairing
    def _declared_pairs(self) -> dict[tuple[str, str], str]:
        """(cpp path, mirror symbol) -> builder id, from profile launch_surface entries."""
        pairs = {}
        roots = list(self.nodes.surface.python_roots)
        for _node, data in self.nodes.of_kind(FactKind.LAUNCH_SURFACE):
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
        builders = of_arch(key[0], self.param_builders())
        if key in declared:
            found = self.builder(declared[key])
            if found is not None and found.uses_param:
                return Pairing(found, PairedBy.DECLARED)
        else:
            exact = equal_names(names, of_arch(key[0], list(self._builders.values())))
            if exact is not None and exact.uses_param:
                return Pairing(exact, PairedBy.NAMES)
        if preferred is not None:
            found = self.builder(preferred)
            if found is not None and found.uses_param:
                return Pairing(found, PairedBy.AS_AT_BASE)
            path = self.python.module_path(self._node_module(preferred))
            if path is not None and path in self.nodes.parse_failures:
                # Its builder's file no longer parses: pairing it with some other builder
                # would invent a disagreement. The surface row reports the file as changed.
                return Pairing(None, PairedBy.BUILDER_UNREADABLE)
        near = closest(names, builders)
        if near is None and closest(names, self.param_builders()) is not None:
            return Pairing(None, PairedBy.OTHER_ARCH_ONLY)
        return Pairing(near, PairedBy.CLOSEST)

    def _node_module(self, node: str) -> str:
        data = self.nodes.data(node)
        return str(data.get("module") or node.split(":", 2)[1] if ":" in node else "")

    def argument_lists(self, prefer: Mapping[str, str] | None = None) -> list[ArgList]:
        """Every C++ KernelArgument list, paired. `prefer` maps a list's subject to the
        builder id it restated at the base (what `argument_lists` said there)."""
        key = frozenset((prefer or {}).items())
        if key not in self._paired_lists:  # kernargs asks once per view for lists and calls
            self._paired_lists[key] = self._lists(prefer or {})
        return self._paired_lists[key]

    def _lists(self, prefer: Mapping[str, str]) -> list[ArgList]:
        declared = self._declared_pairs()
        found = []
        for node, data in sorted(self.nodes.graph.nodes(data=True)):
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

    # -------------------------------------------------------------- launch calls
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
        calls = sorted(self.nodes.of_kind(FactKind.LAUNCH_CALL),
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
                pairing = self._pair_listless_launch(path, f"{path}:{data['label']}", names,
                                                     prefer)
            found.append(LaunchCall(node, path, str(data["label"]), str(data.get("function")),
                                    str(data.get("class")), str(data.get("receiver") or ""),
                                    int(data.get("line") or 0),
                                    tuple(str(a) for a in data.get("arguments", [])), pairing,
                                    arguments,
                                    tuple(str(p) for p in data.get("launch_parameters") or [])))
        return found

    def launches_with_own_list(self, prefer: Mapping[str, str] | None = None
                               ) -> list[tuple[LaunchCall, ArgList]]:
        """Each launch() that pairs with no builder, with the KernelArgument list of its own
        pack that it passes (`list_for_launch`), where that list pairs with no builder
        either: the two copies the pack keeps of one argument list, to compare together."""
        lists: dict[str, list[ArgList]] = {}
        for arglist in self.argument_lists(prefer):
            if arglist.pairing.builder is None and arglist.entries:
                lists.setdefault(arglist.path, []).append(arglist)
        calls = [c for c in self.launch_calls(prefer) if c.pairing.builder is None]
        found = []
        for call in calls:
            own = sorted(lists.get(call.path, []), key=lambda a: a.line)
            peers = [c for c in calls if c.path == call.path]
            chosen = list_for_launch(call.receiver, peers.index(call), len(peers), own,
                                     [a.name for a in call.kernel_arguments])
            if chosen is not None:
                found.append((call, chosen))
        return found

    def _pair_listless_launch(self, path: str, subject: str, names: list[str | None],
                              prefer: Mapping[str, str]) -> Pairing:
        """A launch() in a pack that keeps no KernelArgument list (the older era): the
        builder it passed at the base while that still declares arguments; else the
        builder (or signature factory) whose names it passes; else the closest b.param
        builder by names. Never, by names, a builder of another arch (`of_arch`)."""
        preferred = self.builder(prefer.get(subject))
        if preferred is not None:
            return Pairing(preferred, PairedBy.AS_AT_BASE)
        exact = launch_by_names(names, of_arch(path, list(self._builders.values())))
        if exact is not None:
            return Pairing(exact, PairedBy.NAMES)
        near = launch_closest(names, of_arch(path, self.param_builders()))
        if near is not None:
            return Pairing(near, PairedBy.CLOSEST)
        if (launch_by_names(names, list(self._builders.values())) is not None
                or launch_closest(names, self.param_builders()) is not None):
            return Pairing(None, PairedBy.OTHER_ARCH_ONLY)
        return Pairing(None)

    # ------------------------------------------------ kpack and AOT signatures
    def kpack_signatures(self, prefer: Mapping[str, str] | None = None) -> list[KpackSignature]:
        """Packed descriptors' recorded signatures (`kind: kpack`), one per distinct
        signature in each descriptor file, paired with the builder `prefer` names for
        its subject (as at the base), else the closest b.param builder."""
        prefer = prefer or {}
        builders = self.param_builders()
        seen: dict[tuple[Any, ...], KpackSignature] = {}
        for variant in self.descriptors.variants():
            for launch in variant.launches:
                if launch.kind != LaunchKind.KPACK or launch.signature is None:
                    continue
                entries = tuple(ListEntry(e.get("kind"), e.get("size"), str(e.get("name")),
                                          variant.line) for e in launch.signature)
                key = (variant.path, tuple((e.kind, e.size, e.name) for e in entries))
                if key in seen:
                    continue
                subject = f"{variant.path}:kpack-signature:{variant.name}"
                preferred = next((b for b in builders if b.id == prefer.get(subject)), None)
                pairing = (Pairing(preferred, PairedBy.BASE_PAIRING) if preferred is not None
                           else Pairing(closest([e.name for e in entries],
                                                of_arch(variant.path, builders)),
                                        PairedBy.CLOSEST_NAMES))
                if pairing.builder is None:
                    continue
                seen[key] = KpackSignature(variant.path, variant.name, variant.line, entries,
                                           pairing)
        return list(seen.values())

    def aot_kernels(self) -> list[AotKernel]:
        """AOT catalog kernels, paired with the b.param builder a producer script in the
        same folder calls itself, else the first it reaches through others."""
        nodes = dict(self.nodes.graph.nodes(data=True))
        found = []
        for node, data in sorted(nodes.items()):
            if data.get("kind") != FactKind.AOT_KERNEL:
                continue
            folder = posixpath.dirname(str(data["path"]))
            producers = [n for n, d in nodes.items() if d.get("kind") == FactKind.FUNCTION
                         and posixpath.dirname(str(d.get("path"))) == folder]
            reached = sorted({t for n in producers for t in self.nodes.edges_of(n, {"reads"})
                              if nodes.get(t, {}).get("params")}) or sorted(
                {t for n in producers for t in self.python.reach(n)
                 if nodes.get(t, {}).get("params")})
            builder = self.builder(reached[0]) if reached else None
            arguments = tuple(AotArgument(str(a["name"]), str(a["type"]))
                              for a in data.get("args", []))
            found.append(AotKernel(node, str(data["path"]), str(data["label"]),
                                   int(data.get("line") or 0), arguments,
                                   Pairing(builder, PairedBy.PRODUCER if builder else
                                           PairedBy.NONE)))
        return found
