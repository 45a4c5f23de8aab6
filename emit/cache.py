"""The cache of built variants: what a child wrote for one revision, kept between emits.

Maintainers: this module stores and loads JSON entries under `<cache>/emit`; it never runs
a child and never reads git. It reuses the fact cache's store (impact/factstore.py): the
folder, the least-recently-used size bound, `info`/`clear`, the temporary-file prefix that
eviction sweeps, and the rule that an entry is used only when the full key stored inside
it equals the key asked for. An entry is one header line (the key and the sha256 of the
value's bytes) and the value: a truncated, corrupt, foreign or stale entry is a miss,
built again and overwritten, never trusted. The value was checked against the child's
schema when its child wrote it; the runner checks a loaded piece's shape again (the
families of its group, each built, each table done) before use.

What the key holds: an entry's key (`revision_key`) is every input of the child that
is not a file of its tree: what the rules file the child reads is made from
(`emit.rules.rules_inputs`: the blob id of every file it is read from, the surface map's
digest, the readers' version), the root lists as the child is given them, the flavor
pin, the allow-listed environment (PATH, LANG, LC_*, ROCKE_*, HKP_*), the limits that can
change a result (address space, open files), whether the namespaces were asked for, the
Python version and executable, every distribution on the child's import path with its
version (the path as `emit.jail.key_import_path` finds it, a superset of the child's),
and the sha256 of every source the child and the sandbox run (emit/child/, the emit
package's own __init__ and emit/sandbox.py: impact's emit tool version).
Under that key ("plan" or "group:<id>") the entry holds up to CANDIDATES candidates, each
a value with the manifest of the tree files it was made from (emit/manifest.py: each
path the child's tree code opened, stat'ed, listed or scanned, by its state in git; a
group's manifest holds the plan's reads too, since its variants come from the
enumeration). A candidate is used only when its manifest holds for the revision asked
about, so a head that edits one family's module misses that family's group only (and
any group whose code read that module). A group the child could not record (no reads
file, a missing window) is not stored; one whose window was opaque is stored under the
tree ids of the whole roots. The family budget and the timeout are not in the key: a
piece with a timed-out or failed family or table is never stored, nor anything a child
built after one of its families or tables timed out.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from impact.factstore import FactStore

ENTRY_FORMAT = 3  # 3: per-group candidates with the manifest of what they read
CANDIDATES = 8    # manifests kept per key, newest first
EMIT_FOLDER = "emit"

def _tool_sources(here: Path) -> list[str]:
    """The sources the child and the jail run, relative to the emit package's folder."""
    child = sorted(p.relative_to(here).as_posix() for p in (here / "child").glob("*.py"))
    return ["__init__.py", *child, "sandbox.py"]


@functools.cache
def tool_fingerprint(import_path: tuple[str, ...]) -> dict[str, Any]:
    """The child's tools: its and the sandbox's sources, the interpreter, and every
    distribution the child could import (name and version), as a JSON-ready record."""
    here = Path(__file__).resolve().parent
    sources = {name: hashlib.sha256((here / name).read_bytes()).hexdigest()
               for name in _tool_sources(here)}
    dists = sorted({(d.metadata["Name"] or "?", d.version or "?")
                    for d in metadata.distributions(path=list(import_path))})
    return {"sources": sources, "python": sys.version,
            "executable": os.path.realpath(sys.executable),
            "cache_tag": sys.implementation.cache_tag,
            "distributions": [f"{name}=={version}" for name, version in dists]}


def revision_key(*, python_roots: Iterable[str],
                 descriptor_roots: Iterable[str], rules_inputs: Mapping[str, Any],
                 flavor: str | None, environment: Mapping[str, str],
                 limits: Mapping[str, int], isolate: bool,
                 tool: Mapping[str, Any]) -> dict[str, Any]:
    """The key of one revision's build: every input of the child but its tree's files
    (module docstring)."""
    return {"format": ENTRY_FORMAT, "python_roots": list(python_roots),
            "descriptor_roots": list(descriptor_roots),
            "rules_inputs": dict(rules_inputs), "flavor": flavor,
            "environment": dict(sorted(environment.items())), "limits": dict(limits),
            "isolate": isolate, "tool": dict(tool)}


class EmitStore(FactStore):
    """Pieces of child documents by key: `plan` (the revision fields, with the families
    enumerated) and one entry per group (its families and predicate tables)."""

    FOLDER = EMIT_FOLDER
    OFF_TEXT = "the emit cache is off for this run ({why}); every variant is built afresh"
    VERSIONED = False  # its key holds the child's own tool fingerprint

    def entry_key(self, revision: Mapping[str, Any], what: str) -> dict[str, Any]:
        """The key of `what` ("plan" or "group:<id>") of the revision keyed `revision`."""
        return {"revision": dict(revision), "what": what}

    def candidates(self, key: dict[str, Any]) -> list[dict[str, Any]]:
        """The candidates stored under `key`, newest first (each a dict; the caller checks
        its manifest and value)."""
        entry = self.get(key)
        found = entry.get("candidates") if entry else None
        if not isinstance(found, list):
            return []
        return [c for c in found if isinstance(c, dict) and "manifest" in c]

    def add_candidate(self, key: dict[str, Any], candidate: Mapping[str, Any]) -> None:
        """Put `candidate` first under `key`, replacing one of the same manifest; keep
        CANDIDATES. Two emits adding at once may lose one: a later miss, never a wrong hit."""
        if not self.enabled:
            return
        kept = [c for c in self.candidates(key) if c.get("manifest") != candidate["manifest"]]
        self.put(key, {"candidates": [dict(candidate), *kept][:CANDIDATES]})
