"""`impact gate`: a change to one document holding the static report and the device
evidence per arch, bound to the head; `gate matrix` and `gate join` for a CI that fans the
device runs out to GPU runners; and the example workflow that does so."""

from __future__ import annotations

import copy
import json
import re
import shlex
from pathlib import Path

import jsonschema
import yaml
from harness import refusal

from impact import gate
from impact.cli import build_parser, main
from impact.contracts import load_schema
from impact.fixtures.scenario import Change, Scenario, build_repository

SAMPLES = Path(__file__).parent / "data" / "gpu_samples"
WORKFLOW = Path(__file__).parent.parent / "docs" / "examples" / "impact-gate.yml"

MAP = """schema_version = 1
name = "tiny"
[[surface]]
kind = "tiny-op"
lane = "IMPACT"
language = "python"
patterns = ["pkg/*.py"]

[[device_tests]]
paths = ["pkg/*.py"]
tests = ["tests/test_{stem}.py"]
package = "pkg"
"""

BASE = {
    ".impact/surface.toml": MAP,
    "pkg/__init__.py": "from pkg.add import add\n",
    "pkg/add.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": "from pkg import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "README.md": "tiny\n",
}
BROKEN = {"pkg/add.py": "def add(a, b):\n    return a - b\n"}


def _repo(tmp_path: Path, head: dict):
    return build_repository(Scenario(base=BASE, head=(Change("head", write=head),)),
                            tmp_path / "repo")


def _gate(tmp_path: Path, repo, *extra: str) -> tuple[int, dict, str]:
    out = tmp_path / "gate.json"
    code = main(["gate", "--repo", str(repo.path), "--base", repo.base, "--head", repo.head,
                 "-o", str(out), "--samples", "1", "--interval", "0", "--lock-dir",
                 str(tmp_path), "--no-cache", *extra])
    doc = json.loads(out.read_text())
    jsonschema.Draft202012Validator(load_schema("gate.schema.json")).validate(doc)
    assert doc["process_exit_code"] == code
    return code, doc, str(out)


def test_a_device_failure_blocks_the_gate_with_both_sides_of_the_evidence(
        tmp_path: Path, recorded, capsys) -> None:
    repo = _repo(tmp_path, BROKEN)
    code, doc, out = _gate(tmp_path, repo)
    assert doc["static"]["verdict"] == "NEEDS-DEVICE"
    assert doc["static"]["findings"] and all(f["sides"] for f in doc["static"]["findings"])
    [run] = doc["device"]
    assert (run["arch"], run["verdict"]) == ("sm_90", "BLOCK")
    assert (code, doc["verdict"]) == (1, "BLOCK")
    assert doc["revisions"]["head"] == repo.head and doc["revisions"]["base"] == repo.base
    assert doc["patch_sha256"] == run["patch_sha256"]
    # the evidence is kept beside the gate, and the gate names it by digest
    validation = Path(out).with_name("gate.validation.json")
    assert run["file"] == str(validation)
    assert run["validation_sha256"] == gate.hashlib.sha256(validation.read_bytes()).hexdigest()
    assert capsys.readouterr().out.startswith("Gate: BLOCK (static NEEDS-DEVICE; device sm_90")


def test_without_a_gpu_the_gate_is_inconclusive_never_pass(tmp_path: Path, no_gpu) -> None:
    code, doc, _ = _gate(tmp_path, _repo(tmp_path, {"pkg/add.py": "def add(a, b):\n"
                                                    "    return b + a\n"}))
    assert doc["static"]["verdict"] == "NEEDS-DEVICE"
    assert doc["device"][0]["degraded_mode"] == "NO_GPU"
    assert (code, doc["verdict"]) == (2, "INCONCLUSIVE")


def test_a_change_off_the_surface_needs_no_device(tmp_path: Path, no_gpu) -> None:
    code, doc, out = _gate(tmp_path, _repo(tmp_path, {"README.md": "tiny, told\n"}))
    assert doc["static"]["verdict"] == "N/A" and doc["device"] == []
    assert (code, doc["verdict"]) == (0, "PASS")
    assert not Path(out).with_name("gate.validation.json").exists()


def _documents(tmp_path: Path, _recorded: None) -> tuple[dict, dict, Path, Path]:
    repo = _repo(tmp_path, BROKEN)
    _gate(tmp_path, repo)
    report = tmp_path / "gate.report.json"
    validation = tmp_path / "gate.validation.json"
    return (json.loads(report.read_text()), json.loads(validation.read_text()), report,
            validation)


def _passing(validation: dict) -> dict:
    """`validation` as a run on a real device that passed would state it."""
    doc = copy.deepcopy(validation)
    for stage in doc["stages"].values():
        stage["status"] = "info" if stage is doc["stages"]["diff_scan"] else "pass"
    doc.update(findings=[], verdict="PASS", process_exit_code=0, verdict_reasons=[])
    doc["runtime_identity"] = doc["runtime_identity"] or {"module": "pkg"}
    return doc


