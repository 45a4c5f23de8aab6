"""The descriptor domain of a snapshot's graph: descriptor files, KDPs and their families,
the shipped variants (what each ships and builds, its architectures), launch-surface
profile entries and native symbol strings.

Maintainers: every variant is resolved here, once, into the `Variant`, `Kdp` and `Family`
records of `records.py`; the variant census (impact/checks/variant_set.py), the arch
queries (impact/archs.py) and the kernel-argument check read those and never a variant
fact. Builds its nodes (`descriptor:`, `variant:`, `aot:`, `surface:`, `symbol:`) and
the `ships`/`builds` edges to the Python domain's modules and builders into the shared
graph of `core.py`; asks the Python domain only what modules import.
"""

from __future__ import annotations

import posixpath
import re
from functools import cached_property
from typing import Any

from impact.facts import Fact
from impact.graph.core import Nodes, module_node, symbol_node, text_or_none
from impact.graph.python import PythonGraph
from impact.graph.records import (
    DescriptorId,
    Engine,
    Family,
    Kdp,
    KmdField,
    LaunchSurfaceEntry,
    Locator,
    Variant,
    VariantLaunch,
)
from impact.kinds import DescriptorType, FactKind, Language, LaunchKind, SurfaceKind

DESCRIPTOR_FILE = "descriptor-file"  # the node kind of a descriptor file
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def descriptor_type(path: str) -> DescriptorType | None:
    """The type a descriptor's file name gives it (impact/descriptors decides), imported
    on first use: the descriptor readers load yaml and jsonschema, and a report on a
    change outside every surface needs neither."""
    from impact.descriptors.facts import descriptor_type as of_path

    return of_path(path)


def family_key(name: str) -> str:
    """A comparable family key: `Gfx950AttentionTiled2d` and `gfx950_attention_tiled_2d`
    both give `gfx950attentiontiled2d`."""
    return _CAMEL.sub("_", name).lower().replace("_", "")


