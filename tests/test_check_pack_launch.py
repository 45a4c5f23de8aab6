"""A pack's KernelArgument list against its own launch() when no builder pairs with the
pack (issue 26, bug 4): both copies are in one file, and a launch() that disagrees with
the list beside it breaks whatever the builder says."""

from __future__ import annotations

from harness import report, verdict
from tiny_hipdnn import LAUNCH950, P950, SIG950, pack

from impact.fixtures import Change, Scenario
from impact.fixtures.edits import replace

BASE = {P950: pack(SIG950, LAUNCH950)}


def _doc(*edits) -> dict:
    return report(Scenario(base=BASE, head=(Change("head", edits=edits),)))


def _rows(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["contract"] == "pack-launch"]


def test_two_same_sized_scalars_swapped_in_the_launch_break_naming_both_lines() -> None:
    doc = _doc(replace(P950, "binding.scale, static_cast<int32_t>(p.batch)",
                       "static_cast<int32_t>(p.batch), binding.scale"))
    (row,) = [r for r in _rows(doc) if r["status"] == "mismatch"]
    assert verdict(doc) == "BREAKS" and not row["preexisting"]
    lines = {(s["file"], s["line"]) for s in row["sides"]}
    assert {p for p, _line in lines} == {P950} and len(lines) == 2
    assert row["details"]["argument"] == "static_cast<int32_t>(p.batch)"
    assert row["details"]["position"] == 5 and row["details"]["entry"] == "scale"


def test_a_launch_that_drops_an_argument_breaks_by_count() -> None:
    doc = _doc(replace(P950, ", static_cast<int32_t>(p.seqLenKv)", ""))
    (row,) = [r for r in _rows(doc) if r["status"] == "mismatch"]
    assert row["reason"] == "pack-launch-count-differs"
    assert (row["details"]["count"], row["details"]["entries"]) == (7, 8)


def test_a_list_entry_resized_against_the_launch_breaks() -> None:
    doc = _doc(replace(P950, 'KernelArgument{"by_value", I32, 40, "batch"}',
                       'KernelArgument{"by_value", PTR, 40, "batch"}'))
    (row,) = [r for r in _rows(doc) if r["status"] == "mismatch"]
    assert row["reason"] == "pack-launch-argument-kind-differs"


def test_an_edit_that_keeps_them_agreeing_is_no_mismatch() -> None:
    doc = _doc(replace(P950, "static_cast<int32_t>(p.batch)", "static_cast<int32_t>(p.batch + 0)"))
    assert not [r for r in doc["rows"] if r["status"] == "mismatch"]
    assert verdict(doc).startswith("NEEDS-DEVICE")
