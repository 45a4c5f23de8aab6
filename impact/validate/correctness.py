"""Run the test targets on one side and compare the sides: pytest with JUnit XML, or a
script judged by its exit code.

Maintainers: `run_target` runs one target in one materialised tree; `parse_junit` reads
the counts with xml.etree; `compare` decides blame: only "passes on base, fails on head"
(per test case) or a failing target the change added. A failure on both sides is a note.
Zero executed is never a pass.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from impact.safefile import read_regular
from impact.validate.verdict import Severity, StageStatus

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
# The most a JUnit file may hold; it is read only as a regular file (never a FIFO, a
# device or a symlink the tests left at its path: impact/safefile.py).
JUNIT_LIMIT_BYTES = 64 << 20


@dataclass
class Outcome:
    """One target's run on one side."""

    target: str
    runner: str  # pytest | script | none
    runner_reason: str
    present: bool
    exit: int | None = None
    timed_out: bool = False
    seconds: float = 0.0
    stats: dict[str, int] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)  # case id -> passed|failed|skipped
    log: str = ""
    error: str = ""

    @property
    def executed(self) -> int:
        return self.stats.get("executed", 0)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "runner": self.runner, "runner_reason": self.runner_reason,
                "present": self.present, "exit": self.exit, "timed_out": self.timed_out,
                "seconds": round(self.seconds, 3), "stats": self.stats, "log": self.log,
                "error": self.error or None}


def choose_runner(root: Path, target: str) -> tuple[str, str]:
    """pytest for a node id or a file defining test functions or classes; a script for
    another .py file with a __main__ guard; none otherwise (never a guess)."""
    file = target.split("::", 1)[0]
    if "::" in target:
        return "pytest", "a pytest node id"
    path = root / file
    if path.is_dir():
        return "pytest", "a folder of tests"
    if path.suffix != ".py":
        return "none", f"{file} is not a Python file or folder"
    try:  # the tree may link it anywhere (/dev/zero, a secret): a bounded regular file only
        tree = ast.parse(read_regular(path, limit=JUNIT_LIMIT_BYTES))
    except OSError:
        return "pytest", f"{file} is not a regular file impact reads; pytest reports on it"
    except (SyntaxError, ValueError):
        return "pytest", "the file does not parse; pytest reports it as an error"
    for node in tree.body:
        name = getattr(node, "name", "")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and name.startswith("test"):
            return "pytest", f"{file} defines test functions"
        if isinstance(node, ast.ClassDef) and name.startswith("Test"):
            return "pytest", f"{file} defines test classes"
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return "script", f"{file} has a __main__ guard and no test functions"
    return "none", f"{file} defines no tests and has no __main__ guard"


def parse_junit(path: Path) -> tuple[dict[str, int], dict[str, str]]:
    """Counts (tests, failures, errors, skipped, executed) and each case's outcome from
    a JUnit XML file as pytest writes it."""
    root = ET.fromstring(read_regular(path, limit=JUNIT_LIMIT_BYTES))
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    cases: dict[str, str] = {}
    for suite in suites:
        for case in suite.iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            tags = {child.tag for child in case}
            if "failure" in tags or "error" in tags:
                cases[name] = FAILED
            elif "skipped" in tags:
                cases[name] = SKIPPED
            else:
                cases[name] = PASSED
    tests = len(cases)
    failed = sum(1 for c in cases.values() if c == FAILED)
    skipped = sum(1 for c in cases.values() if c == SKIPPED)
    errors = sum(int(s.get("errors", 0)) for s in suites)
    stats = {"tests": tests, "failures": failed - min(errors, failed), "errors": errors,
             "skipped": skipped, "executed": tests - skipped}
    return stats, cases


def run_target(python: str, root: Path, target: str, env: dict[str, str], logs: Path,
               side: str, timeout: float) -> Outcome:
    """Run `target` in `root` under `env`; the log and JUnit file go to `logs`."""
    runner, reason = choose_runner(root, target)
    present = (root / target.split("::", 1)[0]).exists()
    outcome = Outcome(target, runner, reason, present)
    if not present:
        outcome.runner, outcome.runner_reason = "none", f"{target} is not in the {side} tree"
        return outcome
    if runner == "none":
        return outcome
    slug = "".join(c if c.isalnum() else "_" for c in target)[-80:]
    junit = logs / f"{side}-{slug}.xml"
    log = logs / f"{side}-{slug}.log"
    if runner == "pytest":
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
                f"--junitxml={junit}", target]
    else:
        argv = [python, target]
    start = time.monotonic()
    with log.open("wb") as out:
        outcome.exit = run_group(argv, root, env, out, timeout)
        if outcome.exit is None:
            outcome.timed_out = True
            outcome.error = f"timed out after {timeout:g}s"
    outcome.seconds = time.monotonic() - start
    outcome.log = str(log)
    if outcome.timed_out:
        return outcome
    if runner == "pytest":
        if junit.is_file():
            try:
                outcome.stats, outcome.cases = parse_junit(junit)
            except (ET.ParseError, OSError) as exc:
                outcome.error = f"unreadable JUnit XML ({exc})"
        else:
            outcome.error = f"pytest wrote no JUnit XML (exit {outcome.exit})"
    else:
        ok = outcome.exit == 0
        outcome.stats = {"tests": 1, "failures": 0 if ok else 1, "errors": 0, "skipped": 0,
                         "executed": 1}
        outcome.cases = {target: PASSED if ok else FAILED}
    return outcome


