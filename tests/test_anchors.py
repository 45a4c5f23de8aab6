"""Findings sit on the lines the change changed (issue 27): every changed copy a charged
row names at the head is a line `git diff` marks, or a line beside a removal, or the row
says why not. Checked against git's own diff, not impact's."""

from __future__ import annotations

import re
import subprocess

import pytest
from harness import report

from impact.anchors import _changed_lines, _unslid
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures import scenarios_b as b
from impact.fixtures.tree import rocke_tree_files, tree_files
from impact.render.words.forms import delta, elided

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def git_marks(path: str) -> dict[str, set[int]]:
    """file → the head lines `git diff -U0 base head` adds, and the line after each
    removal (where GitHub shows a removed run beside the new file)."""
    text = subprocess.run(["git", "-C", path, "diff", "-U0", "--no-renames", "base", "head"],
                          capture_output=True, text=True, check=True).stdout
    out: dict[str, set[int]] = {}
    file = ""
    for line in text.splitlines():
        if line.startswith("+++ "):
            file = line[6:] if line.startswith("+++ b/") else ""
        hunk = _HUNK.match(line)
        if hunk and file:
            start, count = int(hunk[3]), int(hunk[4]) if hunk[4] is not None else 1
            out.setdefault(file, set()).update(range(start, start + count) if count
                                               else {start, start + 1})
    return out


def unplaced(doc: dict, marks: dict[str, set[int]]) -> list[str]:
    """The changed head copies of charged rows neither on a marked line nor said why."""
    out = []
    for row in doc["rows"]:
        if row["preexisting"] or row["status"] not in ("mismatch", "changed"):
            continue
        for side in row["sides"]:
            if side["role"] != "changed" or side["revision"] != row["view"]:
                continue
            if side["line"] in marks.get(side["file"], set()):
                continue
            if side["file"] in row["details"].get("unanchored", {}):
                continue
            out.append(f"{row['contract']}/{row['reason']} {side['file']}:{side['line']}")
    return out


CASES = [case for case in b.CASES if case.head]
TREE_B = tree_files(b.TREE)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_changed_copy_sits_on_a_line_git_marks(build, case) -> None:
    repo = build(Scenario(base=TREE_B, head=(Change("head", edits=case.head),)))
    doc = report(repo)
    assert unplaced(doc, git_marks(str(repo.path))) == []


ROCKE = rocke_tree_files()


def test_the_demo_break_points_at_the_added_b_param_not_the_def(build) -> None:
    repo = build(Scenario(base=ROCKE, head=(Change("head", edits=(
        e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),)),)))
    doc = report(repo)
    marks = git_marks(str(repo.path))
    assert unplaced(doc, marks) == []
    [line] = marks[e.GFX950_DENSE]
    added = subprocess.run(["git", "-C", str(repo.path), "show", f"head:{e.GFX950_DENSE}"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert 'b.param("dropout_seed"' in added[line - 1]
    mismatches = [r for r in doc["rows"] if r["status"] == "mismatch"]
    assert mismatches and all(
        any(s["file"] == e.GFX950_DENSE and s["line"] == line for s in r["sides"])
        for r in mismatches)


def test_a_removed_line_anchors_beside_the_removal(build) -> None:
    repo = build(Scenario(base=ROCKE, head=(Change("head", edits=(
        e.drop_launch_argument(e.GFX950_DENSE_PACK, "seqlenKv"),)),)))
    doc = report(repo)
    assert doc["verdict"]["kind"] == "BREAKS"
    assert unplaced(doc, git_marks(str(repo.path))) == []


def test_a_copy_whose_file_changed_elsewhere_says_why() -> None:
    """A copy the change did not edit, in a file it did, keeps its line and says so."""
    from impact.anchors import anchored
    from impact.git import Views
    from impact.git.snapshot import Snapshot
    from impact.kinds import ViewName
    from impact.rows import Role, Row, Side, Status

    old = Snapshot.from_files({"a.cpp": "int f(int a);\n\n\nint g();\n"}, label="base")
    new = Snapshot.from_files({"a.cpp": "int f(int a);\n\n\nint g(int b);\n"}, label="head")
    views = Views.from_snapshots(old, new)
    row = Row("bindings", ViewName.HEAD, "f", Status.CHANGED, "content-changed",
              sides=(Side("a.cpp", 1, ViewName.HEAD, Role.CHANGED),))
    [moved] = anchored([row], views)
    assert moved.sides[0].line == 1
    assert moved.details["unanchored"] == {"a.cpp": "elsewhere"}
    whole = Row("surface", ViewName.HEAD, "a.cpp", Status.CHANGED, "content-changed",
                sides=(Side("a.cpp", 0, ViewName.HEAD, Role.CHANGED),))
    assert anchored([whole], views)[0].sides[0].line == 4


def test_a_block_that_can_slide_marks_only_what_every_slide_adds() -> None:
    old = b"a\n}\n\nb\n"
    new = b"a\n}\n\nx\n}\n\nb\n"
    changed, removed = _changed_lines(old, new)
    assert removed == []
    # git marks lines 2-4 or 4-6 (the block `}`, ``, `x` or `x`, `}`, ``): both hold 4.
    assert 4 in changed and set(changed) <= {2, 3, 4, 5, 6}
    assert _unslid([b"a", b"b", b"a", b"b"], 2, 4) == (2, 4)


def test_forms_in_a_sentence_show_what_changed() -> None:
    long = "(q, k, v, out, lse, scale, causal, gen_)"
    assert elided(long, ["scale"]) == "(q, k, …, scale, …, gen_)"
    assert elided("(a, b)") == "(a, b)"
    assert delta(long, long[:-1] + ", int num_splits)") == \
        "(…, gen_) → (…, gen_, int num_splits)"
    assert delta("(a)", "(a, b)") == "(a) → (a, b)"
