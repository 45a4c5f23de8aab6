"""Scenarios on the synthetic rocKE tree: named edits on head or target, built as git repos."""

from __future__ import annotations

import json

import pytest

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import open_views

TREE = rocke_tree_files()


def changed_lines(path: str, edit: e.Edit) -> list[tuple[str, str]]:
    files = dict(TREE)
    edit(files)
    old = TREE[path].decode().splitlines()
    new = files[path].decode().splitlines()
    removed = [line for line in old if line not in new]
    added = [line for line in new if line not in old]
    return list(zip(removed, added, strict=False)) + [("", a) for a in added[len(removed):]]


NAMED_EDITS = [
    # (edit, path it touches, a fragment the new text holds)
    (e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"), e.GFX950_DENSE,
     'b.param("dropout_seed", I32)'),
    (e.drop_launch_argument(e.GFX950_DENSE_PACK, "seqlenKv"), e.GFX950_DENSE_PACK,
     "launcher.launch(q, k, v, o, scale, batch, seqlenQ);"),
    (e.add_launch_argument(e.GFX942_DENSE_PACK, "batch"), e.GFX942_DENSE_PACK,
     "launcher.launch(q, k, v, o, scale, batch);"),
    (e.add_pack_argument(e.GFX950_DENSE_PACK, "dropout_seed"), e.GFX950_DENSE_PACK,
     '{"by_value", 4, 48, "dropout_seed"},'),
    (e.edit_comment(e.GFX950_DENSE), e.GFX950_DENSE, e.DENSE_COMMENT_REWORDED),
    (e.rename_function(e.GFX950_DENSE, "attention_dense_grid", "attention_dense_launch_grid"),
     e.GFX950_DENSE, "def attention_dense_launch_grid("),
    (e.touch_dvc(), e.DVC_POINTER, "md5: 0123456789abcdef0123456789abcdef"),
]


@pytest.mark.parametrize(("edit", "path", "fragment"), NAMED_EDITS)
def test_named_edit_changes_only_its_file(build, edit, path, fragment) -> None:
    repo = build(Scenario(base=TREE, head=(Change("edit", edits=(edit,)),)))
    views = open_views(repo.path, base="base", head="head")
    diff = views.view("head").diff
    assert diff.modified == (path,) and not diff.added and not diff.removed
    assert fragment in views.head.read(path).decode()
    assert fragment not in views.base.read(path).decode()


def test_comment_edit_leaves_code_lines_alone() -> None:
    pairs = changed_lines(e.GFX950_DENSE, e.edit_comment(e.GFX950_DENSE))
    assert len(pairs) == 1
    old, new = pairs[0]
    assert old.strip().startswith("#") and new.strip().startswith("#")


def test_kdp_arch_edit_on_target_only(build) -> None:
    scenario = Scenario(
        base=TREE,
        head=(Change("h", edits=(e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),)),),
        target=(Change("t", edits=(e.set_kdp_arch(e.GFX950_DENSE_KDP, ["gfx950", "gfx942"]),)),),
    )
    repo = build(scenario)
    views = open_views(repo.path, base="base", head="head", target_tip="target")
    assert views.view("head").diff.modified == (e.GFX950_DENSE,)
    merged = views.view("merged")
    assert merged.diff.modified == tuple(sorted((e.GFX950_DENSE, e.GFX950_DENSE_KDP)))
    assert json.loads(merged.new.read(e.GFX950_DENSE_KDP))["arch"] == ["gfx950", "gfx942"]


def test_edit_whose_anchor_is_missing_fails_loudly() -> None:
    files = dict(TREE)
    with pytest.raises(e.AnchorMissing):
        e.replace(e.GFX950_DENSE, "this text is not in the file", "x")(files)
    with pytest.raises(e.AnchorMissing):
        e.drop_launch_argument(e.GFX950_DENSE_PACK, "notAnArgument")(files)
    with pytest.raises(e.AnchorMissing):
        e.add_pack_argument(e.GFX950_DENSE_PACK, "x", after="no_such_entry")(files)
    assert files == TREE
