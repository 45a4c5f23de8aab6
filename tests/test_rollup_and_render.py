"""The rollup table, and one shared set of rows through every renderer."""

from __future__ import annotations

import json

import pytest

from impact.checks import REGISTRY
from impact.document import device_runs
from impact.reasons import Reason
from impact.render import RENDERERS
from impact.render.words import verdict_line
from impact.rollup import rollup
from impact.rows import Lane, Row, Side, Status

ALL_ARCHS = "all-ingestor-archs"  # the hipDNN map's label for every arch

M = Row("kernargs", "head", "pack:list", Status.MISMATCH,
        Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY, details={"names": ["seed"]},
        archs=("gfx950",), sides=(Side("k.py", 10, "head", "changed"),
                                  Side("p.cpp", 20, "head", "counterpart")))
C = Row("surface", "head", "k.py", Status.CHANGED, Reason.CONTENT_CHANGED, archs=("gfx942",))
C_ALL = Row("surface", "merged", "x.py", Status.CHANGED, Reason.CONTENT_CHANGED)
INERT = Row("surface", "head", "c.py", Status.INERT, Reason.ONLY_LAYOUT_CHANGED)
P = Row("surface", "head", "bad.py", Status.CHANGED, Reason.FILE_NOT_UNDERSTOOD,
        details={"failure": "syntax error"})
B = Row("build", "head", "CMakeLists.txt", Status.CHANGED, Reason.CONTENT_CHANGED,
        lane=Lane.BUILD)
D = Row("deps", "head", "requirements.txt", Status.CHANGED, Reason.CONTENT_CHANGED,
        lane=Lane.DEPS)
OLD = Row("kernargs", "head", "old:list", Status.MISMATCH, Reason.ARGUMENT_ORDER_DIFFERS,
          preexisting=True)

ROLLUP = [
    ([M, C, INERT], "Runtime impact: BREAKS"),
    ([C, INERT], "Runtime impact: NEEDS-DEVICE gfx942"),
    ([C, C_ALL], f"Runtime impact: NEEDS-DEVICE {ALL_ARCHS}, gfx942"),
    ([INERT], "Runtime impact: NONE"),
    ([], "Runtime impact: N/A"),
    ([OLD, INERT], "Runtime impact: NONE"),
    ([B], "Runtime impact: N/A (left to the BUILD lane)"),
    ([B, D, INERT], "Runtime impact: NONE (left to the BUILD and DEPS lanes)"),
    ([B, P], f"Runtime impact: NEEDS-DEVICE {ALL_ARCHS} (left to the BUILD lane)"),
]


@pytest.mark.parametrize(("rows", "line"), ROLLUP)
def test_rollup(rows, line) -> None:
    assert verdict_line(rollup(rows, ALL_ARCHS).to_json()) == line


def sample_report() -> dict:
    rows = sorted([M, C, INERT, P, B, OLD], key=Row.sort_key)
    verdict = rollup(rows, ALL_ARCHS)
    return {
        "schema_version": "0.3", "tool": {"name": "impact", "version": "0"},
        "repository": "/r", "input": {"form": "commit", "arguments": {"commit": "HEAD"}},
        "revisions": {}, "merge_bases": {},
        "surface_map": {"name": "hipdnn", "source": "builtin:hipdnn", "sha256": "0" * 64,
                        "reason": "test"},
        "views": [], "rows": [r.to_json() for r in rows],
        "verdict": verdict.to_json(),
        "device_runs": device_runs(rows),
        "pack_time": {"kind": "CLEAN", "probed": True, "new": 0, "first_shipped": 0,
                      "findings": [], "unfinished": []},
        "emit": None,
        "coverage": {"contracts_checked": ["surface"], "skipped": [], "parse_failures": ["bad.py"],
                     "archs": {}},
    }


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_failure_rows_travel_through_every_renderer(fmt: str) -> None:
    out = RENDERERS[fmt](sample_report())
    assert "BREAKS" in out
    for needle in ("argument added on the Python side only", "file cannot be understood"):
        assert needle in out, (fmt, needle)


