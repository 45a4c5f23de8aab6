"""Stored reports: a report asked for again with exactly the same inputs is read back.

Why: CI re-runs a job, a pre-commit hook checks the same commit twice, and a workflow asks
for the text report and then the JSON one; each would otherwise build both symbol graphs
again from cached facts (networkx alone takes a third of a second to import on a 2-core
machine). A report is a pure function of its inputs, so the document is kept under a key
that holds every one of them; the rendering (`--format`, `--verbose`) is not part of the
document and is redone each time.

What the key holds: the tool itself (the sha256 of every source and contract file of the
`impact` and `emit` packages but the demo's fixture trees, the Python version and each
dependency's version), the repository's location, the input form and the arguments as
spelled, every resolved revision and merge base, each view's old and new tree ids with its
conflicted paths and why it is unavailable, the work-tree entries skipped unread, the
surface map (name, source, reason and the sha256 of its bytes), the emit document (the
sha256 of the file's bytes, or of the canonical JSON of one the emitter just ran), whether
the head was trusted, and the shortcuts switch (`IMPACT_FULL_PATH`). A view built in
memory (no tree id) is never stored.

Maintainers: the store reuses the fact cache's machinery (impact/factstore.py): a
`reports/` folder beside `facts/` and `emit/`, the same size bound, atomic writes, and the
rule that an entry is used only when the full key inside it equals the key asked for and
its value's sha256 matches. A loaded document is checked for the shape the renderers
need; anything else is a miss, computed afresh and written again.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impact import shortcuts
from impact.contracts import REPORT_SCHEMA
from impact.factstore import FactStore, extractor_sources, extractor_version, sources_digest

if TYPE_CHECKING:
    from impact.git import Views
    from impact.surface import SurfaceMap

# Bump when the entry layout or the report's meaning changes without a source change.
REPORT_FORMAT = 1
REPORTS_FOLDER = "reports"
_PACKAGES = ("impact", "emit")
# The bundled fixture trees feed `impact demo` and the tests, never a report on a repository.
_NOT_READ_BY_REPORTS = ("impact/fixtures",)
_SUFFIXES = (".py", ".json", ".toml")
_DEPENDENCIES = ("dulwich", "merge3", "tree-sitter", "tree-sitter-cpp", "tree-sitter-cmake",
                 "tree-sitter-cuda", "networkx", "jsonschema", "PyYAML")


@cache
def _document_fields() -> frozenset[str]:
    """The top-level fields a report document has: the report schema's required ones
    (read as JSON: a stored report is checked without importing a schema library)."""
    text = resources.files("impact.contracts").joinpath(REPORT_SCHEMA).read_text("utf-8")
    return frozenset(json.loads(text)["required"])


@cache
def tool_digest() -> str:
    """The sha256 of what can change a report for the same inputs: the interpreter, the
    dependencies' versions, the extractor version (impact/factstore.py: the extractor
    sources, hashed once per process for both stores) and every other source and
    contract file of impact and emit. Raises OSError when a source cannot be read (then
    nothing is stored)."""
    impact_root = Path(__file__).resolve().parent
    top = impact_root.parent
    covered = {f"impact/{name}" for name in extractor_sources(impact_root)}
    files: list[str] = []
    for package in _PACKAGES:
        found = [p.relative_to(top).as_posix() for p in (top / package).rglob("*")
                 if p.suffix in _SUFFIXES and p.is_file() and "__pycache__" not in p.parts]
        if not found:
            raise OSError(f"no sources of the {package} package under {top / package}")
        files += [f for f in found if f not in covered and not f.startswith(_NOT_READ_BY_REPORTS)]
    header = (f"format {REPORT_FORMAT}\npython {sys.version}\n"
              f"extractor {extractor_version()}\n")
    return sources_digest(header, _DEPENDENCIES, top, sorted(files))


def report_key(views: Views, arguments: dict[str, str], surface: SurfaceMap, *,
               emit: dict[str, Any] | None, emit_file_sha256: str | None,
               trust_head: bool) -> dict[str, Any] | None:
    """The key of the report these inputs give, or None when one of them cannot be named
    exactly (a snapshot with no tree id, the tool's sources unreadable)."""
    view_keys = []
    for view in views.views:
        trees = [view.old.tree_id, view.new.tree_id if view.new is not None else "absent"]
        if any(tree is None for tree in trees):
            return None
        view_keys.append({"name": view.name, "trees": trees, "conflicts": list(view.conflicts),
                          "unavailable": view.unavailable})
    if emit is None:
        emit_digest = None
    elif emit_file_sha256 is not None:
        emit_digest = f"file:{emit_file_sha256}"
    else:
        canonical = json.dumps(emit, sort_keys=True, separators=(",", ":"))
        emit_digest = f"run:{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"
    try:
        tool = tool_digest()
    except OSError:
        return None
    return {
        "format": REPORT_FORMAT, "tool": tool, "location": views.location,
        "form": str(views.form), "arguments": dict(sorted(arguments.items())),
        "revisions": {role: [rev.spelled, rev.sha]
                      for role, rev in sorted(views.revisions.items())},
        "merge_bases": dict(sorted(views.merge_bases.items())), "views": view_keys,
        "skipped": [list(pair) for pair in views.skipped],
        "surface": {"name": surface.name, "source": surface.source, "sha256": surface.sha256,
                    "reason": surface.reason},
        "emit": emit_digest, "trust_head": trust_head, "shortcuts": shortcuts.enabled(),
    }


class ReportStore(FactStore):
    """Report documents by `report_key`, in `<cache folder>/reports`."""

    FOLDER = REPORTS_FOLDER
    OFF_TEXT = ("stored reports are off for this run ({why}); "
                "the report is computed afresh, with the same result")
    VERSIONED = False  # its key holds the whole tool's digest

    def _off(self, why: str) -> None:
        """Off with a warning, unless the cache folder itself is unusable: the fact cache
        has said so already, and one cause gets one line."""
        if self.root.is_dir():
            super()._off(why)
        self.enabled = False

    def load_report(self, key: dict[str, Any] | None) -> dict[str, Any] | None:
        """The document stored under `key`, or None (no key, absent, damaged, another
        key's, or not of a report's shape)."""
        if key is None:
            return None
        value = self.get(key)
        document = value.get("report") if value is not None else None
        if not _report_shaped(document):
            return None
        return document

    def save_report(self, key: dict[str, Any] | None, document: dict[str, Any]) -> None:
        if key is not None:  # in the document's own order: the renderers walk it
            self.put(key, {"report": document}, sort_keys=False)


def stored_or_built(store: ReportStore | None, views: Views, arguments: dict[str, str],
                    surface: SurfaceMap, build: Callable[[], dict[str, Any]], *,
                    emit: dict[str, Any] | None, emit_file_sha256: str | None,
                    trust_head: bool) -> dict[str, Any]:
    """The report these inputs give: read back from `store` when it holds it under their
    key, else `build()` and stored for next time. No store (`--no-cache`) always builds;
    so does a key that cannot be named, and then nothing is stored."""
    if store is None:
        return build()
    key = report_key(views, arguments, surface, emit=emit, emit_file_sha256=emit_file_sha256,
                     trust_head=trust_head)
    stored = store.load_report(key)
    if stored is not None:
        return stored
    report = build()
    store.save_report(key, report)
    store.close()
    return report


def _report_shaped(document: Any) -> bool:
    """Whether `document` has what a renderer and the exit code read: every top-level
    field, rows as a list and a verdict with its kind and exit code."""
    if not (isinstance(document, dict) and set(document) == _document_fields()):
        return False
    verdict = document["verdict"]
    return (isinstance(document["rows"], list) and isinstance(verdict, dict)
            and isinstance(verdict.get("kind"), str) and type(verdict.get("exit_code")) is int)
