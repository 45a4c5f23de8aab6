"""Benchmark: `impact emit` on the 900-variant KDP, cold and warm, one child and many.

Builds, with benchmarks/scale.py's builder, a repository holding impact's synthetic
hipDNN/rocKE tree with its gfx950 attention_dense KDP grown to `--variants` variants
(default 900). The emitter reads only the Python and descriptor roots, so the filler that
makes scale.py's repository rocm-libraries-sized changes nothing here: `--files` defaults
to 2,000 (give 100000 to build the full-size one). Then it times, in fresh processes,
`impact emit --base main --head body-edit` (both revisions built):

    cold --jobs 1        an empty cache, one child at a time
    cold                 an empty cache, --jobs at its default (the cores)
    warm                 again, on the cache the cold run filled: every group is a hit
    new head             a cache filled by main..comment-edit, then main..body-edit: the
                         base is a hit; of the head, only the group whose module changed
                         (the 900-variant family's) is built, the rest are hits
    new head, small      the same, then main..small-edit (a commit this script adds: a body
                         edit of the small tiled family's module): only that group is built

and `impact --version`, the start-up every command pays. Each row: the median wall time,
CPU time (user + system of the command and every process it waited for, children
included: on a shared machine the steadier figure) and peak RSS (GNU time %M where
present: the largest single process of the run, parent or child), and the one-minute
load average when the case started. `--family-budget` is passed through (the default is
impact's: CPU seconds per family build and per predicate table). Run:

    python benchmarks/emit_scale.py [--variants 900] [--files 2000] [--runs 1]
                                    [--family-budget S] [--dir DIR] [--keep] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # benchmarks/scale.py: the repository builder and the timer

from impact.fixtures import edits as e

SMALL = f"{e.KERNELS}/gfx950/attention_tiled_2d.py"
SMALL_EDIT = e.replace(SMALL, '    elem = BF16 if spec.dtype == "bf16" else F16',
                       '    elem = F16 if spec.dtype != "bf16" else BF16')


def add_branch(repo: Path, branch: str, path: str, edit) -> None:
    """A commit on main that applies `edit` to `path`, as `branch` (git plumbing, through
    a temporary index: the repository has no work tree to touch)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".git" / f"index-{branch}")}

    def git(*argv: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", "-C", str(repo), *argv], input=data, env=env,
                              check=True, capture_output=True).stdout.decode().strip()

    files = {path: subprocess.run(["git", "-C", str(repo), "show", f"main:{path}"],
                                  check=True, capture_output=True).stdout}
    edit(files)
    blob = git("hash-object", "-w", "--stdin", data=files[path])
    git("read-tree", "main")
    git("update-index", "--cacheinfo", f"100644,{blob},{path}")
    commit = git("commit-tree", git("write-tree"), "-p", "main", "-m", f"{branch}: {path}")
    git("update-ref", f"refs/heads/{branch}", commit)
    Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)


def emit_argv(repo: Path, head: str, out: Path, jobs: int | None,
              budget: float | None) -> list[str]:
    argv = [sys.executable, "-m", "impact", "emit", "--repo", str(repo), "--base", "main",
            "--head", head, "-o", str(out)]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    if budget is not None:
        argv += ["--family-budget", str(budget)]
    return argv


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(cache), "CI": "1"}


def _work(out: Path) -> dict[str, Any]:
    """What the emit file says about each revision: status, children, groups cached."""
    try:
        doc = json.loads(out.read_text())
    except (OSError, ValueError):
        return {}
    return {label: {"status": rev["status"], **rev.get("work", {}),
                    "timed_out_tables": sum(t["status"] == "timed-out" for t in
                                            (rev["result"] or {}).get("predicate_tables", []))}
            for label, rev in doc["revisions"].items()}


def case(name: str, argv: list[str], env: dict[str, str], runs: int, out: Path | None,
         prepare=None) -> dict[str, Any]:
    timed = []
    load = os.getloadavg()[0]
    for _ in range(runs):
        if prepare is not None:
            prepare()
        timed.append(scale.run_once(argv, env))
    summary = {"case": name, "median_s": statistics.median(r.seconds for r in timed),
               "runs_s": [round(r.seconds, 2) for r in timed],
               "cpu_s": round(statistics.median(r.cpu_s for r in timed), 2),
               "peak_rss_mb": round(max(r.rss_kb for r in timed) / 1024, 1),
               "exit": [r.code for r in timed], "load": round(load, 1),
               "work": _work(out) if out is not None else {}}
    if any(r.code != 0 for r in timed):
        summary["stderr"] = timed[-1].stderr.strip().splitlines()[-3:]
    print(f"  {name:<16} {summary['median_s']:8.2f} s  cpu {summary['cpu_s']:7.2f} s  "
          f"rss {summary['peak_rss_mb']:6.1f} MB  load {load:4.1f}  exit {summary['exit']}  "
          f"{json.dumps(summary['work'])}", flush=True)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", type=int, default=900)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1, help="fresh-process runs per case")
    parser.add_argument("--family-budget", type=float, default=None)
    parser.add_argument("--dir", help="work here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the repository and caches")
    parser.add_argument("--json", help="write every figure to this file")
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        raise SystemExit("emit_scale.py needs the git command line")
    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="impact-emit-scale-"))
    base.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"machine": scale._machine(), "args": vars(args), "cases": []}
    try:
        built = scale.build(base / "repo", files=args.files, history=2, target_commits=1,
                            variants=args.variants, log=print)
        repo = built.path
        add_branch(repo, "small-edit", SMALL, SMALL_EDIT)
        doc["repository"] = built.as_json()
        print(f"impact emit on {built.variants} variants x 2 revisions, "
              f"{len(os.sched_getaffinity(0))} cpus usable, load {os.getloadavg()[0]:.1f}")
        out = base / "emit.json"
        budget = args.family_budget
        cases = doc["cases"]
        cases.append(case("startup", [sys.executable, "-m", "impact", "--version"],
                          dict(os.environ), args.runs, None))

        def fresh(folder: Path):
            return lambda: (shutil.rmtree(folder, ignore_errors=True), folder.mkdir())

        one, many, other = base / "cache-jobs1", base / "cache", base / "cache-new-head"
        cases.append(case("cold --jobs 1", emit_argv(repo, "body-edit", out, 1, budget),
                          _env(one), args.runs, out, fresh(one)))
        cases.append(case("cold", emit_argv(repo, "body-edit", out, None, budget),
                          _env(many), args.runs, out, fresh(many)))
        cases.append(case("warm", emit_argv(repo, "body-edit", out, None, budget),
                          _env(many), args.runs, out))

        def warm_other() -> None:
            fresh(other)()
            scale.run_once(emit_argv(repo, "comment-edit", base / "other.json", None, budget),
                           _env(other))

        cases.append(case("new head", emit_argv(repo, "body-edit", out, None, budget),
                          _env(other), args.runs, out, warm_other))
        cases.append(case("new head, small", emit_argv(repo, "small-edit", out, None, budget),
                          _env(other), args.runs, out, warm_other))
    finally:
        if args.json:
            Path(args.json).write_text(json.dumps(doc, indent=2, default=str) + "\n")
        if args.keep:
            print(f"kept {base}")
        elif not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    return 1 if any(c["exit"] != [0] * len(c["exit"]) for c in doc["cases"]) else 0


if __name__ == "__main__":
    sys.exit(main())
