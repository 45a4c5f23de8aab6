"""The child's document for one revision: its variants enumerated and split by kind, each
family built and its predicate table probed in a bounded worker thread, then everything
shaped, sorted, into one JSON document (schema_version 1,
impact/contracts/emit_child.schema.json).

Launches of any kind but the one the child builds (`Emitter.source_kind`) go to
``skipped``. Budgets: the family budget is seconds of the worker thread's own CPU time, per
family build and per predicate table, checked between variants and between probes, so a
loaded machine does not turn a build that fits into a timeout. Past it the worker stops
where it is and the family or table reads ``timed-out`` (Pack-time INCOMPLETE, never
CLEAN). A worker that neither stops nor finishes (tree code that blocks) is abandoned after
``WALL_FACTOR`` times the budget of wall time; it reads ``timed-out`` too, and then every
later table reads ``timed-out`` as well. A family's table runs with the tree modules its own
build left in ``sys.modules`` (not the last family's), so what it finds does not depend on
which families a child built before it.

Maintainers: the order of the steps is part of the document (the reads windows, the purges
between families); the document's content comes from the stages, its shape from here.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

from emit.child.build import Family, build_family, group_of, variant_record
from emit.child.context import Context
from emit.child.enumeration import merge_enumerations, read_tree_enumeration, rules_entries
from emit.child.flavor import choose_flavor
from emit.child.probes import Table, probe_family, sign_findings
from emit.child.reads import Reads, window
from emit.child.specs import spec_json
from emit.child.vocabulary import BuildStatus, EnumeratedBy, TableStatus

SCHEMA_VERSION = 1
# Wall-clock backstop of a worker, in family budgets (the budget itself is CPU time).
WALL_FACTOR = 4.0


def run_bounded(fn, budget: float) -> bool:
    """Run fn in a daemon worker thread; False when it is still running after
    WALL_FACTOR times `budget` of wall time (fn itself stops at `budget` of its CPU time;
    this backstop is for tree code that blocks)."""
    worker = threading.Thread(target=fn, daemon=True)
    worker.start()
    worker.join(budget * WALL_FACTOR)
    return not worker.is_alive()


def _backend(ctx: Context) -> tuple[str | None, str | None]:
    """(the backend pin as the document states it, why every variant fails when the
    packer pins a backend other than the Python one)."""
    pins = list(ctx.rules["backend_pins"])
    python = ctx.emitter.python_backend
    foreign = [p for p in pins if p != python]
    pin = pins[0] if len(pins) == 1 else (None if not pins else ",".join(pins))
    fail = (f"packer pins lowering backend {','.join(foreign)!r}, not {python!r}"
            if foreign else None)
    return pin, fail


def _enumerate(ctx: Context) -> tuple[list[dict], list[dict], str, str | None]:
    """(entries, not_inspected, enumerator, enumerator_error): the tree's enumeration
    completed from the KDP JSON, or the JSON alone when the tree's fails."""
    json_entries, not_inspected = rules_entries(ctx)
    try:
        enumerator, tree = read_tree_enumeration(ctx)
    except BaseException as exc:  # the whole tree's variants come from the KDP JSON
        entries = [dict(e, enumerated_by=EnumeratedBy.KDP_JSON, enumeration_gap=None)
                   for e in json_entries]
        return entries, not_inspected, EnumeratedBy.KDP_JSON, ctx.describe(exc)
    entries, not_inspected = merge_enumerations(json_entries, not_inspected, tree,
                                                ctx.emitter.source_kind)
    return entries, not_inspected, enumerator, None


def _split_by_kind(entries: list[dict], kind: str) -> tuple[list[dict], list[dict]]:
    """(skipped records, the entries of the kind the child builds)."""
    skipped, buildable = [], []
    for e in entries:
        if e["kind"] == kind:
            buildable.append(e)
        else:
            skipped.append({
                "kdp": e["kdp"], "name": e["name"], "ukd_id": e["ukd_id"],
                "launch": e["launch"], "kind": e["kind"], "archs": sorted(e["arch"]),
                "reason": f"{e['kind']} source: nothing for rocKE to build",
            })
    return skipped, buildable


def _families(entries: list[dict]) -> tuple[list[Family], set]:
    """The families (source, builder, arch, launch) in build order, and the (name, launch)
    pairs shipped with more than one spec."""
    specs_by_name: dict = {}
    for e in entries:
        specs_by_name.setdefault((e["name"], e["launch"]), set()).add(
            (e["source"], e["builder"], spec_json(e["spec"])))
    duplicates = {k for k, v in specs_by_name.items() if len(v) > 1}
    groups: dict = {}
    for e in entries:
        for arch in sorted(set(e["arch"])):
            key = (e["source"], e["builder"], arch, e["launch"])
            groups.setdefault(key, []).append(e)
    families = [Family(k, groups[k]) for k in sorted(groups, key=lambda k: (
        k[0], k[1], k[2], k[3] or ""))]
    return families, duplicates


