"""The fold: turn `changed` rows inert where the emitter proved the shipped code equal.

Maintainers: reads an emit document (already validated by the emitter's loader)
and the rows; never builds or imports analysed code. Which rows may fold, and which
files may not, the checks declare (`CheckContext.declarations`): this module names no
check. Every path where the emit document cannot prove equality leaves the row as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from emit.child.vocabulary import BuildStatus, RunStatus, TableStatus
from impact.checks import charged_finding
from impact.checks.base import CheckContext
from impact.kinds import SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.rows import SETTLED_BY_BUILD, Hop, Row, Status


def _family_key(family: dict[str, Any]) -> str:
    """The child's family id, `source:builder@arch[#launch]`."""
    return str(family.get("id"))


def _variants(family: dict[str, Any]) -> dict[str, Any]:
    return {v["name"]: [(k.get("arch"), k.get("launch"), k.get("symbol"), k.get("args"),
                         k.get("ir_sha256"), k.get("compiler")) for k in v.get("kernels", [])]
            for v in family.get("variants", [])}


def _sound(family: dict[str, Any]) -> bool:
    return family.get("status") == BuildStatus.BUILT and all(
        v.get("status") == BuildStatus.BUILT for v in family.get("variants", []))


def _finished(revision: dict[str, Any]) -> bool:
    """Whether a revision's children finished and left a result that is not the child's
    own error document (a child that failed before it built anything reports `done` with
    its `error` set: that says nothing about what ships)."""
    result = revision["result"]
    return revision["status"] == RunStatus.DONE and bool(result) and result.get("error") is None


class _Emit:
    def __init__(self, document: dict[str, Any]) -> None:
        revisions = document["revisions"]
        self.complete = all(_finished(revisions[r]) for r in (ViewName.BASE, ViewName.HEAD))
        self.base = revisions[ViewName.BASE]["result"] or {}
        self.head = revisions[ViewName.HEAD]["result"] or {}
        self.clean = self.complete and not (self.base.get("not_inspected")
                                            or self.head.get("not_inspected"))

    def families(self, result: dict[str, Any], module: str) -> dict[str, Any]:
        return {_family_key(f): f for f in result.get("families", [])
                if module in f.get("imports", [])}

    def proves_equal(self, module: str) -> bool:
        """Every family that imports `module` built soundly at both revisions, with the
        same variants, each with equal arguments, IR digest and compiler inputs."""
        if not self.clean:
            return False
        base, head = self.families(self.base, module), self.families(self.head, module)
        if not head or set(base) != set(head):
            return False
        return all(_sound(base[k]) and _sound(head[k]) and _variants(base[k]) == _variants(head[k])
                   for k in head)

    def built_by(self, result: dict[str, Any], module: str, builder: str) -> dict[str, Any]:
        return {_family_key(f): f for f in result.get("families", [])
                if f.get("source") == module and f.get("builder") == builder}

    def proves_builder(self, module: str, builder: str) -> bool:
        """Every family that `builder` of `module` builds (each arch and launch) built
        soundly at both revisions, with the same variants, each with equal arguments, IR
        digest and compiler inputs. A builder no family builds proves nothing."""
        if not self.clean:
            return False
        base = self.built_by(self.base, module, builder)
        head = self.built_by(self.head, module, builder)
        if not head or set(base) != set(head):
            return False
        return all(_sound(base[k]) and _sound(head[k]) and _variants(base[k]) == _variants(head[k])
                   for k in head)


def _target_touched_shipped(ctx: CheckContext) -> bool:
    """Whether the target tip changed a descriptor or a shipped-closure module since the base:
    paths the merged view changes that the head view does not, or changes differently."""
    head, merged = ctx.views.view(ViewName.HEAD), ctx.views.view(ViewName.MERGED)
    if head is None or merged is None or merged.new is None:
        return True
    closure = ctx.graph(ctx.views.head).descriptors.shipped_closure()
    for path in merged.diff.paths:
        same = (path in ctx.views.head) == (path in merged.new) and (
            path not in merged.new or ctx.views.head[path] == merged.new[path])
        if path in head.diff.paths and same:
            continue
        kind = ctx.surface.describe(path).kind
        module = ctx.module_of(path)
        if kind == SurfaceKind.DESCRIPTOR or (module is not None and module in closure):
            return True
    return False


def fold(rows: Iterable[Row], document: dict[str, Any], ctx: CheckContext) -> list[Row]:
    """The rows with every provably unchanged shipped-module row turned inert."""
    emit = _Emit(document)
    merged_blocked = _target_touched_shipped(ctx)
    # A row whose check says an equal build settles it goes first: once settled, it no
    # longer keeps its files from folding.
    rows = [_settle(row, emit, ctx, merged_blocked) for row in rows]
    blockers = ctx.declarations.fold_blockers
    host_side = {side.file for r in rows if r.contract in blockers and r.status != Status.INERT
                 for side in r.sides}
    return [_fold_row(row, emit, ctx, host_side, merged_blocked) for row in rows]


