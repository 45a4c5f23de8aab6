"""The values a build script's names may hold, as the evaluator (`pyeval.py`) tracks them.

Maintainers: plain frozen data, no `ast`. A value is a may-set: the atoms a name may hold
on some path through the script (a list is the set of its possible members), and the gaps
(what could not be resolved, with its line and text). Sets grow only by union, so a value
is always at least what the script can produce: a consumer that finds a gap must say so
(fail closed), never read the atoms as the whole answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MAX_ATOMS = 8192
"""More possible values than this and a value becomes a gap: the script is enumerating
something impact will not follow (and a hostile script cannot make it do unbounded work)."""


@dataclass(frozen=True)
class Gap:
    """Something the evaluator could not resolve: where, the source text, and whether it
    looked like an architecture flag (an f-string `--offload-arch={arch}` of an unknown)."""

    line: int
    text: str
    arch: bool = False


@dataclass(frozen=True)
class GlobPattern:
    """`glob.glob(pattern)` as written, the pattern already made absolute (see `Scope`)."""

    pattern: str
    recursive: bool = False


@dataclass(frozen=True)
class Ref:
    """A module, class or function a script imports, by its dotted name."""

    dotted: str


@dataclass(frozen=True, eq=False)
class Func:
    """A function the script defines (compared by identity: one per `def`)."""

    node: Any  # ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, eq=False)
class Built:
    """What an extension-module constructor returns: an opaque object."""

    line: int


@dataclass(frozen=True)
class Val:
    """The atoms a name may hold, the gaps it may hold besides, and whether it is a
    sequence (`+` then means concatenation of lists, a union of members)."""

    atoms: frozenset[Any] = frozenset()
    gaps: frozenset[Gap] = frozenset()
    seq: bool = False
    # False for a value the environment may override (`os.getenv`'s default): its atoms
    # are what the script names, but no condition on it is settled.
    settled: bool = True

    @classmethod
    def of(cls, *atoms: Any, seq: bool = False) -> Val:
        return cls(frozenset(atoms), frozenset(), seq)

    @classmethod
    def gap(cls, line: int, text: str, *, arch: bool = False) -> Val:
        return cls(frozenset(), frozenset({Gap(line, text[:160], arch)}))

    def strings(self) -> list[str]:
        return sorted(a for a in self.atoms if isinstance(a, str))

    def with_gaps(self, gaps: Iterable[Gap]) -> Val:
        return Val(self.atoms, self.gaps | frozenset(gaps), self.seq, self.settled)

    def as_seq(self) -> Val:
        return Val(self.atoms, self.gaps, True, self.settled)

    def unsettled(self) -> Val:
        return Val(self.atoms, self.gaps, self.seq, False)


EMPTY = Val()
NONE = Val.of(None)


def union(*values: Val | None, line: int = 0) -> Val:
    """Every atom and gap any of `values` may hold (a sequence if any is one)."""
    present = [v for v in values if v is not None]
    atoms = frozenset().union(*(v.atoms for v in present))
    gaps = frozenset().union(*(v.gaps for v in present))
    return bounded(Val(atoms, gaps, any(v.seq for v in present),
                       all(v.settled for v in present)), line)


def bounded(value: Val, line: int) -> Val:
    """`value`, or a gap in its place when it holds more atoms than `MAX_ATOMS`."""
    if len(value.atoms) <= MAX_ATOMS:
        return value
    return Val(frozenset(), value.gaps | {Gap(line, "more values than impact follows")},
               value.seq, value.settled)


def product(parts: list[Val], join: Any, line: int) -> Val:
    """`join` of every combination of the parts' atoms (the parts' gaps kept): an
    f-string's pieces, a string concatenation, `os.path.join`'s arguments."""
    size = 1
    for part in parts:
        size *= max(1, len(part.atoms))
    gaps = frozenset().union(*(p.gaps for p in parts))
    settled = all(p.settled for p in parts)
    if size > MAX_ATOMS:
        return Val(frozenset(), gaps | {Gap(line, "more values than impact follows")},
                   settled=settled)
    if any(not p.atoms for p in parts):
        return Val(frozenset(), gaps, settled=settled)
    out = set()
    for combo in itertools.product(*(p.atoms for p in parts)):
        try:
            out.add(join(*combo))
        except Exception:  # a join that does not apply to these atoms (a number + a list)
            gaps = gaps | {Gap(line, "a value of another kind")}
    return Val(frozenset(out), gaps, settled=settled)


def truth(value: Val) -> bool | None:
    """Whether the value is true on every path (True), false on every path (False), or
    either (None). A sequence's may-set says nothing of whether it is empty."""
    if value.gaps or not value.atoms or value.seq or not value.settled:
        return None
    truths = set()
    for atom in value.atoms:
        try:
            truths.add(bool(atom))
        except Exception:
            return None
    return truths.pop() if len(truths) == 1 else None


def merge_envs(first: dict[str, Val], second: dict[str, Val]) -> dict[str, Val]:
    """The names after two branches: each holds what it may hold after either."""
    out = dict(first)
    for name, value in second.items():
        held = out.get(name)
        out[name] = value if held is None or held is value else union(held, value)
    return out
