"""Build the report document from resolved views.

Maintainers: returns plain data (dicts and lists, sorted); the sentences it holds
(coverage, the emit fold, the device runs' notes) come from `impact/render/words/`.
Nothing here reads git: the views already hold it all. The library entry (impact/api.py)
calls `build_report` only when no stored report answers, so importing this module (and
the checks) is what a report costs beyond a look-up. (Named `document`, not `report`:
`impact.report` is the library entry's function.)
"""

from __future__ import annotations

import datetime
import hashlib
import json
from typing import Any

from impact.anchors import anchored
from impact.baseline import Baseline
from impact.baseline import apply as apply_baseline
from impact.caches import Caches, active_caches
from impact.checks import REGISTRY, CheckContext, applies, run_checks, touches_a_surface
from impact.fold import fold, pack_findings, unfinished_revisions, unfinished_tables
from impact.git import Snapshot, View, Views
from impact.kinds import ViewName
from impact.policy import Waiver
from impact.prefetch import prefetch
from impact.render import words
from impact.rollup import counts, pack_time, rollup
from impact.rows import Confirms, Lane, Role, Row, Status
from impact.surface import BadSurfaceMap, SurfaceMap
from impact.version import SCHEMA_VERSION, tool_version
from impact.waivers import acknowledged, with_copies


def _surfaces(view: View, surface: SurfaceMap) -> list[dict[str, str]]:
    described = ((path, surface.describe(path)) for path in view.diff.paths)
    return [{"path": path, "kind": what.kind, "lane": what.lane} for path, what in described]


