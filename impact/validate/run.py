"""`impact validate`: the stages in order, on one claimed GPU, into validation_report.json.

Maintainers: orchestration only. Each stage's judgement lives in its own module
(materialise, claim, correctness, perf, identity) and the verdict in verdict.decide; this
module runs them, times them and assembles the document. Bad input raises BadUsage (exit
3) before anything runs; everything after the output is cleared ends in a report.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from impact.contracts import load_schema
from impact.errors import BadUsage
from impact.git import BASE_TO_HEAD
from impact.kinds import ViewName
from impact.render.words import validate as words
from impact.validate import confine, correctness, identity, install, logtail, materialise, perf
from impact.validate.claim import Claim, Thresholds, claim_gpu
from impact.validate.document import SCHEMA_VERSION, clear, finish, write_json
from impact.validate.gpus import RecordedBackend, detect_backend
from impact.validate.verdict import Severity, StageStatus


@dataclass
class Options:
    """What the command line asked for."""

    repo: str | None
    base: str | None
    head: str | None
    target_tip: str | None = None
    from_report: str | None = None
    tests: list[str] = field(default_factory=list)
    bench: list[str] = field(default_factory=list)
    package: str | None = None
    output: str = "validation_report.json"
    samples: int = 10
    interval: float = 1.0
    lock_dir: str = "/tmp"
    timeout: float = 1800.0
    python: str = sys.executable
    label: str | None = None
    keep: bool = False
    basis: str = "activity+vram"
    python_roots: tuple[str, ...] | None = None  # --python-root; None: the report's or map's
    surface_map: str | None = None  # --surface-map: where the Python roots come from
    install: str = "auto"  # auto | build | roots (install.Choice)
    env: dict[str, str] = field(default_factory=dict)  # --env NAME=VALUE, for builds and tests


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _stage(status: str, reason: str, **detail: Any) -> dict[str, Any]:
    return {"status": status, "reason": reason, "detail": detail}


def load_plan(path: str) -> dict[str, Any]:
    """An `impact report --format json` document, checked against report.schema.json."""
    import jsonschema

    try:
        doc = json.loads(Path(path).read_text())
        jsonschema.Draft202012Validator(load_schema("report.schema.json")).validate(doc)
    except OSError as exc:
        raise BadUsage(f"cannot read the report '{path}' ({exc.strerror})",
                       "give the file 'impact report --format json' wrote") from None
    except ValueError as exc:  # JSON or schema
        first = str(exc).splitlines()[0]
        raise BadUsage(f"'{path}' is not an impact JSON report ({first})",
                       "write it with 'impact report --format json -o FILE'") from None
    return doc


def plan_selection(plan: dict[str, Any]) -> tuple[list[str], list[str], str]:
    """The tests and bench commands of the report's device runs, and where they came from."""
    tests = sorted({t for run in plan["device_runs"] for t in run.get("tests", [])})
    bench = sorted({b for run in plan["device_runs"] for b in run.get("bench", [])})
    notes = sorted({run["note"] for run in plan["device_runs"] if run.get("note")})
    if not plan["device_runs"]:
        basis = "the report asks for no device run"
    else:
        basis = "; ".join(["device_runs of the report (targets from its surface map)",
                           *notes])
    return tests, bench, basis


def plan_package(plan: dict[str, Any] | None, given: str | None) -> tuple[str | None, str]:
    """The package the import check proves, and where it came from: --package when given,
    else the one package the report's device runs name (their map's [[device_tests]]
    `package`). Several named packages are refused (BadUsage): the check and the runtime
    identity prove one package, and picking one would silently leave the others unproven."""
    if given:
        return given, "--package"
    if plan is None:
        return None, "none: no --package given"
    named = sorted({p for run in plan["device_runs"] for p in run["packages"]})
    if not named:
        return None, "none: no --package given and the report's device_runs name no package"
    if len(named) > 1:
        raise BadUsage(f"the report's device runs exercise several packages ({', '.join(named)})"
                       " and validate checks one",
                       "name the one to check with --package NAME (or validate each with its "
                       "own --package)")
    return named[0], ("device_runs of the report (the package its surface map's "
                      "[[device_tests]] name)")


