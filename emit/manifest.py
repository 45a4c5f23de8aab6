"""What a cached plan or group read of its tree, and whether another tree holds the same.

Maintainers: this module turns a child's reads (emit/child/reads.py `Reads`: the paths its tree
code opened or stat'ed, the folders it listed or scanned, per window) into a manifest of
states read from git objects, and checks a manifest against a revision's snapshot; it
never reads the file system, never runs a child and never imports a parser.

A path's state is what the child could learn of it from the materialised tree: `absent`,
`tree` (a folder: its entries are keyed only where it was listed), or `blob <id>` (a
file: its content; materialised files carry no mode). A listed folder's state is the
digest of its entry names (what `os.listdir` returns); a scanned folder's, of its entries
with their kinds and, for files, blob ids (a DirEntry may stat them). Git's view is at
least as fine as the materialised tree's (a submodule or a file outside the roots shows
in git, not on disk), so equal states mean equal observations. A window marked opaque
(the child saw a process start, a foreign call, ...) is keyed by the tree ids of the
whole roots instead, the old key: sound whatever it read. A manifest holds for a
snapshot only when every state it records is the snapshot's; anything it cannot check
is a miss.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from impact.git import Snapshot

KINDS = ("paths", "listed", "scanned")


class States:
    """The states of one snapshot's paths, each read from git once."""

    def __init__(self, snapshot: Snapshot, trees: Mapping[str, str]) -> None:
        self.snapshot = snapshot
        self.trees = dict(trees)
        self._memo: dict[tuple[str, str], str] = {}

    def state(self, kind: str, path: str) -> str:
        known = self._memo.get((kind, path))
        if known is None:
            known = self._memo[(kind, path)] = self._read(kind, path)
        return known

    def _read(self, kind: str, path: str) -> str:
        if kind == "paths":
            if path:
                try:
                    entry = self.snapshot[path]
                except KeyError:
                    entry = None
                if entry is not None:
                    return "absent" if entry.is_submodule else f"blob {entry.sha}"
            return "tree" if self.snapshot.folder(path) is not None else "absent"
        folder = self.snapshot.folder(path)
        if folder is None:
            return "absent"
        if kind == "listed":
            names = sorted([*folder.files, *folder.folders])
        else:
            prefix = f"{path}/" if path else ""
            names = sorted([f"d {name}" for name in folder.folders]
                           + [f"f {name} {self.snapshot[prefix + name].sha}"
                              for name in folder.files])
        return hashlib.sha256(json.dumps(names).encode("utf-8")).hexdigest()


def manifest_of(states: States, windows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The manifest of what `windows` (reads-file windows) read, states from `states`."""
    windows = list(windows)
    if any(w["opaque"] for w in windows):
        return {"roots": dict(sorted(states.trees.items()))}
    manifest: dict[str, Any] = {}
    for kind in KINDS:
        paths = sorted({p for w in windows for p in w[kind]})
        manifest[kind] = {p: states.state(kind, p) for p in paths}
    return manifest


def holds(states: States, manifest: Any) -> bool:
    """Whether every state `manifest` records is the snapshot's (a malformed one: no)."""
    try:
        if set(manifest) == {"roots"}:
            return bool(manifest["roots"]) and manifest["roots"] == states.trees
        if set(manifest) != set(KINDS):
            return False
        return all(states.state(kind, path) == want
                   for kind in KINDS for path, want in manifest[kind].items())
    except Exception:  # a path git cannot resolve, a damaged manifest: a miss
        return False
