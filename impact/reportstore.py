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
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impact import shortcuts
from impact.factstore import DEFAULT_LIMIT_BYTES, FactStore, Warn

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
                 "networkx", "jsonschema", "PyYAML")
# The top-level fields every report document has (impact/report.py, build_report).
_DOCUMENT_FIELDS = frozenset({
    "rows", "verdict", "device_runs", "pack_time", "emit", "coverage", "surface_map",
    "schema_version", "tool", "repository", "input", "revisions", "merge_bases", "views"})


@cache
def tool_digest() -> str:
    """The sha256 of what can change a report for the same inputs: every source and
    contract file of impact and emit, the interpreter and the dependencies' versions.
    Raises OSError when a source cannot be read (then nothing is stored)."""
    digest = hashlib.sha256(f"format {REPORT_FORMAT}\n".encode())
    digest.update(f"python {sys.version}\n".encode())
    for name in _DEPENDENCIES:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{name} {version}\n".encode())
    here = Path(__file__).resolve().parent
    for package in _PACKAGES:
        root = here.parent / package
        files = sorted(p for p in root.rglob("*") if p.suffix in _SUFFIXES and p.is_file()
                       and "__pycache__" not in p.parts
                       and not p.relative_to(here.parent).as_posix().startswith(
                           _NOT_READ_BY_REPORTS))
        if not files:
            raise OSError(f"no sources of the {package} package under {root}")
        for path in files:
            digest.update(f"{path.relative_to(here.parent).as_posix()}\n".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


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

    def __init__(self, root: Path | str, *, limit: int = DEFAULT_LIMIT_BYTES,
                 warn: Warn | None = None, create: bool = True) -> None:
        super().__init__(root, limit=limit, warn=warn, create=False)
        self.folder = self.root / REPORTS_FOLDER
        if create:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self._off(f"cannot create {self.folder}: {exc.strerror or exc}")

    def _off(self, why: str) -> None:
        """Off with a warning, unless the cache folder itself is unusable: the fact cache
        has said so already, and one cause gets one line."""
        if self.enabled:
            self.enabled = False
            if self.root.is_dir():
                self._warn(f"stored reports are off for this run ({why}); "
                           "the report is computed afresh, with the same result")

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


def _report_shaped(document: Any) -> bool:
    """Whether `document` has what a renderer and the exit code read: every top-level
    field, rows as a list and a verdict with its kind and exit code."""
    if not (isinstance(document, dict) and set(document) == _DOCUMENT_FIELDS):
        return False
    verdict = document["verdict"]
    return (isinstance(document["rows"], list) and isinstance(verdict, dict)
            and isinstance(verdict.get("kind"), str) and type(verdict.get("exit_code")) is int)
