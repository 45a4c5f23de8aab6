"""`impact demo` (the command line) runs from the installed package on the bundled tree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from impact.cli import main
from impact.contracts import REPORT_SCHEMA, validate
from impact.errors import EXIT_BAD_INPUT, EXIT_NONE
from impact.fixtures.edits import GFX950_DENSE, GFX950_DENSE_KDP


def test_demo_reports_the_pull_request_and_the_merge(capsys) -> None:
    assert main(["demo", "--format", "json"]) == EXIT_NONE
    doc = json.loads(capsys.readouterr().out)
    validate(doc, REPORT_SCHEMA)
    head, merged = doc["views"]
    assert head["modified"] == [GFX950_DENSE]
    assert merged["modified"] == sorted([GFX950_DENSE, GFX950_DENSE_KDP])
    assert merged["conflicts"] == []
    # The builder gained dropout_seed; the pack list, test pin and launch() did not.
    assert doc["verdict"]["kind"] == "BREAKS"
    assert any(r["contract"] == "kernargs" and r["status"] == "mismatch" for r in doc["rows"])


def test_demo_keep_leaves_a_repository_to_explore(tmp_path: Path, capsys) -> None:
    keep = tmp_path / "demo"
    assert main(["demo", "--keep", str(keep), "--verbose"]) == EXIT_NONE
    capsys.readouterr()
    assert main(["report", "--repo", str(keep), "--worktree", "--verbose"]) == EXIT_NONE
    out = capsys.readouterr().out
    assert "0 paths changed" in out  # the checkout is clean
    assert main(["demo", "--keep", str(keep)]) == EXIT_BAD_INPUT
    assert "not empty" in capsys.readouterr().err


def test_console_script_demo_outside_the_checkout(tmp_path: Path) -> None:
    script = shutil.which("impact", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the impact console script is not installed")
    proc = subprocess.run([script, "demo"], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == EXIT_NONE, proc.stderr
    assert "attention_dense.py" in proc.stdout
