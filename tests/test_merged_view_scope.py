"""The merged view analyses the head's own change (issue 16, `--target-tip` on a stale
branch): a file the target tip alone changed is not parsed for a file-level row, since
any row it gave could only be pre-existing; the verdict is the same, and a race between
the head's copy and the tip's copy is still charged. A file both changed whose merged
copy is the tip's up to layout is the tip's too (`CheckContext.head_part`)."""

from __future__ import annotations

import harness
import pytest

from impact import extract
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files, tree_files

TREE = rocke_tree_files()
TIP_ONLY = (e.GFX942_DENSE, e.REQUIREMENTS, e.ENGINE_CMAKE)


def _merged_report(build, head: tuple, target: tuple, spy: list, base: dict = TREE) -> dict:
    """The JSON report of `head` merged onto `target`, recording in `spy` each (tree, file)
    whose facts were read."""
    repo = build(Scenario(base=base, head=(Change("head", edits=head),),
                          target=(Change("target", edits=target),)))
    real = extract.FactCache.facts

    def facts(self, snapshot, path):  # record which file of which tree was read
        spy.append((snapshot.label, path))
        return real(self, snapshot, path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(extract.FactCache, "facts", facts)
        return harness.report(repo, target_tip="target")


def test_tip_only_files_are_not_analysed_in_the_merged_view(build) -> None:
    spy: list = []
    report = _merged_report(build,
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


def test_a_race_with_the_tip_is_still_charged(build) -> None:
    """The head adds a builder parameter and the pack's list; the tip drops a launch
    argument of the same pack: in the merged tree the head's copies disagree with the
    tip's, and the row is charged to the head."""
    spy: list = []
    report = _merged_report(build,
                     head=(e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),),
                     target=(e.set_kdp_arch(e.GFX950_DENSE_KDP, ["gfx950", "gfx942"]),),
                     spy=spy)
    merged = [r for r in report["rows"] if r["view"] == "merged" and not r["preexisting"]]
    assert any(r["status"] == "mismatch" for r in merged)


# The tip edits a module constant of the builder file; the head rewords a comment further
# down the same file. Both merge cleanly.
TIP_BODY = e.replace(e.GFX950_DENSE, "NEG_BIG = -1.0e30", "NEG_BIG = -3.0e38")
TIP_COMMENT = e.replace(e.GFX950_DENSE, "NEG_BIG = -1.0e30",
                        "NEG_BIG = -1.0e30  # the tip's note")
HEAD_BODY = e.replace(e.GFX950_DENSE, "LOG2E = 1.4426950408889634", "LOG2E = 1.44269504")


def _merged_rows(report: dict, path: str) -> list[dict]:
    return [r for r in report["rows"] if r["view"] == "merged" and path in
            {s["file"] for s in r["sides"]} and not r["preexisting"]]


def test_a_head_layout_edit_on_a_file_the_tip_changed_is_not_charged_the_tips_code(
        build) -> None:
    """A stale branch's comment edit, merged onto a tip that changed the same file's code:
    the merged copy is the tip's up to layout, so the tip's code change is not the
    head's (it read NEEDS-DEVICE, as three flash-attention comment commits did with
    `--target-tip`)."""
    report = _merged_report(build, head=(e.edit_comment(e.GFX950_DENSE),),
                     target=(TIP_BODY,), spy=[])
    assert report["verdict"]["kind"] == "NONE", report["verdict"]
    assert not [r for r in _merged_rows(report, e.GFX950_DENSE)
                if r["status"] in ("changed", "mismatch")]


def test_the_heads_code_change_on_a_file_the_tip_changed_is_still_charged(
        build) -> None:
    """The converse: the head changes code, the tip only a comment of the same file. The
    merged copy differs from the tip's in code: the merged view charges the head."""
    report = _merged_report(build, head=(HEAD_BODY,), target=(TIP_COMMENT,), spy=[])
    assert report["verdict"]["kind"] == "NEEDS-DEVICE", report["verdict"]
    assert [r for r in _merged_rows(report, e.GFX950_DENSE) if r["status"] == "changed"]


def test_a_tip_copy_that_does_not_parse_keeps_the_file_the_heads(build) -> None:
    """Fail closed: when the tip's copy cannot be read, the merged copy cannot be shown
    to be the tip's; the merged view reads the file changed, never inert."""
    broken = e.replace(e.GFX950_DENSE, "NEG_BIG = -1.0e30", "NEG_BIG = = -1.0e30")
    report = _merged_report(build, head=(e.edit_comment(e.GFX950_DENSE),),
                     target=(broken,), spy=[])
    assert report["verdict"]["kind"] == "NEEDS-DEVICE", report["verdict"]
    assert [r for r in _merged_rows(report, e.GFX950_DENSE) if r["status"] == "changed"]


def test_a_stale_comment_edit_on_an_op_file_the_tip_changed_reads_none(build) -> None:
    """The bindings family, as flash-attention 766ed201, eefa86de and 79f317c7 read with
    `--target-tip`: the head rewords the FA2 interface's docstring, the tip changed code
    beyond the bindings in the same file. The merged view's `code beyond the bindings`
    row was the tip's code, charged to the head."""
    fa = tree_files("flash_attention_tree")
    interface = "flash_attn/flash_attn_interface.py"
    head = e.replace(interface, "positional calls into", "positional calls, made into")
    tip = e.replace(interface, "x.stride(-1) != 1 else x", "x.stride(-1) != 1 else x.clone()")
    report = _merged_report(build, head=(head,), target=(tip,), spy=[], base=fa)
    assert report["verdict"]["kind"] == "NONE", report["verdict"]
    # The tip's change is still what the merged tree holds: the same edit made by the
    # head itself is charged.
    report = _merged_report(build, head=(tip,), target=(head,), spy=[], base=fa)
    assert report["verdict"]["kind"] == "NEEDS-DEVICE", report["verdict"]


def test_the_tips_own_break_in_a_file_the_head_only_reworded_is_preexisting(
        build) -> None:
    """The tip adds a builder parameter without the C++ copies (the target branch is
    broken already); the head only rewords a comment in that builder. The merged tree
    holds the tip's break, listed as pre-existing: the head's part of the file is layout,
    so it neither causes nor charges it. The same parameter added by the head is its own
    break."""
    tip_break = e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")
    report = _merged_report(build, head=(e.edit_comment(e.GFX950_DENSE),),
                     target=(tip_break,), spy=[])
    assert report["verdict"]["kind"] == "NONE", report["verdict"]
    merged = [r for r in report["rows"] if r["view"] == "merged" and r["status"] == "mismatch"]
    assert merged and all(r["preexisting"] for r in merged)
    report = _merged_report(build, head=(tip_break,),
                     target=(e.edit_comment(e.GFX950_DENSE),), spy=[])
    assert report["verdict"]["kind"] == "BREAKS", report["verdict"]
