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

What the key holds (`revision_key`): everything the child can read, each named by what is
known without reading a blob, so a second emit of the same trees computes it without a
child, a parser or a temporary folder. The child imports from every Python root and
reads every descriptor root, and a family's module may import common code (rocke's core,
helpers, the packer), read data files or list folders, so no per-family key can be
proven complete: the key is the git tree id of *every* materialised root, whole. A head
that changes one family's module changes its kernel folder's tree id, so that revision is
built again in full, while the other revision (and every later emit of the same trees)
is read from the cache. Besides the trees: what the rules file the child reads is made
from (`emit.rules.rules_inputs`: the blob id of every file it is read from, the surface
map's digest, the readers' version), the root lists as the child is given them, the
flavor pin, the allow-listed environment (PATH, LANG, LC_*, ROCKE_*, HKP_*), the limits
that can change a result (address space, open files), whether the namespaces were asked
for, the Python version and executable, every distribution on the child's import path
with its version (the path as `emit.runner.key_import_path` finds it, a superset of the
child's), and the sha256 of the child's and the sandbox's sources (impact's emit tool
version). The family budget and the timeout are not in the key: a piece with a timed-out
or failed family or table is never stored, nor anything a child built after one of its
families or tables timed out.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from impact.factstore import DEFAULT_LIMIT_BYTES, FactStore, Warn, _key_digest

ENTRY_FORMAT = 2  # 2: the rules file keyed by its inputs, not its digest
EMIT_FOLDER = "emit"
_TOOL_SOURCES = ("child.py", "sandbox.py")


@functools.cache
def tool_fingerprint(import_path: tuple[str, ...]) -> dict[str, Any]:
    """The child's tools: its and the sandbox's sources, the interpreter, and every
    distribution the child could import (name and version), as a JSON-ready record."""
    here = Path(__file__).resolve().parent
    sources = {name: hashlib.sha256((here / name).read_bytes()).hexdigest()
               for name in _TOOL_SOURCES}
    dists = sorted({(d.metadata["Name"] or "?", d.version or "?")
                    for d in metadata.distributions(path=list(import_path))})
    return {"sources": sources, "python": sys.version,
            "executable": os.path.realpath(sys.executable),
            "cache_tag": sys.implementation.cache_tag,
            "distributions": [f"{name}=={version}" for name, version in dists]}


def revision_key(*, trees: Mapping[str, str], python_roots: Iterable[str],
                 descriptor_roots: Iterable[str], rules_inputs: Mapping[str, Any],
                 flavor: str | None, environment: Mapping[str, str],
                 limits: Mapping[str, int], isolate: bool,
                 tool: Mapping[str, Any]) -> dict[str, Any]:
    """The key of one revision's build: everything the child reads (module docstring)."""
    return {"format": ENTRY_FORMAT, "trees": dict(sorted(trees.items())),
            "python_roots": list(python_roots), "descriptor_roots": list(descriptor_roots),
            "rules_inputs": dict(rules_inputs), "flavor": flavor,
            "environment": dict(sorted(environment.items())), "limits": dict(limits),
            "isolate": isolate, "tool": dict(tool)}


class EmitStore(FactStore):
    """Pieces of child documents by key: `plan` (the revision fields, with the families
    enumerated) and one entry per group (its families and predicate tables)."""

    def __init__(self, root: Path | str, *, limit: int = DEFAULT_LIMIT_BYTES,
                 warn: Warn | None = None, create: bool = True) -> None:
        super().__init__(root, limit=limit, warn=warn, create=False)
        self.folder = self.root / EMIT_FOLDER
        if create:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                self._off(f"cannot create {self.folder}: {exc.strerror or exc}")

    def _off(self, why: str) -> None:
        if self.enabled:
            self.enabled = False
            self._warn(f"the emit cache is off for this run ({why}); "
                       "every variant is built afresh")

    def entry_key(self, revision: Mapping[str, Any], what: str) -> dict[str, Any]:
        """The key of `what` ("plan" or "group:<id>") of the revision keyed `revision`."""
        return {"revision": dict(revision), "what": what}

    def get(self, key: dict[str, Any]) -> dict[str, Any] | None:
        """The value stored under `key`, or None (absent, unreadable, not this key's, or
        not the bytes that were written: the header's sha256 must match the value's)."""
        if not self.enabled:
            return None
        digest = _key_digest(key)
        try:
            raw = (self.folder / digest[:2] / f"{digest}.json").read_bytes()
            header_bytes, _, body = raw.partition(b"\n")
            header = json.loads(header_bytes.decode("utf-8"))
            if not (isinstance(header, dict) and header.get("key") == key
                    and header.get("sha256") == hashlib.sha256(body).hexdigest()):
                raise ValueError("another key's entry, or damaged")
            value = json.loads(body.decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            self.misses += 1
            return None
        if not isinstance(value, dict):
            self.misses += 1
            return None
        self.hits += 1
        return value

    def put(self, key: dict[str, Any], value: Mapping[str, Any]) -> None:
        """Store `value` under `key`, whole or not at all (a temporary file renamed)."""
        if not self.enabled:
            return
        digest = _key_digest(key)
        file = self.folder / digest[:2] / f"{digest}.json"
        body = json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")
        header = {"key": key, "sha256": hashlib.sha256(body).hexdigest()}
        data = json.dumps(header, sort_keys=True).encode("utf-8") + b"\n" + body
        self._write(file, data)