def diff_sha256(view: View) -> str | None:
    """sha256 of what the view compared: every changed path with its blob at each side."""
    if view.new is None:
        return None
    lines = []
    for path in view.diff.paths:
        old = view.old[path].sha if path in view.old else "-"
        new = view.new[path].sha if path in view.new else "-"
        lines.append(f"{path}\t{old}\t{new}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _view(view: View, surface: SurfaceMap) -> dict[str, Any]:
    diff = view.diff
    return {
        "diff_sha256": diff_sha256(view),
        "surfaces": _surfaces(view, surface),
        "name": view.name,
        "old_tree": view.old.tree_id,
        "new_tree": view.new.tree_id if view.new is not None else None,
        "added": list(diff.added),
        "removed": list(diff.removed),
        "modified": list(diff.modified),
        "renamed": [{"from": old, "to": new} for old, new in diff.renamed],
        "conflicts": list(view.conflicts),
        "unavailable": view.unavailable,
    }


def emit_sha256(document: dict[str, Any]) -> str:
    """The sha256 of an emit document as canonical JSON (for one built in this run)."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _emit_summary(emit: dict[str, Any] | None, source: str | None, sha256: str | None,
                  trusted: bool) -> dict[str, Any] | None:
    if emit is None:
        return None
    return {"source": source or words.GIVEN, "sha256": sha256 or emit_sha256(emit),
            "fold": words.FOLD_APPLIED if trusted else words.FOLD_OFF_UNTRUSTED,
            "revisions": {label: {"status": rev["status"], "reason": rev["reason"],
                                  "network_isolated": rev["network_isolated"],
                                  # which sandbox protections the child had (None: an
                                  # emit file older than the record)
                                  "protections": rev.get("protections")}
                          for label, rev in sorted(emit["revisions"].items())}}


def _skipped(views: Views, emit: dict[str, Any] | None) -> list[dict[str, str]]:
    skipped = []
    if emit is None:
        skipped.append({"what": words.EMIT_FOLD, "reason": words.NO_EMIT_FILE})
    for view in views.views:
        if view.unavailable is not None:
            skipped.append({"what": words.view_text(view.name), "reason": view.unavailable})
    if views.view(ViewName.MERGED) is None:
        skipped.append({"what": words.view_text(ViewName.MERGED),
                        "reason": words.NO_TARGET_TIP})
    skipped.extend({"what": what, "reason": why} for what, why in views.skipped)
    return sorted(skipped, key=lambda s: s["what"])


def unfinished(emit: dict[str, Any]) -> list[str]:
    """What Pack-time names as not finished: each revision that left no result, else
    every head predicate table that did not finish."""
    revisions = unfinished_revisions(emit)
    return [words.revision_text(r) for r in revisions] if revisions else unfinished_tables(emit)


def _arch_sources(ctx: CheckContext) -> dict[str, list[str]]:
    """Each architecture considered, with the descriptor files that ship it (none when
    the change touches no surface: nothing was considered, and no graph is built)."""
    if not touches_a_surface(ctx):
        return {}
    from impact.archs import arch_sources

    return arch_sources(ctx)


def device_runs(rows: list[Row], surface: SurfaceMap | None = None,
                head: Snapshot | None = None) -> list[dict[str, Any]]:
    """The device runs that would settle the charged rows of the IMPACT lane: `changed`
    rows (a run confirms the change) and `mismatch` rows (a run confirms the break). A
    row's own `device_test`, else the shipped variants that reach its subject (target
    empty). A subject seen in several views is run once on the union of its archs; runs
    with the same archs, target and purpose are one run. Each run carries the tests and
    bench commands the surface map's `[[device_tests]]` name for its changed files (never
    guessed; a test the head tree lacks is left out), the packages those entries name, and
    a note when the map names none."""
    per_subject: dict[tuple[str, str, str], dict[str, set[str]]] = {}
    for row in rows:
        if not counts(row) or row.lane != Lane.IMPACT or row.status not in (
                Status.CHANGED, Status.MISMATCH):
            continue
        confirms = Confirms.BREAK if row.status == Status.MISMATCH else Confirms.CHANGE
        entry = per_subject.setdefault((row.device_test, row.subject, confirms),
                                       {"archs": set(), "rows": set(), "files": set()})
        entry["archs"].update(row.archs)
        entry["rows"].add(row.id)
        changed = {side.file for side in row.sides if side.role == Role.CHANGED}
        entry["files"] |= changed or {side.file for side in row.sides}
    runs: dict[tuple[tuple[str, ...], str, str], dict[str, set[str]]] = {}
    for (target, subject, confirms), entry in per_subject.items():
        run = runs.setdefault((tuple(sorted(entry["archs"])), target, confirms),
                              {"subjects": set(), "rows": set(), "files": set()})
        run["subjects"].add(subject)
        run["rows"] |= entry["rows"]
        run["files"] |= entry["files"]
    return [{"archs": list(archs), "target": target, "confirms": confirms,
             "subjects": sorted(run["subjects"]), "rows": sorted(run["rows"]),
             **_plan(surface, sorted(run["files"]), target, head)}
            for (archs, target, confirms), run in sorted(runs.items())]


def _plan(surface: SurfaceMap | None, files: list[str], device_test: str,
          head: Snapshot | None) -> dict[str, Any]:
    """The tests and bench commands the map's [[device_tests]] name for `files`, where the
    map said so, the packages the contributing entries name (a sorted list, empty when
    none does), and a note for what it does not name (or names but the head lacks)."""
    tests: dict[str, None] = {}
    bench: dict[str, None] = {}
    basis: list[str] = []
    missing: list[str] = []
    packages: set[str] = set()
    for entry in surface.device_tests if surface is not None else ():
        for path in files:
            pattern = entry.matches(path)
            if pattern is None:
                continue
            found, commands = entry.fill(path, device_test)
            for test in found:
                if head is not None and test.split("::", 1)[0] not in head:
                    missing.append(test)
                else:
                    tests.setdefault(test, None)
            bench.update(dict.fromkeys(commands))
            if found or commands:
                if entry.package:
                    packages.add(entry.package)
                basis.append(words.device_test_basis(surface.name, entry.index, pattern, path))
    notes = []
    if not tests:
        notes.append(words.no_device_test_text(files))
    if missing:
        notes.append(words.not_in_head_text(sorted(set(missing))))
    return {"tests": list(tests), "bench": list(bench), "packages": sorted(packages),
            "python_roots": list(surface.python_roots) if surface is not None else [],
            "basis": "; ".join(sorted(set(basis))) if basis else "",
            "note": "; ".join(notes) if notes else None}


def _require_fit(ctx: CheckContext) -> None:
    """A map that classifies no path of the base or the head is the wrong map: an error,
    never a quiet N/A. The index looks in the folders the map names first, so a map that
    fits costs a few folders, not a walk of the whole tree."""
    snapshots = [s for s in (ctx.views.base, ctx.views.head) if s is not None]
    if not any(ctx.index(snapshot).holds_a_surface_path() for snapshot in snapshots):
        raise BadSurfaceMap(
            f"the surface map '{ctx.surface.name}' ({ctx.surface.source}) classifies no path "
            "of this repository's base or head",
            "fix its patterns for this layout, or pick the right map with --surface-map")


def check_context(views: Views, surface: SurfaceMap,
                  caches: Caches | None = None) -> CheckContext:
    """The checks' context for `views`: the map widened with the files the builds compile
    when a changed path can matter to a build. Facts and tree indexes come from `caches`
    (a Session's; else the active ones, else fresh ones)."""
    caches = caches if caches is not None else active_caches() or Caches()
    changed = [p for view in views.views for p in (*view.diff.paths, *view.conflicts)]
    if surface.builds_matter(changed):  # else the graph (and networkx) is not imported
        from impact.graph import covering_map

        with caches.active():
            surface = covering_map(views, surface, caches)
    return CheckContext(views, surface, caches)


def checked_rows(ctx: CheckContext) -> list[Row]:
    """Every row of every check on `ctx`'s views (`run_checks`), after refusing a map that
    fits neither tree; the files the views change parsed on every core first (a large
    change's parse is most of its report; a small one is left to the lazy parse)."""
    _require_fit(ctx)
    surface = ctx.surface
    prefetch(ctx.cache, ((snap, path) for view in ctx.available_views()
                         for path in ctx.own_paths(view) if surface.classify(path) is not None
                         for snap in (view.old, view.new) if snap is not None))
    return run_checks(ctx)


def build_report(views: Views, arguments: dict[str, str], surface: SurfaceMap,
                 emit: dict[str, Any] | None = None, emit_source: str | None = None,
                 *, emit_file_sha256: str | None = None, trust_head: bool = True,
                 caches: Caches | None = None,
                 baseline: Baseline | None = None, waivers: tuple[Waiver, ...] = (),
                 today: datetime.date | None = None) -> dict[str, Any]:
    """The report as data: what was resolved, what changed in each view and on which
    surface, every contract row (folded with the emit document when one is given; the
    findings `baseline` recorded, copies unchanged, marked baselined; those a live waiver
    of `waivers` names on `today`, marked waived), the pack-time line and the verdict.
    Facts and tree indexes come from `caches` (a Session's; else the active ones, else
    fresh ones)."""
    ctx = check_context(views, surface, caches)
    with ctx.caches.active():
        return _document(ctx, arguments, emit, emit_source, emit_file_sha256, trust_head,
                         baseline, waivers, today or datetime.date.today())


def _document(ctx: CheckContext, arguments: dict[str, str], emit: dict[str, Any] | None,
              emit_source: str | None, emit_file_sha256: str | None, trust_head: bool,
              baseline: Baseline | None = None, waivers: tuple[Waiver, ...] = (),
              today: datetime.date | None = None) -> dict[str, Any]:
    views, surface = ctx.views, ctx.surface
    rows = checked_rows(ctx)
    findings = None
    if emit is not None:
        # Emit results come from running the head's own code: evidence against an honest
        # mistake, not against a hostile author. Untrusted, they may not fold a row.
        if trust_head:
            rows = fold(rows, emit, ctx)
        findings = pack_findings(emit, ctx)
    rows = anchored(rows, views)
    if baseline is not None:
        rows = apply_baseline(rows, baseline, ctx)
    rows = with_copies(rows, ctx)
    states: list[dict[str, Any]] = []
    if waivers:
        rows, states = acknowledged(rows, waivers, today or datetime.date.today())
    verdict = rollup(rows, surface.all_archs)
    packs = pack_time(findings, unfinished(emit) if emit is not None else (),
                      emitter=surface.conventions.emitter is not None)
    failures = sorted({path for view in ctx.available_views() for path in ctx.own_paths(view)
                       if surface.classify(path) is not None
                       for snap in (view.old, view.new) if snap is not None and path in snap
                       and ctx.parse_failure(ctx.facts(snap, path))})
    return {
        "rows": [row.to_json() for row in rows],
        "verdict": verdict.to_json(),
        "device_runs": device_runs(rows, surface, views.head),
        "pack_time": packs.to_json(),
        "emit": _emit_summary(emit, emit_source, emit_file_sha256, trust_head),
        "coverage": {
            "contracts_checked": sorted(c.name for c in REGISTRY if applies(c, surface)),
            "skipped": _skipped(views, emit) + [
                {"what": words.check_text(c.name),
                 "reason": words.map_lacks_files_text(surface.name)}
                for c in REGISTRY if not applies(c, surface)],
            "parse_failures": failures,
            "archs": _arch_sources(ctx),
        } | ({"waivers": states} if waivers else {}),
        "surface_map": {"name": surface.name, "source": surface.source,
                        "sha256": surface.written_sha256,
                        "reason": surface.reason or words.GIVEN,
                        "all_archs": surface.all_archs},
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "impact", "version": tool_version()},
        "repository": views.location,
        "input": {"form": str(views.form), "arguments": dict(sorted(arguments.items()))},
        "revisions": {
            role: {"spelled": rev.spelled, "sha": rev.sha}
            for role, rev in sorted(views.revisions.items())
        },
        "merge_bases": dict(sorted(views.merge_bases.items())),
        "views": [_view(v, surface) for v in views.views],
    }
