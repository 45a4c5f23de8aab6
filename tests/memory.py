"""Scenarios built in memory: base and head trees as Snapshots, no git repository, no disk.

A check's unit test that looks at one check's rows on the head view needs only the two
trees, so it builds them here (the fixture tree's files with named edits applied) instead
of writing a repository; tests/harness.py runs checks and reports over them. This module
must not touch git or the disk: a scenario with target commits needs git's three-way
merge, so it is refused here and built on disk by the `build` fixture (tests/conftest.py)
instead.
"""

from __future__ import annotations

from impact.fixtures import Scenario
from impact.fixtures.edits import Edit, Files
from impact.git import Snapshot, Views


def tree_with(files: dict[str, bytes], *edits: Edit) -> Files:
    """A copy of `files` with `edits` applied in order."""
    out = dict(files)
    for edit in edits:
        edit(out)
    return out


def scenario_trees(scenario: Scenario) -> tuple[Files, Files]:
    """The scenario's base files and its head files (every head change applied in order)."""
    if scenario.target:
        raise ValueError("a scenario with target commits needs a merged view, which only "
                         "git's three-way merge gives: build it with the `build` fixture")
    base = {p: (c.encode() if isinstance(c, str) else c) for p, c in scenario.base.items()}
    head = dict(base)
    for change in scenario.head:
        change.apply(head)
    return base, head


def scenario_views(scenario: Scenario) -> Views:
    """The base and head views of `scenario`, as `open_views(base="base", head="head")`
    gives them for the same scenario built on disk."""
    base, head = scenario_trees(scenario)
    return Views.from_snapshots(Snapshot.from_files(base), Snapshot.from_files(head))

