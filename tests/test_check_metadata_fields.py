"""A pack's matcher reads only fields its KMD declares (issue 26, bug 2).

The pack reaches its KMD through the UED whose graph_match symbol it declares (the UED's
`metadata` id), else by the family its file is named for. A field read through a constant,
a lambda or a helper that the KMD does not declare is a mismatch naming the field and both
files; one the base already read is pre-existing.
"""

from __future__ import annotations

import json

from harness import report, verdict
from tiny_hipdnn import KMD, MATCHER, P950, UED, kmd, ued

from impact.fixtures import Change, Scenario
from impact.fixtures.edits import replace

BASE = {P950: MATCHER, KMD: kmd(), UED: ued()}


def _doc(*edits, base: dict[str, str] = BASE) -> dict:
    return report(Scenario(base=base, head=(Change("head", edits=edits),)))


def _mismatches(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["contract"] == "metadata-field"
            and r["status"] == "mismatch" and not r["preexisting"]]


def test_a_field_constant_renamed_to_a_name_no_kmd_has_breaks() -> None:
    doc = _doc(replace(P950, '"block_m";', '"block_m_tile";'))
    (row,) = _mismatches(doc)
    assert verdict(doc) == "BREAKS"
    assert row["details"]["field"] == "block_m_tile"
    assert {s["file"] for s in row["sides"]} == {P950, KMD}
    assert "block_m_tile" in row["says"]


def test_a_field_the_kmd_drops_breaks_through_the_lambda() -> None:
    doc = _doc(replace(KMD, '    {"name": "head_size", "type": "int"},\n', ""))
    (row,) = _mismatches(doc)
    assert row["details"]["field"] == "head_size" and row["details"]["via"] == "intField"


def test_a_constant_renamed_with_its_value_kept_is_no_mismatch() -> None:
    doc = _doc(replace(P950, "BLOCK_M_FIELD = ", "BLOCK_M = "),
               replace(P950, "integerMetadata(kernel, BLOCK_M_FIELD)",
                       "integerMetadata(kernel, BLOCK_M)"))
    assert not [r for r in doc["rows"] if r["status"] == "mismatch"]


def test_a_read_the_base_already_lacked_is_preexisting() -> None:
    base = {**BASE, KMD: kmd(("dtype", "head_size"))}
    doc = _doc(replace(P950, "return kernel.getStringMetadata", "return  kernel.getStringMetadata"),
               base=base)
    rows = [r for r in doc["rows"] if r["contract"] == "metadata-field"]
    assert rows and all(r["preexisting"] for r in rows)
    assert verdict(doc) != "BREAKS"


def test_the_kmd_is_found_by_family_name_without_a_ued() -> None:
    doc = _doc(replace(P950, '"block_m";', '"block_m_tile";'), base={P950: MATCHER, KMD: kmd()})
    (row,) = _mismatches(doc)
    assert json.dumps(row["details"]).count("block_m_tile")


def test_a_new_read_whose_field_cannot_be_settled_reads_changed_never_inert() -> None:
    # The field comes from a struct member: nothing in the file says which field it is.
    doc = _doc(replace(P950, "           && integerMetadata(kernel, BLOCK_M_FIELD).has_value();",
                       "           && integerMetadata(kernel, BLOCK_M_FIELD).has_value()\n"
                       "           && kernel.getIntMetadata(problem.extraField) > 0;"))
    rows = [r for r in doc["rows"] if r["contract"] == "metadata-field"
            and r["status"] == "changed"]
    assert [r["details"]["construct"] for r in rows] == ["problem.extraField"]
    assert verdict(doc) not in ("NONE", "N/A")
