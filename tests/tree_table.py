"""Running a fixture tree's scenario table (impact/fixtures/scenarios_*.py) through the
entry points: shared by the tests of every tree written in another hand.

Each table module names its tree (`TREE`), its rows (`CASES`, each with `head` edits, the
`expect`ed verdict and the `sides` a BREAKS must name) and its no-op edit (`CMAKE_COMMENT`).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from conftest import Build
from dulwich import porcelain
from harness import report, verdict

from impact.fixtures import BuiltRepository, Change, Scenario
from impact.fixtures.tree import tree_files

BREAKS = "BREAKS"


def mismatch_subjects(doc: dict) -> set[str]:
    return {r["subject"] for r in doc["rows"] if r["status"] == "mismatch"}


def named_both_sides(doc: dict, view: str, files: tuple[str, ...],
                     ignore: set[str] = frozenset()) -> bool:
    """A mismatch charged to the change, in `view`, naming every file in `files` with a line
    (rows on a subject in `ignore` do not count)."""
    for row in doc["rows"]:
        if row["view"] != view or row["status"] != "mismatch" or row["preexisting"]:
            continue
        if row["subject"] in ignore:
            continue
        named = {s["file"] for s in row["sides"] if isinstance(s.get("line"), int)}
        if set(files) <= named:
            return True
    return False


def params(cases, xfails: dict[str, str], *extra) -> list:
    """pytest params of `cases` (times each of `extra`), those named in `xfails` marked
    xfail(strict=True) with the wrong answer they give today, so a fix flips them."""
    out = []
    for case in cases:
        for more in extra or ((),):
            marks = ()
            key = case.name if not more else f"{case.name} [{more[0]}]"
            reason = xfails.get(key, xfails.get(case.name))
            if reason:
                marks = (pytest.mark.xfail(strict=True, reason=reason),)
            out.append(pytest.param(case, *more, marks=marks,
                                    id=case.name if not more else f"{case.name}-{more[0]}"))
    return out


def races_only(xfails: dict[str, str], cases) -> dict[str, str]:
    """The expected failures among the race rows: with an unrelated target commit the
    merged view reads as the head view does."""
    races = {c.name for c in cases if c.race}
    return {name: reason for name, reason in xfails.items() if name in races}


class Table:
    """One tree's table: its files, and each row's repository and report."""

    def __init__(self, scenarios: ModuleType) -> None:
        self.scenarios = scenarios
        self.files = tree_files(scenarios.TREE)

    def repo(self, build, head: tuple, *, target: tuple = ()) -> BuiltRepository:
        return build(Scenario(base=self.files, head=(Change("head", edits=head),),
                              target=(Change("target", edits=target),) if target else ()))

    def worktree_report(self, build, edits: tuple, *, staged: bool) -> dict:
        repo = build(Scenario(base=self.files), checkout=True)
        files = dict(self.files)
        for edit in edits:
            edit(files)
        changed = [p for p, data in files.items() if self.files.get(p) != data]
        assert changed
        for path in changed:
            Path(repo.path, path).write_bytes(files[path])
        if staged:
            porcelain.add(str(repo.path), [str(Path(repo.path, p)) for p in changed])
        return report(repo, worktree=True)

    def false_alarms(self, tmp_path_factory) -> set[str]:
        """Subjects a change that touches no contract reports as mismatched. The tree is
        consistent, so each is a false alarm; a BREAKS that only charges one of them to a
        change (because the change touched its lines) is right for the wrong reason."""
        build = Build(tmp_path_factory.mktemp("noop"))
        repo = build(Scenario(base=self.files,
                              head=(Change("noop", edits=self.scenarios.CMAKE_COMMENT),)))
        return mismatch_subjects(report(repo))

    def outcome(self, doc: dict, case, view: str = "head",
                ignore: set[str] = frozenset()) -> str:
        """What the report says, in the words a table cell needs."""
        said = verdict(doc)
        if case.expect == BREAKS and said == BREAKS and not named_both_sides(
                doc, view, case.sides, ignore):
            return "BREAKS without both sides as file:line"
        return said
