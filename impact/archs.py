"""Which GPU architectures a change reaches: every arch decision checks and the report use.

Maintainers: reads the symbol graph's records only (variants, KDPs, the modules each
variant ships, reached through `SymbolGraph.archs_of`); never reads git, facts or
source, and never spells a library's paths (the pack suffix comes from the map's
conventions). "Every architecture" is always the map's own label,
`surface.all_archs`. Callers pass anything that holds the surface, the views and a
graph per snapshot (the CheckContext does).
"""

from __future__ import annotations

import posixpath
import re
from typing import Protocol

from impact.git import Snapshot, Views
from impact.graph import SymbolGraph
from impact.surface import SurfaceMap

# `gfx950`, `gfx90a`, and `Gfx950` in a C++ file name, but not `Gfx950C` of `Gfx950ConvFwd`.
PATH_ARCH = re.compile(r"[Gg]fx[0-9]+(?:[a-z](?![a-z]))?")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_LEADING_ARCH = re.compile(r"^(gfx[0-9]+[a-z]?)(?:_|$)")
_KDP, _UKD = "kdp", "ukd"  # descriptor types, as the file name gives them


class Graphs(Protocol):
    """What the arch queries read: the map, the views and one graph per snapshot."""

    surface: SurfaceMap
    views: Views

    def graph(self, snapshot: Snapshot) -> SymbolGraph: ...

    def module_of(self, path: str) -> str | None: ...


def descriptor_type(path: str) -> str | None:
    """The type a descriptor's file name gives it (impact/descriptors decides), imported
    on first use: the descriptor readers load yaml and jsonschema, and a report on a
    change outside every surface needs neither."""
    from impact.descriptors.facts import descriptor_type as of_path

    return of_path(path)


def family_key(name: str) -> str:
    """A comparable family key: `Gfx950AttentionTiled2d` and `gfx950_attention_tiled_2d`
    both give `gfx950attentiontiled2d`."""
    return _CAMEL.sub("_", name).lower().replace("_", "")


def _variant_archs(graph: SymbolGraph, path: str | None = None) -> set[str]:
    return {a for v in graph.variant_records(path) for a in v.archs}


def all_archs(ctx: Graphs) -> frozenset[str]:
    """Every architecture a variant ships at the base or at the head."""
    return frozenset(_variant_archs(ctx.graph(ctx.views.base))
                     | _variant_archs(ctx.graph(ctx.views.head)))


def archs_for(ctx: Graphs, path: str, *snapshots: Snapshot) -> tuple[str, ...]:
    """The GPU architectures a change to `path` reaches in any of `snapshots`: those
    that ship its module, or the variants a descriptor file holds; else the arch its
    path names (widened to what ships beside it); else every arch."""
    archs: set[str] = set()
    descriptors = bool(ctx.surface.descriptor_roots)
    module = ctx.module_of(path)
    for snapshot in snapshots if descriptors else ():
        if path not in snapshot:
            continue
        graph = ctx.graph(snapshot)
        if module is not None:
            archs |= graph.archs_of(module)
        archs |= _variant_archs(graph, path)
    if archs:
        return tuple(sorted(archs))
    named = {m.group(0).lower() for m in PATH_ARCH.finditer(path)}
    if not named:
        return (ctx.surface.all_archs,)
    # Outside the shipped closure: widen the arch the path names to every arch a
    # descriptor ships alongside it (a gfx942 KDP that also names gfx9-4-generic).
    for snapshot in snapshots if descriptors else ():
        for variant in ctx.graph(snapshot).variant_records():
            if set(variant.archs) & named:
                archs |= set(variant.archs)
    return tuple(sorted(archs | named))


def archs_of_descriptor(ctx: Graphs, descriptor: str, *snapshots: Snapshot) -> tuple[str, ...]:
    """The archs of the KDPs beside a descriptor (a UED holds no variants itself), in
    any of `snapshots`; else what `archs_for` finds from its path."""
    folder = posixpath.dirname(descriptor)
    archs: set[str] = set()
    for snapshot in snapshots:
        graph = ctx.graph(snapshot)
        for path in graph.descriptor_files():
            if posixpath.dirname(path) == folder and descriptor_type(path) == _KDP:
                archs |= _variant_archs(graph, path)
    return tuple(sorted(archs)) if archs else archs_for(ctx, descriptor, *snapshots)


def _family_files(graph: SymbolGraph) -> dict[str, str]:
    """Family key -> the KDP file of that family: the file that declares the KDP (or a
    KDP file that no longer parses, by its stem), else a KDP file whose variants name it."""
    declared: dict[str, str] = {}
    named: dict[str, str] = {}
    kdps: dict[str, list[str]] = {}
    for kdp in graph.kdps():
        kdps.setdefault(kdp.path, []).append(kdp.name)
    for path in graph.descriptor_files():
        if descriptor_type(path) != _KDP:
            continue
        if path in graph.parse_failures:
            declared[family_key(posixpath.basename(path).split(".")[0])] = path
            continue
        for name in kdps.get(path, []):
            declared[family_key(name)] = path
        for variant in graph.variant_records(path):
            if variant.kdp:
                named.setdefault(family_key(variant.kdp), path)
    return {**named, **declared}


def archs_of_pack_family(ctx: Graphs, pack: str, *snapshots: Snapshot) -> tuple[str, ...]:
    """The archs of the KDP of a native pack's family (`Gfx950AttentionDenseNative.cpp`
    -> `gfx950_attention_dense`) in any of `snapshots`, else the arch its snake-cased
    name gives, else every arch."""
    suffix = ctx.surface.conventions.pack_suffix
    stem = posixpath.basename(pack)
    stem = stem.removesuffix(suffix) if suffix else stem.split(".")[0]
    archs: set[str] = set()
    for snapshot in snapshots:
        graph = ctx.graph(snapshot)
        kdp = _family_files(graph).get(family_key(stem))
        if kdp is not None:
            archs |= _variant_archs(graph, kdp)
    if archs:
        return tuple(sorted(archs))
    named = _LEADING_ARCH.match(_CAMEL.sub("_", stem).lower())
    return (named.group(1),) if named else (ctx.surface.all_archs,)


def arch_sources(ctx: Graphs) -> dict[str, list[str]]:
    """Each architecture a variant ships at the base or the head, with the descriptor
    files that ship it (none when the map has no descriptors)."""
    if not ctx.surface.descriptor_roots:
        return {}
    sources: dict[str, set[str]] = {}
    for snapshot in (ctx.views.base, ctx.views.head):
        for variant in ctx.graph(snapshot).variant_records():
            for arch in variant.archs:
                sources.setdefault(arch, set()).add(variant.path)
    return {arch: sorted(paths) for arch, paths in sorted(sources.items())}
