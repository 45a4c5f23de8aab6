"""Build the report document from resolved views.

Maintainers: returns plain data (dicts and lists, sorted); wording lives in
`impact/render/`. Nothing here reads git: the views already hold it all.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from impact.git import View, Views

SCHEMA_VERSION = "0.1"


def tool_version() -> str:
    try:
        return metadata.version("kernel-impact")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _view(view: View) -> dict[str, Any]:
    diff = view.diff
    return {
        "name": view.name,
        "old_tree": view.old.tree_id,
        "new_tree": view.new.tree_id if view.new is not None else None,
        "added": list(diff.added),
        "removed": list(diff.removed),
        "modified": list(diff.modified),
        "renamed": [{"from": old, "to": new} for old, new in diff.renamed],
        "conflicts": list(view.conflicts),
        "unavailable": view.unavailable,
    }


def build_report(views: Views, arguments: dict[str, str]) -> dict[str, Any]:
    """The report as data: what was resolved and what changed in each view."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "impact", "version": tool_version()},
        "repository": str(views.repository.path),
        "input": {"form": str(views.form), "arguments": dict(sorted(arguments.items()))},
        "revisions": {
            role: {"spelled": rev.spelled, "sha": rev.sha}
            for role, rev in sorted(views.revisions.items())
        },
        "merge_bases": dict(sorted(views.merge_bases.items())),
        "views": [_view(v) for v in views.views],
    }
