"""`impact audit` and `impact queue` on the command line: what they print and exit with
(the rollup's codes: 1 when a tree drifts or a pull request or pair BREAKS)."""

from __future__ import annotations

import json
from pathlib import Path

from test_queue import PRS, TREE

from impact.cli import main
from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS, EXIT_NONE
from impact.fixtures import Scenario, build_queue_repository
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files


def test_audit_exits_by_its_verdict_and_writes_a_baseline(build, capsys, tmp_path) -> None:
    clean = build(Scenario(base=rocke_tree_files()))
    assert main(["audit", "base", "--repo", str(clean.path)]) == EXIT_NONE
    assert "Audit: NONE" in capsys.readouterr().out
    files = rocke_tree_files()
    e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")(files)
    drifted = build(Scenario(base=files))
    baseline = tmp_path / "baseline.json"
    code = main(["audit", "base", "--repo", str(drifted.path), "--format", "json",
                 "--baseline", str(baseline)])
    document = json.loads(capsys.readouterr().out)
    assert code == EXIT_BREAKS and document["verdict"]["line"] == "Audit: BREAKS"
    assert len(json.loads(baseline.read_text())["findings"]) == len(document["findings"])
    assert main(["audit", "base", "--repo", str(drifted.path), "--against",
                 str(baseline)]) == EXIT_NONE


def test_queue_exits_breaks_and_shards_merge(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    build_queue_repository(TREE, PRS, repo)
    assert main(["queue", "--repo", str(repo), "--target", "main", "pr/*"]) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert "pr/arg + pr/pin: BREAKS together" in out and "skipped as disjoint" in out
    parts = []
    for k in (1, 2, 3):
        path = tmp_path / f"s{k}.json"
        main(["queue", "--repo", str(repo), "--target", "main", "--shard", f"{k}/3",
              "--format", "json", "-o", str(path), "pr/*"])
        parts.append(str(path))
    capsys.readouterr()
    assert main(["queue", "--merge", *parts, "--format", "markdown"]) == EXIT_BREAKS
    assert "pr/arg + pr/pin" in capsys.readouterr().out
    assert main(["queue", "--merge", *parts[:2]]) == EXIT_BAD_INPUT
    assert "cannot merge the queue shards" in capsys.readouterr().err
    assert main(["queue", "--repo", str(repo), "pr/*"]) == EXIT_BAD_INPUT  # no --target