def _settle(row: Row, emit: _Emit, ctx: CheckContext, merged_blocked: bool) -> Row:
    """The row inert when its check claimed that an equal build settles it
    (`impact.rows.SETTLED_BY_BUILD`) and every builder it names built equal; else as it was."""
    claim = row.details.get(SETTLED_BY_BUILD)
    if row.status != Status.CHANGED or not isinstance(claim, dict):
        return row
    builders = [tuple(pair) for pair in claim.get("builders") or []]
    files = [str(f) for f in claim.get("files") or []]
    if not builders or not files or any(len(pair) != 2 for pair in builders):
        return row
    if any(ctx.surface.conventions.runs_after_lowering(f) for f in files):
        return row
    if not all(emit.proves_builder(str(module), str(name)) for module, name in builders):
        return row
    if row.view == ViewName.MERGED and not _merged_as_head(ctx, files, merged_blocked):
        return row
    hops = tuple(Hop.of(files[0], 0, Step.EMIT_BUILDER_EQUAL, module=module, builder=name)
                 for module, name in builders)
    return replace(row, status=Status.INERT, reason=Reason.FOLDED_EQUAL_BUILD,
                   evidence=(*row.evidence, *hops))


def _merged_as_head(ctx: CheckContext, paths: Iterable[str], merged_blocked: bool) -> bool:
    """Whether the merged view holds each of `paths` as the head does, and the target tip
    touched nothing shipped: only then does the head's build speak for the merge."""
    merged = ctx.views.view(ViewName.MERGED)
    if merged is None or merged.new is None or merged_blocked:
        return False
    return all(path in merged.new and path in ctx.views.head
               and merged.new[path] == ctx.views.head[path] for path in paths)


def _fold_row(row: Row, emit: _Emit, ctx: CheckContext, host_side: set[str],
              merged_blocked: bool) -> Row:
    foldable = ctx.declarations.foldable.get(row.contract, frozenset())
    path = row.subject
    if row.status != Status.CHANGED or not foldable or (
            ctx.surface.describe(path).kind not in foldable):
        return row
    # Code that runs after lowering: an equal IR digest says nothing about it.
    if ctx.surface.conventions.runs_after_lowering(path) or path in host_side:
        return row
    module = ctx.module_of(path)
    if module is None or not emit.proves_equal(module):
        return row
    if row.view == ViewName.MERGED and not _merged_as_head(ctx, (path,), merged_blocked):
        return row
    return replace(row, status=Status.INERT, reason=Reason.FOLDED_EQUAL_BUILD,
                   evidence=(*row.evidence, Hop.of(path, 0, Step.EMIT_FAMILIES_EQUAL,
                                                   module=module)))


def unfinished_revisions(document: dict[str, Any]) -> list[ViewName]:
    """The revisions whose children left no result the fold can read (crashed, timed
    out, not started, or the child's own error document)."""
    return [r for r in (ViewName.BASE, ViewName.HEAD) if not _finished(document["revisions"][r])]


def unfinished_tables(document: dict[str, Any]) -> list[str]:
    """What the head's predicate probes left unsettled: the family of every head table
    that did not finish (timed out, failed). A Pack-time with any of these, or with an
    unfinished revision, is INCOMPLETE, never CLEAN: no finding is not the same as none."""
    return sorted(str(t.get("family")) for t in _Emit(document).head.get("predicate_tables", [])
                  if t.get("status") != TableStatus.DONE)


def pack_findings(document: dict[str, Any], ctx: CheckContext) -> list[dict[str, Any]]:
    """The head's predicate-table findings, each with its `FindingStatus` (decided by
    `impact.checks.charged_finding`). `impact.rollup.pack_time` turns them into the
    verdict."""
    emit = _Emit(document)

    def findings(result: dict[str, Any]) -> set[tuple[Any, ...]]:
        return {(f.get("family"), f.get("kind"), f.get("field"), str(f.get("value")))
                for table in result.get("predicate_tables", []) for f in table.get("findings", [])}

    base_families = {_family_key(f) for f in emit.base.get("families", [])}
    base_sources = {f.get("source") for f in emit.base.get("families", [])}
    changed_modules = {ctx.module_of(p) for v in ctx.available_views() for p in v.diff.paths}
    at_base = findings(emit.base)
    listed = []
    for table in emit.head.get("predicate_tables", []):
        for raw in table.get("findings", []):
            finding = (raw.get("family"), raw.get("kind"), raw.get("field"), str(raw.get("value")))
            family = str(finding[0])
            source = next((f.get("source") for f in emit.head.get("families", [])
                           if _family_key(f) == family), None)
            status = charged_finding(
                at_base=finding in at_base,
                family_at_base=source in base_sources or family in base_families,
                source_changed=source in changed_modules)
            listed.append({"family": family, "kind": raw.get("kind"), "field": raw.get("field"),
                           "value": raw.get("value"), "detail": raw.get("detail"),
                           "status": str(status)})
    listed.sort(key=lambda f: (f["status"], f["family"], str(f["field"]), str(f["value"])))
    return listed
