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

from impact.errors import ImpactError
from impact.git import Snapshot, SnapshotDiff, View, Views, diff_snapshots, open_views
from impact.render import render_json, render_text
from impact.report import build_report

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
