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
from harness import emit, report, verdict
from tree_table import Table, named_both_sides, races_only
from tree_table import params as _params

from impact.fixtures import Change, Scenario
from impact.fixtures import scenarios_b as b

BY_NAME = {case.name: case for case in b.CASES}
TABLE = Table(b)
_repo, worktree_report, outcome = TABLE.repo, TABLE.worktree_report, TABLE.outcome


@pytest.fixture(scope="session")
def false_alarms(tmp_path_factory) -> set[str]:
    return TABLE.false_alarms(tmp_path_factory)


# -- expected failures today, each with the answer the tool gives ---------------------------
# Filled from running this module against the readers as they are; see the closing report.
XFAIL_BASE_HEAD: dict[str, str] = {}
XFAIL_TARGET: dict[str, str] = races_only(XFAIL_BASE_HEAD, b.CASES)
XFAIL_WORKTREE: dict[str, str] = dict(XFAIL_TARGET)


RACES = [c for c in b.CASES if c.race]


@pytest.mark.parametrize("case", _params(b.CASES, XFAIL_BASE_HEAD))
def test_base_head(build, false_alarms, case: b.Case) -> None:
    doc = report(_repo(build, case.head))
    assert outcome(doc, case, ignore=false_alarms) == case.expect


@pytest.mark.parametrize("case", _params(RACES, XFAIL_TARGET))
def test_target_tip_keeps_the_break(build, false_alarms, case: b.Case) -> None:
    doc = report(_repo(build, case.head, target=(b.UNRELATED,)), target_tip="target")
    assert outcome(doc, case, "merged", false_alarms) == b.BREAKS


@pytest.mark.parametrize(("case", "staged"),
                         _params(RACES, XFAIL_WORKTREE, ("unstaged",), ("staged",)))
def test_worktree(build, false_alarms, case: b.Case, staged: str) -> None:
    doc = worktree_report(build, case.head, staged=staged == "staged")
    assert outcome(doc, case, ignore=false_alarms) == b.BREAKS


RACE_REASON = ""


@pytest.mark.xfail(strict=True, reason=RACE_REASON) if RACE_REASON else (lambda f: f)
def test_merged_race(build) -> None:
    """Head adds an argument to the conv builder and every copy; target drops another list
    entry: the head alone is not BREAKS, the merge is."""
    doc = report(_repo(build, b.RACE_HEAD, target=b.RACE_TARGET), target_tip="target")
    assert verdict(doc) == b.BREAKS
    assert named_both_sides(doc, "merged", (b.CONV_PACK, b.CONV))
    assert not named_both_sides(doc, "head", (b.CONV_PACK, b.CONV))


NO_OP_REASON = ""


@pytest.mark.xfail(strict=True, reason=NO_OP_REASON) if NO_OP_REASON else (lambda f: f)
def test_consistent_tree_has_no_mismatch(false_alarms) -> None:
    assert false_alarms == set()


EMIT_CASES = [c for c in b.CASES if c.emitted]
XFAIL_EMIT: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize("case", _params(EMIT_CASES, XFAIL_EMIT))
def test_run_emit(build, case: b.Case) -> None:
    doc = report(_repo(build, case.head), run_emit=True)
    assert verdict(doc) == case.emitted


def built_variants(emit_doc: dict, revision: str) -> tuple[int, int]:
    """(built, enumerated) variants of one revision of an emit file."""
    families = emit_doc["revisions"][revision]["result"]["families"]
    variants = [v for f in families for v in f["variants"]]
    return sum(v["status"] == "built" for v in variants), len(variants)


SHIPPED = 34  # 6 gfx942 dense + 16 gfx950 dense + 4 tiled + 4 reduce + 4 conv
EMIT_REASON = ""


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=EMIT_REASON) if EMIT_REASON else (lambda f: f)
def test_emit_builds_every_shipped_variant(build, tmp_path) -> None:
    repo = build(Scenario(base=TABLE.files,
                          head=(Change("c", edits=b.COSMETIC["python comment"]),)))
    doc = emit(repo, tmp_path / "emit.json")  # in the test run's Session: no cache
    assert built_variants(doc, "base") == (SHIPPED, SHIPPED)


# -- the fixture itself: its own packer builds every variant, and the table's edits apply ----

def test_tree_b_packer_builds_every_variant(tmp_path) -> None:
    root = tmp_path / "tree"
    for path, data in TABLE.files.items():
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
    files = dict(TABLE.files)
    for edit in case.head:
        edit(files)
    assert files != TABLE.files


_IR_OF_DENSE = """
import json, sys
sys.path.insert(0, sys.argv[1])
from hkp_pack.descriptors import load_kdp
from hkp_pack.rocke_compile import compile_rocke_variant
from pathlib import Path
out = [compile_rocke_variant(v.kernel_source, arch="gfx950", llvm_flavor="llvm22").ir_sha256
       for v in load_kdp(Path(sys.argv[2]))]
print(json.dumps(out))
"""


def dense_950_ir(tmp_path: Path, edits: tuple) -> list[str]:
    """IR digests of every gfx950 dense variant, built by the tree's own producer."""
    files = dict(TABLE.files)
    for edit in edits:
        edit(files)
    root = tmp_path / f"tree{len(list(tmp_path.iterdir()))}"
    for path, data in files.items():
        Path(root, path).parent.mkdir(parents=True, exist_ok=True)
        Path(root, path).write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-I", "-c", _IR_OF_DENSE,
         str(root / b.HKP / "descriptor-packaging/python"), str(root / b.DENSE_950_KDP)],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_refactor_case_keeps_the_ir_and_the_ir_case_does_not(tmp_path) -> None:
    """The emit expectations of the table are facts of the tree, checked with its own packer."""
    base = dense_950_ir(tmp_path, ())
    assert len(base) == 16
    assert dense_950_ir(tmp_path, (b.INLINE_SOFTMAX,)) == base
    changed = dense_950_ir(tmp_path, (b.IR_CHANGE,))
    assert len(changed) == 16 and not set(changed) & set(base)
