"""KMD metadata fields: what a native pack's matcher reads against what its KMD declares.

Maintainers: reads the graph's `MetadataRead` records (every spelling of a read is the
reader's business: `impact/cpp/metadata.py`), the KMDs the graph finds for a pack
(`KernelGraph.kmds_read`) and their `KmdField`s; never parses a file. A side is `changed`
when that copy's part of the disagreement is new in this view; `run_checks` charges.
Its sentences live in `impact/render/words/`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from impact.checks.check import Check, Scope
from impact.graph import MetadataRead, SymbolGraph
from impact.kinds import SurfaceKind
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status


def _fields(graph: SymbolGraph, kmds: list[str]) -> set[str]:
    return {f.name for path in kmds for f in graph.descriptors.kmd_fields(path)}


def _undeclared(graph: SymbolGraph, path: str) -> dict[str, MetadataRead]:
    """The fields the pack `path` reads that none of its KMDs declares (first read each);
    nothing when the graph finds no KMD for it."""
    kmds, _how = graph.kernels.kmds_read(path)
    if not kmds:
        return {}
    declared = _fields(graph, kmds)
    found: dict[str, MetadataRead] = {}
    for read in graph.kernels.metadata_reads(path):
        if read.field is not None and read.field not in declared:
            found.setdefault(read.field, read)
    return found


class MetadataFieldCheck(Check):
    """What it checks:
        Every KMD metadata field a native pack's matcher reads (`getIntMetadata`,
        `getStringMetadata`, `kernel.metadata.find(...)`; the field as a literal, a named
        constant, wrapped in `std::string(...)`, or passed through a local lambda or a
        file-local helper that forwards it to a getter) against the fields of the pack's
        KMD: the KMD whose id is the `metadata` of the UED naming a symbol the pack
        declares, else the KMD named for the pack's family.

    Why a break hurts at run time:
        A field the KMD does not declare is absent from every candidate's metadata: the
        read returns nothing, the matcher declines every kernel, and the engine serves no
        graph — with no build error and no message at the default log level.

    Example:
        Breaks: the pack's `BLOCK_M_FIELD` becomes `"block_m_tile"` while the KMD declares
        `block_m`; the KMD drops `head_size` while `intField(HEAD_SIZE_FIELD)` still reads
        it. Does not break: the constant renamed with its value kept; the KMD and the
        pack renaming the field together.

    When it says changed instead:
        A read whose field the reader cannot settle (a field taken from a loop variable or
        a struct member, `metadataEquals(kernel, field.first, ...)`), new in this view: it
        names the construct and its line. A pack for which no KMD is found is not compared
        (the surface check reports its file).

    Evidence:
        The pack's file:line of the read (and the lambda or helper it went through), and
        the KMD file that does not declare the field. A mismatch the base already had on
        copies this change left as they were is listed as pre-existing.
    """

    name: ClassVar[str] = "metadata-field"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset({SurfaceKind.INGESTOR_PACK})

    def rows(self, scope: Scope) -> Iterator[Row]:
        old_graph, new_graph = scope.ctx.graph(scope.old), scope.ctx.graph(scope.new)
        packs = sorted({r.path for r in new_graph.kernels.metadata_reads()})
        for path in packs:
            kmds, how = new_graph.kernels.kmds_read(path)
            if not kmds:
                continue
            before = _undeclared(old_graph, path) if path in scope.old else {}
            old_kmds = set(old_graph.kernels.kmds_read(path)[0]) if path in scope.old else set()
            for field, read in sorted(_undeclared(new_graph, path).items()):
                new_here = field not in before
                pack_changed = new_here and path in scope.changed
                kmd_changed = new_here and (any(k in scope.changed for k in kmds)
                                            or set(kmds) != old_kmds)
                yield self._undeclared_row(scope, read, kmds, how, pack_changed, kmd_changed)
            yield from self._unsettled(scope, old_graph, new_graph, path)

    def _undeclared_row(self, scope: Scope, read: MetadataRead, kmds: list[str], how: str,
                        pack_changed: bool, kmd_changed: bool) -> Row:
        view = scope.view.name
        sides = (Side(read.path, read.line, view,
                      Role.CHANGED if pack_changed else Role.COUNTERPART, read.function or ""),
                 *(Side(k, 0, view, Role.CHANGED if kmd_changed else Role.COUNTERPART, "")
                   for k in kmds))
        hops = [Hop.of(read.path, read.line, Step.PACK_READS_FIELD, field=read.field,
                       via=read.via or read.constant or "")]
        hops += [Hop.of(k, 0, Step.KMD_DECLARES_NO_FIELD, field=read.field, how=how)
                 for k in kmds]
        return scope.row(f"{read.path}:{read.field}", Status.MISMATCH,
                         Reason.FIELD_NOT_IN_KMD,
                         archs=scope.archs_for(read.path, scope.holding(read.path)),
                         sides=sides, evidence=tuple(hops),
                         details={"field": read.field, "via": read.via,
                                  "constant": read.constant, "kmds": kmds, "found_by": how})

    def _unsettled(self, scope: Scope, old_graph: SymbolGraph, new_graph: SymbolGraph,
                   path: str) -> Iterator[Row]:
        if path not in scope.changed:
            return
        before = {(r.construct, r.via) for r in old_graph.kernels.metadata_reads(path)
                  if r.field is None} if path in scope.old else set()
        for read in new_graph.kernels.metadata_reads(path):
            if read.field is not None or (read.construct, read.via) in before:
                continue
            yield scope.row(f"{path}:{read.construct}", Status.CHANGED,
                            Reason.METADATA_FIELD_NOT_READ,
                            archs=scope.archs_for(path, scope.holding(path)),
                            sides=(Side(path, read.line, scope.view.name, Role.CHANGED,
                                        read.function or ""),),
                            evidence=(Hop.of(path, read.line, Step.PACK_READS_UNSETTLED_FIELD,
                                             construct=read.construct or ""),),
                            details={"construct": read.construct, "via": read.via,
                                     "line": read.line})
