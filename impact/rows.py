"""Rows: one contract at one site in one view, as data.

Maintainers: checks build Rows; only `impact/rollup.py` turns them into a
verdict and only `impact/render/` turns them into words. A Row holds no
preformatted text beyond short evidence phrases.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from typing import Any

from impact.kinds import ViewName


class Status(enum.StrEnum):
    """How a contract site fared, worst first."""

    MISMATCH = "mismatch"   # the two sides disagree: a break
    CHANGED = "changed"     # runtime surface changed; agreement not provable statically
    INERT = "inert"         # changed, provably no runtime effect
    OUTSIDE = "outside"     # no runtime surface


class Role(enum.StrEnum):
    """Whether a side's copy changed in the view, or stands as the copy compared with it."""

    CHANGED = "changed"
    COUNTERPART = "counterpart"


class FindingStatus(enum.StrEnum):
    """How a Pack-time finding of the head's predicate probes stands against the base."""

    NEW = "new"                      # the change made it
    FIRST_SHIPPED = "first-shipped"  # a family shipped for the first time, its code untouched
    PREEXISTING = "pre-existing"     # the base's probes found it too


class Confirms(enum.StrEnum):
    """What a device run would settle: a `changed` row's change, or a `mismatch` row's break."""

    CHANGE = "change"
    BREAK = "break"


class Lane(enum.StrEnum):
    """Who reviews a row: the runtime verdict's own lane, or the build or dependency
    reviewers'. A path outside every surface has the lane NONE; no row has it."""

    IMPACT = "IMPACT"
    BUILD = "BUILD"
    DEPS = "DEPS"
    NONE = "NONE"


# The `details` key of a `changed` row a check says an equal build settles: a list of
# [module, builder] pairs (every builder through which what the row compares can run) and
# the files whose code it compares, under "files". The emit fold (impact/fold.py) turns
# such a row inert only when every shipped family of each builder built equal at both
# revisions; a check that is unsure writes no claim.
SETTLED_BY_BUILD = "settled_by_build"


@dataclass(frozen=True, order=True)
class Side:
    """One site of a contract: where, at which revision, and whether the change touched it."""

    file: str
    line: int
    revision: str  # a ViewName's value: the label of the snapshot the copy was read from
    role: str  # a Role
    symbol: str = ""


@dataclass(frozen=True, order=True)
class Hop:
    """One step of the evidence chain, from the changed line to what it reaches: what
    was seen (`step`, a `Step`) and the values its sentence needs (`args`, sorted
    pairs). Build one with `Hop.of(file, line, Step.X, name=value, ...)`."""

    file: str
    line: int
    step: str
    args: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, file: str, line: int, step: str, **args: Any) -> Hop:
        return cls(file, line, step, tuple(sorted((k, _frozen(v)) for k, v in args.items())))

    @property
    def arguments(self) -> dict[str, Any]:
        return dict(self.args)


def _frozen(value: Any) -> Any:
    """A hashable, comparable copy of a JSON-ready value (lists become tuples)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, set | frozenset):
        return tuple(sorted(_frozen(v) for v in value))
    return value


@dataclass(frozen=True)
class Row:
    """`reason` is a `Reason` member; `details` holds the values its sentence reads and
    any other structured data a renderer or a test needs. `preexisting` is decided by
    `run_checks` from the sides' roles, never by a check."""

    contract: str
    view: ViewName
    subject: str
    status: Status
    reason: str
    lane: Lane = Lane.IMPACT
    archs: tuple[str, ...] = ()
    sides: tuple[Side, ...] = ()
    evidence: tuple[Hop, ...] = ()
    preexisting: bool = False  # decided by run_checks (impact/checks/__init__.py) only
    # A finding a baseline file recorded, its copies unchanged since (impact/baseline.py):
    # listed, and moves no verdict (impact/rollup.py).
    baselined: bool = False
    # The reason of the base's waiver that acknowledges this finding, its copies unchanged
    # since and its day not past (impact/waivers.py): listed, and moves no verdict.
    waived: str = ""
    # The digest of the content of the files the sides name (impact/waivers.py sets it on
    # a mismatch or changed row): what a waiver records.
    copies: str = ""
    # The test the map or a profile names to settle this row on a device; empty when the
    # shipped variants that reach the subject are what would settle it.
    device_test: str = ""
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def id(self) -> str:
        """Stable across runs: contract, subject and view, never line numbers."""
        return row_id(self.contract, self.subject, self.view)

    @property
    def files(self) -> set[str]:
        return {side.file for side in self.sides}

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.view, self.contract, self.subject, self.status)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "contract": self.contract,
            "view": self.view,
            "subject": self.subject,
            "status": str(self.status),
            "reason": self.reason,
            "lane": str(self.lane),
            "archs": sorted(self.archs),
            "preexisting": self.preexisting,
            "device_test": self.device_test,
            "sides": [vars(s) for s in sorted(self.sides)],
            "evidence": [{"file": h.file, "line": h.line, "step": str(h.step),
                          "args": _jsonable(h.arguments)} for h in self.evidence],
            "details": self.details,
        } | ({"baselined": True} if self.baselined else {}) | (
            {"finding": row_id(self.contract, self.subject, ViewName.HEAD),
             "copies": self.copies} if self.copies else {}) | (
            {"waived": self.waived} if self.waived else {})


def row_id(contract: str, subject: str, view: str) -> str:
    """The id a row of `contract` about `subject` has in `view` (`Row.id`)."""
    key = f"{contract}\x00{subject}\x00{view}".encode()
    return hashlib.sha256(key).hexdigest()[:16]


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
