"""An edit to the repository's own surface map: a surface row of its own.

Maintainers: the report always judges with the map of the base (impact/surface.py
`map_for_views`); this check makes the change's edit to that map visible, naming
the patterns it adds and removes. It reads the map through impact/surface.py only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from impact.checks.check import Check, Scope
from impact.kinds import ViewName
from impact.reasons import Reason
from impact.rows import Role, Row, Side, Status
from impact.surface import REPOSITORY_MAP, BadSurfaceMap, SurfaceMap, repository_map


def _patterns(found: SurfaceMap | BadSurfaceMap | None) -> set[str]:
    if not isinstance(found, SurfaceMap):
        return set()
    return {f"{entry.kind}: {pattern}" for entry in found.entries for pattern in entry.patterns}


class SurfaceMapCheck(Check):
    """What it checks:
        Every view that adds, edits or removes the repository's own surface map
        (`.impact/surface.toml`), the file that says which paths are which surface.

    Why a break hurts at run time:
        The map decides what impact compares. A change that blinds the map (a pattern that
        matches nothing, a kind dropped) would hide its own break if it were used to judge
        itself; so the base's map judges the change, and the edit is shown to a reviewer.

    Example:
        A pull request adds a kernel argument and replaces the map with one whose only
        pattern matches nothing: the argument still reads BREAKS (judged by the base's
        map), and this check adds a `changed` row naming the patterns added and removed.
        A change that leaves the map alone gives no row.

    When it says changed instead:
        Always `changed` when it speaks: a map edit changes what later reports compare. A
        map that cannot be read or does not fit its schema says why.

    Evidence:
        The map file at both revisions; the patterns (as `kind: pattern`) added and
        removed, or the reason the new map is refused.
    """

    name: ClassVar[str] = "surface-map"

    def rows(self, scope: Scope) -> Iterator[Row]:
        if REPOSITORY_MAP not in scope.changed:
            return
        old, new = repository_map(scope.old), repository_map(scope.new)
        sides = tuple(Side(REPOSITORY_MAP, 0, label, Role.CHANGED)
                      for label, snap in ((ViewName.BASE, scope.old), (scope.view.name, scope.new))
                      if REPOSITORY_MAP in snap)
        if isinstance(new, BadSurfaceMap):
            reason, details = Reason.SURFACE_MAP_REFUSED, {"failure": new.problem}
        else:
            reason = Reason.SURFACE_MAP_EDITED
            details = {"added": sorted(_patterns(new) - _patterns(old)),
                       "removed": sorted(_patterns(old) - _patterns(new))}
        yield scope.row(REPOSITORY_MAP, Status.CHANGED, reason,
                        archs=(scope.ctx.surface.all_archs,), sides=sides, details=details)
