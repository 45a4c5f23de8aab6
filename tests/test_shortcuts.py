"""The report's shortcuts change no report (issue 16): every scenario of the fixture
scenario table, and changes outside every surface, read byte-identical with the shortcuts
(the lazy per-kind tree index, the early N/A, the schema check of a shipped map skipped)
and with `IMPACT_FULL_PATH=1` (the whole tree classified up front, every check run, the
map checked against its schema).

The scenarios of `test_verdicts`, `test_check_bindings` and the kernel-argument table run
with and without the shortcuts, cached and uncached, in tests/test_fact_cache.py
(`ThreeWays`, its `full` run).
"""

from __future__ import annotations

import json

import pytest
from harness import run

from impact import shortcuts
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures import scenarios_b as b
from impact.fixtures.tree import rocke_tree_files, tree_files
from impact.session import Session
from impact.surface import BUILTIN_MAPS, builtin_map, parse_surface_map, schema_problems

TREE_B = tree_files(b.TREE)
ROCKE = rocke_tree_files()
OUTSIDE = "docs/notes/README.md"
OUTSIDE_CPP = "third_party/other/src/kernel.cpp"


def _same_both_ways(build, base: dict, head: tuple, target: tuple = ()) -> dict:
    """The JSON report (no cache) of `head` on `base` (merged onto `target`, if given), with
    the shortcuts and on the full path, each in a Session of its own (empty tree-index
    memos); requires the same exit code and bytes; the document."""
    repo = build(Scenario(base=base, head=(Change("head", edits=head),),
                          target=(Change("target", edits=target),) if target else ()))
    runs = []
    for full in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            if full:
                patch.setenv(shortcuts.ENV, "1")
            else:
                patch.delenv(shortcuts.ENV, raising=False)
            assert shortcuts.enabled() is not full
            found = run(repo, target_tip="target" if target else None,
                        session=Session(use_cache=False))
        runs.append((found.exit_code, found.render("json")))
    assert runs[0] == runs[1], (head, target)
    return json.loads(runs[0][1])


@pytest.mark.slow  # two reports of every case of the table
@pytest.mark.parametrize("case", b.CASES, ids=[c.name for c in b.CASES])
def test_every_scenario_b_case_reads_the_same_both_ways(build, case: b.Case) -> None:
    doc = _same_both_ways(build, TREE_B, case.head)
    assert doc["verdict"]["kind"]


@pytest.mark.slow  # two reports of every case of the table
@pytest.mark.parametrize("case", [c for c in b.CASES if c.race],
                         ids=[c.name for c in b.CASES if c.race])
def test_every_race_reads_the_same_with_a_target_tip(build, case: b.Case) -> None:
    _same_both_ways(build, TREE_B, case.head, (b.UNRELATED,))


def test_the_merged_race_reads_the_same(build) -> None:
    doc = _same_both_ways(build, TREE_B, b.RACE_HEAD, b.RACE_TARGET)
    assert doc["verdict"]["kind"] == "BREAKS"


def _outside(path: str, text: str) -> e.Edit:
    def edit(files: dict[str, bytes]) -> None:
        files[path] = text.encode()
    return edit


OUTSIDE_CHANGES = {
    "an added file outside every surface": (_outside(OUTSIDE, "notes\n"),),
    "a C++ file outside every surface": (_outside(OUTSIDE_CPP, "int f() { return 1; }\n"),),
}


@pytest.mark.parametrize("tree", ["rocke", "b"])
@pytest.mark.parametrize("name", sorted(OUTSIDE_CHANGES))
def test_a_change_outside_every_surface_reads_the_same(build, tree: str,
                                                       name: str) -> None:
    base = ROCKE if tree == "rocke" else TREE_B
    doc = _same_both_ways(build, base, OUTSIDE_CHANGES[name])
    assert doc["verdict"]["kind"] == "N/A"


def test_a_conflict_outside_every_surface_reads_the_same(build) -> None:
    base = {**ROCKE, OUTSIDE: b"one\n"}
    doc = _same_both_ways(build, base, (_outside(OUTSIDE, "head\n"),),
                  (_outside(OUTSIDE, "target\n"),))
    merged = next(v for v in doc["views"] if v["name"] == "merged")
    assert merged["conflicts"] == [OUTSIDE]


def test_a_surface_change_on_the_first_tree_reads_the_same(build) -> None:
    doc = _same_both_ways(build, ROCKE, (e.edit_comment(e.GFX950_DENSE),))
    assert doc["verdict"]["kind"] == "NONE"
    doc = _same_both_ways(build, ROCKE, (e.touch_dvc(),))
    assert doc["verdict"]["kind"] != "N/A"


@pytest.mark.parametrize("name", BUILTIN_MAPS)
def test_every_shipped_map_fits_its_schema(name: str) -> None:
    """The shipped maps skip the schema check at run time: this is where it happens."""
    import tomllib
    from importlib import resources

    data = resources.files("impact").joinpath("contracts", f"{name}.surface.toml").read_bytes()
    assert schema_problems(tomllib.loads(data.decode())) == []
    assert parse_surface_map(data, "test") == parse_surface_map(data, "test", shipped=True)
    assert builtin_map(name).sha256 == parse_surface_map(data, "x").sha256
