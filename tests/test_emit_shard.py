"""Slices of an emit: groups, the balanced deterministic assignment, coverage, the merge."""

from __future__ import annotations

import copy
import random

import pytest

from emit.shard import (
    Group,
    Uncovered,
    assemble,
    assign,
    coverage,
    groups_of,
    merge_files,
    parse_shard,
    pieces_of,
)
from impact.errors import BadUsage


def enumerated(*families: tuple[str, str, str, int]) -> list[dict]:
    return [{"id": f"{src}:{builder}@{arch}", "source": src, "arch": arch, "variants": n}
            for src, builder, arch, n in families]


ENUMERATED = enumerated(("k.a", "build_a", "gfx942", 5), ("k.a", "build_a", "gfx950", 900),
                        ("k.u", "build_r", "gfx950", 2), ("k.u", "build_s", "gfx950", 2),
                        ("k.t", "build_t", "gfx950", 4))


def test_groups_keep_a_modules_families_for_one_arch_together() -> None:
    groups = groups_of(ENUMERATED)
    assert [g.id for g in groups] == ["k.a@gfx942", "k.a@gfx950", "k.u@gfx950", "k.t@gfx950"]
    unified = groups[2]
    assert unified.families == ("k.u:build_r@gfx950", "k.u:build_s@gfx950")
    assert unified.variants == 4


def test_assignment_is_deterministic_balanced_and_covers_each_group_once() -> None:
    rng = random.Random(3)
    groups = [Group(f"g{i}", (f"f{i}",), rng.randint(1, 50)) for i in range(40)]
    slices = assign(groups, 4)
    shuffled = list(groups)
    rng.shuffle(shuffled)
    assert assign(shuffled, 4) == slices  # the input order does not matter
    ids = [g.id for part in slices for g in part]
    assert sorted(ids) == sorted(g.id for g in groups)
    loads = [sum(g.variants for g in part) for part in slices]
    assert max(loads) - min(loads) <= max(g.variants for g in groups)


def test_a_group_larger_than_the_rest_gets_a_slice_of_its_own() -> None:
    slices = assign(groups_of(ENUMERATED), 2)
    assert [g.id for g in slices[0]] == ["k.a@gfx950"]
    assert len(slices[1]) == 3


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_bad_shard_specs_are_refused(text: str) -> None:
    with pytest.raises(BadUsage):
        parse_shard(text)


def test_shard_spec() -> None:
    assert parse_shard("2/4") == (2, 4)


def _family(fid: str, source: str, arch: str, n: int) -> dict:
    return {"id": fid, "source": source, "arch": arch, "variants": [{"name": f"v{i}"}
                                                                     for i in range(n)]}


def _result(families: list[dict]) -> dict:
    return {"schema_version": 1, "flavor": None, "backend_pin": None, "enumerator": "kdp-json",
            "enumerator_error": None, "error": None, "skipped": [], "not_inspected": [],
            "enumerated": ENUMERATED, "families": families,
            "predicate_tables": [{"family": f["id"], "status": "done", "probes": 0,
                                  "findings": []} for f in families]}


FULL = _result([_family(f["id"], f["source"], f["arch"], f["variants"]) for f in ENUMERATED])


def test_coverage_names_missing_and_doubled_families() -> None:
    assert coverage(FULL) == ([], [])
    short = copy.deepcopy(FULL)
    del short["families"][1]
    missing, doubled = coverage(short)
    assert missing == [("k.a:build_a@gfx950", 900)] and doubled == []
    twice = copy.deepcopy(FULL)
    twice["families"].append(twice["families"][0])
    assert coverage(twice)[1] == [("k.a:build_a@gfx942", 5)]
    fewer = copy.deepcopy(FULL)
    fewer["families"][0]["variants"].pop()
    assert coverage(fewer)[0] == [("k.a:build_a@gfx942", 5)]


def test_pieces_reassemble_into_the_same_document_in_any_order() -> None:
    pieces = list(pieces_of(FULL).values())
    revision = {k: v for k, v in FULL.items() if k not in ("families", "predicate_tables")}
    assert assemble(revision, pieces[::-1]) == FULL
    with pytest.raises(Uncovered, match="missing"):
        assemble(revision, pieces[1:])
    disagreeing = dict(FULL, flavor="other")
    with pytest.raises(Uncovered, match="disagree on 'flavor'"):
        assemble(revision, [disagreeing])


def _slices(count: int) -> list[dict]:
    out = []
    parts = assign(groups_of(ENUMERATED), count)
    for index, part in enumerate(parts, 1):
        wanted = {fid for g in part for fid in g.families}
        result = _result([f for f in FULL["families"] if f["id"] in wanted])
        revision = {"commit": "a" * 40, "trees": {"r": "b" * 40}, "status": "done",
                    "reason": None, "network_isolated": True,
                    "protections": {"user": True, "network": True, "pid": True,
                                    "mount": index != 2, "detail": "x" if index == 2 else None},
                    "result": result}
        out.append({"schema_version": 1, "tool": {"name": "impact", "version": "1"},
                    "slice": {"index": index, "count": count},
                    "revisions": {"base": revision, "head": copy.deepcopy(revision)}})
    return out


def test_merging_every_slice_gives_the_whole_result_and_the_weakest_protections() -> None:
    slices = _slices(3)
    merged = merge_files(slices[::-1], ["c", "b", "a"])
    assert merged["merged"] == {"count": 3} and "slice" not in merged
    for label in ("base", "head"):
        assert merged["revisions"][label]["result"] == FULL
        assert merged["revisions"][label]["protections"]["mount"] is False
        assert merged["revisions"][label]["protections"]["detail"] == "x"


def test_merge_refuses_a_missing_or_doubled_slice_and_other_trees() -> None:
    slices = _slices(3)
    with pytest.raises(Uncovered, match="1, 2 of 3"):
        merge_files(slices[:2], ["a", "b"])
    with pytest.raises(Uncovered, match="1, 1, 2 of 3"):
        merge_files([slices[0], slices[0], slices[1]], ["a", "a", "b"])
    other = copy.deepcopy(slices[1])
    other["revisions"]["head"]["trees"] = {"r": "c" * 40}
    with pytest.raises(Uncovered, match="other head trees"):
        merge_files([slices[0], other, slices[2]], ["a", "b", "c"])
    whole = copy.deepcopy(slices[0])
    del whole["slice"]
    with pytest.raises(Uncovered, match="not a slice"):
        merge_files([whole], ["w"])


def test_a_slice_that_did_not_finish_leaves_the_merged_revision_without_a_result() -> None:
    slices = _slices(2)
    slices[1]["revisions"]["head"].update(status="timed-out", reason="ran past 900 s",
                                          result=None)
    merged = merge_files(slices, ["a", "b"])
    head = merged["revisions"]["head"]
    assert head["status"] == "timed-out" and head["result"] is None
    assert head["reason"] == "slice 2: ran past 900 s"
    assert merged["revisions"]["base"]["result"] == FULL
