"""Run the test targets on one side and compare the sides: pytest with a results plugin of
ours, or a script judged by its exit code.

Maintainers: `run_target` runs one target in one materialised tree, confined
(impact/validate/confine.py), with the harness from the base: pytest is started with our
own config file (a copy of the base's), plugin autoloading off and our results plugin
(`-p impact_results`, from a folder the tests cannot write) reporting each test to a
descriptor this process opened on a file the tests cannot reach by path; the head's
`conftest.py`, `sitecustomize.py` and `usercustomize.py` are replaced by the base's
(`harness_from_base`). What the plugin says must agree with the exit status the jail
reported, or the target is unreadable. `parse_junit` reads a JUnit file (kept for
reports of other tools). `compare` decides blame: only "passes on base, fails on head"
(per test case) or a failing target the change added; a failure on both sides is a
note; zero executed is never a pass, and a test in a file the change edits is never the
only evidence of a pass.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from impact.git import Snapshot
from impact.safefile import read_regular, unsafe_tree_path
from impact.validate import logtail
from impact.validate.confine import Jail, confined_run
from impact.validate.verdict import Severity, StageStatus

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
# The most a JUnit file may hold; it is read only as a regular file (never a FIFO, a
# device or a symlink the tests left at its path: impact/safefile.py).
JUNIT_LIMIT_BYTES = 64 << 20
RESULTS_LIMIT_BYTES = 64 << 20  # the results plugin's file, read as a bounded regular file
RESULTS_FD_ENV = "IMPACT_RESULTS_FD"
HARNESS_FILES = ("conftest.py", "sitecustomize.py", "usercustomize.py")
"""Files that configure how tests run (and can turn a failure into a pass): the head
runs the base's."""
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_CONFIG_SECTIONS = {"pyproject.toml": "[tool.pytest.ini_options]", "tox.ini": "[pytest]",
                    "setup.cfg": "[tool:pytest]"}
PLUGIN = "impact_results"
_PLUGIN_SOURCE = '''"""Written by impact validate: each test's outcome, to the descriptor it
opened on a file the tests cannot reach by path."""
import json as _json
import os as _os

_FD = int(_os.environ.pop("IMPACT_RESULTS_FD", "-1") or -1)
if _FD >= 0:
    _os.set_inheritable(_FD, False)  # the tests' own subprocesses do not get it


def _say(item):
    if _FD >= 0:
        _os.write(_FD, (_json.dumps(item) + "\\n").encode())


def pytest_collectreport(report):
    if report.failed:
        _say({"kind": "collect", "nodeid": report.nodeid, "outcome": "failed"})


def pytest_runtest_logreport(report):
    _say({"kind": "test", "nodeid": report.nodeid, "when": report.when,
          "outcome": report.outcome})


def pytest_sessionfinish(session, exitstatus):
    _say({"kind": "finish", "exitstatus": int(exitstatus)})
'''


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
    isolation: dict[str, Any] = field(default_factory=dict)  # the jail's record
    log_tail: list[str] = field(default_factory=list)  # a failed run's log, quoted

    @property
    def executed(self) -> int:
        return self.stats.get("executed", 0)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "runner": self.runner, "runner_reason": self.runner_reason,
                "present": self.present, "exit": self.exit, "timed_out": self.timed_out,
                "seconds": round(self.seconds, 3), "stats": self.stats, "log": self.log,
                "error": self.error or None,
                **({"log_tail": self.log_tail} if self.log_tail else {})}

    @property
    def failed(self) -> bool:
        """A run whose log says why: it errored, timed out, or a test failed."""
        return bool(self.error or self.timed_out or self.stats.get("failures")
                    or self.stats.get("errors"))


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


