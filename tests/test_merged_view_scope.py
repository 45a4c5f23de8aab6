"""The merged view analyses the head's own change (issue 16, `--target-tip` on a stale
branch): a file the target tip alone changed is not parsed for a file-level row, since
any row it gave could only be pre-existing; the verdict is the same, and a race between
the head's copy and the tip's copy is still charged."""

from __future__ import annotations

import json

import pytest

from impact import extract
from impact.cli import main
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
TIP_ONLY = (e.GFX942_DENSE, e.REQUIREMENTS, e.ENGINE_CMAKE)


def _report(build, capsys, head: tuple, target: tuple, spy: list) -> dict:
    repo = build(Scenario(base=TREE, head=(Change("head", edits=head),),
                          target=(Change("target", edits=target),)))
    real = extract.FactCache.facts

    def facts(self, snapshot, path):  # record which file of which tree was read
        spy.append((snapshot.label, path))
        return real(self, snapshot, path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(extract.FactCache, "facts", facts)
        main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
              "--target-tip", "target", "--format", "json", "--no-cache"])
    return json.loads(capsys.readouterr()[0])


def test_tip_only_files_are_not_analysed_in_the_merged_view(build, capsys) -> None:
    spy: list = []
    report = _report(build, capsys,
                     head=(e.edit_comment(e.GFX950_DENSE),),
                     target=(e.append(e.GFX942_DENSE, "\nTIP = 1\n"),
                             e.append(e.REQUIREMENTS, "numpy\n"),
                             e.append(e.ENGINE_CMAKE, "# tip\n")),
                     spy=spy)
    merged = [r for r in report["rows"] if r["view"] == "merged"]
    assert merged, "the head's own file still has its merged-view row"
    assert all(r["subject"] not in TIP_ONLY for r in merged)
    # The file-level contracts read no tip-only file (the graph may still read the tip's
    # Python as a counterpart, which is the race search).
    assert not [p for label, p in spy if label == "merged"
                and p == e.REQUIREMENTS]
    # The tip changed files the merged view compares, yet nothing of the tip is charged:
    # the head's comment edit alone decides.
    assert report["verdict"]["kind"] == "NONE", report["verdict"]


def test_a_race_with_the_tip_is_still_charged(build, capsys) -> None:
    """The head adds a builder parameter and the pack's list; the tip drops a launch
    argument of the same pack: in the merged tree the head's copies disagree with the
    tip's, and the row is charged to the head."""
    spy: list = []
    report = _report(build, capsys,
                     head=(e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),),
                     target=(e.set_kdp_arch(e.GFX950_DENSE_KDP, ["gfx950", "gfx942"]),),
                     spy=spy)
    merged = [r for r in report["rows"] if r["view"] == "merged" and not r["preexisting"]]
    assert any(r["status"] == "mismatch" for r in merged)
