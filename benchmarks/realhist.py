"""Real-history evaluation: `impact report --commit` over a repository's newest commits.

Runs one fresh `impact report --commit C --format json` process per first-parent commit
(a timeout each), then prints the verdict histogram, the wall-time median and worst, and
every BREAKS with its rows (contract, subject, sides as file:line). With `--corpus FILE`
it also checks a labelled corpus (`benchmarks/realhist_corpus.json`, schema
`benchmarks/realhist_corpus.schema.json`): each entry of this repository is reported
and agreement is counted. A repository no built-in map fits is reported with a surface
map of its own: `--surface-map FILE` (passed to `impact report --surface-map`) for every
report of the run, else the map the corpus names for the entry or its repository
(`surface_map`, `surface_maps`; `benchmarks/maps/`). Run:

    python benchmarks/realhist.py --repo /path/to/aiter.git --last 40 [--corpus FILE]
    python benchmarks/realhist.py --repo /path/to/FlashMLA.git --corpus FILE \
        --surface-map benchmarks/maps/flashmla.surface.toml

The repository may be bare; nothing is written to it. Exit status: 0, or 1 when a corpus
entry disagrees, 3 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

HERE = Path(__file__).resolve().parent
CORPUS_SCHEMA = HERE / "realhist_corpus.schema.json"
VERDICTS = ("BREAKS", "NEEDS-DEVICE", "NONE", "N/A")


@dataclass
class Outcome:
    """One report: its verdict word (or ERROR/TIMEOUT), seconds and BREAKS rows."""

    commit: str
    subject: str
    verdict: str
    seconds: float
    cpu: float = 0.0  # user + system seconds of the report process
    archs: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""
    # Every row that names a file impact could not read (a parse failure, a binding not
    # understood): "reason file,...: failure", so --json can count them.
    unread: list[str] = field(default_factory=list)


def first_parent(repo: str, last: int) -> list[tuple[str, str]]:
    """The newest `last` first-parent commits, newest first, as (sha, subject)."""
    out = subprocess.run(["git", f"--git-dir={git_dir(repo)}", "log", "--first-parent",
                          f"-n{last}", "--format=%H%x00%s"], check=True, capture_output=True,
                         text=True).stdout
    return [tuple(line.split("\x00", 1)) for line in out.splitlines() if line]  # type: ignore[misc]


def git_dir(repo: str) -> str:
    path = Path(repo)
    return str(path / ".git") if (path / ".git").exists() else str(path)


def resolve(repo: str, rev: str) -> tuple[str, str]:
    out = subprocess.run(["git", f"--git-dir={git_dir(repo)}", "log", "-1", "--format=%H%x00%s",
                          rev], check=True, capture_output=True, text=True).stdout.strip()
    sha, _, subject = out.partition("\x00")
    return sha, subject


def run_one(repo: str, sha: str, subject: str, timeout: float, target_tip: str | None,
            cache: bool, surface_map: str | None = None) -> Outcome:
    """One fresh `impact report --commit sha` process (start-up included in the time),
    with `surface_map` passed as `--surface-map` when given."""
    given = ["--commit", sha] + (["--target-tip", target_tip] if target_tip else [])
    return run_report(repo, given, sha, subject, timeout, cache, surface_map)


def report_command(repo: str, given: list[str], cache: bool,
                   surface_map: str | None = None) -> list[str]:
    """The `impact report` command line for one change named by `given`."""
    command = [sys.executable, "-m", "impact", "report", "--repo", repo, *given,
               "--format", "json"]
    if surface_map:
        command += ["--surface-map", surface_map]
    if not cache:
        command.append("--no-cache")
    return command


def run_report(repo: str, given: list[str], sha: str, subject: str, timeout: float,
               cache: bool, surface_map: str | None = None) -> Outcome:
    """One fresh `impact report` process naming the change with `given` (start-up
    included in the time); the outcome is labelled `sha` and `subject`."""
    command = report_command(repo, given, cache, surface_map)
    start = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        # A neutral folder: `python -m` puts the working folder first on sys.path, and a
        # checkout of impact there would shadow the installed one (or PYTHONPATH's).
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return Outcome(sha, subject, "TIMEOUT", time.monotonic() - start)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        report = json.loads(done.stdout)
        verdict = report["verdict"]
        word = str(verdict["kind"])
    except (ValueError, KeyError, TypeError):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return Outcome(sha, subject, "ERROR", seconds, cpu,
                       note=f"exit {done.returncode}: {last}")
    archs = list(verdict.get("archs", []))
    rows = [r for r in report.get("rows", [])
            if r.get("status") == "mismatch" and not r.get("preexisting")]
    unread = [f"{r.get('reason')} "
              f"{','.join(sorted({str(s.get('file')) for s in r.get('sides', [])}))}: "
              f"{r['details']['failure']}" for r in report.get("rows", [])
              if isinstance(r.get("details"), dict) and r["details"].get("failure")]
    return Outcome(sha, subject, word, seconds, cpu, archs, rows, unread=unread)


def load_corpus(path: Path) -> list[dict[str, Any]]:
    """The corpus, validated against its schema; a clear error line when it is not.
    Each entry's `surface_map` (its own, else its repository's in `surface_maps`) comes
    back as an absolute path, resolved against the corpus file's folder; a named map that
    is not a file is refused (ValueError), not left to fail in every report."""
    document = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads(CORPUS_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    maps = document.get("surface_maps", {})
    entries = []
    for entry in document["entries"]:
        named = entry.get("surface_map") or maps.get(entry["repo"])
        if named:
            found = (path.parent / named).resolve()
            if not found.is_file():
                raise ValueError(f"surface map {named} (for {entry['repo']}) is not a file "
                                 f"under {path.parent}")
            entry = {**entry, "surface_map": str(found)}
        entries.append(entry)
    return entries


def side_text(side: dict[str, Any]) -> str:
    return f"{side.get('file')}:{side.get('line')} ({side.get('role')}, {side.get('revision')})"


def print_outcome(outcome: Outcome, out: Any) -> None:
    extra = f" [{', '.join(outcome.archs)}]" if outcome.archs else ""
    out.write(f"{outcome.commit[:10]} {outcome.verdict:<12}{extra} {outcome.seconds:6.1f}s "
              f"{outcome.cpu:5.1f}cpu  {outcome.subject[:70]}"
              f"{'  ' + outcome.note if outcome.note else ''}\n")


def summary(outcomes: list[Outcome], out: Any) -> None:
    histogram = Counter(o.verdict for o in outcomes)
    out.write("\nverdicts: " + ", ".join(f"{k} {histogram[k]}" for k in
                                         [*VERDICTS, "ERROR", "TIMEOUT"] if histogram[k]) + "\n")
    times = [o.seconds for o in outcomes]
    if times:
        worst = max(outcomes, key=lambda o: o.seconds)
        out.write(f"wall time: median {statistics.median(times):.2f}s, worst {worst.seconds:.2f}s"
                  f" ({worst.commit[:10]}), over {len(times)} reports\n")
        cpus = [o.cpu for o in outcomes if o.verdict != "TIMEOUT"]
        if cpus:
            out.write(f"cpu time (user+sys, finished reports): median "
                      f"{statistics.median(cpus):.2f}s, worst {max(cpus):.2f}s\n")
    for outcome in outcomes:
        if outcome.verdict != "BREAKS":
            continue
        out.write(f"\nBREAKS {outcome.commit[:10]} {outcome.subject[:80]}\n")
        print_rows(outcome, out, "  ")


def print_rows(outcome: Outcome, out: Any, indent: str) -> None:
    """The outcome's new mismatch rows: contract, subject, reason and every side."""
    for row in outcome.rows:
        sides = "; ".join(side_text(s) for s in row.get("sides", []))
        out.write(f"{indent}{row.get('contract')} {row.get('subject')} "
                  f"[{row.get('reason')}]: {sides}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the repository (bare is fine)")
    parser.add_argument("--last", type=int, default=0, help="the newest N first-parent commits")
    parser.add_argument("--corpus", type=Path, help="a labelled corpus JSON to check")
    parser.add_argument("--target-tip", action="store_true",
                        help="also analyse each commit merged onto the first-parent tip")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per report (60)")
    parser.add_argument("--cache", action="store_true",
                        help="let reports use the fact cache (default: --no-cache, cold)")
    parser.add_argument("--json", type=Path, help="also write every outcome to this file")
    parser.add_argument("--surface-map", type=Path, metavar="FILE",
                        help="the surface map every report uses (impact report --surface-map);"
                             " default: the corpus entry's, else the one impact picks")
    args = parser.parse_args(argv)
    if not Path(git_dir(args.repo)).is_dir():
        parser.exit(3, f"realhist: no git repository at {args.repo}; pass --repo DIR\n")
    given_map = str(args.surface_map.resolve()) if args.surface_map else None
    if args.surface_map and not args.surface_map.is_file():
        parser.exit(3, f"realhist: no surface map at {args.surface_map}\n")
    try:
        corpus = load_corpus(args.corpus) if args.corpus else []
    except (OSError, ValueError, jsonschema.ValidationError) as err:
        message = getattr(err, "message", str(err))
        parser.exit(3, f"realhist: corpus {args.corpus} is not valid: {message}\n")
    tip = None
    if args.target_tip:
        tip = resolve(args.repo, "HEAD")[0]
    out = sys.stdout
    from impact_bytecode import ready  # benchmarks/impact_bytecode.py

    out.write(ready(sys.executable, cwd=tempfile.gettempdir()) + "\n")
    outcomes: list[Outcome] = []
    for sha, subject in first_parent(args.repo, args.last) if args.last else []:
        outcome = run_one(args.repo, sha, subject, args.timeout, tip, args.cache, given_map)
        print_outcome(outcome, out)
        out.flush()
        outcomes.append(outcome)
    if outcomes:
        summary(outcomes, out)
    disagreements = 0
    mine = [e for e in corpus if _same_repo(e["repo"], args.repo)]
    if mine:
        out.write(f"\ncorpus: {len(mine)} entries for this repository\n")
        done = {(o.commit, given_map): o for o in outcomes}
        checked: list[Outcome] = []
        for entry in mine:
            try:
                sha, subject = resolve(args.repo, entry["commit"])
            except subprocess.CalledProcessError:
                out.write(f"  {entry['commit']}: not in this repository\n")
                disagreements += 1
                continue
            surface_map = given_map or entry.get("surface_map")
            outcome = done.get((sha, surface_map)) or run_one(
                args.repo, sha, subject, args.timeout, tip, args.cache, surface_map)
            checked.append(outcome)
            ok = outcome.verdict == entry["expected"]
            disagreements += not ok
            out.write(f"  {'ok  ' if ok else 'DIFF'} {sha[:10]} expected {entry['expected']:<12}"
                      f" got {outcome.verdict:<12} {outcome.seconds:5.1f}s  {entry['reason']}\n")
            if not ok:
                print_rows(outcome, out, "         ")
        out.write(f"corpus agreement: {len(mine) - disagreements}/{len(mine)}\n")
        times = [o.seconds for o in checked]
        if times:
            out.write(f"corpus wall time: median {statistics.median(times):.2f}s, "
                      f"worst {max(times):.2f}s over {len(times)} reports\n")
        outcomes += [o for o in checked if o not in outcomes]
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=1) + "\n",
                             encoding="utf-8")
    return 1 if disagreements else 0


def _same_repo(name: str, repo: str) -> bool:
    """Whether a corpus entry's `owner/name` is the repository at `repo` (a snapshot path
    such as `.../ROCm+aiter/repo` or a clone named after it)."""
    owner, _, short = name.partition("/")
    text = str(Path(repo).resolve())
    return f"{owner}+{short}" in text or text.rstrip("/").endswith(short) or short in text


if __name__ == "__main__":
    raise SystemExit(main())
