"""Rows -> the verdict. The only place that decides one.

Any charged `mismatch` -> BREAKS; else any `changed` -> NEEDS-DEVICE with the union of
their archs; else any `inert` -> NONE; else N/A. Rows in the BUILD and DEPS lanes never
decide the runtime verdict, and are named after it as left to those lanes. A mismatch the
base already had, on sides the change did not touch, is pre-existing and moves nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from impact.errors import EXIT_BREAKS, EXIT_NEEDS_DEVICE, EXIT_NONE
from impact.rows import ALL_ARCHS, Lane, Row, Status


@dataclass(frozen=True)
class Verdict:
    kind: str                      # BREAKS | NEEDS-DEVICE | NONE | N/A
    archs: tuple[str, ...] = ()
    other_lanes: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        text = self.kind
        if self.kind == "NEEDS-DEVICE":
            text += " " + ", ".join(self.archs)
        if self.other_lanes:
            text += f" (left to the {' and '.join(self.other_lanes)} lane"
            text += "s)" if len(self.other_lanes) > 1 else ")"
        return f"Runtime impact: {text}"

    @property
    def exit_code(self) -> int:
        return {"BREAKS": EXIT_BREAKS, "NEEDS-DEVICE": EXIT_NEEDS_DEVICE}.get(self.kind, EXIT_NONE)


def _arch_order(archs: Iterable[str]) -> tuple[str, ...]:
    """`all-...` labels (every architecture) first, then the named ones."""
    unique = set(archs)
    every = tuple(sorted(a for a in unique if a.startswith("all-")))
    return every + tuple(sorted(unique - set(every)))


def rollup(rows: Iterable[Row]) -> Verdict:
    """The runtime verdict of a set of rows."""
    rows = list(rows)
    impact = [r for r in rows if r.lane == Lane.IMPACT and not r.preexisting]
    lanes = tuple(sorted({str(r.lane) for r in rows if r.lane != Lane.IMPACT}))
    statuses = {r.status for r in impact}
    if Status.MISMATCH in statuses:
        return Verdict("BREAKS", other_lanes=lanes)
    if Status.CHANGED in statuses:
        archs = [a for r in impact if r.status == Status.CHANGED for a in (r.archs or (ALL_ARCHS,))]
        return Verdict("NEEDS-DEVICE", _arch_order(archs), lanes)
    if Status.INERT in statuses:
        return Verdict("NONE", other_lanes=lanes)
    return Verdict("N/A", other_lanes=lanes)
