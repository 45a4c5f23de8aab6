"""The second fixture tree (`rocke_tree_b`, written in another hand) through every entry point.

Each row of `impact.fixtures.scenarios_b.CASES` runs as `--base/--head`; the BREAKS rows
also as a `--target-tip` merge and through `--worktree` (unstaged and staged).  Cases the
readers cannot settle yet are marked xfail(strict=True) with the wrong answer they give
today, so a fix flips them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dulwich import porcelain

from impact.cli import main
from impact.contracts import REPORT_SCHEMA, validate
from impact.fixtures import Change, Scenario
from impact.fixtures import scenarios_b as b
from impact.fixtures.tree import tree_files

TREE = tree_files(b.TREE)
BY_NAME = {case.name: case for case in b.CASES}


def _json_report(argv: list[str], capsys) -> dict:
    main([*argv, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    validate(doc, REPORT_SCHEMA)
    return doc


def report(build, capsys, head: tuple, *, target: tuple = (), run_emit: bool = False) -> dict:
    repo = build(Scenario(base=TREE, head=(Change("head", edits=head),),
                          target=(Change("target", edits=target),) if target else ()))
    argv = ["report", "--repo", str(repo.path), "--base", "base", "--head", "head"]
    if target:
        argv += ["--target-tip", "target"]
    if run_emit:
        argv += ["--run-emit"]
    return _json_report(argv, capsys)


def worktree_report(build, capsys, edits: tuple, *, staged: bool) -> dict:
    repo = build(Scenario(base=TREE), checkout=True)
    files = dict(TREE)
    for edit in edits:
        edit(files)
    changed = [p for p, data in files.items() if TREE.get(p) != data]
    assert changed
    for path in changed:
        Path(repo.path, path).write_bytes(files[path])
    if staged:
        porcelain.add(str(repo.path), [str(Path(repo.path, p)) for p in changed])
    return _json_report(["report", "--repo", str(repo.path), "--worktree"], capsys)


def verdict(doc: dict) -> str:
    return doc["verdict"]["line"].removeprefix("Runtime impact: ")


def named_both_sides(doc: dict, view: str, files: tuple[str, ...]) -> bool:
    """A mismatch charged to the change, in `view`, naming every file in `files` with a line."""
    for row in doc["rows"]:
        if row["view"] != view or row["status"] != "mismatch" or row["preexisting"]:
            continue
        named = {s["file"] for s in row["sides"] if isinstance(s.get("line"), int)}
        if set(files) <= named:
            return True
    return False


def outcome(doc: dict, case: b.Case, view: str = "head") -> str:
    """What the report says, in the words a table cell needs."""
    said = verdict(doc)
    if case.expect == b.BREAKS and said == b.BREAKS and not named_both_sides(doc, view,
                                                                             case.sides):
        return "BREAKS without both sides as file:line"
    return said


# -- expected failures today, each with the answer the tool gives ---------------------------
# Filled from running this module against the readers as they are; see the closing report.
XFAIL_BASE_HEAD: dict[str, str] = {}
XFAIL_TARGET: dict[str, str] = {}
XFAIL_WORKTREE: dict[str, str] = {}


def _params(cases, xfails: dict[str, str], *extra) -> list:
    out = []
    for case in cases:
        for more in extra or ((),):
            marks = ()
            key = case.name if not more else f"{case.name} [{more[0]}]"
            reason = xfails.get(key, xfails.get(case.name))
            if reason:
                marks = (pytest.mark.xfail(strict=True, reason=reason),)
            out.append(pytest.param(case, *more, marks=marks,
                                    id=case.name if not more else f"{case.name}-{more[0]}"))
    return out


RACES = [c for c in b.CASES if c.race]


@pytest.mark.parametrize("case", _params(b.CASES, XFAIL_BASE_HEAD))
def test_base_head(build, capsys, case: b.Case) -> None:
    doc = report(build, capsys, case.head)
    assert outcome(doc, case) == case.expect


@pytest.mark.parametrize("case", _params(RACES, XFAIL_TARGET))
def test_target_tip_keeps_the_break(build, capsys, case: b.Case) -> None:
    doc = report(build, capsys, case.head, target=(b.UNRELATED,))
    assert outcome(doc, case, "merged") == b.BREAKS


@pytest.mark.parametrize(("case", "staged"),
                         _params(RACES, XFAIL_WORKTREE, ("unstaged",), ("staged",)))
def test_worktree(build, capsys, case: b.Case, staged: str) -> None:
    doc = worktree_report(build, capsys, case.head, staged=staged == "staged")
    assert outcome(doc, case) == b.BREAKS


RACE_REASON = ""


@pytest.mark.xfail(strict=True, reason=RACE_REASON) if RACE_REASON else (lambda f: f)
def test_merged_race(build, capsys) -> None:
    """Head adds an argument to the conv builder and every copy; target drops another list
    entry: the head alone is not BREAKS, the merge is."""
    doc = report(build, capsys, b.RACE_HEAD, target=b.RACE_TARGET)
    assert verdict(doc) == b.BREAKS
    assert named_both_sides(doc, "merged", (b.CONV_PACK, b.CONV))
    assert not named_both_sides(doc, "head", (b.CONV_PACK, b.CONV))


NO_OP_REASON = ""


@pytest.mark.xfail(strict=True, reason=NO_OP_REASON) if NO_OP_REASON else (lambda f: f)
def test_consistent_tree_has_no_mismatch(build, capsys) -> None:
    doc = report(build, capsys, b.COSMETIC["cmake comment"])
    assert [r["subject"] for r in doc["rows"] if r["status"] == "mismatch"] == []


EMIT_CASES = [c for c in b.CASES if c.emitted]
XFAIL_EMIT: dict[str, str] = {}


@pytest.mark.parametrize("case", _params(EMIT_CASES, XFAIL_EMIT))
def test_run_emit(build, capsys, case: b.Case) -> None:
    doc = report(build, capsys, case.head, run_emit=True)
    assert verdict(doc) == case.emitted


def built_variants(emit_doc: dict, revision: str) -> tuple[int, int]:
    """(built, enumerated) variants of one revision of an emit file."""
    families = emit_doc["revisions"][revision]["result"]["families"]
    variants = [v for f in families for v in f["variants"]]
    return sum(v["status"] == "built" for v in variants), len(variants)


SHIPPED = 34  # 6 gfx942 dense + 16 gfx950 dense + 4 tiled + 4 reduce + 4 conv
EMIT_REASON = ""


@pytest.mark.xfail(strict=True, reason=EMIT_REASON) if EMIT_REASON else (lambda f: f)
def test_emit_builds_every_shipped_variant(build, tmp_path) -> None:
    repo = build(Scenario(base=TREE, head=(Change("c", edits=b.COSMETIC["python comment"]),)))
    out = tmp_path / "emit.json"
    assert main(["emit", "--repo", str(repo.path), "--base", "base", "--head", "head",
                 "-o", str(out), "--no-cache"]) == 0
    doc = json.loads(out.read_text())
    assert built_variants(doc, "base") == (SHIPPED, SHIPPED)


# -- the fixture itself: its own packer builds every variant, and the table's edits apply ----

def test_tree_b_packer_builds_every_variant(tmp_path) -> None:
    root = tmp_path / "tree"
    for path, data in TREE.items():
        Path(root, path).parent.mkdir(parents=True, exist_ok=True)
        Path(root, path).write_bytes(data)
    hkp = root / b.HKP
    env = {**os.environ, "ROCKE_LLVM_FLAVOR": "llvm22", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-I", str(hkp / "descriptor-packaging/tools/hkp_pack.py"),
         "--source-root", str(root / b.ENGINE / "descriptors"), "--out-root",
         str(tmp_path / "out"), "--arches", "gfx942,gfx950", "--hipcc", "none"],
        capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"built {SHIPPED} rocKE variants"
    irs = sorted((tmp_path / "out").rglob("*.ll"))
    assert len(irs) == SHIPPED


@pytest.mark.parametrize("case", b.CASES, ids=[c.name for c in b.CASES])
def test_every_edit_applies_and_changes_something(case: b.Case) -> None:
    files = dict(TREE)
    for edit in case.head:
        edit(files)
    assert files != TREE