def run_group(argv: list[str] | str, cwd: Path, env: dict[str, str], out: Any,
              timeout: float) -> int | None:
    """Run `argv` in a process group of its own, output to `out`; on timeout the whole
    group is killed (no stray child keeps the GPU) and None is returned."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True, shell=isinstance(argv, str))
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


@dataclass
class Comparison:
    """The correctness stage and its findings."""

    status: str
    reason: str
    findings: list[dict[str, str]]
    head_executed: int
    head_passed: int


def compare(base: list[Outcome], head: list[Outcome]) -> Comparison:
    """Blame only what the change made worse; fail closed on anything unreadable. A head
    run a signal ended (`os.abort()`, a segfault) where the base's was not is a blocker:
    the process that would have written the results crashed, whatever it wrote before."""
    findings: list[dict[str, str]] = []
    problems: list[str] = []
    head_executed = head_passed = 0
    for b, h in zip(base, head, strict=True):
        if not h.present:
            problems.append(f"{h.target} is not in the head tree")
            continue
        if h.runner == "none":
            problems.append(f"{h.target}: {h.runner_reason}")
            continue
        if _signalled(h) and not (b.present and _signalled(b)):
            where = "and not on base" if b.present else "in a target the change added"
            findings.append(_finding(Severity.BLOCKER, f"{h.target} was ended by "
                                     f"{_signal_name(h.exit)} on head {where}"))
            continue
        if h.timed_out or h.error or (b.present and (b.timed_out or b.error)):
            problems.append(f"{h.target}: {h.error or b.error}")
            continue
        head_executed += h.executed
        for case, result in sorted(h.cases.items()):
            if result == PASSED:
                head_passed += 1
                continue
            if result != FAILED:
                continue
            before = b.cases.get(case) if b.present else None
            if not b.present:
                findings.append(_finding(Severity.BLOCKER, f"{case} fails on head, in the target "
                                         f"{h.target} the change added"))
            elif before == PASSED:
                findings.append(_finding(Severity.BLOCKER,
                                         f"{case} passes on base and fails on head"))
            elif before == FAILED:
                findings.append(_finding(Severity.NOTE, f"{case} fails on base and on head "
                                         "(not caused by the change)"))
            else:
                findings.append(_finding(Severity.NOTE, f"{case} fails on head and did not run "
                                         "on base (new or renamed case)"))
    if any(f["severity"] == Severity.BLOCKER for f in findings):
        return Comparison(StageStatus.FAIL, "a test that passed on base fails on head", findings,
                          head_executed, head_passed)
    if problems:
        return Comparison(StageStatus.FAIL, "; ".join(problems), findings, head_executed,
                          head_passed)
    if head_executed < 1:
        return Comparison(StageStatus.SKIP,
                          "no head test executed (zero executed is never a pass)",
                          findings, head_executed, head_passed)
    if head_passed < 1:
        return Comparison(StageStatus.SKIP, "no head test passed; every failure is also on base",
                          findings, head_executed, head_passed)
    return Comparison(StageStatus.PASS, f"{head_executed} head test(s) executed, no new failure",
                      findings, head_executed, head_passed)


def policy(base: list[Outcome], head: list[Outcome]) -> tuple[str, str, list[dict[str, str]]]:
    """test_policy: the change may not silence a test: a case that ran on base and is
    skipped or gone on head is a should-fix finding."""
    findings = []
    for b, h in zip(base, head, strict=True):
        if not (b.present and h.present) or h.runner != "pytest":
            continue
        for case, result in sorted(b.cases.items()):
            if result == SKIPPED:
                continue
            now = h.cases.get(case)
            if now is None:
                findings.append(_finding(Severity.SHOULD_FIX,
                                         f"{case} ran on base and is gone on head",
                                         "test_policy"))
            elif now == SKIPPED:
                findings.append(_finding(Severity.SHOULD_FIX,
                                         f"{case} ran on base and is skipped on head",
                                         "test_policy"))
    if findings:
        return StageStatus.FAIL, "the change silences tests that ran on base", findings
    return StageStatus.PASS, "no test that ran on base is skipped or gone on head", []


def _signalled(outcome: Outcome) -> bool:
    """Whether a signal ended the run (not our own timeout's kill)."""
    return outcome.exit is not None and outcome.exit < 0 and not outcome.timed_out


def _signal_name(exit_status: int | None) -> str:
    try:
        return signal.Signals(-(exit_status or 0)).name
    except ValueError:
        return f"signal {-(exit_status or 0)}"


def _finding(severity: Severity, detail: str, stage: str = "correctness") -> dict[str, str]:
    return {"severity": severity, "stage": stage, "detail": detail}
