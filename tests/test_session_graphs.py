"""A Session keeps the networkx domains of each tree's symbol graph for every report run
through it: the second report on a tree builds nothing for it, reads the same, and still
names every file of that tree it could not read."""

from __future__ import annotations

import pytest
from test_fail_closed_readers import ADD_ARGUMENT, BARE, _failing

from impact.caches import Caches
from impact.checks import CheckContext, run_checks
from impact.fixtures import edits as e
from impact.git import Snapshot, Views
from impact.graph import core
from impact.surface import load_surface_map


def _head(*edits: e.Edit) -> dict[str, bytes]:
    files = dict(BARE)
    for edit in edits:
        edit(files)
    return files


def _rows(views: Views, caches: Caches) -> list[dict]:
    return [row.to_json() for row in run_checks(CheckContext(views, load_surface_map(),
                                                             caches=caches))]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tree ids whose networkx domains were built."""
    built: list[str] = []
    original = core.Nodes.__init__

    def counting(self, snapshot, cache) -> None:
        built.append(snapshot.tree_id)
        original(self, snapshot, cache)

    monkeypatch.setattr(core.Nodes, "__init__", counting)
    return built


def test_a_second_report_on_the_same_base_builds_only_its_head(builds) -> None:
    base = Snapshot.from_files(BARE, label="base")
    first = Views.from_snapshots(base, Snapshot.from_files(_head(*ADD_ARGUMENT)))
    second = Views.from_snapshots(base, Snapshot.from_files(
        _head(e.add_builder_param(e.GFX950_DENSE, "other_seed", "I32"))))
    shared = Caches()
    _rows(first, shared)
    assert builds.count(base.tree_id) == 1 and len(builds) == 2
    rows = _rows(second, shared)
    assert builds.count(base.tree_id) == 1 and len(builds) == 3
    assert rows == _rows(second, Caches())  # as a report made alone reads it


@pytest.mark.parametrize("how", ["missing", "corrupt"])
def test_a_shared_graph_still_names_the_files_its_build_could_not_read(builds, how) -> None:
    """The pack's blob cannot be read: the report that builds the graphs names it, and so
    does the next report, which takes the graphs from the Session."""
    views = Views.from_snapshots(_failing(dict(BARE), e.GFX950_DENSE_PACK, "base", how),
                                 _failing(_head(*ADD_ARGUMENT), e.GFX950_DENSE_PACK, "head",
                                          how))
    shared = Caches()
    first = _rows(views, shared)
    built = len(builds)
    second = _rows(views, shared)
    assert len(builds) == built  # nothing built again
    assert second == first
    assert [(r["contract"], r["subject"]) for r in second if r["contract"] == "unreadable"
            ] == [("unreadable", e.GFX950_DENSE_PACK)]
