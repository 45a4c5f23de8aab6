"""One row for each file whose content could not be read when a check needed it.

Maintainers: reads only what the CheckContext recorded while the other checks ran
(`ctx.unreadable`), so `run_checks` runs it last, and drops its row for a file a charged
row of another check already names. It never reads a blob itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from impact.checks.check import Check, Scope
from impact.reasons import Reason
from impact.rows import Role, Row, Side, Status


class UnreadableCheck(Check):
    """What it checks:
        Every file a check or the symbol graph needed whose content could not be read: a
        blob missing from a partial clone, a corrupt object, a gitlink (submodule) where
        a file should be.

    Why a break hurts at run time:
        A copy that cannot be read cannot be compared: a break it holds is invisible, and
        the rows that needed it may say less than the truth (a mismatch read as changed).

    Example:
        A builder gains an argument while the blob of its unchanged pack is missing from
        the clone: one `unreadable` row (changed) names the pack, beside the rows the
        other copies give.

    When it says changed instead:
        Always `changed` when it speaks: nothing about the file is known. The copy counts
        as changed (it cannot be shown unchanged), so the row is charged to the change.

    Evidence:
        The file and the error reading it gave; one row per file and view, left out when
        a charged row of another check already names the file.
    """

    name: ClassVar[str] = "unreadable"

    def rows(self, scope: Scope) -> Iterator[Row]:
        errors: dict[str, str] = {}  # path -> the first error reading it
        sides: dict[str, list[Side]] = {}  # path -> a side for each copy not read
        for snapshot in (scope.old, scope.new):
            for path, error in sorted(scope.ctx.unreadable(snapshot).items()):
                errors.setdefault(path, error)
                # The copy cannot be shown unchanged: it counts as changed.
                sides.setdefault(path, []).append(Side(path, 0, snapshot.label, Role.CHANGED))
        for path, error in sorted(errors.items()):
            yield scope.row(path, Status.CHANGED, Reason.FILE_NOT_READABLE,
                            archs=scope.archs_for(path), sides=tuple(sides[path]),
                            details={"file": path, "error": error})
