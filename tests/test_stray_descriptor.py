"""A descriptor outside the trees hipDNN keeps them in still counts (fail closed).

The hipDNN map anchors `descriptor` to the provider and hipdnn trees so a report never
walks the whole monorepo for them; a `*.kdp.json` (or any other descriptor suffix) that
lies elsewhere is the `descriptor-elsewhere` kind. Its change is no variant we can take,
but it may still ship: it must read `changed`, never inert, and the report never N/A or
NONE.
"""

from __future__ import annotations

import json

import pytest
from harness import coded_report, rows_naming

from impact.errors import EXIT_NEEDS_DEVICE
from impact.fixtures import Change, Scenario
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
KEPT = ("dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/descriptors/"
        "hip/pointwise_add/pointwise_add")
STRAY = "projects/miopen/kernels/pointwise_add"


@pytest.mark.parametrize("suffix", [".kdp.json", ".kmd.json", ".ued.json"])
def test_an_edited_stray_descriptor_reads_changed(suffix: str) -> None:
    kept = TREE[KEPT + suffix]
    base = {**TREE, STRAY + suffix: kept}
    edited = json.loads(kept)
    edited["impact_test_edit"] = 1
    code, doc = coded_report(Scenario(base=base, head=(Change(
        "edit a stray descriptor", write={STRAY + suffix: json.dumps(edited).encode()}),)))
    assert (code, doc["verdict"]["kind"]) == (EXIT_NEEDS_DEVICE, "NEEDS-DEVICE"), doc["rows"]
    rows = rows_naming(doc, STRAY + suffix)
    assert rows, doc["rows"]
    assert {row["status"] for row in rows} == {"changed"}, rows
    assert {row["details"].get("surface") for row in rows} == {"descriptor-elsewhere"}, rows


def test_a_new_malformed_stray_descriptor_is_not_none() -> None:
    code, doc = coded_report(Scenario(base=dict(TREE), head=(Change(
        "add a stray descriptor that is no JSON", write={STRAY + ".kdp.json": b"{not json"}),)))
    assert (code, doc["verdict"]["kind"]) == (EXIT_NEEDS_DEVICE, "NEEDS-DEVICE"), doc["rows"]
    rows = rows_naming(doc, STRAY + ".kdp.json")
    assert rows and all(row["status"] != "inert" for row in rows), doc["rows"]


def test_a_stray_descriptor_is_its_own_kind_and_not_a_variant_source() -> None:
    from impact.kinds import SurfaceKind
    from impact.surface import builtin_map

    surface = builtin_map("hipdnn")
    assert surface.describe(STRAY + ".kdp.json").kind == SurfaceKind.DESCRIPTOR_ELSEWHERE
    assert surface.describe(KEPT + ".kdp.json").kind == SurfaceKind.DESCRIPTOR
