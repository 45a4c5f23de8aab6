"""One row for the files a merge onto the target tip could not merge cleanly."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from impact.checks.base import CheckContext
from impact.kinds import SurfaceKind
from impact.reasons import Reason
from impact.rows import Role, Row, Side, Status


class ConflictCheck:
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

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.views.views:
            if view.unavailable is not None:
                head = ctx.views.view("head")
                touched = [p for p in (head.diff.paths if head else ())
                           if ctx.surface.describe(p).kind != SurfaceKind.OUTSIDE]
                if touched:
                    yield Row(self.name, view.name, "merged view", Status.CHANGED,
                              Reason.MERGED_VIEW_NOT_COMPUTED,
                              details={"why": view.unavailable},
                              archs=tuple(sorted({a for p in touched for a in ctx.archs_for(
                                  p, ctx.views.base, ctx.views.head)})))
                continue
            surface = [p for p in view.conflicts
                       if ctx.surface.describe(p).kind != SurfaceKind.OUTSIDE]
            if surface:
                yield Row(self.name, view.name, "conflicted files", Status.CHANGED,
                          Reason.SURFACE_FILES_CONFLICT, details={"count": len(surface)},
                          archs=tuple(sorted({a for p in surface for a in ctx.archs_for(
                              p, ctx.views.base, ctx.views.head)})),
                          sides=tuple(Side(p, 0, view.name, Role.CHANGED) for p in surface))
