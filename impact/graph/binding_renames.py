"""Whether a Python file's edit is only parameters renamed alike: each renamed at its
definition and at every call that passes it by keyword, so the same program runs.

Maintainers: reads two snapshots' `BindingsGraph`s (the `renames` part of a file's
content fact, impact/bindings/python_renames.py) and, for the callers in other files,
the tree index's `files_naming`; decides no row. Anything it cannot show is None (the
caller's row stays `changed`): a rename that is not in place, a function called with a
`**` spread or named other than by a call or in a string (it may be passed the old
name), a decorated function or a dunder method, a caller in another file that passes the
old keyword (or the new one: it failed at the base) or cannot be read, and an op stub or a
wrapper (their names are compared against the bindings' by impact/checks/bindings.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from impact.graph.bindings import BindingsGraph
from impact.kinds import SurfaceKind


@dataclass(frozen=True)
class Rename:
    """One parameter of `function` (qualified in its file) renamed `old` -> `new`."""

    function: str
    old: str
    new: str


@dataclass(frozen=True)
class RenamedAlike:
    """A file whose edit is only `renames`, and the other files whose calls were read."""

    path: str
    renames: tuple[Rename, ...]
    callers: tuple[str, ...]


def renamed_alike(old: BindingsGraph, new: BindingsGraph, path: str) -> RenamedAlike | None:
    """The renames that are `path`'s whole edit, or None when that cannot be shown."""
    before, after = old.renames(path), new.renames(path)
    if before is None or after is None:
        return None
    renames = _renames(before.get("params") or {}, after.get("params") or {})
    if not renames:
        return None
    names = {r.function.rsplit(".", 1)[-1] for r in renames}
    if any(n.startswith("__") and n.endswith("__") for n in names):
        return None  # `__init__`, `__call__`: called through a class or an instance
    decorated = set(before.get("decorated") or ()) | set(after.get("decorated") or ())
    if decorated & {r.function for r in renames}:
        return None  # a decorator may read the parameters by name
    ops = {c.name for side in (old, new) for c in side.stubs_at(path)}
    if names & ops:
        return None  # an op stub's or wrapper's names are the bindings check's to judge
    for side in (before, after):
        if _dynamic(side, names):
            return None
    callers = sorted(new.naming(names, (SurfaceKind.OP_PYTHON,)) - {path})
    spelled = {r.old for r in renames} | {r.new for r in renames}
    for caller in callers:
        facts = new.renames(caller)
        if facts is None or _dynamic(facts, names):
            return None
        passed = {k for name in names for k in (facts.get("keyword_calls") or {}).get(name, [])}
        if passed & spelled:
            # The old name still passed (it fails now), or the new one (it failed at the
            # base and binds now): either way what runs changed.
            return None
    # Last, as it reads and parses both blobs again: the whole module the same but for
    # the parameters' names, at their definitions and at this file's keyword calls.
    digest = old.renamed_digest(path)
    if digest is None or digest != new.renamed_digest(path):
        return None
    return RenamedAlike(path, tuple(renames), tuple(callers))


def _renames(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Rename]:
    """The parameters renamed in place, by function; none when a function's list
    changed otherwise (its length) or a function is gone or new."""
    if set(before) != set(after):
        return []
    found: list[Rename] = []
    for function in sorted(before):
        was, now = list(before[function]), list(after[function])
        if len(was) != len(now):
            return []
        found += [Rename(function, a, b) for a, b in zip(was, now, strict=True) if a != b]
    return found


def _dynamic(facts: Mapping[str, Any], names: set[str]) -> bool:
    """Whether a file calls one of `names` with a `**` spread or names it other than
    by a call (passed on, stored, looked up): a call no reading can follow."""
    return bool(names & (set(facts.get("spread_calls") or ()) | set(facts.get("references")
                                                                      or ())
                         | set(facts.get("strings") or ())))


__all__ = ["Rename", "RenamedAlike", "renamed_alike"]
