"""Rows -> the verdicts and the exit code, as data. The only place that decides them.

Runtime: any charged `mismatch` -> BREAKS; else any charged `changed` -> NEEDS-DEVICE with
the union of their archs; else any `inert` -> NONE; else N/A. Rows in the BUILD and DEPS
lanes never decide the runtime verdict; they are named after it as left to those lanes. A
row the base already had, on copies the change did not touch, is pre-existing and moves
nothing (`impact/checks/__init__.py` marks it); so does a finding a baseline file recorded
whose copies are unchanged since (`impact/baseline.py` marks it). Pack-time: NOT-RUN
without an emit file, CLEAN without new or first-shipped findings, else NEW with both
counts. It never moves the runtime verdict. Words for both live in `impact/render/words/`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS, EXIT_NEEDS_DEVICE, EXIT_NONE
from impact.rows import FindingStatus, Lane, Row, Status


class Outcome(enum.StrEnum):
    """The runtime verdict."""

    BREAKS = "BREAKS"
    NEEDS_DEVICE = "NEEDS-DEVICE"
    NONE = "NONE"
    NOT_APPLICABLE = "N/A"


class PackOutcome(enum.StrEnum):
    """The Pack-time verdict."""

    NOT_RUN = "NOT-RUN"
    NOT_APPLICABLE = "NOT-APPLICABLE"  # the map names no emitter: nothing to probe
    CLEAN = "CLEAN"
    NEW = "NEW"
    INCOMPLETE = "INCOMPLETE"


EXIT_CODES: dict[Outcome, int] = {
    Outcome.BREAKS: EXIT_BREAKS,
    Outcome.NEEDS_DEVICE: EXIT_NEEDS_DEVICE,
    Outcome.NONE: EXIT_NONE,
    Outcome.NOT_APPLICABLE: EXIT_NONE,
}


@dataclass(frozen=True)
class Verdict:
    """The runtime verdict, the archs a NEEDS-DEVICE names, the lanes rows were left to,
    and the exit code `impact report` returns for it."""

    kind: Outcome
    archs: tuple[str, ...] = ()
    other_lanes: tuple[str, ...] = ()

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.kind]

    def to_json(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "archs": list(self.archs),
                "other_lanes": list(self.other_lanes), "exit_code": self.exit_code}


@dataclass(frozen=True)
class PackTime:
    """The Pack-time verdict and the findings behind it."""

    kind: PackOutcome
    new: int = 0
    first_shipped: int = 0
    findings: tuple[Mapping[str, Any], ...] = ()
    unfinished: tuple[str, ...] = ()

    @property
    def probed(self) -> bool:
        return self.kind != PackOutcome.NOT_RUN

    def to_json(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "probed": self.probed, "new": self.new,
                "first_shipped": self.first_shipped,
                "findings": [dict(f) for f in self.findings],
                "unfinished": list(self.unfinished)}


def _arch_order(archs: Iterable[str]) -> tuple[str, ...]:
    """`all-...` labels (every architecture) first, then the named ones."""
    unique = set(archs)
    every = tuple(sorted(a for a in unique if a.startswith("all-")))
    return every + tuple(sorted(unique - set(every)))


def counts(row: Row) -> bool:
    """Whether a row may move a verdict: neither pre-existing, baselined nor waived."""
    return not (row.preexisting or row.baselined or row.waived)


def rollup(rows: Iterable[Row], every_arch: str = "all-archs") -> Verdict:
    """The runtime verdict of a set of rows. A changed row that names no arch reaches
    every one: `every_arch` is the surface map's label for that (`run_checks` already
    gives such rows the label; this keeps a hand-built row from vanishing)."""
    rows = [r for r in rows if counts(r)]
    impact = [r for r in rows if r.lane == Lane.IMPACT]
    lanes = tuple(sorted({str(r.lane) for r in rows if r.lane != Lane.IMPACT}))
    statuses = {r.status for r in impact}
    if Status.MISMATCH in statuses:
        return Verdict(Outcome.BREAKS, other_lanes=lanes)
    if Status.CHANGED in statuses:
        archs = [a for r in impact if r.status == Status.CHANGED
                 for a in (r.archs or (every_arch,))]
        return Verdict(Outcome.NEEDS_DEVICE, _arch_order(archs), lanes)
    if Status.INERT in statuses:
        return Verdict(Outcome.NONE, other_lanes=lanes)
    return Verdict(Outcome.NOT_APPLICABLE, other_lanes=lanes)


def pack_time(findings: Iterable[Mapping[str, Any]] | None,
              unfinished: Iterable[str] = (), *, emitter: bool = True) -> PackTime:
    """The Pack-time verdict of the classified predicate-table findings; None when no
    emit file was given (the probes did not run, or, under a map with no `emitter`, have
    nothing to probe). Probes that did not finish make it INCOMPLETE unless a finding
    already makes it NEW: silence is not CLEAN."""
    if findings is None:
        return PackTime(PackOutcome.NOT_RUN if emitter else PackOutcome.NOT_APPLICABLE)
    listed = tuple(findings)
    pending = tuple(unfinished)
    new = sum(1 for f in listed if f.get("status") == FindingStatus.NEW)
    first = sum(1 for f in listed if f.get("status") == FindingStatus.FIRST_SHIPPED)
    kind = (PackOutcome.NEW if (new or first) else
            PackOutcome.INCOMPLETE if pending else PackOutcome.CLEAN)
    return PackTime(kind, new, first, listed, pending)


# Which report exit codes fail a gate (`--fail-on`: the command line, the hook, the
# Action), per value. An error (exit 3 or 4) always fails: a report that could not run
# has said nothing.
FAIL_ON: Mapping[str, frozenset[int]] = {
    "breaks": frozenset({EXIT_BREAKS}),
    "needs-device": frozenset({EXIT_BREAKS, EXIT_NEEDS_DEVICE}),
    "never": frozenset(),
}


def fails(exit_code: int, fail_on: str) -> bool:
    """Whether a report that ended in `exit_code` fails the gate `fail_on`."""
    return exit_code >= EXIT_BAD_INPUT or exit_code in FAIL_ON[fail_on]



# ------------------------------------------------------------------ a tree, a merge queue

_SEVERITY = {Status.MISMATCH: 3, Status.CHANGED: 2, Status.INERT: 1, Status.OUTSIDE: 0}


def drift(rows: Iterable[Row]) -> list[Row]:
    """What `impact audit` lists of one tree checked against itself: every mismatch its
    copies hold (the views compare each copy with the others, none with an older one)."""
    return [r for r in rows if r.status == Status.MISMATCH]


def audit(rows: Iterable[Row]) -> Verdict:
    """The verdict of an audit: BREAKS when a copy of the tree disagrees with another
    and no baseline recorded it as it stands; else NONE. Rows a whole tree is bound to
    have (every copy is `changed` against the empty tree) decide nothing here: an audit
    asks whether the tree is consistent today, not what a device run would settle."""
    live = [r for r in drift(rows) if counts(r)]
    lanes = tuple(sorted({str(r.lane) for r in live if r.lane != Lane.IMPACT}))
    if any(r.lane == Lane.IMPACT for r in live):
        return Verdict(Outcome.BREAKS, other_lanes=lanes)
    return Verdict(Outcome.NONE, other_lanes=lanes)


def together(pair: Iterable[Row], alone: Iterable[Row]) -> list[Row]:
    """The rows two pull requests merged together onto the target hold that neither
    merged alone does: charged, and worse than any charged row of the same id the
    single ones have (a subject `changed` alone and `mismatch` together is new)."""
    worst: dict[str, int] = {}
    for row in alone:
        if counts(row):
            worst[row.id] = max(worst.get(row.id, -1), _SEVERITY[row.status])
    return [r for r in pair if counts(r) and r.status != Status.OUTSIDE
            and _SEVERITY[r.status] > worst.get(r.id, -1)]


def worst(verdicts: Iterable[Verdict], every_arch: str = "all-archs") -> Verdict:
    """The verdict of a merge queue: the worst of its pull requests' and its pairs'
    (BREAKS over NEEDS-DEVICE, whose archs are united, over NONE over N/A)."""
    listed = list(verdicts)
    order = (Outcome.BREAKS, Outcome.NEEDS_DEVICE, Outcome.NONE, Outcome.NOT_APPLICABLE)
    lanes = tuple(sorted({lane for v in listed for lane in v.other_lanes}))
    for kind in order:
        same = [v for v in listed if v.kind == kind]
        if same:
            archs = _arch_order(a for v in same for a in v.archs) \
                if kind == Outcome.NEEDS_DEVICE else ()
            return Verdict(kind, archs or ((every_arch,) if kind == Outcome.NEEDS_DEVICE
                                           else ()), lanes)
    return Verdict(Outcome.NOT_APPLICABLE)
