"""The support-predicate tables: each family's predicate (as the tree's producer resolves
it) put to one-field variations of its shipped specs, and what the builder does with an
accepted one.

A variation's builder call is skipped once its (field, value) has its finding and nothing
later could change the table (the first finding per (field, value) is the one kept, in the
same order as probing every one). `sign_findings` then looks across the tables of one
module and arch for a non-positive value one predicate accepts and another refuses.

Maintainers: runs tree code (the predicate, the builder, the spec class) with the modules
the family's own build left in sys.modules (emit/child/document.py sets them); never
raises out of `probe_family`.
"""

from __future__ import annotations

import dataclasses
import time

from emit.child.build import Family
from emit.child.context import Context
from emit.child.hooks import verdict
from emit.child.specs import spec_json, spec_key
from emit.child.vocabulary import TableStatus

INT32_MAX = 2**31 - 1
# Probes between two looks at the worker's CPU clock.
CLOCK_EVERY = 32


def int_variations(v: int) -> list[int]:
    vals = {v - 1, v + 1, v * 2, v // 2, 0, -1, -v, 1, INT32_MAX, INT32_MAX + 1}
    vals.discard(v)
    return sorted(vals)


def spec_variations(cls, shipped: list[dict]):
    """(field, value, spec dict) for one-field variations of the shipped specs, each
    distinct spec dict once (as its JSON text would tell them apart).

    Two variations of one field are the same dict exactly when their values are (type
    included) and their shipped specs agree on every other key; `_rest_classes` numbers
    the shipped specs by the latter, so the set of variations seen holds small keys, not
    a spec per variation (a 900-variant family probes some 10^5)."""
    seen = set()
    fields = [f for f in dataclasses.fields(cls)]
    rest = _rest_classes(shipped, [f.name for f in fields])
    for index, spec in enumerate(shipped):
        try:
            full = dataclasses.asdict(cls(**spec))
        except BaseException:  # a spec that does not construct is not probed
            continue
        for f in fields:
            cur = full.get(f.name)
            if isinstance(cur, bool):
                values = [not cur]
            elif isinstance(cur, int):
                values = int_variations(cur)
            else:
                continue
            for value in values:
                key = (f.name, type(value), value, rest[f.name][index])
                if key in seen:
                    continue
                seen.add(key)
                var = dict(spec)
                var[f.name] = value
                yield f.name, value, var


def _rest_classes(shipped: list[dict], names: list[str]) -> dict[str, list[int]]:
    """For each field name, each shipped spec's class: the index of the first shipped spec
    that has the same keys and values (`spec_key`) once that field is left out."""
    classes: dict[str, list[int]] = {}
    for name in names:
        first: dict = {}
        classes[name] = [first.setdefault(spec_key({k: v for k, v in spec.items()
                                                     if k != name}), i)
                         for i, spec in enumerate(shipped)]
    return classes


class Table:
    def __init__(self, fam: Family) -> None:
        self.fam = fam
        self.status = TableStatus.TIMED_OUT
        self.probes = 0
        self.findings: list[dict] = []
        # (field, value) -> {"accepted": spec|None, "refused": (spec, why)|None}
        self.nonpositive: dict = {}
        self.done = False


def probe_family(ctx: Context, table: Table, budget: float | None = None) -> None:
    """Fill `table`: every one-field variation of the shipped specs through the predicate,
    and an accepted one through the builder. Per (field, value) the table keeps the first
    builder failure and, for a non-positive value, the first accepted and the first refused
    variation, all in variation order; once a (field, value) has all it can keep, its later
    variations are counted but not run (they could change nothing). Past `budget` seconds
    of this thread's CPU time it stops, leaving table.done False (the table reads
    timed-out)."""
    fam = table.fam
    shipped = sorted({spec_json(e["spec"]): e["spec"] for e in fam.entries}.items())
    shipped = [s for _, s in shipped]
    archs = fam.built_archs
    builder_hits: dict = {}
    settled: set = set()  # (field, value) pairs nothing later can change
    deadline = None if budget is None else time.thread_time() + budget
    probes = 0
    for field, value, var in spec_variations(fam.cls, shipped):
        probes += 1
        if deadline is not None and probes % CLOCK_EVERY == 0 \
                and time.thread_time() > deadline:
            return  # table.done stays False
        if (field, value) in settled:
            continue
        try:
            spec_obj = fam.cls(**var)
        except BaseException:
            continue
        nonpositive = isinstance(value, int) and not isinstance(value, bool) and value <= 0
        for arch in archs:
            try:
                ok, why = verdict(fam.predicate(spec_obj, arch=arch))
            except BaseException:
                continue
            if nonpositive:
                slot = table.nonpositive.setdefault((field, value), {"accepted": None,
                                                                     "refused": None})
                if ok and slot["accepted"] is None:
                    slot["accepted"] = var
                if not ok and slot["refused"] is None:
                    slot["refused"] = (var, ctx.clean(str(why)))
            if not ok or (field, value) in builder_hits:
                continue
            try:
                fam.builder_fn(spec_obj, arch=arch)
            except BaseException as exc:
                builder_hits[(field, value)] = {
                    "family": fam.id, "kind": "builder", "field": field, "value": value,
                    "spec": var,
                    "detail": f"predicate accepts on {arch}; builder raises "
                              f"{ctx.describe(exc)}",
                }
        if (field, value) in builder_hits:
            slot = table.nonpositive.get((field, value))
            if not nonpositive or (slot is not None and slot["accepted"] is not None
                                   and slot["refused"] is not None):
                settled.add((field, value))
    table.probes = probes
    table.findings = [builder_hits[k] for k in sorted(builder_hits, key=_finding_key)]
    table.status = TableStatus.DONE
    table.done = True


def _finding_key(k):
    field, value = k
    return (field, str(type(value).__name__), value)


def sign_findings(tables: list[Table]) -> None:
    """A non-positive value all shipped specs keep positive, accepted by one predicate of a
    module and refused by another predicate of the same module (same arch)."""
    done = [t for t in tables if t.status == TableStatus.DONE and t.fam.predicate is not None]
    for a in done:
        for b in done:
            fa, fb = a.fam, b.fam
            if a is b or fa.key[0] != fb.key[0] or fa.key[2] != fb.key[2]:
                continue
            if fa.predicate is fb.predicate:
                continue
            hits = {}
            for (field, value), slot in a.nonpositive.items():
                if slot["accepted"] is None:
                    continue
                other = b.nonpositive.get((field, value))
                if not other or other["refused"] is None:
                    continue
                if not _defaults_positive(fa, fb, field):
                    continue
                pred_a = getattr(fa.predicate, "__name__", "predicate")
                pred_b = getattr(fb.predicate, "__name__", "predicate")
                hits[(field, value)] = {
                    "family": fa.id, "kind": "sign", "field": field, "value": value,
                    "spec": slot["accepted"],
                    "detail": f"{pred_a} accepts {field}={value}; {pred_b} of {fb.id} "
                              f"refuses it: {other['refused'][1]}",
                }
            a.findings.extend(hits[k] for k in sorted(hits, key=_finding_key))


def _defaults_positive(fa: Family, fb: Family, field: str) -> bool:
    """Shipped values of `field`, counting class defaults for specs that omit it."""
    values = []
    for fam in (fa, fb):
        default = None
        for f in dataclasses.fields(fam.cls):
            if f.name == field and f.default is not dataclasses.MISSING:
                default = f.default
        for e in fam.entries:
            values.append(e["spec"].get(field, default))
    return bool(values) and all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)
