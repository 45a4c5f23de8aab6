"""JUnit parsing and blame: only "passes on base, fails on head" or a failing target the
change added is a blocker; a failure on both sides is a note; zero executed is a skip."""

from __future__ import annotations

import sys
from pathlib import Path

from impact.validate.correctness import (
    FAILED,
    PASSED,
    SKIPPED,
    Outcome,
    choose_runner,
    compare,
    parse_junit,
    policy,
    run_target,
)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5">
<testcase classname="t.test_a" name="test_ok"/>
<testcase classname="t.test_a" name="test_bad"><failure message="assert 0"/></testcase>
<testcase classname="t.test_a" name="test_skip"><skipped message="no gpu"/></testcase>
<testcase classname="t.test_a" name="test_err"><error message="fixture"/></testcase>
<testcase classname="t.test_a" name="test_ok2"/>
</testsuite></testsuites>"""


def test_junit_counts(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text(JUNIT)
    stats, cases = parse_junit(path)
    assert stats == {"tests": 5, "failures": 1, "errors": 1, "skipped": 1, "executed": 4}
    assert cases["t.test_a::test_bad"] == FAILED and cases["t.test_a::test_skip"] == SKIPPED


def _out(cases: dict[str, str], *, present: bool = True, target: str = "t.py") -> Outcome:
    executed = sum(1 for c in cases.values() if c != SKIPPED)
    return Outcome(target, "pytest", "r", present, exit=0, stats={"executed": executed},
                   cases=cases)


def test_pass_on_base_fail_on_head_is_a_blocker() -> None:
    result = compare([_out({"a": PASSED, "b": PASSED})], [_out({"a": PASSED, "b": FAILED})])
    assert result.status == "fail"
    assert [f["severity"] for f in result.findings] == ["blocker"]


def test_failure_on_both_sides_is_a_note_and_the_rest_can_pass() -> None:
    result = compare([_out({"a": PASSED, "b": FAILED})], [_out({"a": PASSED, "b": FAILED})])
    assert result.status == "pass"
    assert [f["severity"] for f in result.findings] == ["note"]


def test_a_failing_target_the_change_added_is_a_blocker() -> None:
    result = compare([_out({}, present=False)], [_out({"new": FAILED})])
    assert [f["severity"] for f in result.findings] == ["blocker"]


def test_zero_executed_is_a_skip_never_a_pass() -> None:
    result = compare([_out({"a": SKIPPED})], [_out({"a": SKIPPED})])
    assert result.status == "skip" and result.head_executed == 0


def test_only_preexisting_failures_prove_nothing() -> None:
    result = compare([_out({"a": FAILED})], [_out({"a": FAILED})])
    assert result.status == "skip" and not any(f["severity"] == "blocker"
                                               for f in result.findings)


def test_a_target_missing_on_head_fails_closed() -> None:
    result = compare([_out({"a": PASSED})], [_out({}, present=False)])
    assert result.status == "fail" and "not in the head tree" in result.reason


def test_policy_flags_tests_silenced_by_the_change() -> None:
    status, _, findings = policy([_out({"a": PASSED, "b": PASSED})],
                                 [_out({"a": SKIPPED})])
    assert status == "fail"
    assert sorted(f["detail"] for f in findings) == [
        "a ran on base and is skipped on head", "b ran on base and is gone on head"]
    assert {f["severity"] for f in findings} == {"should-fix"}


def test_runner_is_chosen_by_structure(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text("def test_a():\n    pass\n")
    (tmp_path / "run.py").write_text("if __name__ == '__main__':\n    print(1)\n")
    (tmp_path / "lib.py").write_text("X = 1\n")
    assert choose_runner(tmp_path, "test_x.py")[0] == "pytest"
    assert choose_runner(tmp_path, "test_x.py::test_a")[0] == "pytest"
    assert choose_runner(tmp_path, "run.py")[0] == "script"
    assert choose_runner(tmp_path, "lib.py")[0] == "none"


def test_a_real_pytest_run_and_a_timeout(tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "test_x.py").write_text("def test_a():\n    pass\n\ndef test_b():\n    assert 0\n")
    (root / "slow.py").write_text("import time\nif __name__ == '__main__':\n"
                                  "    time.sleep(30)\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    env = {"PATH": "/usr/bin:/bin"}
    done = run_target(sys.executable, root, "test_x.py", env, logs, "head", 120)
    assert done.stats["executed"] == 2 and done.stats["failures"] == 1
    slow = run_target(sys.executable, root, "slow.py", env, logs, "head", 0.5)
    assert slow.timed_out and compare([slow], [slow]).status == "fail"


def test_a_head_test_that_aborts_is_a_block(tmp_path: Path) -> None:
    """`os.abort()` (SIGABRT) in a head test kills pytest before it writes its JUnit file:
    a crash of the head's run is a blocker, never a should-fix or a skip."""
    from impact.validate.verdict import Verdict, decide

    logs = tmp_path / "logs"
    logs.mkdir()
    env = {"PATH": "/usr/bin:/bin"}
    outcomes = {}
    for side, body in (("base", "    pass\n"), ("head", "    import os\n    os.abort()\n")):
        root = tmp_path / side
        root.mkdir()
        (root / "test_x.py").write_text("def test_a():\n" + body)
        outcomes[side] = [run_target(sys.executable, root, "test_x.py", env, logs, side, 120)]
    assert outcomes["head"][0].exit == -6 and outcomes["base"][0].stats["executed"] == 1
    result = compare(outcomes["base"], outcomes["head"])
    assert any(f["severity"] == "blocker" and "SIGABRT" in f["detail"] for f in result.findings)
    findings = result.findings + policy(outcomes["base"], outcomes["head"])[2]
    assert decide({}, findings, None)[0] == Verdict.BLOCK


def test_a_junit_path_holding_a_fifo_or_a_device_is_unreadable(tmp_path: Path) -> None:
    """What a test left at the JUnit path is read only as a regular file."""
    import os

    import pytest
    from test_parent_reads import deadline

    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    device = tmp_path / "zero.xml"
    device.symlink_to("/dev/zero")
    for path in (fifo, device):
        with deadline(5), pytest.raises(OSError):
            parse_junit(path)


def test_a_pass_in_a_head_edited_test_or_beside_an_edited_helper_is_no_evidence() -> None:
    """A test the change edits, or one that imports a helper the change edits, may show a
    failure but never proves a pass on its own."""
    def run(case: str) -> Outcome:
        return Outcome("tests/", "pytest", "r", True, exit=0, stats={"executed": 1},
                       cases={case: PASSED})

    case = "tests/unit/test_a.py::test_x"
    for edited in (["tests/unit/test_a.py"], ["tests/helpers.py"], ["tests/unit/util.py"]):
        result = compare([run(case)], [run(case)], edited)
        assert result.status == "skip" and "never the only evidence" in result.reason, edited
    for edited in ([], ["tests/unit/test_b.py"], ["tests/conftest.py"], ["other/util.py"]):
        assert compare([run(case)], [run(case)], edited).status == "pass", edited
    failing = Outcome("tests/", "pytest", "r", True, exit=1, stats={"executed": 1},
                      cases={case: FAILED})
    blamed = compare([run(case)], [failing], ["tests/unit/test_a.py"])
    assert blamed.status == "fail"  # an edited test may still show the break
