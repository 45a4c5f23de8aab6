"""The validation verdict, decided in one function by the rules of consumers.md §1: each
rule tested on its own, in the order the rules apply."""

from __future__ import annotations

import pytest

from impact.validate.verdict import STAGES, decide, fill_stages


def _all(status: str = "pass") -> dict[str, dict]:
    stages = {name: {"status": status, "reason": "r", "detail": {}} for name in STAGES}
    stages["diff_scan"]["status"] = "info"
    return stages


IDENTITY = {"module_path": "/s/pkg/__init__.py"}
BLOCKER = {"severity": "blocker", "stage": "correctness", "detail": "x"}
SHOULD = {"severity": "should-fix", "stage": "perf", "detail": "y"}
NOTE = {"severity": "note", "stage": "correctness", "detail": "z"}


def test_every_stage_satisfied_with_identity_is_pass() -> None:
    assert decide(_all(), [NOTE], IDENTITY)[:2] == ("PASS", 0)


def test_blocker_outranks_should_fix_and_unsatisfied_stages() -> None:
    stages = _all("skip")
    assert decide(stages, [SHOULD, BLOCKER], None)[:2] == ("BLOCK", 1)


def test_should_fix_gives_needs_work_even_with_skipped_stages() -> None:
    assert decide(_all("skip"), [SHOULD, NOTE], None)[:2] == ("NEEDS_WORK", 1)


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("status", ["fail", "skip", "info", "pass"])
def test_a_required_stage_without_its_satisfying_status_is_inconclusive(stage, status) -> None:
    stages = _all()
    stages[stage]["status"] = status
    satisfying = "info" if stage == "diff_scan" else "pass"
    verdict, code, why = decide(stages, [], IDENTITY)
    if status == satisfying:
        assert (verdict, code) == ("PASS", 0)
    else:
        assert (verdict, code) == ("INCONCLUSIVE", 2)
        assert any(stage in w for w in why)


def test_a_missing_stage_is_added_as_skip_and_blocks_pass() -> None:
    stages = _all()
    del stages["perf"]
    assert decide(stages, [], IDENTITY)[:2] == ("INCONCLUSIVE", 2)
    assert fill_stages(stages)["perf"]["status"] == "skip"


def test_missing_runtime_identity_is_inconclusive() -> None:
    verdict, code, why = decide(_all(), [], None)
    assert (verdict, code) == ("INCONCLUSIVE", 2) and "no runtime_identity" in why


def test_a_schema_violation_turns_pass_into_inconclusive_but_leaves_block() -> None:
    assert decide(_all(), [], IDENTITY, schema_valid=False)[:2] == ("INCONCLUSIVE", 2)
    assert decide(_all(), [BLOCKER], IDENTITY, schema_valid=False)[:2] == ("BLOCK", 1)