def _bind(options: Options, plan: dict[str, Any]) -> None:
    """The report must be about exactly this base and head (and tip)."""
    revs = plan["revisions"]
    for role in (ViewName.BASE, ViewName.HEAD):
        if role not in revs:
            raise BadUsage(f"the report names no {role} revision",
                           "validate a report made with --base and --head")
    options.repo = options.repo or plan["repository"]
    options.base = options.base or revs[ViewName.BASE]["sha"]
    options.head = options.head or revs[ViewName.HEAD]["sha"]
    if not options.target_tip and ViewName.TARGET_TIP in revs:
        options.target_tip = revs[ViewName.TARGET_TIP]["sha"]


def _check_binding(views_revs: dict[str, Any], plan: dict[str, Any]) -> None:
    revs = plan["revisions"]
    for role in (ViewName.BASE, ViewName.HEAD, ViewName.TARGET_TIP):
        if role in revs and role in views_revs and revs[role]["sha"] != views_revs[role].sha:
            raise BadUsage(f"the report is about {role} {revs[role]['sha'][:12]}, not "
                           f"{views_revs[role].sha[:12]}",
                           "make the report for this base and head, or validate its own")


def python_roots(options: Options, plan: dict[str, Any] | None, tree: Any
                 ) -> tuple[tuple[str, ...], str]:
    """Where the tree's Python lives, and who said so: --python-root, else the report's
    device runs (its map's python_roots), else --surface-map's, else the map the base
    ships at .impact/surface.toml; none of them: () (the tree decides, install.plan)."""
    from impact.surface import load_surface_map, repository_map

    if options.python_roots:
        return tuple(options.python_roots), "--python-root"
    if plan is not None:
        named = [r for run in plan["device_runs"] for r in run.get("python_roots", [])]
        if named:
            return tuple(dict.fromkeys(named)), "device_runs of the report (its map's python_roots)"
    if options.surface_map:
        return load_surface_map(options.surface_map).python_roots, "--surface-map"
    shipped = repository_map(tree) if tree is not None else None
    if shipped is not None and not isinstance(shipped, Exception):
        return shipped.python_roots, "the base's .impact/surface.toml"
    return (), "none named"


def _env(side: materialise.Side, hook: Path, claim: Claim, package: str | None,
         identity_dir: Path, paths: list[Path] | None = None,
         extra: dict[str, str] | None = None) -> dict[str, str]:
    """A minimal environment (impact/validate/confine.py): never the user's HOME, XDG
    folders or tokens; the identity hook first on the path, so no tree shadows it, then
    `paths` (the side's install, else its tree)."""
    env = confine.minimal_environment(os.environ, home=side.root.parent / "home",
                                      extra={**side.caches, **claim.env, **(extra or {})})
    search = [str(p) for p in (paths or [side.root])]
    env.update({"PYTHONPATH": os.pathsep.join([str(hook), *search]),
                "PYTHONDONTWRITEBYTECODE": "1", "FLYDSL_AUTOTUNE": "0",
                identity.IDENTITY_DIR_ENV: str(identity_dir),
                identity.IDENTITY_PACKAGE_ENV: package or "",
                identity.HASH_CACHE_ENV: str(identity_dir.parent / "hashes.json")})
    identity_dir.mkdir(parents=True, exist_ok=True)
    return env


def _with_python(env: dict[str, str], python: str) -> dict[str, str]:
    """`python` in a test or bench command is the interpreter validate runs (its folder
    first on PATH), never a shim of the user's home, which the sandbox hides."""
    exe = shutil.which(python) or python
    if os.path.isabs(exe):
        env["PATH"] = os.pathsep.join([os.path.dirname(exe), env.get("PATH", "")])
    return env


