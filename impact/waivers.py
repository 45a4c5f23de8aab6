"""Waivers: a reviewed finding acknowledged in the repository, shown as waived.

Why: some findings are understood and accepted (a copy kept on purpose, a break fixed
by a later PR in the same queue); a reviewer records each in `.impact/waivers.toml`
(`impact waive ID --reason ...`) with why and until which day. A waiver holds only while
the finding's copies are as they were reviewed: its `copies` digest is the baseline's
digest of the content of every file the finding's sides name (impact/baseline.py), so an
edit to any copy since shows the finding again, and past its day it lapses. A waived row
is listed with its waiver's reason and moves no verdict (`impact.rollup.counts`).

Maintainers: the waivers come from the base (impact/policy.py), never the head: a change
cannot waive its own findings. This module marks rows and says what became of each
waiver; it decides no verdict.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from impact.baseline import finding_id, sides_digest, snapshots
from impact.policy import Waiver
from impact.rows import Row, Status

if TYPE_CHECKING:
    from impact.checks import CheckContext

WAIVABLE = (Status.MISMATCH, Status.CHANGED)


def with_copies(rows: Iterable[Row], ctx: CheckContext) -> list[Row]:
    """`rows`, each that a waiver could name (a mismatch or changed row) carrying the
    digest of its copies, which `impact waive` records."""
    trees = snapshots(ctx.views)
    return [replace(row, copies=sides_digest(row, ctx, trees)) if row.status in WAIVABLE
            else row for row in rows]


def acknowledged(rows: Sequence[Row], waivers: Iterable[Waiver], today: datetime.date,
                 ) -> tuple[list[Row], list[dict[str, Any]]]:
    """`rows` with each one a live waiver names (same finding, same copies, its day not
    past) marked waived, and what became of every waiver: `waived`, `expired` (its day
    passed: the finding counts again), `copies-changed` (a copy changed since it was
    reviewed: the finding counts again) or `not-found` (no finding of this report)."""
    by_id: dict[str, list[Row]] = {}
    for row in rows:
        if row.status in WAIVABLE and not row.preexisting:
            by_id.setdefault(finding_id(row), []).append(row)
    live: dict[tuple[str, str], Waiver] = {}
    states = []
    for waiver in waivers:
        found = by_id.get(waiver.finding, [])
        if not found:
            state = "not-found"
        elif waiver.expires < today:
            state = "expired"
        elif all(row.copies != waiver.copies for row in found):
            state = "copies-changed"
        else:
            state = "waived"
            live[(waiver.finding, waiver.copies)] = waiver
        states.append({"finding": waiver.finding, "state": state, "reason": waiver.reason,
                       "expires": waiver.expires.isoformat(), "subject": waiver.subject})
    out = []
    for row in rows:
        waiver = live.get((finding_id(row), row.copies)) if row.status in WAIVABLE else None
        out.append(replace(row, waived=waiver.reason) if waiver is not None else row)
    return out, sorted(states, key=lambda s: (s["finding"], s["state"]))
