"""The tests' one way to a report: the library entry (impact/api.py) on a scenario repository,
the same report built from a scenario's trees in memory, and the checks on in-memory views.

Why: a test asks what `impact report` says about a change; it needs the document, its rows
and verdict, or the error the change is refused with, never the command line's argument
parsing, stdout or stderr (those are the subject of the CLI's own tests, tests/test_*cli*.py,
the only tests that call `impact.cli.main`). A test of what the checks and the document say
needs no git at all: handed a `Scenario` (no target commits), a report is built from its
base and head trees in memory (tests/memory.py), with `memory` for its repository.

Maintainers: builds on `impact.api` (through the module, so a test may stand in for
`api.report`, as tests/test_fact_cache.py does), on `impact.document.build_report` for the
in-memory report and on `impact.errors.failure` for what a way in shows of an error;
decides nothing a report says. Touches only the repository or the views it is handed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from typing import Any

import memory

from impact import api
from impact.checks import Check, CheckContext, charged
from impact.contracts import REPORT_SCHEMA, validate
from impact.document import build_report
from impact.errors import ImpactError, failure
from impact.fixtures import BuiltRepository, Change, Scenario
from impact.fixtures.edits import Edit
from impact.git import Views
from impact.rows import Row
from impact.surface import SurfaceMap, load_surface_map, map_for_views

Repository = BuiltRepository | str | os.PathLike[str]
Document = dict[str, Any]

FORMS = ("base", "head", "range", "commit", "worktree")
"""The options that name the change; with none of them a report is on `base` -> `head`,
the branches a scenario repository has."""


# --- scenarios ----------------------------------------------------------------------------

def scenario(base: dict[str, Any], *edits: Edit) -> Scenario:
    """`base` with one head commit applying `edits`: the shape most scenario tests need."""
    return Scenario(base=base, head=(Change("change", edits=edits),))


# --- a report through the library entry ---------------------------------------------------

def _path(repo: Repository) -> str:
    return str(repo.path if isinstance(repo, BuiltRepository) else repo)


def _named(options: dict[str, Any]) -> dict[str, Any]:
    """`options`, on base -> head when none of them names the change."""
    if any(options.get(form) for form in FORMS):
        return options
    return {"base": "base", "head": "head", **options}


def _shown(exc: ImpactError) -> tuple[int, str]:
    """The exit code and the error line (with its newline) a way in shows for `exc`."""
    line, code = failure(exc)
    return code, line + "\n"


def run(source: Repository | Scenario, **options: Any) -> api.Report:
    """`impact.api.report` on the repository `source` with `options` (its keyword
    arguments), on base -> head when no option names the change; or the report of the
    scenario `source` built in memory (`options`: at most `surface_map`)."""
    if isinstance(source, Scenario):
        return _in_memory(source, **options)
    return api.report(_path(source), **_named(options))


def _in_memory(source: Scenario, *, surface_map: str | None = None) -> api.Report:
    views = memory.scenario_views(source)
    return api.Report(build_report(views, {}, map_for_views(surface_map, views)))


def as_json(found: api.Report) -> Document:
    """The report as `--format json` prints it (the document with its sentences), checked
    against the report schema."""
    document = json.loads(found.render("json"))
    validate(document, REPORT_SCHEMA)
    return document


def report(source: Repository | Scenario, **options: Any) -> Document:
    """The JSON report document of the change `options` name (see `run`)."""
    return as_json(run(source, **options))


def coded_report(source: Repository | Scenario, **options: Any) -> tuple[int, Document]:
    """The exit code `impact report` ends with (decided by impact.rollup) and the JSON
    report document."""
    found = run(source, **options)
    return found.exit_code, as_json(found)


def rendered(source: Repository | Scenario, fmt: str, *, verbose: bool = False,
             **options: Any) -> str:
    """The report in format `fmt`, as `impact report --format fmt` prints it."""
    return run(source, **options).render(fmt, verbose=verbose)


def refusal(call: Callable[[], object]) -> tuple[int, str]:
    """What a way in shows when `call` (a library entry function) refuses its input: the
    exit code and the one error line with its newline (`impact.errors.failure`). A call
    that refuses nothing fails the test."""
    try:
        call()
    except ImpactError as exc:
        return _shown(exc)
    raise AssertionError(f"{call} refused nothing")


def outcome(source: Repository | Scenario, fmt: str = "json", **options: Any,
            ) -> tuple[int, str, str]:
    """What a way in shows for the report: its exit code, the report in `fmt` and no error;
    or, for a refused input, the error's code, no report and the error line."""
    try:
        found = run(source, **options)
    except ImpactError as exc:
        code, error = _shown(exc)
        return code, "", error
    return found.exit_code, found.render(fmt), ""


def emit(repo: Repository, output: str | os.PathLike[str], **options: Any) -> Document:
    """`impact.api.emit` of `repo` into `output` (base -> head unless an option names the
    change); the emit document, read back from the file it wrote."""
    api.emit(_path(repo), output=output, **_named(options))
    with open(output, encoding="utf-8") as handle:
        return json.load(handle)


# --- reading a report document ------------------------------------------------------------

def statuses(document: Document) -> set[tuple[str, str, str]]:
    """Each row as (view, contract, status)."""
    return {(r["view"], r["contract"], r["status"]) for r in document["rows"]}


def verdict(document: Document) -> str:
    """The verdict line without its `Runtime impact: ` prefix."""
    return document["verdict"]["line"].removeprefix("Runtime impact: ")


def charged_rows(document: Document, status: str) -> list[Document]:
    """The rows of `status` charged to the change (not there before it)."""
    return [r for r in document["rows"] if r["status"] == status and not r["preexisting"]]


def rows_naming(document: Document, path: str) -> list[Document]:
    """The rows about `path`: its subject, or a side read from it."""
    return [r for r in document["rows"]
            if r["subject"] == path or any(side["file"] == path for side in r["sides"])]


# --- checks on in-memory views ------------------------------------------------------------

def context(source: Scenario | Views, surface: SurfaceMap | None = None) -> CheckContext:
    """A CheckContext over the scenario's base and head built in memory (no git), or over
    the views given; the hipDNN map unless another is given."""
    views = source if isinstance(source, Views) else memory.scenario_views(source)
    return CheckContext(views, surface or load_surface_map())


def check_rows(checks: Check | Iterable[Check], source: Scenario | Views,
               surface: SurfaceMap | None = None, *, charge: bool = False) -> list[Row]:
    """The rows `checks` give on `source` (see `context`), in the checks' order; with
    `charge`, each charged as the report charges it (`impact.checks.charged`: a row on
    copies the change left untouched is pre-existing)."""
    ctx = context(source, surface)
    rows = [row for check in ([checks] if isinstance(checks, Check) else checks)
            for row in check.check(ctx)]
    return [charged(row) for row in rows] if charge else rows


def by_subject(rows: Iterable[Row], view: str = "head") -> dict[str, str]:
    """Each subject's status in `view`."""
    return {r.subject: str(r.status) for r in rows if r.view == view}


def status_set(rows: Iterable[Row], contract: str, view: str = "head") -> set[str]:
    """The statuses `contract`'s rows have in `view`."""
    return {str(r.status) for r in rows if r.contract == contract and r.view == view}
