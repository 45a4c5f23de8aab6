"""The validation reports from the H200 (benchmarks/gpu/h200/), committed as the proof of
`impact validate`: each fits its schema, carries the verdict benchmarks/gpu/expected.json
names, states the verdict its own stages and findings give, and is bound to the exact
commits the scenario builder writes (same ids on every machine) and to their diff."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
from pathlib import Path

import pytest
from script_loader import load_script

from impact.validate.document import schema_problems
from impact.validate.verdict import decide

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / "benchmarks" / "gpu"
RESULTS = GPU / "h200"
EXPECTED = json.loads((GPU / "expected.json").read_text(encoding="utf-8"))["scenarios"]


def _scenarios():
    return load_script(GPU / "scenarios.py", "gpu_scenarios_proof")


def _validation(name: str) -> dict:
    return json.loads((RESULTS / f"{name}.validation.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    where = tmp_path_factory.mktemp("gpu-proof") / "repo"
    return where, _scenarios().build(where)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_fits_its_schema_and_states_the_expected_verdict(name):
    document = _validation(name)
    assert schema_problems(document) == []
    assert document["verdict"] == EXPECTED[name]["validate"]
    verdict, code, _why = decide(document["stages"], document["findings"],
                                 document.get("runtime_identity"))
    assert (verdict, code) == (document["verdict"], document["process_exit_code"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_gpu_verdict_was_earned_on_a_gpu(name):
    document = _validation(name)
    if EXPECTED[name]["gpu"]:
        assert document["degraded_mode"] is None
        assert document["stages"]["gpu_claim"]["status"] == "pass"
        assert "runtime" in document["arch_coverage"].values()
        assert document["stages"]["correctness"]["status"] in {"pass", "fail"}
    else:
        assert document["degraded_mode"] == "NO_GPU"
        assert "runtime" not in document["arch_coverage"].values()
        assert document["verdict"] == "INCONCLUSIVE"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_static_report_states_the_expected_line(name):
    report = json.loads((RESULTS / f"{name}.report.json").read_text(encoding="utf-8"))
    assert report["verdict"]["line"] == EXPECTED[name]["report"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_is_bound_to_the_scenario_commits_and_their_diff(built, name):
    where, ids = built
    repo = _validation(name)["repo"]
    assert (repo["base"], repo["head"]) == (ids["base"], ids[name])
    if repo.get("patch_source", "dulwich") == "git diff":
        patch = subprocess.run(["git", "-C", str(where), "diff", f"{ids['base']}...{ids[name]}"],
                               check=True, capture_output=True).stdout
    else:  # written before the source was recorded: dulwich's writer, from the merge base
        from dulwich.patch import write_tree_diff
        from dulwich.repo import Repo

        out, store = io.BytesIO(), Repo(str(where))
        write_tree_diff(out, store.object_store, store[ids["base"].encode()].tree,
                        store[ids[name].encode()].tree)
        store.close()
        patch = out.getvalue()
    assert repo["patch_sha256"] == hashlib.sha256(patch).hexdigest()
