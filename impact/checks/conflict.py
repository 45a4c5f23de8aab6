"""One row for the files a merge onto the target tip could not merge cleanly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from impact.checks.check import Check, Scope
from impact.kinds import SurfaceKind, ViewName
from impact.reasons import Reason
from impact.rows import Role, Row, Side, Status


class ConflictCheck(Check):
    """What it checks:
        The merged view (head merged onto the target tip): which files conflict, and
        whether the merged view could be computed at all.

    Why a break hurts at run time:
        Whatever resolution lands is code no one analysed; a merged view that cannot be
        built leaves the contract race between the two branches unchecked.

    Example:
        Head and the target tip both edit the same lines of a pack: one `conflict` row
        (changed). Head and tip edit different files: no row.

    When it says changed instead:
        Always `changed` when it speaks: conflicted surface files, or a merged view that
        could not be computed while the change touches the surface.

    Evidence:
        The conflicted files (the rows of other checks that read them are dropped), or
        the reason the merged view is missing.
    """

    name: ClassVar[str] = "conflict"

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx = scope.ctx
        surface = [p for p in scope.view.conflicts
                   if ctx.surface.describe(p).kind != SurfaceKind.OUTSIDE]
        if surface:
            yield scope.row("conflicted files", Status.CHANGED, Reason.SURFACE_FILES_CONFLICT,
                            details={"count": len(surface)}, archs=_archs(scope, surface),
                            sides=tuple(Side(p, 0, scope.view.name, Role.CHANGED)
                                        for p in surface))

    def unavailable(self, scope: Scope) -> Iterator[Row]:
        head = scope.ctx.views.view(ViewName.HEAD)
        touched = [p for p in (head.diff.paths if head else ())
                   if scope.ctx.surface.describe(p).kind != SurfaceKind.OUTSIDE]
        if touched:
            yield scope.row("merged view", Status.CHANGED, Reason.MERGED_VIEW_NOT_COMPUTED,
                            details={"why": scope.view.unavailable},
                            archs=_archs(scope, touched))


def _archs(scope: Scope, paths: list[str]) -> tuple[str, ...]:
    """Every architecture the paths reach at the base or the head."""
    views = scope.ctx.views
    return tuple(sorted({a for p in paths for a in scope.ctx.archs_for(p, views.base,
                                                                       views.head)}))
