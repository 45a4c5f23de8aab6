"""One revision's work in an emit: its cache key, what the cache held for it, its plan and
the children it needs, and the folder its children read.

Maintainers: holds state and writes the revision's tree and rules file once, when its first
child is made (`new_run`); it starts nothing (emit/children.py does) and reads no cache
(emit/reuse.py does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emit.children import RULES_FILE, Run
from emit.manifest import States
from emit.rules import write_rules
from emit.shard import Group
from emit.trees import materialise
from impact.git import Snapshot

READS_FILE = "reads.json"  # what its tree code read, per window, in its scratch folder


@dataclass
class Revision:
    """One revision's work: its cache key, what the cache held, the children it needs."""

    label: str
    commit: str | None
    trees: dict[str, str]
    folder: Path | None = None            # tree/ and rules.json, read by every child
    key: dict[str, Any] | None = None     # None: the cache is not used for this revision
    plan: dict[str, Any] | None = None    # the revision fields, `enumerated` included
    pieces: dict[str, dict[str, Any]] = field(default_factory=dict)  # group id -> piece
    protections: list[dict[str, Any]] = field(default_factory=list)  # of cached pieces
    plan_run: Run | None = None
    runs: list[Run] = field(default_factory=list)
    wanted: list[Group] | None = None     # the groups this emit covers (None: unknown yet)
    cache_state: str = "off"
    snapshot: Snapshot | None = None      # written out only when a child runs
    roots: tuple[str, ...] = ()
    rules: dict[str, Any] = field(default_factory=dict)
    states: States | None = None          # its paths' states in git, for the manifests
    plan_seen: bool = False               # the cache holds plans of other trees for its key
    refused: list[str] = field(default_factory=list)  # tree paths not written (trees.py)

    def new_run(self, name: str, only: list[str] | None, cost: int = 0) -> Run:
        """A child building `only` (None: every family), in a scratch folder of its own;
        the first one writes the revision's tree and rules out."""
        assert self.folder is not None
        if self.snapshot is not None:  # the first child: write the tree and the rules
            (self.folder / "tree").mkdir(parents=True)
            self.refused = materialise(self.snapshot, self.roots, self.folder / "tree")
            write_rules(self.rules, self.folder / RULES_FILE)
            self.snapshot = None
        workdir = self.folder.parent / f"{self.label}-{name}"
        workdir.mkdir()
        return Run(self.label if name == "all" else f"{self.label}[{name}]", self.commit,
                   self.trees, workdir, workdir / "result.json", source=self.folder,
                   only=only, cost=cost,
                   reads=workdir / READS_FILE if self.key is not None else None)

