"""`impact validate` end to end on a tiny CPU-only repository (a package with a pytest
test and a bench script), through the library (`impact.validate.run.validate`, what the
command line calls with the same options).

With no GPU backend the run must end INCONCLUSIVE with NO_GPU. With recorded samples (the
documented test seam IMPACT_GPU_SAMPLES) the stages after the claim run on the CPU, so the
BLOCK and NEEDS_WORK paths are exercised; such a run can never be PASS (a recording is not a
device), and arch_coverage stays not-covered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from harness import refusal, rendered

from impact.contracts import load_schema
from impact.fixtures.scenario import Change, Scenario, build_repository
from impact.validate.run import Options, validate

SAMPLES = Path(__file__).parent / "data" / "gpu_samples"

MAP = """schema_version = 1
name = "tiny"
[[surface]]
kind = "tiny-op"
lane = "IMPACT"
language = "python"
patterns = ["pkg/*.py"]

[[device_tests]]
paths = ["pkg/*.py"]
tests = ["tests/test_{stem}.py", "tests/test_missing_{stem}.py"]
bench = ["python bench.py"]
package = "pkg"
"""

BASE = {
    ".impact/surface.toml": MAP,
    "pkg/__init__.py": "__version__ = '1.0'\nfrom pkg.add import add, COST_US\n",
    "pkg/add.py": "COST_US = 10.0\n\ndef add(a, b):\n    return a + b\n",
    "tests/test_add.py": ("from pkg import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\n"
                          "def test_zero():\n    assert add(0, 0) == 0\n"),
    "bench.py": ("import json\nfrom pkg import COST_US\n"
                 "for _ in range(3):\n"
                 "    print(json.dumps({'label': 'add|1|int', 'us': COST_US}))\n"),
}


def _repo(tmp_path: Path, head: dict, target: dict | None = None):
    scenario = Scenario(base=BASE, head=(Change("head", write=head),),
                        target=(Change("target", write=target),) if target else ())
    return build_repository(scenario, tmp_path / "repo")


def _code(options: Options) -> int:
    """Validate as `options` ask; the exit code the report records (the command line's)."""
    return int(validate(options)["process_exit_code"])


def _validate(tmp_path: Path, repo, *, tests=("tests/test_add.py",),
              bench=("python bench.py",), package: str | None = "pkg",
              target_tip: str | None = None) -> tuple[int, dict]:
    out = tmp_path / "validation_report.json"
    code = _code(Options(repo=str(repo.path), base=repo.base, head=repo.head,
                         target_tip=target_tip, tests=list(tests), bench=list(bench),
                         package=package, output=str(out), samples=2, interval=0,
                         lock_dir=str(tmp_path / "locks"), timeout=120))
    document = json.loads(out.read_text())
    jsonschema.Draft202012Validator(load_schema("validation_report.schema.json")).validate(
        document)
    assert document["process_exit_code"] == code
    return code, document


CONSISTENT = {"pkg/add.py": "COST_US = 10.0\n\ndef add(a, b):\n    return b + a\n"}
BROKEN = {"pkg/add.py": "COST_US = 10.0\n\ndef add(a, b):\n    return a - b\n"}
SLOW = {"pkg/add.py": "COST_US = 21.0\n\ndef add(a, b):\n    return a + b\n"}


def test_no_gpu_is_inconclusive_and_runs_nothing(tmp_path: Path, no_gpu) -> None:
    code, doc = _validate(tmp_path, _repo(tmp_path, CONSISTENT))
    assert (code, doc["verdict"], doc["degraded_mode"]) == (2, "INCONCLUSIVE", "NO_GPU")
    assert doc["stages"]["gpu_claim"]["status"] == "skip"
    assert doc["stages"]["correctness"]["status"] == "skip"
    assert doc["stages"]["perf"]["status"] == "skip"
    assert doc["arch_coverage"] == {} and doc["runtime_identity"] is None
    assert doc["stages"]["merge_sim"]["status"] == "pass"


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_a_clean_recorded_run_is_still_not_a_pass(tmp_path: Path, recorded) -> None:
    code, doc = _validate(tmp_path, _repo(tmp_path, CONSISTENT))
    assert (code, doc["verdict"]) == (2, "INCONCLUSIVE")
    assert doc["verdict_reasons"] == ["gpu_claim is skip, not pass"]
    assert doc["stages"]["gpu_claim"]["detail"]["source"] == "recorded-samples"
    assert doc["arch_coverage"] == {"sm_90": "not-covered"}
    for stage in ("merge_sim", "runtime_compat", "test_policy", "correctness", "perf"):
        assert doc["stages"][stage]["status"] == "pass", stage
    identity = doc["runtime_identity"]
    assert identity["module_path"].startswith(doc["repo"]["head_dir"])
    assert identity["module_version"] == "1.0"
    assert doc["stages"]["correctness"]["detail"]["stats"]["executed"] == 2


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_a_broken_head_is_blocked(tmp_path: Path, recorded) -> None:
    code, doc = _validate(tmp_path, _repo(tmp_path, BROKEN))
    assert (code, doc["verdict"]) == (1, "BLOCK")
    [blocker] = [f for f in doc["findings"] if f["severity"] == "blocker"]
    assert "test_add" in blocker["detail"] and "passes on base" in blocker["detail"]


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_a_slower_head_needs_work(tmp_path: Path, recorded) -> None:
    code, doc = _validate(tmp_path, _repo(tmp_path, SLOW))
    assert (code, doc["verdict"]) == (1, "NEEDS_WORK")
    [row] = doc["perf_rows"]
    assert row["status"] == "regression" and row["change_pct"] == pytest.approx(110.0)


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_a_failure_on_both_sides_is_a_note(tmp_path: Path, recorded) -> None:
    both = {**CONSISTENT, "tests/test_add.py": BASE["tests/test_add.py"]
            + "\ndef test_known_bad():\n    assert add(1, 1) == 3\n"}
    scenario = Scenario(base={**BASE, "tests/test_add.py": both["tests/test_add.py"]},
                        head=(Change("head", write=CONSISTENT),))
    repo = build_repository(scenario, tmp_path / "repo")
    _, doc = _validate(tmp_path, repo)
    assert not any(f["severity"] == "blocker" for f in doc["findings"])
    assert any(f["severity"] == "note" and "test_known_bad" in f["detail"]
               for f in doc["findings"])
    assert doc["verdict"] == "INCONCLUSIVE"  # recorded GPU; never BLOCK for this


def test_a_merge_conflict_is_inconclusive(tmp_path: Path, recorded) -> None:
    repo = _repo(tmp_path, BROKEN, target={"pkg/add.py": "COST_US = 11.0\n"})
    code, doc = _validate(tmp_path, repo, target_tip="target")
    assert doc["stages"]["merge_sim"]["status"] == "fail"
    assert doc["stages"]["merge_sim"]["detail"]["conflicts"] == ["pkg/add.py"]
    assert (code, doc["verdict"]) == (2, "INCONCLUSIVE")
    assert doc["stages"]["correctness"]["status"] == "skip"


def test_a_package_resolving_elsewhere_is_an_environment_fact(tmp_path: Path, recorded) -> None:
    code, doc = _validate(tmp_path, _repo(tmp_path, BROKEN), package="json")
    assert doc["stages"]["runtime_compat"]["status"] == "fail"
    assert doc["stages"]["correctness"]["status"] == "skip"
    assert (code, doc["verdict"]) == (2, "INCONCLUSIVE")  # nothing blamed on the author
    assert doc["findings"] == []


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_zero_executed_is_not_a_pass(tmp_path: Path, recorded) -> None:
    head = {**CONSISTENT, "tests/test_skip.py": "import pytest\n\n@pytest.mark.skip\n"
                                                "def test_s():\n    pass\n"}
    scenario = Scenario(base={**BASE, "tests/test_skip.py": head["tests/test_skip.py"]},
                        head=(Change("head", write=CONSISTENT),))
    repo = build_repository(scenario, tmp_path / "repo")
    _, doc = _validate(tmp_path, repo, tests=("tests/test_skip.py",))
    assert doc["stages"]["correctness"]["status"] == "skip"
    assert doc["runtime_identity"] is None


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_the_plan_drives_validate_and_is_bound_to_its_revisions(tmp_path: Path,
                                                                 recorded) -> None:
    repo = _repo(tmp_path, BROKEN)
    report = _plan(tmp_path, repo)
    plan = json.loads(report.read_text())
    [run] = plan["device_runs"]
    assert run["tests"] == ["tests/test_add.py"] and run["bench"] == ["python bench.py"]
    assert "tests/test_missing_add.py" in run["note"]  # named, not emitted
    out = tmp_path / "v.json"
    code = _code(Options(repo=None, base=None, head=None, from_report=str(report),
                         package="pkg", output=str(out), samples=1, interval=0,
                         lock_dir=str(tmp_path / "l")))
    doc = json.loads(out.read_text())
    assert (code, doc["verdict"]) == (1, "BLOCK")
    assert doc["test_selection"]["tests"] == ["tests/test_add.py"]
    assert doc["repo"]["head"] == repo.head
    # the same report against another head: refused with one line, nothing written
    out.unlink()
    code, err = refusal(lambda: validate(Options(
        repo=None, base=None, head=repo.base, from_report=str(report), package="pkg",
        output=str(out))))
    err = err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "the report is about head" in err[0]
    assert not out.exists()


def test_a_stale_report_is_deleted_before_anything_runs(tmp_path: Path, no_gpu) -> None:
    repo = _repo(tmp_path, CONSISTENT)
    out = tmp_path / "validation_report.json"
    out.write_text('{"verdict": "PASS"}')
    code, _ = refusal(lambda: validate(Options(repo=str(repo.path), base=repo.base,
                                               head="no-such-branch", output=str(out))))
    assert code == 3 and not out.exists()


def test_test_and_from_report_exclude_each_other(tmp_path: Path) -> None:
    code, err = refusal(lambda: validate(Options(repo=None, base=None, head=None,
                                                 from_report="x.json", tests=["t.py"])))
    assert code == 3 and "exclude each other" in err


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command to compare")
def test_patch_sha256_is_of_the_bytes_git_diff_prints(tmp_path: Path) -> None:
    import hashlib
    import subprocess

    from impact.validate.materialise import open_for_validation, patch_bytes

    repo = _repo(tmp_path, {**BROKEN, "tests/test_new.py": "def test_n():\n    pass\n"})
    views = open_for_validation(str(repo.path), repo.base, repo.head, None)
    ours, source = patch_bytes(views)
    theirs = subprocess.run(["git", "-C", str(repo.path), "diff", f"{repo.base}...{repo.head}"],
                            capture_output=True, check=True).stdout
    assert source == "git diff" and ours == theirs and hashlib.sha256(ours).hexdigest()


def test_without_git_the_patch_is_dulwichs_and_says_so(tmp_path: Path, monkeypatch) -> None:
    import shutil as shutil_module

    from impact.validate.materialise import open_for_validation, patch_bytes

    repo = _repo(tmp_path, {**BROKEN})
    views = open_for_validation(str(repo.path), repo.base, repo.head, None)
    monkeypatch.setattr(shutil_module, "which", lambda name: None)
    ours, source = patch_bytes(views)
    assert source == "dulwich" and ours.startswith(b"diff --git ")


def _plan(tmp_path: Path, repo) -> Path:
    """The JSON report of base -> head (its device_runs are the plan), written to a file."""
    report = tmp_path / "r.json"
    report.write_text(rendered(repo, "json", base=repo.base, head=repo.head))
    return report


def _from_report(tmp_path: Path, report: Path, **options) -> tuple[int, Path]:
    out = tmp_path / "v.json"
    code = _code(Options(repo=None, base=None, head=None, from_report=str(report),
                         output=str(out), samples=1, interval=0,
                         lock_dir=str(tmp_path / "l"), **options))
    return code, out


@pytest.mark.slow  # runs pytest and the bench on base and head
def test_the_maps_package_reaches_the_import_check_without_a_flag(tmp_path: Path,
                                                                   recorded) -> None:
    repo = _repo(tmp_path, BROKEN)
    report = _plan(tmp_path, repo)
    [run] = json.loads(report.read_text())["device_runs"]
    assert run["packages"] == ["pkg"]
    code, out = _from_report(tmp_path, report)  # no --package
    doc = json.loads(out.read_text())
    jsonschema.Draft202012Validator(load_schema("validation_report.schema.json")).validate(doc)
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "pass" and compat["reason"].startswith("pkg resolves inside")
    for side in ("base", "head"):  # the import check found pkg in each side's own folder
        origin = Path(compat["detail"]["origins"][side])
        assert origin == Path(doc["repo"][f"{side}_dir"]).resolve() / "pkg" / "__init__.py"
    assert doc["test_selection"]["package"] == "pkg"
    assert "device_runs of the report" in doc["test_selection"]["package_source"]
    assert doc["runtime_identity"]["module"] == "pkg"
    assert (code, doc["verdict"]) == (1, "BLOCK")  # the run went on to blame the head


def test_package_flag_wins_over_the_plan(tmp_path: Path, recorded) -> None:
    report = _plan(tmp_path, _repo(tmp_path, BROKEN))
    _, out = _from_report(tmp_path, report, package="json")
    doc = json.loads(out.read_text())
    assert (doc["test_selection"]["package"], doc["test_selection"]["package_source"]) == (
        "json", "--package")
    assert doc["stages"]["runtime_compat"]["status"] == "fail"  # json is not in the tree


def test_a_plan_naming_no_package_skips_the_import_check(tmp_path: Path, recorded) -> None:
    report = _plan(tmp_path, _repo(tmp_path, BROKEN))
    plan = json.loads(report.read_text())
    plan["device_runs"][0]["packages"] = []
    report.write_text(json.dumps(plan))
    code, out = _from_report(tmp_path, report)
    doc = json.loads(out.read_text())
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "skip" and "[[device_tests]]" in compat["reason"]
    assert doc["test_selection"]["package"] is None
    assert doc["test_selection"]["package_source"].startswith("none")
    assert doc["stages"]["correctness"]["status"] == "skip"
    assert (code, doc["verdict"]) == (2, "INCONCLUSIVE")


def test_a_plan_naming_several_packages_is_refused(tmp_path: Path, recorded) -> None:
    report = _plan(tmp_path, _repo(tmp_path, BROKEN))
    plan = json.loads(report.read_text())
    plan["device_runs"][0]["packages"] = ["other", "pkg"]
    report.write_text(json.dumps(plan))
    code, err = refusal(lambda: _from_report(tmp_path, report))
    out = tmp_path / "v.json"
    err = err.strip().splitlines()
    assert code == 3 and len(err) == 1 and not out.exists()
    assert "other, pkg" in err[0] and "--package" in err[0]
