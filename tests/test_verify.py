"""`impact verify`: one command, one locked GPU, one schema-checked artifact with the raw
output beside it. No GPU (or only a recording of one) is never a PASS."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from harness import refusal

from impact.contracts import load_schema
from impact.validate import gpus
from impact.validate.verify import VerifyOptions, pytest_counts, verify

SAMPLES = Path(__file__).parent / "data" / "gpu_samples"


def _verify(out: Path, *command: str, **options) -> int:
    """`impact verify` of `command` writing `out`, through the library; the exit code the
    artifact records (what the command line ends with)."""
    document = verify(VerifyOptions(command=list(command), output=str(out), **options))
    return int(document["process_exit_code"])


def _artifact(path: Path) -> dict:
    doc = json.loads(path.read_text())
    jsonschema.Draft202012Validator(load_schema("verify.schema.json")).validate(doc)
    return doc


def test_no_gpu_is_inconclusive_and_runs_nothing(tmp_path: Path, no_gpu) -> None:
    out = tmp_path / "verify.json"
    marker = tmp_path / "ran"
    code = _verify(out, sys.executable, "-c", f"open({str(marker)!r}, 'w')", samples=1)
    doc = _artifact(out)
    assert (code, doc["verdict"], doc["degraded_mode"]) == (2, "INCONCLUSIVE", "NO_GPU")
    assert not marker.exists() and doc["run"]["exit"] is None
    assert doc["command"].startswith(sys.executable)


def test_recorded_gpu_runs_the_command_pinned_but_is_never_a_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gpus.RECORDED_SAMPLES_ENV, str(SAMPLES / "idle.json"))
    (tmp_path / "test_ok.py").write_text(
        "import json, os\n\ndef test_ok():\n"
        "    print(json.dumps({'label': 'k', 'us': 3.0}))\n"
        "    assert os.environ['CUDA_VISIBLE_DEVICES'].startswith('GPU-')\n")
    out = tmp_path / "verify.json"
    monkeypatch.chdir(tmp_path)
    code = _verify(out, sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                   "test_ok.py", samples=1, lock_dir=str(tmp_path / "l"))
    doc = _artifact(out)
    assert (code, doc["verdict"]) == (2, "INCONCLUSIVE")
    assert doc["correctness"]["passed"] == 1 and doc["correctness"]["passed_all"]
    assert doc["perf"] == [{"label": "k", "us_median": 3.0, "runs": 1, "min_us": 3.0,
                            "max_us": 3.0}]
    log = Path(doc["raw_output"])
    assert log == out.with_name("verify.json.log") and "1 passed" in log.read_text()
    assert doc["versions"]["python"] == sys.version.split()[0]
    assert doc["repos"] == []  # tmp_path is no repository


def test_arch_filter_without_a_match_is_no_gpu(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gpus.RECORDED_SAMPLES_ENV, str(SAMPLES / "idle.json"))
    out = tmp_path / "verify.json"
    code = _verify(out, "true", arch="gfx950", samples=1)
    doc = _artifact(out)
    assert (code, doc["degraded_mode"]) == (2, "NO_GPU")


def test_pytest_summary_is_read() -> None:
    text = "....F\n===== 4 passed, 1 failed, 2 skipped in 3.10s =====\n"
    assert pytest_counts(text) == {"passed": 4, "failed": 1, "errors": 0, "skipped": 2}
    assert pytest_counts("no summary here\n") is None


def test_verify_without_a_command_is_bad_input() -> None:
    code, err = refusal(lambda: verify(VerifyOptions(command=[])))
    assert code == 3
    assert "needs a command" in err
