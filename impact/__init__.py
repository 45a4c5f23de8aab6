"""impact: which hand-kept kernel contracts a git change touches, and whether it breaks them.

The library entry (impact/api.py): what the `impact` command does, one call each. Every
call takes keyword arguments, returns a result and raises an `ImpactError` for bad input.

- `report(repo=".", *, base=None, head=None, range=None, commit=None, worktree=False,
  target_tip=None, surface_map=None, emit=None, run_emit=False, untrusted_head=False,
  jobs=None, session=None, progress=None, bar=None, baseline=None) -> Report`: the report
  on one change, named as `impact report` names it (`base` and `head`, `range`, `commit`
  or `worktree`; `target_tip` adds the head merged onto that tip; `baseline` a file
  `audit` wrote, whose findings, copies unchanged, move no verdict); read back from the
  session's store when it holds the same inputs.
- `Report`: `.document` (the report as data; `--format json` prints it with its
  sentences, as `impact/contracts/report.schema.json` describes), `.verdict` (the
  Runtime impact line as data), `.exit_code` (decided by impact.rollup), `.rows`,
  `.verdict_line()`, and `.render(fmt="text", *, verbose=False)` for each format in
  `FORMATS`.
- `Session(cache_dir=None, *, use_cache=True, memory_of=None)`: what the reports run
  through it share (the fact, report and emit stores of the cache folder; the facts and
  tree indexes in memory, or those of the Session `memory_of`); `with session.active():`
  makes it the `current_session()`, which a call given no session runs in (else in a
  fresh one). `Progress` is the type of `progress`: it hears each stage's name.
- `emit(repo=".", *, output, base=None, head=None, range=None, commit=None,
  worktree=False, target_tip=None, surface_map=None, jobs=None, shard=None,
  timeout=900.0, family_budget=20.0, untrusted_head=False, session=None, bar=None)
  -> dict`: build every shipped variant at the base and the head in sandboxed children
  and write the emit file `report(emit=...)` folds; `merge_emits(slices, *, output)
  -> dict` joins the files of `shard=(K, N)`.
- `audit(repo=".", *, rev="HEAD", surface_map=None, baseline=None, against=None,
  session=None) -> dict`: every contract of one revision checked against itself (the
  drift it holds, both sides each); `baseline` writes its findings to that file.
- `queue(repo=".", *, target, prs, surface_map=None, shard=None, session=None) -> dict`:
  each pull request merged alone onto `target`, and each pair touching a contract
  subject in common merged together; `merge_queues(shards) -> dict` joins the documents
  of `shard=(K, N)`.
- `waive(repo=".", finding="", *, reason, expires=None, base=None, head=None, range=None,
  commit=None, worktree=False, target_tip=None, surface_map=None, session=None)
  -> tuple`: acknowledge a finding of the report on that change in the work tree's
  `.impact/waivers.toml`, with a reason and a last day; returns the file and subject.
- `read_facts(repo=".", *, paths, rev="HEAD", surface_map=None, session=None) -> dict`:
  the facts impact reads in some files; `explain(contract) -> str`: what a contract's
  check checks, and why.
- `write_output(text, output)`: write a rendering whole or not at all.

The stages under it, in the order data flows, for a caller that holds its own trees:

- `open_views(repo=".", *, base=None, head=None, range=None, commit=None, worktree=False,
  target_tip=None) -> Views` resolves the revisions: the base, head and merged `View`s,
  each a pair of `Snapshot`s (path -> blob, content read lazily) and their
  `SnapshotDiff`; `diff_snapshots(old, new)` compares any two snapshots.
- `map_for_views(choice, views) -> SurfaceMap` picks the surface map.
- `build_report(views, arguments, surface, emit=None, emit_source=None, *,
  emit_file_sha256=None, trust_head=True, caches=None, baseline=None, waivers=(),
  today=None) -> dict` turns them into the report document (plain data), never stored.
- `render_text(report, *, verbose=False)` and `render_json(report)` write that document;
  the JSON adds the sentences of rows and verdicts and is schema-checked.

Errors a user can fix are `ImpactError` subclasses, each with its exit code:
`NotARepository`, `UnknownRevision`, `NoMergeBase`, `ShallowHistory`,
`DamagedRepository`, `BadUsage`, `BadSurfaceMap`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from impact.errors import (
    BadUsage,
    DamagedRepository,
    ImpactError,
    NoMergeBase,
    NotARepository,
    ShallowHistory,
    UnknownRevision,
)

if TYPE_CHECKING:
    from impact.api import (
        FORMATS,
        Progress,
        Report,
        Session,
        audit,
        current_session,
        emit,
        explain,
        merge_emits,
        merge_queues,
        queue,
        read_facts,
        report,
        waive,
        write_output,
    )
    from impact.document import build_report
    from impact.git import Snapshot, SnapshotDiff, View, Views, diff_snapshots, open_views
    from impact.render import render_json, render_text
    from impact.surface import BadSurfaceMap, SurfaceMap, map_for_views

_LAZY = {
    **dict.fromkeys(("FORMATS", "Progress", "Report", "Session", "audit", "current_session",
                     "emit", "explain", "merge_emits", "merge_queues", "queue", "read_facts",
                     "report", "waive", "write_output"), "impact.api"),
    "build_report": "impact.document",
    **dict.fromkeys(("Snapshot", "SnapshotDiff", "View", "Views", "diff_snapshots",
                     "open_views"), "impact.git"),
    **dict.fromkeys(("render_json", "render_text"), "impact.render"),
    **dict.fromkeys(("BadSurfaceMap", "SurfaceMap", "map_for_views"), "impact.surface"),
}
"""The API's names and their modules, imported on first use (PEP 562): `impact --version`
and a report that touches no surface never import the parsers, the graph or jsonschema."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'impact' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "FORMATS",
    "BadSurfaceMap",
    "BadUsage",
    "DamagedRepository",
    "ImpactError",
    "NoMergeBase",
    "NotARepository",
    "Progress",
    "Report",
    "Session",
    "ShallowHistory",
    "Snapshot",
    "SnapshotDiff",
    "SurfaceMap",
    "UnknownRevision",
    "View",
    "Views",
    "audit",
    "build_report",
    "current_session",
    "diff_snapshots",
    "emit",
    "explain",
    "map_for_views",
    "merge_emits",
    "merge_queues",
    "open_views",
    "queue",
    "read_facts",
    "render_json",
    "render_text",
    "report",
    "waive",
    "write_output",
]
