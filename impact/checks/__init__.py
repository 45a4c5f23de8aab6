"""The contract checks: one module per contract, one line each in REGISTRY.

Maintainers: `run_checks` is the only caller. It drops rows of the merged view
that read a conflicted file (the conflict row stands in for them), runs the
`unreadable` check last (it names the files the others could not read) and sorts
the rest, so every renderer sees the same order.
"""

from __future__ import annotations

from dataclasses import replace

from impact import shortcuts
from impact.checks.base import CheckContext
from impact.checks.bindings import BindingsCheck
from impact.checks.build import BuildCheck
from impact.checks.check import Check, Declarations, Scope, applies
from impact.checks.conflict import ConflictCheck
from impact.checks.deps import DepsCheck
from impact.checks.descriptor_symbol import DescriptorSymbolCheck
from impact.checks.dvc import DvcCheck
from impact.checks.extension_build import ExtensionBuildCheck
from impact.checks.generated_header import GeneratedHeaderCheck
from impact.checks.kernargs import KernargsCheck
from impact.checks.launch_surface import LaunchSurfaceCheck
from impact.checks.metadata_field import MetadataFieldCheck
from impact.checks.pack_launch import PackLaunchCheck
from impact.checks.removed_symbol import RemovedSymbolCheck
from impact.checks.sdk_header import SdkHeaderCheck
from impact.checks.surface import SurfaceCheck
from impact.checks.surface_map import SurfaceMapCheck
from impact.checks.unreadable import UnreadableCheck
from impact.checks.variant_set import VariantSetCheck
from impact.kinds import ViewName
from impact.rows import FindingStatus, Role, Row, Side, Status
from impact.surface import REPOSITORY_MAP

UNREADABLE = UnreadableCheck()
REGISTRY: tuple[Check, ...] = (
    SurfaceCheck(),
    BuildCheck(),
    DepsCheck(),
    DvcCheck(),
    GeneratedHeaderCheck(),
    SdkHeaderCheck(),
    KernargsCheck(),
    PackLaunchCheck(),
    LaunchSurfaceCheck(),
    RemovedSymbolCheck(),
    DescriptorSymbolCheck(),
    MetadataFieldCheck(),
    VariantSetCheck(),
    BindingsCheck(),
    ExtensionBuildCheck(),
    ConflictCheck(),
    SurfaceMapCheck(),
    UNREADABLE,  # last: run_checks runs it after every other check, whatever the registry
)


def charged(row: Row, head_paths: frozenset[str] | None = None) -> Row:
    """The one place that decides whether a row is charged to the change: it is when
    at least one of the copies it names changed (a side whose role is `changed`). A
    mismatch or an unsettled copy the base already had, on untouched copies, is
    pre-existing and moves nothing. A row that names no side is always charged.

    In the merged view a copy changed by the target tip alone is not the change's:
    only a copy in a file the head itself changed (`head_paths`, the merged view's
    `CheckContext.head_part`) charges the row, so a race (one copy changed by the head,
    its counterpart by the tip) is charged while the tip's own edits are not."""
    def moved(side: Side) -> bool:
        if side.role != Role.CHANGED:
            return False
        return row.view != ViewName.MERGED or head_paths is None or side.file in head_paths

    untouched = bool(row.sides) and not any(moved(side) for side in row.sides)
    settled = row.status in (Status.MISMATCH, Status.CHANGED)
    return replace(row, preexisting=settled and untouched)


def charged_finding(*, at_base: bool, family_at_base: bool,
                    source_changed: bool) -> FindingStatus:
    """The one place that decides whether a Pack-time finding is the change's: not when the
    base's probes found it too (pre-existing); not when it belongs to a family the base
    did not ship whose source module the change left untouched (first shipped: the
    change only made it reachable); else it is new."""
    if at_base:
        return FindingStatus.PREEXISTING
    if not family_at_base and not source_changed:
        return FindingStatus.FIRST_SHIPPED
    return FindingStatus.NEW


def touches_a_surface(ctx: CheckContext) -> bool:
    """Whether any view changes (or conflicts on) a path some surface holds. When none
    does, nothing a contract check reads changed: the answer is N/A without building a
    graph or parsing a file."""
    return any(ctx.surface.classify(path) is not None or path == REPOSITORY_MAP
               for view in ctx.views.views for path in (*view.diff.paths, *view.conflicts))


def run_checks(ctx: CheckContext, registry: tuple[Check, ...] = REGISTRY) -> list[Row]:
    """Every row of every registered check, charged or pre-existing, conflicted
    merged-view reads dropped, sorted. A change that touches no surface runs only the
    conflict check (a merged view that could not be computed is still reported; with
    IMPACT_FULL_PATH=1 every check runs, and the report must be the same). Then,
    whatever the registry, one `unreadable` row per file and view whose content a check
    needed and could not read, unless a charged row already names that file (fail
    closed: the file is named, the verdict is never NONE for it)."""
    rows: list[Row] = []
    conflicts = {view.name: set(view.conflicts) for view in ctx.views.views}
    merged = ctx.views.view(ViewName.MERGED)
    head_paths = ctx.head_part(merged) if merged is not None and merged.new is not None \
        else None
    if shortcuts.enabled() and not touches_a_surface(ctx):
        registry = tuple(c for c in registry if c.name == ConflictCheck.name)

    def add(row: Row) -> None:
        if row.contract != ConflictCheck.name and row.files & conflicts.get(row.view, set()):
            return
        if not row.archs:  # reaches every arch: say so in the map's own words
            row = replace(row, archs=(ctx.surface.all_archs,))
        rows.append(charged(row, head_paths))

    for check in registry:
        if isinstance(check, UnreadableCheck) or not applies(check, ctx.surface):
            continue
        for row in check.check(ctx):
            add(row)
    named = {(row.view, path) for row in rows if not row.preexisting
             and row.status in (Status.MISMATCH, Status.CHANGED) for path in row.files}
    for row in list(UNREADABLE.check(ctx)):
        if (row.view, row.subject) not in named:
            add(row)
    return sorted(rows, key=Row.sort_key)


def explain(contract: str) -> str | None:
    """The docstring of the check that owns `contract`, or None."""
    for check in REGISTRY:
        if check.name == contract:
            return type(check).__doc__
    return None


__all__ = ["REGISTRY", "Check", "CheckContext", "Declarations", "Scope", "applies", "charged",
           "charged_finding", "explain", "run_checks"]
