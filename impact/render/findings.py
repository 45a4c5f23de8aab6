"""Findings: the report's rows as a reader meets them, one per problem, not per view.

Maintainers: a pure regrouping of the report's row data for the renderers; it decides
nothing (statuses, charging and verdicts are already in the rows) and writes no words.
A row seen in the head view and again in the merged view is one finding naming both
views; findings come most severe first. The report's strings become enum members here,
once (a finding's status, lane and views, each side's role): renderers compare members.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from impact.kinds import ViewName
from impact.rows import Lane, Role, Status

SEVERITY = {Status.MISMATCH: 0, Status.CHANGED: 1, Status.INERT: 2, Status.OUTSIDE: 3}
_VIEW_ORDER = {ViewName.HEAD: 0, ViewName.MERGED: 1}


@dataclass(frozen=True)
class Finding:
    """One problem: the rows that state it (one per view), their union of archs, and the
    sides of the first view's row, changed copies first."""

    contract: str
    status: Status
    subject: str
    reason: str
    details: Mapping[str, Any]
    lane: Lane
    preexisting: bool
    views: tuple[ViewName, ...]
    row_ids: tuple[str, ...]
    archs: tuple[str, ...]
    sides: tuple[Mapping[str, Any], ...]  # each side's `role` a Role
    evidence: tuple[Mapping[str, Any], ...]
    device_test: str
    waived: str = ""  # the reason of the base's waiver that acknowledges it

    @property
    def counts(self) -> bool:
        """Whether the finding moves the verdict: charged and not waived
        (impact.rollup.counts decided it; this reads what the rows say)."""
        return not self.preexisting and not self.waived

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

    @property
    def anchor(self) -> Mapping[str, Any] | None:
        """Where a code-scanning result or an annotation sits: the changed copy at the
        newest revision, else any changed copy, else the first counterpart (a pre-existing
        finding names no changed copy), else none."""
        changed = self.changed_sides
        newest = tuple(side for side in changed if side["revision"] != ViewName.BASE)
        return next((sides[0] for sides in (newest, changed, self.sides) if sides), None)

    @property
    def related(self) -> list[Mapping[str, Any]]:
        """Every copy the finding names but its anchor, once per file and line (a whole
        file, line 0, not again where a line of it is named)."""
        anchor = self.anchor
        seen = {(anchor["file"], anchor["line"])} if anchor else set()
        lined = {s["file"] for s in (*self.sides, *([anchor] if anchor else [])) if s["line"]}
        out = []
        for side in self.sides:
            if not side["line"] and side["file"] in lined:
                continue
            if (side["file"], side["line"]) not in seen:
                seen.add((side["file"], side["line"]))
                out.append(side)
        return out


def where(side: Mapping[str, Any]) -> str:
    """A side as `file:line`, or the file alone when no line is known."""
    return f"{side['file']}:{side['line']}" if side["line"] else str(side["file"])


def _key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    return (row["contract"], row["status"], row["subject"], row["reason"],
            json.dumps(row["details"], sort_keys=True, default=str), row["lane"],
            row["preexisting"] or bool(row.get("baselined")), row.get("waived", ""))


def findings(report: Mapping[str, Any]) -> list[Finding]:
    """Every row of the report grouped across views, most severe first."""
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = {}
    for row in report["rows"]:
        groups.setdefault(_key(row), []).append(row)
    out = []
    for rows in groups.values():
        rows = sorted(rows, key=lambda r: _VIEW_ORDER[ViewName(r["view"])])
        first = rows[0]
        sides = sorted(({**s, "role": Role(s["role"])} for s in first["sides"]),
                       key=lambda s: (s["role"] != Role.CHANGED, s["file"], s["line"]))
        out.append(Finding(
            contract=first["contract"], status=Status(first["status"]),
            subject=first["subject"], reason=first["reason"], details=first["details"],
            # A baselined finding moves nothing, as a pre-existing one (impact.rollup.counts)
            lane=Lane(first["lane"]),
            preexisting=first["preexisting"] or bool(first.get("baselined")),
            views=tuple(ViewName(r["view"]) for r in rows),
            row_ids=tuple(r["id"] for r in rows),
            archs=tuple(sorted({a for r in rows for a in r["archs"]})),
            sides=tuple(sides), evidence=tuple(first["evidence"]),
            device_test=first["device_test"], waived=first.get("waived", "")))
    return sorted(out, key=lambda f: (not f.counts, SEVERITY[f.status], f.lane != Lane.IMPACT,
                                      f.contract, f.subject))