def test_text_report_leads_with_the_verdict() -> None:
    lines = RENDERERS["text"](sample_report()).splitlines()
    assert lines[:2] == ["Pack-time: CLEAN", "Runtime impact: BREAKS (left to the BUILD lane)"]
    finding = next(line for line in lines if line.startswith("mismatch kernargs"))
    assert "changed k.py:10, counterpart p.cpp:20" in finding
    assert "1 pre-existing, not charged" in lines
    assert "Left to other lanes: BUILD (CMakeLists.txt)" in lines


def test_markdown_card_cites_both_sides_changed_first() -> None:
    card = RENDERERS["markdown"](sample_report())
    assert card.startswith("Impact (static): BREAKS — 2 device runs named; 1 BREAKS\n")
    lines = card.splitlines()
    first = lines.index("1. 🔴 [verified]")
    problem = lines[first + 1]
    assert problem.index("`k.py:10` (changed)") < problem.index("`p.cpp:20` (counterpart)")
    assert "Left to other lanes: BUILD (`CMakeLists.txt`)" in card
    assert "Pre-existing, not charged to this change: 1." in card


def test_json_renderer_is_schema_checked() -> None:
    doc = json.loads(RENDERERS["json"](sample_report()))
    assert doc["verdict"]["kind"] == "BREAKS"


HEADINGS = ("What it checks:", "Why a break hurts at run time:", "Example:",
            "When it says changed instead:", "Evidence:")


@pytest.mark.parametrize("check", REGISTRY, ids=lambda c: c.name)
def test_every_check_documents_itself(check) -> None:
    doc = type(check).__doc__ or ""
    missing = [h for h in HEADINGS if h not in doc]
    assert not missing, (check.name, missing)


def test_unfinished_probes_make_pack_time_incomplete_never_clean() -> None:
    from impact.document import unfinished
    from impact.rollup import PackOutcome, pack_time

    def doc(tables, head_status="done"):
        return {"revisions": {
            "base": {"status": "done", "result": {"families": [], "predicate_tables": []}},
            "head": {"status": head_status,
                     "result": {"families": [], "predicate_tables": tables}
                     if head_status == "done" else None}}}

    finished = doc([{"family": "a@gfx950", "status": "done", "findings": []}])
    timed_out = doc([{"family": "a@gfx950", "status": "done", "findings": []},
                     {"family": "b@gfx950", "status": "timed-out", "findings": []}])
    assert unfinished(finished) == []
    assert unfinished(timed_out) == ["b@gfx950"]
    assert unfinished(doc([], head_status="crashed")) == ["head revision"]
    assert pack_time([], unfinished(finished)).kind == PackOutcome.CLEAN
    assert pack_time([], unfinished(timed_out)).kind == PackOutcome.INCOMPLETE
    assert pack_time([{"status": "new"}], ["b@gfx950"]).kind == PackOutcome.NEW


def test_a_child_error_document_is_unfinished_and_folds_nothing() -> None:
    """A child that failed before building anything writes `done` with its `error` set and
    no tables: Pack-time is INCOMPLETE (never CLEAN) and nothing is proved equal."""
    from impact.document import unfinished
    from impact.fold import _Emit
    from impact.rollup import PackOutcome, pack_time

    failed = {"error": "the rules file names no emitter", "families": [],
              "predicate_tables": [], "not_inspected": []}
    fine = {"error": None, "families": [], "predicate_tables": [], "not_inspected": []}
    document = {"revisions": {"base": {"status": "done", "result": fine},
                              "head": {"status": "done", "result": failed}}}
    assert unfinished(document) == ["head revision"]
    assert pack_time([], unfinished(document)).kind == PackOutcome.INCOMPLETE
    assert _Emit(document).complete is False
