"""The child's family budget is the worker's CPU time (issue 16): a busy machine does not
turn a build that fits into a timeout, and a predicate table past its budget stops where
it is, reads timed-out (Pack-time INCOMPLETE, never CLEAN) and leaves the later tables
their own run."""

from __future__ import annotations

import pytest
from test_emit_child import (
    DENSE950,
    HKP,
    SEGMENT_ID,
    TILED,
    TILED_ID,
    copy_tree,
    edit,
    families,
    run_child,
    table,
)

from impact.fold import unfinished_tables

# Each test runs children until a budget cuts them.
pytestmark = pytest.mark.slow

PRODUCER = f"{HKP}/descriptor-packaging/python/hkp_pack/rocke_compile.py"


def test_a_table_past_its_cpu_budget_stops_and_the_later_tables_still_run(tmp_path) -> None:
    tree = copy_tree(tmp_path / "tree")
    # The tiled predicate burns 50 ms of CPU a call: its table (some 300 probes) needs far
    # more than the budget; its four builds (one call each) fit.
    signature = "def supports_attention_tiled_2d(spec, *, arch: str) -> tuple[bool, str]:\n"
    edit(tree, TILED, signature,
         signature + "    import time\n    start = time.thread_time()\n"
         "    while time.thread_time() - start < 0.05:\n        pass\n")
    doc, _, elapsed = run_child(tree, tmp_path / "out.json", "--family-budget", "2")
    assert elapsed < 60
    assert all(f["status"] == "built" for f in families(doc).values())
    tiled = table(doc, TILED_ID)
    assert tiled["status"] == "timed-out" and tiled["probes"] == 0 and tiled["findings"] == []
    # The families probed after it (sorted by module) were not cut with it.
    assert table(doc, SEGMENT_ID)["status"] == "done" and table(doc, SEGMENT_ID)["probes"] > 0
    assert table(doc, DENSE950)["status"] == "done"
    # And the fold reads the head as unfinished: INCOMPLETE, never CLEAN.
    revision = {"status": "done", "result": doc}
    assert unfinished_tables({"revisions": {"base": revision, "head": revision}}) == [TILED_ID]


def test_a_build_that_waits_longer_than_the_budget_but_computes_little_is_built(
        tmp_path) -> None:
    tree = copy_tree(tmp_path / "tree")
    # Each tiled variant waits 0.6 s in the producer (four: 2.4 s of wall time, past a
    # one-second budget) while using almost no CPU.
    edit(tree, PRODUCER, "    from rocke.core.ir import KernelModule\n",
         "    from rocke.core.ir import KernelModule\n    import time\n"
         "    if 'tiled' in source:\n        time.sleep(0.6)\n")
    doc, _, _ = run_child(tree, tmp_path / "out.json", "--family-budget", "1")
    tiled = families(doc)[TILED_ID]
    assert tiled["status"] == "built" and len(tiled["variants"]) == 4
    assert all(v["status"] == "built" for v in tiled["variants"])