def _jail(side: materialise.Side, hook: Path, views: Any) -> confine.Jail:
    """What one side's commands may touch: only that side's scratch folder is writable
    (never the hook, the logs or the results); the GPU's device nodes; the analysed
    repository hidden."""
    repo = [Path(views.location)] if getattr(views, "location", None) else []
    return confine.Jail(writable=(side.root.parent,), devices=tuple(confine.gpu_devices()),
                        read_only=(hook,), hide=tuple(repo))


def validate(options: Options) -> dict[str, Any]:
    """Run every stage and write the report; returns the document written."""
    out = Path(options.output)
    plan = None
    if options.from_report:
        if options.tests or options.bench:
            raise BadUsage("--from-report and --test/--bench exclude each other",
                           "take the targets from the report, or name them yourself")
        plan = load_plan(options.from_report)
        _bind(options, plan)
    options.package, package_source = plan_package(plan, options.package)
    if not (options.base and options.head):
        raise BadUsage("validate needs --base and --head (or --from-report)",
                       "name the two revisions to compare")
    if options.samples < 1 or options.interval < 0 or options.timeout <= 0:
        raise BadUsage("--samples must be at least 1, --interval and --timeout positive",
                       "fix the numbers")
    clear(out)  # from here on, a crash leaves no report at all, never a stale PASS
    started = _now()
    views = materialise.open_for_validation(options.repo or ".", options.base, options.head,
                                            options.target_tip)
    if plan is not None:
        _check_binding(views.revisions, plan)
        tests, bench, basis = plan_selection(plan)
    else:
        tests, bench, basis = sorted(set(options.tests)), list(options.bench), \
            "named on the command line (--test/--bench)"
    timings: dict[str, float] = {}
    stages: dict[str, dict[str, Any]] = {}
    findings: list[dict[str, Any]] = []

    clock = time.monotonic()
    merge = materialise.merge_sim(views)
    stages["merge_sim"] = _stage(merge.status, merge.reason, target=merge.target,
                                 target_sha=merge.target_sha, conflicts=list(merge.conflicts))
    patch, patch_source = materialise.patch_bytes(views)
    head_view = views.view(ViewName.HEAD)
    assert head_view is not None
    paths = list(head_view.diff.paths)
    test_paths = [p for p in paths if "test" in p.rsplit("/", 1)[-1].lower()]
    stages["diff_scan"] = _stage(StageStatus.INFO, "candidates, not verdicts", paths=len(paths),
                                 test_paths=len(test_paths))
    timings["merge_sim"] = time.monotonic() - clock

    scratch = Path(tempfile.mkdtemp(prefix="impact-validate-"))
    document: dict[str, Any] = {}
    try:
        clock = time.monotonic()
        backend, tried = detect_backend()
        recorded = isinstance(backend, RecordedBackend)
        with claim_gpu(backend, samples=options.samples, interval=options.interval,
                       lock_dir=Path(options.lock_dir), tried=tried,
                       limits=Thresholds(basis=options.basis)) as claim:
            timings["gpu_claim"] = time.monotonic() - clock
            result = _run_sides(options, views, merge, claim, scratch, tests, bench, recorded,
                                timings, plan)
        stages.update(result["stages"])
        findings += result["findings"]
        isolation = confine.isolation_of(result["isolation"])
        if isolation["level"] in (confine.LEVEL_NONE, confine.LEVEL_PARTIAL):
            findings.append({"severity": "note", "stage": "correctness",  # never silently
                             "detail": f"the revisions' tests ran {isolation['level']}: "
                                       f"{isolation['reason']}"})
        detail = claim.detail()
        detail["seconds"] = round(timings["gpu_claim"], 3)
        if claim.gpu is None:
            stages["gpu_claim"] = {"status": StageStatus.SKIP, "reason": claim.reason,
                                   "detail": detail}
        elif recorded:
            stages["gpu_claim"] = {"status": StageStatus.SKIP,
                                   "reason": "recorded samples stand in for the GPU "
                                   f"({os.environ.get('IMPACT_GPU_SAMPLES')}): tests "
                                   "only, a recording is not a device", "detail": detail}
        else:
            stages["gpu_claim"] = {"status": StageStatus.PASS, "reason": claim.reason,
                                   "detail": detail}
        coverage, coverage_basis = identity.arch_coverage(
            claim.gpu.arch if claim.gpu else None, result["head_executed"], not recorded)
        gpu = claim.gpu
        document = {
            "schema_version": SCHEMA_VERSION,
            "label": options.label or f"{options.base}..{options.head}",
            "started_utc": started,
            "finished_utc": _now(),
            "tool": {"name": "impact", "version": _version()},
            "repo": {
                "path": str(views.location),
                "base": views.revisions[ViewName.BASE].sha,
                "head": views.revisions[ViewName.HEAD].sha,
                "target_tip": views.revisions[ViewName.TARGET_TIP].sha,
                "merge_base": (views.merge_bases.get(BASE_TO_HEAD) or [None])[0],
                "patch_sha256": hashlib.sha256(patch).hexdigest(),
                "patch_source": patch_source,
                "patch_paths": paths,
                "base_dir": result["dirs"].get(ViewName.BASE),
                "head_dir": result["dirs"].get(ViewName.HEAD),
            },
            "environment": {
                "host": socket.gethostname(),
                "gpu": gpu.name if gpu else None,
                "arch": gpu.arch if gpu else None,
                "python": {"executable": options.python, "version": platform.python_version()},
                "isolation": isolation,
                "cold_cache": True,
            },
            "test_selection": {
                "tests": tests, "bench": bench, "runner": result["runner"],
                "runner_reason": result["runner_reason"], "basis": basis,
                "package": options.package, "package_source": package_source,
                "perf_rounds": list(perf.ROUNDS),
                "metric_format": "JSON lines {\"label\": str, \"us\": float} or "
                                 "'<label>: <number> us'",
            },
            "degraded_mode": claim.degraded_mode,
            "stages": stages,
            "findings": findings,
            "arch_coverage": coverage,
            "arch_coverage_basis": coverage_basis,
            "runtime_identity": result["identity"],
            "perf_rows": result["perf_rows"],
            "timings_s": {k: round(v, 3) for k, v in sorted(timings.items())},
        }
    finally:
        if not options.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    document = finish(document)
    write_json(document, out)
    return document


