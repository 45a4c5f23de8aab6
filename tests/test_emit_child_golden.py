"""The child's document, byte for byte, on the fixture trees: what a change to how the child
works (not to what it finds) must leave alone.

tests/data/emit_child_golden.json holds the sha256 of the document emit/child/ wrote for
each case below, recorded before the child's per-variant and per-probe work was cut (issue
16): the same families, variants, arguments, IR digests, probe counts and findings.
`IMPACT_REGOLD=1` records them again (for a change to the fixture tree or to what the child
reports; read the diff of the documents first).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from test_emit_child import TILED, UNIFIED, copy_tree, edit, run_child

GOLDEN = Path(__file__).resolve().parent / "data" / "emit_child_golden.json"


def _findings_tree(tree: Path) -> None:
    """The edits of test_predicate_findings: a builder and a sign finding."""
    edit(tree, TILED, "    elem = BF16 if spec.dtype",
         "    if spec.block_n > 64:\n        raise ValueError('block_n over 64 spills LDS')\n"
         "    elem = BF16 if spec.dtype")
    edit(tree, UNIFIED, '        return False, "spec must be a UnifiedAttentionReduceSpec"\n',
         '        return False, "spec must be a UnifiedAttentionReduceSpec"\n'
         '    if spec.num_query_heads <= 0:\n'
         '        return False, "num_query_heads must be positive"\n')


CASES = {"fixture": None, "findings": _findings_tree}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_child_writes_the_recorded_document(case, tmp_path) -> None:
    tree = copy_tree(tmp_path / "tree")
    if CASES[case] is not None:
        CASES[case](tree)
    doc, data, _ = run_child(tree, tmp_path / "out.json")
    got = hashlib.sha256(data).hexdigest()
    recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if os.environ.get("IMPACT_REGOLD"):
        recorded[case] = got
        GOLDEN.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    # Not vacuous: the document holds built kernels, and the findings case finds.
    kernels = [k for f in doc["families"] for v in f["variants"] for k in v["kernels"]]
    assert kernels and all(k["ir_sha256"] and k["args"] for k in kernels)
    if case == "findings":
        assert any(t["findings"] for t in doc["predicate_tables"])
    assert got == recorded.get(case), f"the child's {case} document changed"
