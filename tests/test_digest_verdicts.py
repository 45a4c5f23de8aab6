"""Layout edits read `Runtime impact: NONE` end to end; a code edit does not (issue 11).

Each layout edit changes bytes a reviewer sees in the diff but not the syntax tree (Python,
C++) or the parsed value (JSON, YAML); the report must fold it away. One code edit per
language beside it shows the same files are still read.
"""

from __future__ import annotations

import json

import pytest
from harness import coded_report, scenario

from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
UED = f"{e.DESCRIPTORS}/gfx950_attention_dense/gfx950_attention_dense.ued.json"
PROFILE = "projects/hipdnn/tools/IngestorGenerator/configs/gfx950_attention_dense.profile.yaml"
Q_PARAM = 'extras["sink_ptr"] = b.param("sink_ptr", PtrType(F32), noalias=True, readonly=True)'


def _reformat_json(doc: dict) -> dict:
    """The same value, keys in reverse order (written with another indent below)."""
    return {key: doc[key] for key in reversed(list(doc))}


def reformat_ued(files: dict[str, bytes]) -> None:
    doc = json.loads(files[UED])
    files[UED] = (json.dumps(_reformat_json(doc), indent=4) + "\n").encode()


LAYOUT = {
    "python trailing comma": e.replace(
        e.GFX950_DENSE, Q_PARAM, Q_PARAM.replace("readonly=True)", "readonly=True,)")),
    "python call re-wrapped": e.replace(
        e.GFX950_DENSE, Q_PARAM, Q_PARAM.replace(
            "(", "(\n        ", 1).replace("readonly=True)", "readonly=True,\n    )")),
    "python redundant parentheses": e.replace(
        e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
        "return ((spec.num_waves) * (64), 1, 1)"),
    "python docstring": e.replace(
        e.GFX950_DENSE, '"""The ABI, restated by hand from build_attention_dense."""',
        '"""The kernel ABI, restated by hand."""'),
    "python comment": e.edit_comment(e.GFX950_DENSE),
    "c++ trailing comma and comment": e.replace(
        e.GFX950_DENSE_PACK, '{"by_value", 4, 44, "seqlen_kv"},\n    };',
        '{"by_value", 4, 44, "seqlen_kv"}  // last\n    };'),
    "c++ whitespace": e.replace(
        e.GFX950_DENSE_PACK, '{"global_buffer", 8, 0, "q_ptr"},',
        '{ "global_buffer",8,0,"q_ptr" },'),
    "json key order and indent": reformat_ued,
    "yaml comment": e.replace(PROFILE, "launch_surface:", "# audited\nlaunch_surface:"),
}


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout_edits_read_none(name: str) -> None:
    code, doc = coded_report(scenario(TREE, LAYOUT[name]))
    assert code in (0, 1, 2, 3, 4, 5), code
    assert doc["verdict"]["line"] == "Runtime impact: NONE", [
        (r["contract"], r["status"], r["reason"]) for r in doc["rows"]]


@pytest.mark.parametrize("edit", [
    e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
              "return (spec.num_waves * 64 - 1, 1, 1)"),
    e.replace(e.GFX950_DENSE_PACK, '{"by_value", 4, 44, "seqlen_kv"},',
              '{"by_value", 4, 44, "seqlen_kv2"},'),
])
def test_code_edits_in_the_same_files_do_not(edit) -> None:
    code, doc = coded_report(scenario(TREE, edit))
    assert code in (0, 1, 2, 3, 4, 5), code
    assert doc["verdict"]["kind"] != "NONE"
