"""Which GPU architectures a change reaches: every arch decision checks and the report use.

Maintainers: reads the records of the symbol graph's descriptor domain only (variants,
KDP families, the archs of the modules the variants ship: `DescriptorGraph.archs_of`),
where every variant is resolved once; never reads git, facts or source, and never
spells a library's paths (the pack suffix comes from the map's conventions, archs by path
from its `[[archs]]`). "Every architecture" is always the map's own label,
`surface.all_archs`. Callers pass anything
that holds the surface, the views and a graph per snapshot (the CheckContext does).
"""

from __future__ import annotations

import posixpath
import re
from typing import Protocol

from impact.git import Snapshot, Views
from impact.graph import PATH_ARCH, DescriptorGraph, SymbolGraph, descriptor_type, family_key
from impact.kinds import DescriptorType
from impact.surface import SurfaceMap

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_LEADING_ARCH = re.compile(r"^(gfx[0-9]+[a-z]?)(?:_|$)")


class Graphs(Protocol):
    """What the arch queries read: the map, the views and one graph per snapshot."""

    surface: SurfaceMap
    views: Views

    def graph(self, snapshot: Snapshot) -> SymbolGraph: ...

    def module_of(self, path: str) -> str | None: ...


def _variant_archs(descriptors: DescriptorGraph, path: str | None = None) -> set[str]:
    return {a for v in descriptors.variants(path) for a in v.archs}


def all_archs(ctx: Graphs) -> frozenset[str]:
    """Every architecture a variant ships at the base or at the head."""
    return frozenset(_variant_archs(ctx.graph(ctx.views.base).descriptors)
                     | _variant_archs(ctx.graph(ctx.views.head).descriptors))


def archs_for(ctx: Graphs, path: str, *snapshots: Snapshot) -> tuple[str, ...]:
    """The GPU architectures a change to `path` reaches in any of `snapshots`: those
    that ship its module, or the variants a descriptor file holds; else those the map's
    first `[[archs]]` rule matching the path names; else the arch its path names
    (widened to what ships beside it); else every arch."""
    archs: set[str] = set()
    descriptors = bool(ctx.surface.descriptor_roots)
    module = ctx.module_of(path)
    for snapshot in snapshots if descriptors else ():
        if path not in snapshot:
            continue
        domain = ctx.graph(snapshot).descriptors
        if module is not None:
            archs |= domain.archs_of(module)
        archs |= _variant_archs(domain, path)
    if archs:
        return tuple(sorted(archs))
    by_map = ctx.surface.archs_named(path)
    if by_map is not None:  # the map's `[[archs]]`: FA3's hopper/** compiles for sm_90a
        return tuple(sorted(by_map))
    named = {m.group(0).lower() for m in PATH_ARCH.finditer(path)}
    if not named:
        return (ctx.surface.all_archs,)
    # Outside the shipped closure: widen the arch the path names to every arch a
    # descriptor ships alongside it (a gfx942 KDP that also names gfx9-4-generic).
    for snapshot in snapshots if descriptors else ():
        for variant in ctx.graph(snapshot).descriptors.variants():
            if set(variant.archs) & named:
                archs |= set(variant.archs)
    return tuple(sorted(archs | named))


def archs_of_descriptor(ctx: Graphs, descriptor: str, *snapshots: Snapshot) -> tuple[str, ...]:
    """The archs of the KDPs beside a descriptor (a UED holds no variants itself), in
    any of `snapshots`; else what `archs_for` finds from its path."""
    folder = posixpath.dirname(descriptor)
    archs: set[str] = set()
    for snapshot in snapshots:
        descriptors = ctx.graph(snapshot).descriptors
        for path in descriptors.files():
            if posixpath.dirname(path) == folder and descriptor_type(path) == DescriptorType.KDP:
                archs |= _variant_archs(descriptors, path)
    return tuple(sorted(archs)) if archs else archs_for(ctx, descriptor, *snapshots)


def archs_of_pack_family(ctx: Graphs, pack: str, *snapshots: Snapshot) -> tuple[str, ...]:
    """The archs of the variants the KDP file of a native pack's family holds
    (`Gfx950AttentionDenseNative.cpp` -> `gfx950_attention_dense`, the family the graph
    resolves) in any of `snapshots`, else the arch its snake-cased name gives, else
    every arch."""
    suffix = ctx.surface.conventions.pack_suffix
    stem = posixpath.basename(pack)
    stem = stem.removesuffix(suffix) if suffix else stem.split(".")[0]
    archs: set[str] = set()
    for snapshot in snapshots:
        descriptors = ctx.graph(snapshot).descriptors
        family = descriptors.families().get(family_key(stem))
        if family is not None:
            archs |= _variant_archs(descriptors, family.path)
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
        for variant in ctx.graph(snapshot).descriptors.variants():
            for arch in variant.archs:
                sources.setdefault(arch, set()).add(variant.path)
    return {arch: sorted(paths) for arch, paths in sorted(sources.items())}