def install_harness(folder: Path, base_root: Path | None = None) -> Path:
    """Our results plugin and pytest config file in `folder` (a folder of the parent's
    that the tests get read-only): the config is a copy of the one pytest would read at
    `base_root` (the base's tree), or an empty one."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PLUGIN}.py").write_text(_PLUGIN_SOURCE)
    source = _pytest_config(base_root) if base_root is not None else None
    name = source.name if source else "pytest.ini"
    config = folder / "config" / name
    config.parent.mkdir(exist_ok=True)
    config.write_bytes(read_regular(source, limit=1 << 20) if source else b"[pytest]\n")
    return folder


def _pytest_config(root: Path) -> Path | None:
    """The config file pytest picks in `root` (the first that holds its section)."""
    for name in PYTEST_CONFIGS:
        path = root / name
        if not path.is_file() or path.is_symlink():
            continue
        section = _CONFIG_SECTIONS.get(name)
        try:
            if section is None or section in path.read_text(errors="replace"):
                return path
        except OSError:
            continue
    return None


def harness_from_base(head_root: Path, base: Snapshot, head: Snapshot
                      ) -> tuple[list[str], list[str]]:
    """Replace every harness file (HARNESS_FILES) of the head's folder that differs from
    the base's with the base's (or remove it where the base has none), so the change is
    tested by the base's harness: (the paths replaced, those that could not be: under a
    folder the head made a symlink, or no regular file; the caller fails closed)."""
    from emit.trees import write_new_file

    replaced, failed = [], []
    names = {p for tree in (base, head) for p, e in tree.walk()
             if PurePosixPath(p).name in HARNESS_FILES and not e.is_submodule}
    for path in sorted(names):
        old, new = base.get(path), head.get(path)
        if old is not None and new is not None and (old.sha, old.mode) == (new.sha, new.mode):
            continue
        if unsafe_tree_path(path) or not _real_folders(head_root, path):
            failed.append(path)
            continue
        target = head_root / path
        try:
            if os.path.lexists(target):
                target.unlink()
            if old is not None and not old.is_submodule:
                write_new_file(head_root, path, base.read(path), 0o644)
        except (OSError, ValueError):
            failed.append(path)
            continue
        replaced.append(path)
    return replaced, failed


def restore_harness(root: Path, base: Snapshot) -> list[str]:
    """Put the base's harness back in the folder at `root` as it is on disk now: every
    HARNESS_FILES file that is not the base's (one the head's build or an earlier test
    wrote there) is removed or replaced by the base's; the base's that are missing come
    back. The paths it changed, for a note."""
    from emit.trees import write_new_file

    changed = []
    on_disk = set()
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        on_disk.update(os.path.relpath(os.path.join(folder, f), root) for f in files
                       if f in HARNESS_FILES)
    wanted = {p for p, e in base.walk() if PurePosixPath(p).name in HARNESS_FILES
              and not e.is_submodule and not unsafe_tree_path(p)}
    for path in sorted(on_disk | wanted):
        target = root / path
        data = base.read(path) if path in wanted else None
        try:
            if not target.is_symlink() and target.is_file() and data is not None and \
                    read_regular(target, limit=16 << 20) == data:
                continue
            if os.path.lexists(target):
                target.unlink()
            if data is not None and _real_folders(root, path):
                write_new_file(root, path, data, 0o644)
        except (OSError, ValueError):
            pass
        changed.append(path)
    return changed


def _real_folders(root: Path, path: str) -> bool:
    """Whether every folder of `path` under `root` is a real folder (or absent)."""
    here = root
    for part in PurePosixPath(path).parts[:-1]:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if not stat.S_ISDIR(mode):
            return False
    return True


def is_test_path(path: str) -> bool:
    """A file that holds tests or their harness, by the names pytest collects."""
    pure = PurePosixPath(path)
    return pure.suffix == ".py" and (
        pure.name.startswith("test") or pure.name.endswith("_test.py")
        or pure.name in HARNESS_FILES or bool({"test", "tests"} & set(pure.parts[:-1])))


def run_target(python: str, root: Path, target: str, env: dict[str, str], logs: Path,
               side: str, timeout: float, jail: Jail | None = None) -> Outcome:
    """Run `target` in `root` under `env`, confined by `jail` (default: only `root`
    writable); the log and the results file go to `logs`, which the tests cannot write."""
    runner, reason = choose_runner(root, target)
    present = (root / target.split("::", 1)[0]).exists()
    outcome = Outcome(target, runner, reason, present)
    if not present:
        outcome.runner, outcome.runner_reason = "none", f"{target} is not in the {side} tree"
        return outcome
    if runner == "none":
        return outcome
    jail = jail or Jail(writable=(root,))
    harness = logs / "harness"
    if not (harness / f"{PLUGIN}.py").is_file():
        install_harness(harness)
    slug = "".join(c if c.isalnum() else "_" for c in target)[-80:]
    results = logs / f"{side}-{slug}.results"
    log = logs / f"{side}-{slug}.log"
    log.unlink(missing_ok=True)
    env = dict(env)
    if runner == "pytest":
        [config] = (harness / "config").iterdir()
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN, "-rA",
                "-c", str(config), "--rootdir", str(root), "--confcutdir", str(root), target]
        env["PYTHONPATH"] = os.pathsep.join(
            [str(harness), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))])
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # no head-installed pytest11 plugin
    else:
        argv = [python, target]
    fd = os.open(results, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        env[RESULTS_FD_ENV] = str(fd)
        done = confined_run(argv, cwd=root, env=env, writable=jail.writable, log=log,
                            timeout=timeout, devices=jail.devices,
                            read_only=(*jail.read_only, harness), hide=jail.hide,
                            network=jail.network, isolate=jail.isolate, pass_fds=(fd,))
    finally:
        os.close(fd)
    outcome.exit, outcome.timed_out, outcome.seconds = done.exit, done.timed_out, done.seconds
    outcome.isolation = done.isolation
    outcome.log = str(log)
    if done.error:
        outcome.error = done.error
        outcome.log_tail = logtail.tail(log, 30)
        return outcome
    if runner == "pytest":
        try:
            outcome.stats, outcome.cases, outcome.error = read_results(results, done.exit)
        except OSError as exc:
            outcome.error = f"unreadable results ({exc})"
    else:
        ok = outcome.exit == 0
        outcome.stats = {"tests": 1, "failures": 0 if ok else 1, "errors": 0, "skipped": 0,
                         "executed": 1}
        outcome.cases = {target: PASSED if ok else FAILED}
    if outcome.failed:  # the log says why; the report quotes it, the log itself goes away
        outcome.log_tail = logtail.tail(log, 30)
    return outcome


def read_results(path: Path, exit_status: int | None
                 ) -> tuple[dict[str, int], dict[str, str], str]:
    """(counts, each case's outcome, why the run is unreadable: "" when it is not) from
    our plugin's lines, checked against the exit status the jail reported: pytest that
    did not finish its session, or a report that disagrees with the exit status (a
    failure reported and exit 0, exit 1 and no failure), is unreadable, never a pass."""
    cases: dict[str, str] = {}
    errors, finished = 0, None
    for line in read_regular(path, limit=RESULTS_LIMIT_BYTES).decode(errors="replace"
                                                                    ).splitlines():
        try:
            item = json.loads(line)
            kind = item["kind"]
        except (ValueError, KeyError, TypeError):
            return {}, {}, "the results plugin's output is malformed"
        if kind == "finish":
            finished = item.get("exitstatus")
        elif kind == "collect":
            errors += 1
            cases[str(item.get("nodeid"))] = FAILED
        elif kind == "test":
            case, outcome, when = str(item.get("nodeid")), item.get("outcome"), item.get("when")
            if outcome == FAILED:
                errors += when != "call"
                cases[case] = FAILED
            elif outcome == SKIPPED and cases.get(case) != FAILED:
                cases[case] = SKIPPED
            elif outcome == PASSED and when == "call" and case not in cases:
                cases[case] = PASSED
    failed = sum(1 for c in cases.values() if c == FAILED)
    skipped = sum(1 for c in cases.values() if c == SKIPPED)
    stats = {"tests": len(cases), "failures": failed - min(errors, failed), "errors": errors,
             "skipped": skipped, "executed": len(cases) - skipped}
    if finished is None:
        return stats, cases, f"pytest did not finish its session (exit {exit_status})"
    if finished != exit_status:
        return stats, cases, (f"pytest reported exit {finished}, its process ended with "
                              f"{exit_status}")
    if exit_status not in (0, 1, 5) or (exit_status == 1) != bool(failed):
        return stats, cases, (f"pytest exit {exit_status} with {failed} failing test(s) "
                              "reported")
    return stats, cases, ""


def edited_findings(edited: Iterable[str], replaced: Iterable[str],
                    planted: Iterable[str] = ()) -> list[dict[str, str]]:
    """A note for each test file the change edits (its passes are not evidence on their
    own), each harness file the base's replaced, and each one the head's build or tests
    wrote into its tree while validate ran (removed, or the base's put back)."""
    replaced = set(replaced)
    out = [_finding(Severity.NOTE, f"{path} is a harness file the change edits; the head ran "
                    "the base's", "test_policy") for path in sorted(replaced)]
    out += [_finding(Severity.NOTE, f"{path} was written into the head's tree while validate "
                     "ran (by its build or a test); the base's harness was put back",
                     "test_policy") for path in sorted(set(planted))]
    out += [_finding(Severity.NOTE, f"{path} is a test file the change edits; a pass of its "
                     "tests is not evidence on its own", "test_policy")
            for path in sorted(set(edited) - replaced)]
    return out


@dataclass
class Comparison:
    """The correctness stage and its findings."""

    status: str
    reason: str
    findings: list[dict[str, str]]
    head_executed: int
    head_passed: int


def _case_file(case: str, target: str) -> str:
    return case.split("::", 1)[0] if "::" in case else target.split("::", 1)[0]


def _tainted(file: str, edited: set[str]) -> bool:
    """Whether a test in `file` proves nothing on its own: the change edits the file, or
    a helper module in its folder or a folder above it (tests/helpers.py, which the tests
    there import); a harness file is the base's and taints nothing."""
    if file in edited:
        return True
    helpers = {PurePosixPath(p).parent for p in edited
               if PurePosixPath(p).name not in HARNESS_FILES and not
               (PurePosixPath(p).name.startswith("test") or p.endswith("_test.py"))}
    return any(folder in helpers for folder in PurePosixPath(file).parents)


def compare(base: list[Outcome], head: list[Outcome], edited: Iterable[str] = ()
            ) -> Comparison:
    """Blame only what the change made worse; fail closed on anything unreadable. A head
    run a signal ended (`os.abort()`, a segfault) where the base's was not is a blocker:
    the process that would have written the results crashed, whatever it wrote before.
    A pass of a test in a file of `edited` (the test files the change edits), or beside a
    test helper it edits, is never the only evidence: it may show a failure, not prove a
    pass."""
    edited = set(edited)
    findings: list[dict[str, str]] = []
    problems: list[str] = []
    head_executed = head_passed = edited_passed = 0
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
                if _tainted(_case_file(case, h.target), edited):
                    edited_passed += 1
                else:
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
    if head_passed < 1 and edited_passed:
        return Comparison(StageStatus.SKIP, "every head test that passed is in a file the "
                          "change edits (never the only evidence)", findings, head_executed,
                          head_passed)
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
