"""Findings: the report's rows as a reader meets them, one per problem, not per view.

Maintainers: a pure regrouping of the report's row data for the renderers; it decides
nothing (statuses, charging and verdicts are already in the rows) and writes no words.
A row seen in the head view and again in the merged view is one finding naming both
views; findings come most severe first.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from impact.rows import Role, Status

SEVERITY = {Status.MISMATCH: 0, Status.CHANGED: 1, Status.INERT: 2, Status.OUTSIDE: 3}
_VIEW_ORDER = {"head": 0, "merged": 1}


@dataclass(frozen=True)
class Finding:
    """One problem: the rows that state it (one per view), their union of archs, and the
    sides of the first view's row, changed copies first."""

    contract: str
    status: str
    subject: str
    reason: str
    details: Mapping[str, Any]
    lane: str
    preexisting: bool
    views: tuple[str, ...]
    row_ids: tuple[str, ...]
    archs: tuple[str, ...]
    sides: tuple[Mapping[str, Any], ...]
    evidence: tuple[Mapping[str, Any], ...]
    device_test: str

    @property
    def changed_sides(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(s for s in self.sides if s["role"] == Role.CHANGED)

    @property
    def counterparts(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(s for s in self.sides if s["role"] != Role.CHANGED)

    @property
    def traced(self) -> bool:
        """Both sides are named with lines: the finding is [verified], else [inferred]."""
        return len({s["file"] for s in self.sides}) > 1 and all(s["line"] for s in self.sides)


def _key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["contract"], row["status"], row["subject"], row["reason"],
            json.dumps(row["details"], sort_keys=True, default=str), row["lane"],
            row["preexisting"])


def findings(report: Mapping[str, Any]) -> list[Finding]:
    """Every row of the report grouped across views, most severe first."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in report["rows"]:
        groups.setdefault(_key(row), []).append(row)
    out = []
    for rows in groups.values():
        rows = sorted(rows, key=lambda r: _VIEW_ORDER.get(r["view"], 9))
        first = rows[0]
        sides = sorted(first["sides"], key=lambda s: (s["role"] != Role.CHANGED, s["file"],
                                                      s["line"]))
        out.append(Finding(
            contract=first["contract"], status=first["status"], subject=first["subject"],
            reason=first["reason"], details=first["details"], lane=first["lane"],
            preexisting=first["preexisting"], views=tuple(r["view"] for r in rows),
            row_ids=tuple(r["id"] for r in rows),
            archs=tuple(sorted({a for r in rows for a in r["archs"]})),
            sides=tuple(sides), evidence=tuple(first["evidence"]),
            device_test=first["device_test"]))
    return sorted(out, key=lambda f: (f.preexisting, SEVERITY.get(Status(f.status), 9),
                                      f.lane != "IMPACT", f.contract, f.subject))