def _build_all(ctx: Context, families: list[Family], flavor: str | None,
               backend_fail: str | None, duplicates: set, budget: float,
               reads: Reads | None) -> bool:
    """Build each family in its own bounded worker; whether a worker was abandoned."""
    abandoned = False
    for done, fam in enumerate(families):
        # The parent's progress bar reads these lines (families done of total).
        print(f"progress {done}/{len(families)}", file=sys.stderr, flush=True)
        fam.entries.sort(key=lambda e: (e["name"], e["kdp"], e["ukd_id"], spec_json(e["spec"])))
        window(reads, group_of(fam))
        finished = run_bounded(
            lambda fam=fam: build_family(ctx, fam, flavor, backend_fail, duplicates, budget),
            budget)
        if finished:
            fam.loaded = {name: sys.modules[name] for name in ctx.tree_modules()}
            if reads is not None:
                reads.add_modules(ctx.tree_modules())
        window(reads, None)
        if not finished or not fam.done:
            abandoned = abandoned or not finished
            fam.status = BuildStatus.TIMED_OUT
            fam.reason = f"family build passed its budget of {budget:g} s"
            fam.imports = []
            fam.variants = [variant_record(e, [], BuildStatus.TIMED_OUT, fam.reason, [])
                            for e in fam.entries]
            fam.module = None
    print(f"progress {len(families)}/{len(families)}", file=sys.stderr, flush=True)
    return abandoned


def _probe_all(ctx: Context, families: list[Family], budget: float,
               reads: Reads | None) -> tuple[list[Table], bool]:
    """Each built family's predicate table, in its own bounded worker; the tables, and
    whether a worker was abandoned."""
    abandoned = False
    tables = []
    cut = False
    for fam in families:
        table = Table(fam)
        tables.append(table)
        if cut or fam.module is None or fam.predicate is None or fam.cls is None \
                or not fam.built_archs:
            if not cut and fam.status != BuildStatus.TIMED_OUT:
                table.status = TableStatus.DONE
            continue
        # The family's probes run with its own build's modules, as if it had been built
        # last: a module they import is its build's, or imported afresh (and recorded).
        ctx.purge()
        sys.modules.update(fam.loaded)
        window(reads, group_of(fam))
        finished = run_bounded(lambda t=table: probe_family(ctx, t, budget), budget)
        window(reads, None)
        if not finished or not table.done:
            # A worker still running tree code takes the later tables with it; one that
            # stopped at its budget leaves them their own.
            abandoned = abandoned or not finished
            cut = cut or not finished
            table.status, table.probes, table.findings = TableStatus.TIMED_OUT, 0, []
            table.nonpositive = {}
    return tables, abandoned


def make_document(ctx: Context, flavor_pin: str | None, budget: float,
                  only: set[str] | None = None, reads: Reads | None = None
                  ) -> tuple[dict, bool]:
    """Build the output document (only the families `only` names, when given), recording
    what tree code reads into `reads`; the bool says whether a worker was abandoned."""
    flavor = choose_flavor(ctx, flavor_pin)
    backend_pin, backend_fail = _backend(ctx)
    entries, not_inspected, enumerator, enumerator_error = _enumerate(ctx)
    ctx.purge()
    if flavor:
        # The tree's lowering reads the flavor from here when no argument names it.
        os.environ[ctx.emitter.flavor_env] = flavor
    skipped, buildable = _split_by_kind(entries, ctx.emitter.source_kind)
    families, duplicates = _families(buildable)
    enumerated = [{"id": fam.id, "source": fam.key[0], "arch": fam.key[2],
                   "variants": len(fam.entries)} for fam in families]
    if only is not None:
        families = [fam for fam in families if fam.id in only]
    built_abandoned = _build_all(ctx, families, flavor, backend_fail, duplicates, budget, reads)
    tables, probe_abandoned = _probe_all(ctx, families, budget, reads)
    sign_findings(tables)

    def _sort_variant(v):
        return (v["name"], v["kdp"], v["ukd_id"])

    doc = {
        "schema_version": SCHEMA_VERSION,
        "flavor": flavor,
        "backend_pin": backend_pin,
        "enumerator": enumerator,
        "enumerator_error": enumerator_error,
        "error": None,
        "families": [{
            "id": fam.id,
            "source": fam.key[0],
            "builder": fam.key[1],
            "spec_class": fam.spec_class,
            "arch": fam.key[2],
            "launch": fam.key[3],
            "status": fam.status,
            "reason": fam.reason,
            "imports": sorted(fam.imports),
            "variants": sorted(fam.variants, key=_sort_variant),
        } for fam in families],
        "skipped": sorted(skipped, key=lambda s: (s["kdp"], s["name"], s["launch"] or "")),
        "not_inspected": sorted(not_inspected, key=lambda s: (
            s["kdp"], -1 if s["index"] is None else s["index"])),
        "enumerated": enumerated,
        "predicate_tables": [{
            "family": t.fam.id,
            "status": t.status,
            "probes": t.probes,
            "findings": t.findings,
        } for t in tables],
    }
    return doc, built_abandoned or probe_abandoned


def error_document(message: str) -> dict:
    return {
        "schema_version": SCHEMA_VERSION, "flavor": None, "backend_pin": None,
        "enumerator": EnumeratedBy.KDP_JSON, "enumerator_error": None, "error": message,
        "families": [], "skipped": [], "not_inspected": [], "predicate_tables": [],
        "enumerated": [],
    }


def write_document(doc: dict, out: Path) -> None:
    """`doc` at `out`, whole or not at all (a temporary file renamed into place)."""
    text = json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=True) + "\n"
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out)
