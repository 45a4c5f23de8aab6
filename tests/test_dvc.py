"""`.dvc` pointer facts."""

from __future__ import annotations

import pytest

from impact.dvc import extract_dvc_facts
from impact.fixtures.edits import DVC_POINTER, touch_dvc
from impact.fixtures.tree import rocke_tree_files


def test_fixture_pointer_and_a_touched_one_differ() -> None:
    files = rocke_tree_files()
    before = extract_dvc_facts(DVC_POINTER, files[DVC_POINTER])
    touch_dvc()(files)
    after = extract_dvc_facts(DVC_POINTER, files[DVC_POINTER])
    assert [f.kind for f in before] == ["dvc-out"] and before[0].name == "gfx942.tar.gz"
    assert before[0].data["md5"] != after[0].data["md5"]


@pytest.mark.parametrize("source", [b"outs: [", b"\xff\xfe", b"outs: []\n", b"- 1\n",
                                    b"outs:\n- md5: x\n"])
def test_malformed_pointer_is_a_parse_failure(source: bytes) -> None:
    assert [f.kind for f in extract_dvc_facts("x.dvc", source)] == ["parse-failure"]
