"""impact: which hand-kept kernel contracts a git change touches, and whether it breaks them.

The library API, in the order data flows:

- `open_views(repo, base=..., head=..., range=..., commit=..., worktree=..., target_tip=...)`
  resolves the revisions and returns `Views`: the base, head and merged `View`s, each a
  pair of `Snapshot`s (path -> blob, content read lazily) and their `SnapshotDiff`;
  `diff_snapshots(old, new)` compares any two snapshots.
- `build_report(views, arguments)` turns views into the report document (plain data).
- `render_text(report)` and `render_json(report)` write it; JSON is schema-checked.

Errors a user can fix are `ImpactError` subclasses; each carries its exit code.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from impact.errors import ImpactError

if TYPE_CHECKING:
    from impact.git import Snapshot, SnapshotDiff, View, Views, diff_snapshots, open_views
    from impact.render import render_json, render_text
    from impact.report import build_report

_LAZY = {"Snapshot": "impact.git", "SnapshotDiff": "impact.git", "View": "impact.git",
         "Views": "impact.git", "diff_snapshots": "impact.git", "open_views": "impact.git",
         "render_json": "impact.render", "render_text": "impact.render",
         "build_report": "impact.report"}
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
    "ImpactError",
    "Snapshot",
    "SnapshotDiff",
    "View",
    "Views",
    "build_report",
    "diff_snapshots",
    "open_views",
    "render_json",
    "render_text",
]
