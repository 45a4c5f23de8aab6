"""The third fixture tree (`rocke_tree_c`, written in a third hand) through every entry point.

Each row of `impact.fixtures.scenarios_c.CASES` runs as `--base/--head`; the race rows
also as a `--target-tip` merge and through `--worktree` (unstaged and staged), and the
rows with an emitted verdict with `--run-emit` (slow).  Cases the readers cannot settle
yet are marked xfail(strict=True) with the wrong answer they give today, so a fix flips
them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from harness import report, verdict
from tree_table import Table, named_both_sides, races_only
from tree_table import params as _params

from impact.fixtures import scenarios_c as b

BY_NAME = {case.name: case for case in b.CASES}
TABLE = Table(b)
_repo, worktree_report, outcome = TABLE.repo, TABLE.worktree_report, TABLE.outcome


@pytest.fixture(scope="session")
def false_alarms(tmp_path_factory) -> set[str]:
    return TABLE.false_alarms(tmp_path_factory)


# -- expected failures today, each with the answer the tool gives ---------------------------
# Filled from running this module against the readers as they are; see the closing report.
XFAIL_BASE_HEAD: dict[str, str] = {
    # A *_signature SignatureBuilder is paired with no copy, so one edited alone is compared
    # with nothing (builder vs its own signature: the survey branch's area).
    "rope_signature drops an entry alone": "reads NEEDS-DEVICE gfx950",
}
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
    head = report(_repo(build, b.RACE_HEAD))
    assert verdict(head) == "NEEDS-DEVICE gfx950"
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


SHIPPED = 14  # 4 conv + 4 norm + 3 softmax + 3 rope


def test_tree_c_packer_builds_every_variant(tmp_path) -> None:
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
    assert len(sorted((tmp_path / "out").rglob("*.ll"))) == SHIPPED


@pytest.mark.parametrize("case", b.CASES, ids=[c.name for c in b.CASES])
def test_every_edit_applies_and_changes_something(case: b.Case) -> None:
    files = dict(TABLE.files)
    for edit in case.head:
        edit(files)
    assert files != TABLE.files


_IR = """
import json, sys
sys.path[:0] = sys.argv[1:4]
from hkp_pack.descriptors import load_flat_input
from hkp_pack.rocke_compile import compile_rocke_variant
out = {}
for kdp, ukd in load_flat_input(sys.argv[4]).variants():
    arch = (ukd.get("arch") or kdp.doc["arch"])[0]
    out[ukd["name"]] = compile_rocke_variant(ukd["kernel_source"], arch=arch,
                                             llvm_flavor="llvm22").ir_sha256
print(json.dumps(out))
"""


def shipped_ir(tmp_path: Path, edits: tuple) -> dict[str, str]:
    """IR digest of every shipped variant, built by the tree's own producer."""
    files = dict(TABLE.files)
    for edit in edits:
        edit(files)
    root = tmp_path / f"tree{len(list(tmp_path.iterdir()))}"
    for path, data in files.items():
        Path(root, path).parent.mkdir(parents=True, exist_ok=True)
        Path(root, path).write_bytes(data)
    hkp = root / b.HKP
    done = subprocess.run(
        [sys.executable, "-I", "-c", _IR, str(hkp / "descriptor-packaging/python"),
         str(hkp / "rocke/library"), str(hkp / "rocke/platform/python"),
         str(root / b.ENGINE / "descriptors")],
        capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


IR_CASES = [c for c in EMIT_CASES if c.emitted == b.NONE or "changes the IR" in c.name]


@pytest.mark.parametrize("case", IR_CASES, ids=[c.name for c in IR_CASES])
def test_emit_expectations_are_facts_of_the_tree(tmp_path, case: b.Case) -> None:
    """A refactor row keeps every variant's IR; an IR-change row changes some (the
    table's emit expectations, checked with the tree's own packer)."""
    base, head = shipped_ir(tmp_path, ()), shipped_ir(tmp_path, case.head)
    assert len(base) == SHIPPED and set(head) == set(base)
    assert (head == base) == (case.emitted == b.NONE)
