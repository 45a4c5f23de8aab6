"""The test infrastructure: the checkout is what runs, and in-memory views stand in for git."""

from __future__ import annotations

import json
from pathlib import Path

import harness
import memory
import pytest

import impact
from impact.checks.base import CheckContext
from impact.checks.kernargs import KernargsCheck
from impact.contracts import REPORT_SCHEMA, validate
from impact.document import build_report
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot, Views, open_views
from impact.git.snapshot import tree_id_of
from impact.git.views import EMPTY_TREE, MEMORY
from impact.render import render_json
from impact.surface import load_surface_map

SMALL = {"README.md": "hello\n", "src/a.py": "x = 1\n", "src/b/c.py": "y = 2\n"}
EDITED = Scenario(base=SMALL, head=(Change("edit", write={"src/a.py": "x = 3\n"},
                                           delete=("README.md",),
                                           rename={"src/b/c.py": "src/b/d.py"}),))


def test_the_tests_import_the_checkout(request: pytest.FixtureRequest) -> None:
    """A plain `pytest` after an edit runs the edited code, never a stale installed copy."""
    root = Path(request.config.rootpath).resolve()
    assert Path(impact.__file__).resolve().is_relative_to(root), (impact.__file__, root)


def test_memory_tree_ids_are_git_tree_ids(build) -> None:
    views = open_views(build(EDITED).path, base="base", head="head")
    mem = memory.scenario_views(EDITED)
    assert (mem.base.tree_id, mem.head.tree_id) == (views.base.tree_id, views.head.tree_id)
    assert mem.view("head").diff == views.view("head").diff
    assert tree_id_of({}) == EMPTY_TREE


def test_views_from_snapshots_name_memory_and_their_roles() -> None:
    base = Snapshot.from_files(SMALL, label="left")
    head = Snapshot.from_files({**SMALL, "src/a.py": "x = 3\n"}, label="right")
    merged = Snapshot.from_files({**SMALL, "src/a.py": "x = 4\n"})
    views = Views.from_snapshots(base, head, merged=merged, conflicts=["src/a.py"])
    assert views.repository is None and views.location == MEMORY
    assert (views.base.label, views.head.label) == ("base", "head")
    assert {role: rev.spelled for role, rev in views.revisions.items()} == {
        "base": "memory:base", "head": "memory:head", "target_tip": "memory:merged"}
    assert views.revisions["head"].sha == head.tree_id
    merged_view = views.view("merged")
    assert merged_view is not None and merged_view.new is not None
    assert merged_view.new.label == "merged" and merged_view.conflicts == ("src/a.py",)
    assert merged_view.new.conflicted == frozenset({"src/a.py"})
    assert views.view("head").diff.modified == ("src/a.py",)
    assert views.merge_bases == {}


def test_report_of_memory_views_is_valid() -> None:
    views = memory.scenario_views(Scenario(base=rocke_tree_files(), head=(
        Change("head", edits=(e.add_builder_param(e.GFX950_DENSE, "a1", "I32"),)),)))
    doc = json.loads(render_json(build_report(views, {}, load_surface_map())))
    validate(doc, REPORT_SCHEMA)
    assert doc["repository"] == "memory"
    assert doc["revisions"]["head"]["spelled"] == "memory:head"
    assert doc["verdict"]["kind"] == "BREAKS"


def test_memory_scenario_refuses_a_merged_view() -> None:
    with pytest.raises(ValueError, match="three-way merge"):
        memory.scenario_views(Scenario(base=SMALL, target=(Change("t"),)))


def test_a_check_reads_the_same_rows_in_memory_as_from_git(build) -> None:
    scenario = Scenario(base=rocke_tree_files(), head=(Change("head", edits=(
        e.add_builder_param(e.GFX950_DENSE, "a1", "I32"),)),))
    surface = load_surface_map()
    on_disk = CheckContext(open_views(build(scenario).path, base="base", head="head"), surface)
    in_memory = harness.context(scenario, surface)
    git_rows = [r.to_json() for r in KernargsCheck().check(on_disk)]
    assert git_rows
    assert [r.to_json() for r in KernargsCheck().check(in_memory)] == git_rows
