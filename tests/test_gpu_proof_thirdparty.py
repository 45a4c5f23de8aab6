"""The H200 documents of real third-party packages (benchmarks/gpu/thirdparty/h200/),
committed as the proof of `impact validate` on shipped layouts and of `impact gate`: each
fits its schema, states the verdict its own stages and findings give and the one
expected.json names (what the H200 gave), was earned on a GPU, and is bound to the commits
make_repos.py writes (manifest.json: fixed ids, each the tree of a real commit)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from impact.contracts import load_schema
from impact.validate.document import schema_problems
from impact.validate.verdict import decide

HERE = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu" / "thirdparty"
RESULTS = HERE / "h200"
EXPECTED = json.loads((HERE / "expected.json").read_text(encoding="utf-8"))["scenarios"]
MANIFEST = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))


def _load(name: str) -> dict:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def _validation(name: str) -> dict:
    return _load(EXPECTED[name]["validation"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_validation_states_its_own_and_the_expected_verdict(name: str) -> None:
    doc = _validation(name)
    assert schema_problems(doc) == []
    verdict, code, _ = decide(doc["stages"], doc["findings"], doc.get("runtime_identity"))
    assert (verdict, code) == (doc["verdict"], doc["process_exit_code"])
    assert doc["verdict"] == EXPECTED[name]["verdict"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_was_earned_on_a_gpu_with_the_side_installed_as_expected(name: str) -> None:
    doc, want = _validation(name), EXPECTED[name]
    assert doc["degraded_mode"] is None and doc["environment"]["arch"] == "sm_90"
    assert doc["stages"]["gpu_claim"]["status"] == "pass"
    assert ("runtime" in doc["arch_coverage"].values()) == want["ran"]
    compat = doc["stages"]["runtime_compat"]["detail"]
    for side in ("base", "head"):
        done = compat["install"][side]
        assert done["how"] == want["install"] and done["ok"] == want["install_ok"][side]
        if want["ran"]:  # the import check found each side's own files
            origin = Path(compat["origins"][side])
            assert origin.is_relative_to(Path(doc["repo"][f"{side}_dir"]).parent)
    for needle in want.get("findings", []):
        assert any(needle in f["detail"] for f in doc["findings"]), needle


def test_a_side_that_does_not_build_is_said_plainly() -> None:
    doc = _validation("fht")
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "fail" and compat["reason"].startswith("base could not be "
                                                                       "installed")
    assert doc["findings"] == []  # the base does not build: nothing is blamed on the head
    assert any("Failed building wheel" in line for line in
               compat["detail"]["install"]["base"]["log_tail"])


def test_the_fix_is_measured_slower_where_it_does_more_and_same_where_not() -> None:
    rows = {row["label"].rsplit("|", 1)[1]: row for row in _validation("liger-fix")["perf_rows"]}
    assert rows["none"]["status"] == "regression" and rows["none"]["change_pct"] > 10
    assert rows["mean"]["status"] == "unchanged"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_it_is_bound_to_the_scenario_commits(name: str) -> None:
    doc = _validation(name)
    repo, base, head = EXPECTED[name]["repo"], EXPECTED[name]["base"], EXPECTED[name]["head"]
    branches = MANIFEST[repo]["branches"]
    assert (doc["repo"]["base"], doc["repo"]["head"]) == (branches[base]["commit"],
                                                          branches[head]["commit"])


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if "gate" in EXPECTED[n]))
def test_the_gate_joins_the_report_and_this_very_validation(name: str) -> None:
    gate = _load(EXPECTED[name]["gate"])
    jsonschema.Draft202012Validator(load_schema("gate.schema.json")).validate(gate)
    assert gate["verdict"] == EXPECTED[name]["gate_verdict"]
    validation = (RESULTS / EXPECTED[name]["validation"]).read_bytes()
    [run] = gate["device"]
    assert run["validation_sha256"] == hashlib.sha256(validation).hexdigest()
    assert run["verdict"] == EXPECTED[name]["verdict"] and run["arch"] == "sm_90"
    report = (RESULTS / EXPECTED[name]["report"]).read_bytes()
    assert gate["static"]["report_sha256"] == hashlib.sha256(report).hexdigest()
    assert gate["revisions"]["head"] == _validation(name)["repo"]["head"]