def test_join_binds_every_validation_to_the_reports_change(tmp_path: Path, recorded) -> None:
    _, validation, report_path, _ = _documents(tmp_path, recorded)
    other = copy.deepcopy(validation)
    other["repo"]["head"] = "0" * 40
    forged = tmp_path / "other.json"
    forged.write_text(json.dumps(other))
    code, err = refusal(lambda: gate.join(str(report_path), [str(forged)], []))
    assert code == 3 and "validates head 000000000000, not the report's" in err
    edited = copy.deepcopy(validation)
    edited.update(verdict="PASS", process_exit_code=0)  # its blocker finding stays
    forged.write_text(json.dumps(edited))
    assert main(["gate", "join", str(report_path), str(forged),
                 "-o", str(tmp_path / "g.json")]) == 3
    code, err = refusal(lambda: gate.join(str(report_path), [str(forged)], []))
    assert code == 3 and "states PASS but its stages and findings give BLOCK" in err
    assert not (tmp_path / "g.json").exists()


def test_the_verdict_of_static_and_device_together(tmp_path: Path, recorded) -> None:
    report, validation, _, _ = _documents(tmp_path, recorded)
    passed = ("v.json", _passing(validation), "a" * 64)
    # all-archs: a pass on the one arch required is a pass; a missing arch is not
    assert gate.assemble(report, "b" * 64, [passed], [])["verdict"] == "PASS"
    missing = gate.assemble(report, "b" * 64, [passed], ["sm_90", "gfx942"])
    assert missing["verdict"] == "INCONCLUSIVE"
    assert [p["arch"] for p in missing["pending"]] == ["gfx942"]
    # a report that names archs needs each of them, whatever the CI offers
    named = copy.deepcopy(report)
    named["verdict"].update(archs=["gfx950"], line="Runtime impact: NEEDS-DEVICE gfx950")
    other_arch = gate.assemble(named, "b" * 64, [passed], [])
    assert other_arch["verdict"] == "INCONCLUSIVE" and other_arch["required_archs"] == ["gfx950"]
    # a static break blocks without a device; a report off every surface passes without one
    broken = copy.deepcopy(report)
    broken["verdict"].update(kind="BREAKS", archs=[], line="Runtime impact: BREAKS", exit_code=1)
    assert gate.assemble(broken, "b" * 64, [passed], [])["verdict"] == "BLOCK"
    clean = copy.deepcopy(report)
    clean["verdict"].update(kind="NONE", archs=[], line="Runtime impact: NONE", exit_code=0)
    assert gate.assemble(clean, "b" * 64, [], [])["verdict"] == "PASS"
    # a BLOCK on an arch the report did not need still blocks
    blocked = ("w.json", validation, "c" * 64)
    assert gate.assemble(named, "b" * 64, [blocked], [])["verdict"] == "BLOCK"
    for doc in (missing, other_arch):
        gate.check(doc)


def test_matrix_lists_the_needed_archs_a_ci_can_run(tmp_path: Path, recorded, capsys) -> None:
    _, _, report_path, _ = _documents(tmp_path, recorded)
    capsys.readouterr()
    assert main(["gate", "matrix", str(report_path), "--arch", "sm_90",
                 "--arch", "gfx942"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["needs_device"] and plan["archs"] == ["gfx942", "sm_90"]


def _expressions(text: str) -> str:
    """A workflow's ${{ }} expressions as plain words, so its commands can be parsed."""
    return re.sub(r"\$\{\{[^}]*\}\}", "X", text)


def test_the_example_workflow_fans_out_by_arch_and_its_commands_parse() -> None:
    flow = yaml.safe_load(WORKFLOW.read_text())
    jobs = flow["jobs"]
    assert list(jobs) == ["report", "device", "gate"]
    assert jobs["device"]["needs"] == "report"
    assert "fromJSON(needs.report.outputs.archs)" in jobs["device"]["strategy"]["matrix"]["arch"]
    assert "matrix.arch" in str(jobs["device"]["runs-on"])
    assert set(jobs["gate"]["needs"]) == {"report", "device"}
    parser = build_parser()
    seen = set()
    for job in jobs.values():
        for step in job["steps"]:
            for line in _expressions(step.get("run", "")).splitlines():
                if not line.strip().startswith("impact "):
                    continue
                command = re.split(r" \|\| | > ", line.strip())[0]
                words = [w for w in shlex.split(command) if not w.startswith("$")]
                parser.parse_args(words[1:])
                seen.add(words[1] if words[1] != "gate" else " ".join(words[1:3]))
    assert seen == {"report", "validate", "gate matrix", "gate join"}
