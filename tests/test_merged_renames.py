"""The merged view and renames (issue 25, robustness): dulwich merges path by path and
detects no rename, so the merged tree must fail closed wherever git's (which follows
renames) could differ. A file renamed on one side and edited on the other is a
modify/delete conflict; a file added into a folder the other side renamed is conflicted
too, since git would move it with the folder and dulwich leaves it behind.
"""

from __future__ import annotations

import harness

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
FOLDER = f"{e.KERNELS}/gfx950"
MOVED = f"{e.KERNELS}/gfx950_moved"
NEW = f"{FOLDER}/attention_extra.py"


def _moved(files: dict) -> dict[str, str]:
    """Every file of FOLDER renamed into MOVED."""
    return {p: MOVED + p[len(FOLDER):] for p in files if p.startswith(FOLDER + "/")}


def _merged(document: dict) -> dict:
    return next(v for v in document["views"] if v["name"] == "merged")


def _conflict_rows(document: dict) -> list[dict]:
    return [r for r in document["rows"] if r["view"] == "merged" and r["contract"] == "conflict"]


def test_a_rename_on_the_tip_and_an_edit_on_the_head_is_a_conflict(build) -> None:
    """The head rewords a comment (inert on its own); the tip renames the file: the
    merged copy is not analysed as a clean merge, and the answer is never NONE."""
    renamed = e.GFX950_DENSE.replace("attention_dense", "attention_dense_renamed")
    head = Change("head", edits=(e.edit_comment(e.GFX950_DENSE),))
    repo = build(Scenario(base=TREE, head=(head,),
                          target=(Change("tip", rename={e.GFX950_DENSE: renamed}),)))
    document = harness.report(repo, target_tip="target")
    assert e.GFX950_DENSE in _merged(document)["conflicts"]
    assert _conflict_rows(document) and all(r["status"] == "changed"
                                            for r in _conflict_rows(document))
    assert document["verdict"]["kind"] not in ("NONE", "N/A")


def test_a_rename_on_the_head_and_an_edit_on_the_tip_is_a_conflict(build) -> None:
    renamed = e.GFX950_DENSE.replace("attention_dense", "attention_dense_renamed")
    repo = build(Scenario(base=TREE, head=(Change("head", rename={e.GFX950_DENSE: renamed}),),
                          target=(Change("tip", edits=(e.edit_comment(e.GFX950_DENSE),)),)))
    document = harness.report(repo, target_tip="target")
    assert e.GFX950_DENSE in _merged(document)["conflicts"]


def test_a_file_added_into_a_folder_the_tip_renamed_is_a_conflict(build) -> None:
    repo = build(Scenario(base=TREE, head=(Change("head", write={NEW: "X = 1\n"}),),
                          target=(Change("tip", rename=_moved(TREE)),)))
    document = harness.report(repo, target_tip="target")
    assert NEW in _merged(document)["conflicts"]
    assert any(NEW in [s["file"] for s in r["sides"]] for r in _conflict_rows(document))


def test_a_file_the_tip_adds_into_a_folder_the_head_renamed_is_a_conflict(build) -> None:
    repo = build(Scenario(base=TREE, head=(Change("head", rename=_moved(TREE)),),
                          target=(Change("tip", write={NEW: "X = 1\n"}),)))
    document = harness.report(repo, target_tip="target")
    assert NEW in _merged(document)["conflicts"]


def test_renames_that_meet_no_change_of_the_other_side_are_clean(build) -> None:
    """No false conflict: the tip renames a folder the head does not touch."""
    head = Change("head", edits=(e.edit_comment(e.GFX950_DENSE),))
    tip = Change("tip", rename={p: p.replace("/gfx942/", "/gfx942_moved/") for p in TREE
                                if p.startswith(f"{e.KERNELS}/gfx942/")})
    repo = build(Scenario(base=TREE, head=(head,), target=(tip,)))
    assert _merged(harness.report(repo, target_tip="target"))["conflicts"] == []