def _version() -> str:
    from impact.version import tool_version

    return tool_version()


def _run_sides(options: Options, views: Any, merge: materialise.MergeSim, claim: Claim,
               scratch: Path, tests: list[str], bench: list[str], recorded: bool,
               timings: dict[str, float], plan: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """Materialise, check imports, run correctness and perf: the stages after the claim."""
    stages: dict[str, dict[str, Any]] = {}
    findings: list[dict[str, Any]] = []
    result: dict[str, Any] = {"stages": stages, "findings": findings, "head_executed": 0,
                              "identity": None, "perf_rows": [], "dirs": {},
                              "runner": "none", "runner_reason": "no target named",
                              "isolation": []}
    clock = time.monotonic()
    base_snap = _tip_tree(views)
    sides = {ViewName.BASE: materialise.materialise(ViewName.BASE, base_snap, scratch)}
    if merge.tree is not None:
        sides[ViewName.HEAD] = materialise.materialise(ViewName.HEAD, merge.tree, scratch)
    result["dirs"] = {name: str(side.root) for name, side in sides.items()}
    timings["materialise"] = time.monotonic() - clock
    hook = identity.install_hook(scratch / "hook")
    replaced: list[str] = []
    if ViewName.HEAD in sides:  # the head is tested by the base's harness
        replaced, unsafe = correctness.harness_from_base(sides[ViewName.HEAD].root, base_snap,
                                                         merge.tree)
        if unsafe:
            sides[ViewName.HEAD] = replace(sides[ViewName.HEAD],
                                           refused=sides[ViewName.HEAD].refused + tuple(unsafe))

    clock = time.monotonic()
    roots, roots_source = python_roots(options, plan, base_snap)
    installs = _install_sides(options, sides, roots, hook, claim, scratch, findings, views)
    result["installs"] = installs
    result["isolation"] += [done.isolation for done in installs.values() if done.isolation]
    install_detail = {"python_roots": list(roots), "python_roots_source": roots_source,
                      **{name: done.to_json() for name, done in installs.items()}}
    timings["install"] = time.monotonic() - clock
    clock = time.monotonic()
    refused = [f"{name}: {len(side.refused)} path(s) no checkout writes, left unwritten "
               f"({', '.join(side.refused[:3])})" for name, side in sides.items() if side.refused]
    unbuilt = [words.install_failed(name, done) for name, done in installs.items()
               if not done.ok]
    if refused:  # the folder is not the revision's tree: nothing run there proves it
        stages["runtime_compat"] = _stage(StageStatus.FAIL, "; ".join(refused),
                                          install=install_detail)
    elif unbuilt:
        stages["runtime_compat"] = _stage(StageStatus.FAIL, "; ".join(unbuilt),
                                          install=install_detail)
    elif any(done.skipped for done in installs.values()):
        stages["runtime_compat"] = _stage(StageStatus.SKIP, words.NOT_BUILT_NO_GPU,
                                          install=install_detail)
    elif ViewName.HEAD not in sides:
        stages["runtime_compat"] = _stage(StageStatus.SKIP,
                                          "no merged head tree to check (merge_sim failed)",
                                          install=install_detail)
    elif not options.package:
        stages["runtime_compat"] = _stage(StageStatus.SKIP, words.NO_PACKAGE,
                                          install=install_detail)
    else:
        origins, bad = {}, []
        for name, side in sides.items():
            env = _env(side, hook, claim, options.package, scratch / name / "probe",
                       installs[name].paths, options.env)
            origin, error = identity.import_origin(options.python, options.package, env,
                                                   jail=_jail(side, hook, views),
                                                   log=scratch / f"probe-{name}.log")
            origins[name] = origin
            if origin is None or not _own(origin, side):
                bad.append(words.import_elsewhere(name, options.package, origin or error,
                                                  side.root.parent, installs[name]))
        stages["runtime_compat"] = (
            _stage(StageStatus.FAIL, "; ".join(bad), origins=origins, install=install_detail)
            if bad else
            _stage(StageStatus.PASS, f"{options.package} resolves inside each side's own "
                   f"folder ({', '.join(sorted({str(d.how) for d in installs.values()}))})",
                   origins=origins, install=install_detail))
    timings["runtime_compat"] = time.monotonic() - clock

    blocked = []
    if claim.gpu is None:
        blocked.append(f"no GPU claimed ({claim.degraded_mode})")
    if stages["runtime_compat"]["status"] != StageStatus.PASS:
        blocked.append(f"runtime_compat is {stages['runtime_compat']['status']}")
    if not tests:
        blocked.append(words.ADD_TESTS)
    if blocked:
        why = "; ".join(blocked)
        stages["correctness"] = _stage(StageStatus.SKIP, why)
        stages["test_policy"] = _stage(StageStatus.SKIP, why)
        stages["perf"] = _stage(StageStatus.SKIP,
                                why if bench else f"{words.ADD_BENCH}; {why}")
        return result

    clock = time.monotonic()
    outcomes: dict[ViewName, list[correctness.Outcome]] = {}
    logs = scratch / "logs"
    logs.mkdir()
    correctness.install_harness(logs / "harness", sides[ViewName.BASE].root)
    planted: list[str] = []
    for name in (ViewName.BASE, ViewName.HEAD):
        side = sides[name]
        env = _with_python(_env(side, hook, claim, options.package,
                                scratch / name / "identity", installs[name].paths,
                                options.env), options.python)
        outcomes[name] = []
        for target in tests:
            if name == ViewName.HEAD:  # what its build or a test planted is not run
                planted += correctness.restore_harness(side.root, base_snap)
            outcomes[name].append(correctness.run_target(
                options.python, side.root, target, env, logs, name, options.timeout,
                _jail(side, hook, views)))
        result["isolation"] += [o.isolation for o in outcomes[name] if o.isolation]
    timings["correctness"] = time.monotonic() - clock
    at_base, at_head = outcomes[ViewName.BASE], outcomes[ViewName.HEAD]
    head_view = views.view(ViewName.HEAD)
    edited = sorted(p for p in (head_view.diff.paths if head_view else ())
                    if correctness.is_test_path(p))
    comparison = correctness.compare(at_base, at_head, edited)
    findings += comparison.findings + correctness.edited_findings(edited, replaced, planted)
    result["head_executed"] = comparison.head_executed
    runners = sorted({o.runner for o in at_head})
    result["runner"] = runners[0] if len(runners) == 1 else "mixed"
    result["runner_reason"] = "; ".join(o.runner_reason for o in at_head)
    stages["correctness"] = _stage(
        comparison.status, comparison.reason,
        base=[o.to_json() for o in at_base], head=[o.to_json() for o in at_head],
        stats=_total(at_head), seconds=round(timings["correctness"], 3))
    status, reason, policy_findings = correctness.policy(at_base, at_head)
    findings += policy_findings
    stages["test_policy"] = _stage(status, reason)
    if comparison.head_executed:
        head_side = sides[ViewName.HEAD]
        result["identity"] = identity.read_identity(scratch / ViewName.HEAD / "identity",
                                                    head_side.tree_id)
        loaded = (result["identity"] or {}).get("module_path")
        if loaded and not _own(loaded, head_side):
            # the import check passed, yet the test process ran another copy: nothing it
            # proved is about this head (an environment fact, blamed on no one)
            stages["runtime_compat"] = _stage(
                StageStatus.FAIL, f"the head test process imported {options.package} from "
                f"{loaded}, outside {head_side.root.parent}", **stages["runtime_compat"]["detail"])

    clock = time.monotonic()
    if not bench:
        stages["perf"] = _stage(StageStatus.SKIP, words.ADD_BENCH)
    else:
        rounds = []
        for i, name in enumerate(perf.ROUNDS):
            side = sides[name]
            env = _with_python(_env(side, hook, claim, options.package,
                                    scratch / name / "identity", installs[name].paths,
                                    options.env), options.python)
            for n, command in enumerate(bench):
                rounds.append(perf.run_bench(command, side.root, env,
                                             logs / f"bench-{i}-{name}-{n}.log", name,
                                             options.timeout, _jail(side, hook, views)))
        result["isolation"] += [r.isolation for r in rounds if r.isolation]
        status, reason, rows, perf_findings = perf.compare_rounds(rounds)
        findings += perf_findings
        result["perf_rows"] = rows
        stages["perf"] = _stage(status, reason, rounds=[
            {"side": r.side, "command": r.command, "exit": r.exit,
             "seconds": round(r.seconds, 3), "error": r.error or None,
             **({"log_tail": logtail.tail(r.log, 20)} if r.error else {})} for r in rounds])
    timings["perf"] = time.monotonic() - clock
    return result


def _own(path: str, side: materialise.Side) -> bool:
    """Whether `path` is one of `side`'s own files: its tree or its build (both under the
    side's folder, which no other side shares)."""
    return Path(path).resolve().is_relative_to(side.root.parent.resolve())


def _install_sides(options: Options, sides: dict[ViewName, materialise.Side],
                   roots: tuple[str, ...], hook: Path, claim: Claim, scratch: Path,
                   findings: list[dict[str, Any]], views: Any = None
                   ) -> dict[ViewName, install.Installed]:
    """Each side made importable its project's way (impact.validate.install). A head that
    does not build where the base does is a blocker; a base that does not build leaves
    nothing to compare against, and both failing is this machine's fact, not the change's
    (the stage fails, the verdict is INCONCLUSIVE). Without a GPU nothing will run, so
    nothing is built."""
    from concurrent.futures import ThreadPoolExecutor

    done: dict[ViewName, install.Installed] = {}
    builds = {}
    for name, side in sides.items():
        how = install.plan(side.root, roots, install.Choice(options.install))
        if claim.gpu is None and how.how == install.How.BUILD:
            done[name] = install.Installed(how.how, how.reason, [side.root],
                                           skipped=words.NOT_BUILT_NO_GPU)
            continue
        env = _env(side, hook, claim, None, scratch / name / "build-probe", [side.root],
                   {**_build_env(claim), **options.env})
        builds[name] = (how, side.root, side.root.parent / "site", options.python,
                        _with_python(env, options.python), scratch / f"install-{name}.log",
                        options.timeout, _jail(side, hook, views))
    # The two sides build at once: each into its own folders, from its own tree.
    with ThreadPoolExecutor(max_workers=2) as pool:
        running = {name: pool.submit(install.install, *args) for name, args in builds.items()}
        done.update({name: future.result() for name, future in running.items()})
    done = {name: done[name] for name in sides}
    head, base = done.get(ViewName.HEAD), done[ViewName.BASE]
    if head is not None and not head.ok and base.ok:
        findings.append({"severity": Severity.BLOCKER, "stage": "runtime_compat",
                         "detail": words.install_failed(ViewName.HEAD, head)})
    if options.package:
        findings += _unshipped(options.package, sides, done, roots)
    return done


def _unshipped(package: str, sides: dict[ViewName, materialise.Side],
               done: dict[ViewName, install.Installed], roots: tuple[str, ...]
               ) -> list[dict[str, Any]]:
    """A build is checked against its own tree: every module of the package's folder must
    have been installed. Tests of a build that left one out fail on import for a reason the
    project's packaging owns, so the report says so; a head whose build drops modules the
    base's build ships is a packaging regression, a blocker."""
    found: list[dict[str, Any]] = []
    for name, side in sides.items():
        built = done[name]
        if built.how != install.How.BUILD or not built.ok or built.skipped:
            continue
        built.unshipped, built.package_modules = install.unshipped_modules(
            side.root, side.root.parent / "site", package, roots)
        if built.unshipped:
            found.append({"severity": Severity.NOTE, "stage": "runtime_compat",
                          "detail": words.build_leaves_out(name, package, built.unshipped,
                                                           built.package_modules)})
    head, base = done.get(ViewName.HEAD), done[ViewName.BASE]
    if head is not None and base.how == head.how == install.How.BUILD and base.package_modules:
        dropped = sorted(set(head.unshipped) - set(base.unshipped))
        if dropped:
            found.append({"severity": Severity.BLOCKER, "stage": "runtime_compat",
                          "detail": words.build_drops_modules(package, dropped)})
    return found


def _build_env(claim: Claim) -> dict[str, str]:
    """A build compiles for the claimed GPU's arch unless the user says otherwise
    (TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH already set, or --env)."""
    arch = claim.gpu.arch if claim.gpu is not None else None
    if not arch:
        return {}
    if arch.startswith("sm_") and "TORCH_CUDA_ARCH_LIST" not in os.environ:
        digits = arch[3:]
        return {"TORCH_CUDA_ARCH_LIST": f"{digits[:-1]}.{digits[-1]}"}
    if arch.startswith("gfx") and "PYTORCH_ROCM_ARCH" not in os.environ:
        return {"PYTORCH_ROCM_ARCH": arch}
    return {}


def _tip_tree(views: Any) -> Any:
    """The tree the base side runs: the target tip (the base when none was given)."""
    from impact.git import open_snapshot

    assert views.repository is not None
    return open_snapshot(views.repository.path, views.revisions[ViewName.TARGET_TIP].sha)[1]


def _total(outcomes: list[correctness.Outcome]) -> dict[str, int]:
    keys = ("tests", "failures", "errors", "skipped", "executed")
    return {k: sum(o.stats.get(k, 0) for o in outcomes) for k in keys}
