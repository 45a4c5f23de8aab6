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

ALL_ARCHS = "all-ingestor-archs"


class Status(enum.StrEnum):
    """How a contract site fared, worst first."""

    MISMATCH = "mismatch"   # the two sides disagree: a break
    CHANGED = "changed"     # runtime surface changed; agreement not provable statically
    INERT = "inert"         # changed, provably no runtime effect
    OUTSIDE = "outside"     # no runtime surface


class Lane(enum.StrEnum):
    IMPACT = "IMPACT"
    BUILD = "BUILD"
    DEPS = "DEPS"


@dataclass(frozen=True, order=True)
class Side:
    """One site of a contract: where, at which revision, and whether the change touched it."""

    file: str
    line: int
    revision: str
    role: str  # "changed" or "counterpart"
    symbol: str = ""


@dataclass(frozen=True, order=True)
class Hop:
    """One step of the evidence chain, from the changed line to what it reaches."""

    file: str
    line: int
    says: str


@dataclass(frozen=True)
class Row:
    contract: str
    view: str
    subject: str
    status: Status
    reason: str
    lane: Lane = Lane.IMPACT
    archs: tuple[str, ...] = ()
    sides: tuple[Side, ...] = ()
    evidence: tuple[Hop, ...] = ()
    preexisting: bool = False
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def id(self) -> str:
        """Stable across runs: contract, subject and view, never line numbers."""
        key = f"{self.contract}\x00{self.subject}\x00{self.view}".encode()
        return hashlib.sha256(key).hexdigest()[:16]

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
            "sides": [vars(s) for s in sorted(self.sides)],
            "evidence": [vars(h) for h in self.evidence],
            "details": self.details,
        }
