"""The change under review does not configure its own review (issue 13, first item).

A pull request cannot blind the report by shipping a surface map that matches nothing:
the map comes from the base. A map that classifies nothing is an error, never N/A.
"""

from __future__ import annotations

from importlib import resources

from harness import coded_report, outcome, report

from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
BLIND_MAP = b'''schema_version = 1
name = "blind"
[[surface]]
kind = "build"
lane = "BUILD"
language = "cmake"
patterns = ["nothing/matches/this"]
'''
ADD_ARGUMENT = e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")


def _change(change: Change, base: dict | None = None) -> Scenario:
    """`change` on the fixture tree (or on `base`); its report is built in memory."""
    return Scenario(base=base or TREE, head=(change,))


def test_a_map_the_head_adds_does_not_judge_that_head() -> None:
    code, doc = coded_report(_change(Change("argument, and a map that sees nothing",
                                            write={".impact/surface.toml": BLIND_MAP},
                                            edits=(ADD_ARGUMENT,))))
    assert (code, doc["verdict"]["kind"]) == (EXIT_BREAKS, "BREAKS")
    assert doc["surface_map"]["name"] == "hipdnn"


def test_a_map_the_head_edits_is_the_base_s_map_that_judges() -> None:
    ours = resources.files("impact.contracts").joinpath("hipdnn.surface.toml").read_bytes()
    base = {**TREE, ".impact/surface.toml": ours.replace(b'name = "hipdnn"', b'name = "ours"')}
    code, doc = coded_report(_change(Change("argument, and the map blinded",
                                            write={".impact/surface.toml": BLIND_MAP},
                                            edits=(ADD_ARGUMENT,)), base=base))
    assert (code, doc["verdict"]["kind"]) == (EXIT_BREAKS, "BREAKS")
    assert doc["surface_map"]["name"] == "ours"


def test_a_given_map_that_matches_nothing_is_an_error(tmp_path) -> None:
    change = Scenario(base=TREE, head=(Change("argument", edits=(ADD_ARGUMENT,)),))
    blind = tmp_path / "blind.toml"
    blind.write_bytes(BLIND_MAP)
    code, _, err = outcome(change, surface_map=str(blind))
    assert code == EXIT_BAD_INPUT
    assert err.startswith("impact: error: the surface map 'blind'") and err.count("\n") == 1


def test_the_map_edit_is_a_row_naming_the_patterns() -> None:
    doc = report(_change(Change("argument, and a map that sees nothing",
                                write={".impact/surface.toml": BLIND_MAP},
                                edits=(ADD_ARGUMENT,))))
    [row] = [r for r in doc["rows"] if r["contract"] == "surface-map"]
    assert row["status"] == "changed" and row["subject"] == ".impact/surface.toml"
    assert row["details"]["added"] == ["build: nothing/matches/this"]
    assert row["details"]["removed"] == []


def test_a_map_edit_alone_is_not_n_a() -> None:
    doc = report(_change(Change("a map that sees nothing",
                                write={".impact/surface.toml": BLIND_MAP})))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"