class DescriptorGraph:
    """One snapshot's descriptor files and what they declare, with the variants' edges
    to the modules they ship and the builders they build."""

    def __init__(self, nodes: Nodes, python: PythonGraph) -> None:
        self.nodes = nodes
        self.python = python
        self._variants: dict[str, Variant] = {}
        self._by_file: dict[str, dict[str, Variant]] = {}
        # In fact order per file, repeats kept: what a family resolution walks.
        self._declared: dict[str, list[Kdp | Variant]] = {}
        self._failures: dict[str, tuple[int, str]] = {}  # path -> its first parse failure
        self._ids: list[DescriptorId] = []
        self._kmd_fields: list[KmdField] = []
        self._engines: list[tuple[str, Fact]] = []
        for language in (Language.JSON, Language.YAML):
            for path, facts in nodes.files(language):
                file_node = f"descriptor:{path}"
                nodes.graph.add_node(file_node, kind=DESCRIPTOR_FILE, path=path)
                for fact in facts:
                    self._add(path, file_node, fact)

    def _add(self, path: str, file_node: str, fact: Fact) -> None:
        graph, edge = self.nodes.graph, self.nodes.edge
        if fact.kind == FactKind.VARIANT:
            node = f"variant:{path}:{fact.name}"
            graph.add_node(node, kind=FactKind.VARIANT, path=path, line=fact.line,
                           label=fact.name, **fact.data)
            edge(file_node, node, "contains")
            for launch in fact.data.get("launches", []):
                source, builder = launch.get("source"), launch.get("builder")
                if launch.get("kind") != LaunchKind.ROCKE or not isinstance(source, str):
                    continue
                edge(node, module_node(source), "ships")
                if isinstance(builder, str):
                    edge(node, symbol_node(source, builder), "builds",
                         launch=launch.get("launch"))
            variant = _variant(node, path, fact)
            self._variants[node] = variant  # a name repeated in one file: the last one
            self._by_file.setdefault(path, {})[node] = variant
            self._declared.setdefault(path, []).append(variant)
        elif fact.kind == FactKind.SYMBOL:
            graph.add_node(f"symbol:{fact.name}", kind=FactKind.SYMBOL, value=fact.name)
            edge(file_node, f"symbol:{fact.name}", "names-symbol", line=fact.line, **fact.data)
        elif fact.kind == FactKind.AOT_KERNEL:
            node = f"aot:{path}:{fact.name}"
            graph.add_node(node, kind=FactKind.AOT_KERNEL, path=path, line=fact.line,
                           label=fact.name, **fact.data)
            edge(file_node, node, "contains")
        elif fact.kind == FactKind.KDP:
            kdp = Kdp(fact.name, path, fact.line,
                      tuple(str(r) for r in fact.data.get("ukd_refs", [])))
            self._declared.setdefault(path, []).append(kdp)
        elif fact.kind == FactKind.LAUNCH_SURFACE:
            node = f"surface:{path}:{fact.name}"
            graph.add_node(node, kind=FactKind.LAUNCH_SURFACE, path=path, line=fact.line,
                           **fact.data)
            edge(file_node, node, "contains")
        elif fact.kind == FactKind.DESCRIPTOR and fact.name != path:
            self._ids.append(DescriptorId(path, str(fact.data.get("type") or ""), fact.name))
        elif fact.kind == FactKind.KMD_FIELD:
            self._kmd_fields.append(KmdField(path, fact.line, fact.name,
                                             text_or_none(fact.data.get("kmd"))))
        elif fact.kind == FactKind.ENGINE:
            self._engines.append((path, fact))
        elif fact.kind == FactKind.PARSE_FAILURE and path not in self._failures:
            self._failures[path] = (fact.line, str(fact.data.get("reason", "")))

    # ------------------------------------------------------------------ variants
    def files(self) -> list[str]:
        """The descriptor (JSON and YAML) files of the snapshot, parsed or not, sorted."""
        return sorted(str(d["path"]) for _n, d in self.nodes.of_kind(DESCRIPTOR_FILE))

    def variants(self, path: str | None = None) -> list[Variant]:
        """The shipped variants (those the descriptor file `path` holds, when given), by id."""
        found = self._variants if path is None else self._by_file.get(path, {})
        return [v for _id, v in sorted(found.items())]

    def variants_building(self, builder_id: str) -> list[Variant]:
        """The shipped variants whose launches name `builder_id`, by id."""
        ids = self.nodes.edges_of(builder_id, {"builds"}, reverse=True) \
            if builder_id in self.nodes.graph else set()
        return [self._variants[v] for v in sorted(ids) if v in self._variants]

    def families(self) -> dict[str, Family]:
        """Every KDP family by `family_key` (the census pins a family's variants; a
        native pack ships its family's architectures)."""
        return self._families

    @cached_property
    def _families(self) -> dict[str, Family]:
        """Every KDP family by `family_key`, with the variants it ships (inline UKDs and
        the standalone UKDs it names by id). Descriptor files are read in path order and
        each file's declarations in its facts' order: the last KDP to declare a key holds
        it (a KDP file that does not parse holds its stem's, shipping nothing), and an
        inline UKD joins the family its KDP field names as the walk finds it."""
        out: dict[str, Family] = {}
        standalone: dict[str, tuple[str, str, int]] = {}
        refs: dict[str, list[str]] = {}
        descriptors = set(self.nodes.index().paths(SurfaceKind.DESCRIPTOR))
        for path in self.files():
            kind = descriptor_type(path)
            if path not in descriptors or kind not in (DescriptorType.KDP, DescriptorType.UKD):
                continue
            declared = self._declared.get(path, [])
            if kind == DescriptorType.UKD:
                for record in declared:
                    if isinstance(record, Variant) and record.ukd_id:
                        standalone[record.ukd_id] = (record.name, path, record.line)
                continue
            if path in self._failures:
                stem = posixpath.basename(path).split(".")[0]
                line, reason = self._failures[path]
                out[family_key(stem)] = Family(stem, path, line, broken=reason)
                continue
            for record in declared:
                if isinstance(record, Kdp):
                    out[family_key(record.name)] = Family(record.name, path, record.line)
                    refs[record.name] = list(record.ukd_refs)
                elif record.kdp:
                    family = out.setdefault(family_key(record.kdp), Family(record.kdp, path, 0))
                    family.variants[record.name] = (path, record.line)
        for family in out.values():
            for ref in refs.get(family.name, []):
                if ref in standalone:
                    name, path, line = standalone[ref]
                    family.variants[name] = (path, line)
        return out

    # --------------------------------------------------------------- architectures
    def all_archs(self) -> set[str]:
        return {a for v in self._variants.values() for a in v.archs}

    def _ships(self, variant: str) -> frozenset[str]:
        """The repository modules a variant's launches name."""
        return frozenset(str(self.nodes.graph.nodes[m].get("module"))
                         for m in self.nodes.edges_of(variant, {"ships"})
                         if m in self._module_nodes)

    @cached_property
    def _module_nodes(self) -> set[str]:
        return {module_node(m) for m in self.python.modules()}

    def shipped_closure(self) -> set[str]:
        """Every module a shipped variant imports, directly or through re-exports, and
        every module the packer reaches."""
        roots = {m for v in sorted(self._variants) for m in self._ships(v)}
        return self.python.module_closure(roots | self.python.packer_modules())

    @cached_property
    def _archs_by_module(self) -> dict[str, frozenset[str]]:
        """Module -> the architectures that ship it, computed once per graph: every arch
        for what the packer reaches, else those of the variants whose imports reach it."""
        shipped: dict[str, set[str]] = {}
        closures: dict[frozenset[str], set[str]] = {}
        for node, variant in sorted(self._variants.items()):
            sources = self._ships(node)
            if sources not in closures:
                closures[sources] = self.python.module_closure(sources)
            for module in closures[sources]:
                shipped.setdefault(module, set()).update(variant.archs)
        everything = frozenset(self.all_archs())
        result = {m: frozenset(a) for m, a in shipped.items()}
        for module in self.python.module_closure(self.python.packer_modules()):
            result[module] = everything
        return result

    def archs_of(self, module: str) -> set[str]:
        """Architectures that ship `module`: every arch when the packer reaches it, else
        those of the variants whose imports reach it."""
        return set(self._archs_by_module.get(module, ()))

    # ------------------------------------------ ids, KMD fields and engines' references
    def descriptor_ids(self) -> list[DescriptorId]:
        """Every descriptor file's own id (a file with none has no entry), by path."""
        return sorted(self._ids, key=lambda d: (d.path, d.id))

    def kmd_fields(self, path: str | None = None) -> list[KmdField]:
        """The fields the KMDs declare (those of the KMD file `path`, when given)."""
        return [f for f in sorted(self._kmd_fields, key=lambda f: (f.path, f.line, f.name))
                if path is None or f.path == path]

    def engines(self) -> list[Engine]:
        """Every UED's engine, with the ids, knobs and symbols it names, by path."""
        found = []
        for path, fact in self._engines:
            data = fact.data
            symbols = sorted(
                str(self.nodes.graph.nodes[n].get("value") or n.removeprefix("symbol:"))
                for n in self.nodes.edges_of(f"descriptor:{path}", {"names-symbol"}))
            knobs = data.get("knobs") if isinstance(data.get("knobs"), list) else []
            found.append(Engine(path, fact.line, fact.name, text_or_none(data.get("id")),
                                text_or_none(data.get("metadata")),
                                text_or_none(data.get("heuristic")),
                                tuple(str(k) for k in knobs), tuple(symbols)))
        return sorted(found, key=lambda e: (e.path, e.name))

    # ------------------------------------------------- launch surfaces and symbols
    def launch_surfaces(self) -> list[LaunchSurfaceEntry]:
        """Every profile's launch-surface entries, by profile and name."""
        found = []
        for node, data in self.nodes.of_kind(FactKind.LAUNCH_SURFACE):
            path = str(data.get("path"))
            name = str(data.get("name") or node.removeprefix(f"surface:{path}:"))
            found.append(LaunchSurfaceEntry(
                path, name, int(data.get("line") or 0), _locator(data.get("python_source")),
                _locator(data.get("cpp_mirror")),
                tuple(str(f) for f in data.get("kmd_fields") or ()),
                text_or_none(data.get("guard")), text_or_none(data.get("test"))))
        return sorted(found, key=lambda e: (e.profile, e.name))


def _variant(node: str, path: str, fact: Fact) -> Variant:
    data = fact.data
    launches = tuple(
        VariantLaunch(str(launch.get("kind")), text_or_none(launch.get("source")),
                      text_or_none(launch.get("builder")), text_or_none(launch.get("launch")),
                      tuple(e for e in launch["signature"] if isinstance(e, dict))
                      if isinstance(launch.get("signature"), list) else None)
        for launch in data.get("launches", []) if isinstance(launch, dict))
    return Variant(node, path, fact.name, int(fact.line or 0),
                   tuple(data.get("arch_expanded", [])), text_or_none(data.get("kdp")),
                   launches, text_or_none(data.get("id")))


def _locator(raw: Any) -> Locator | None:
    if not isinstance(raw, dict):
        return None
    symbol = raw.get("symbol")
    return Locator(str(raw.get("raw")), str(raw.get("file")), str(symbol) if symbol else None)
