"""The bench format and the A/B/A classification: the threshold is the largest of 3 %, the
control deviation and the base spread."""

from __future__ import annotations

from impact.validate.perf import BenchRun, classify, compare_rounds, parse_bench


def test_both_line_forms_are_read_and_noise_ignored() -> None:
    text = ('{"label": "gemm|1024|fp16", "us": 10.5}\nwarming up\n'
            'softmax|64x2048|f32: 7 us\n{"label": "x", "us": "fast"}\nrate: 3 GB/s\n'
            '{"label": "gemm|1024|fp16", "us": 11}\n')
    assert parse_bench(text) == {"gemm|1024|fp16": [10.5, 11.0], "softmax|64x2048|f32": [7.0]}


def test_a_2x_slowdown_is_a_regression() -> None:
    row = classify([10.0, 10.1], [20.0, 20.2], [10.05, 10.0])
    assert row["status"] == "regression" and row["change_pct"] > 90


def test_within_noise_is_unchanged_even_beyond_3_percent() -> None:
    # the base rounds disagree by 10 %, so a 6 % slowdown is within the noise floor
    row = classify([10.0], [10.6], [11.0])
    assert row["status"] == "unchanged" and row["threshold_pct"] >= 9.0


def test_a_clear_speedup_is_an_improvement() -> None:
    assert classify([10.0, 10.0], [5.0], [10.0, 10.1])["status"] == "improvement"


def test_a_label_missing_on_one_side_is_incomparable() -> None:
    assert classify([10.0], [], [10.0])["status"] == "incomparable"


def _run(side: str, values: dict, error: str = "") -> BenchRun:
    return BenchRun(side, "bench", 0 if not error else 1, 0.1, "log", values, error)


def test_rounds_give_a_should_fix_finding_on_regression() -> None:
    status, _, rows, findings = compare_rounds([
        _run("base", {"k": [10.0]}), _run("head", {"k": [30.0]}), _run("base", {"k": [10.0]})])
    assert status == "fail" and rows[0]["status"] == "regression"
    assert [f["severity"] for f in findings] == ["should-fix"]


def test_a_failed_round_fails_the_stage_without_blame() -> None:
    status, reason, _, findings = compare_rounds([
        _run("base", {"k": [10.0]}), _run("head", {}, "exit 1"), _run("base", {"k": [10.0]})])
    assert status == "fail" and "head round" in reason and findings == []


def test_no_shared_measurement_is_a_skip() -> None:
    status, *_ = compare_rounds([_run("base", {}), _run("head", {}), _run("base", {})])
    assert status == "skip"
