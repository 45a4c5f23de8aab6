"""What the cache of built groups gives a revision before any child starts, and what its
children built is stored back (the warm path).

The cache key is computed from what is known without reading a blob (the blob ids of the
files the rules are read from, the environment, the tool versions), and each cached plan
and group is taken only when the manifest of what its child read holds for the revision's
tree, checked from git objects (emit/manifest.py: no child, no parser, no temporary folder).
A group is stored only when it is complete, its child recorded what it read, and nothing
that child built could have run beside a worker left running.

Maintainers: reads and writes the store (emit/cache.py) only; starts no child and parses
no file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from emit.cache import EmitStore, revision_key, tool_fingerprint
from emit.child.vocabulary import BuildStatus, RunStatus, TableStatus
from emit.children import Limits, Run
from emit.jail import allowed_environment, key_import_path
from emit.manifest import holds, manifest_of
from emit.revision import Revision
from emit.rules import rules_inputs
from emit.shard import REVISION_FIELDS, complete, groups_of, pieces_of
from impact.contracts import validate
from impact.git import Snapshot
from impact.kinds import ViewName
from impact.safefile import read_regular
from impact.surface import SurfaceMap

READS_SCHEMA = "emit_reads.schema.json"
# The most a child's reads record may hold; it is read only as a regular file of at most
# this size (impact/safefile.py), else nothing that child built is stored.
READS_LIMIT_BYTES = 64 << 20


def cache_key(revision: Revision, snapshot: Snapshot, surface: SurfaceMap,
                  flavor: str | None, limits: Limits, isolate: bool) -> dict[str, Any] | None:
    """The cache key of `revision` (emit/cache.py), or None when impact's own sources
    cannot be read to version the rules (the cache is then not used)."""
    try:
        inputs = rules_inputs(snapshot, surface)
    except OSError:
        return None
    return revision_key(
        python_roots=surface.python_roots,
        descriptor_roots=surface.descriptor_roots, rules_inputs=inputs, flavor=flavor,
        environment=allowed_environment(),
        limits={"as": limits.address_space, "nofile": limits.open_files,
                "nproc": limits.processes, "fsize": limits.file_size}, isolate=isolate,
        tool=tool_fingerprint(key_import_path()))


def load_cached(store: EmitStore, revision: Revision) -> None:
    """The plan and the pieces the cache holds for `revision`: the first candidate of each
    whose manifest holds for the revision's tree, its value checked before use."""
    assert revision.key is not None and revision.states is not None
    candidates = store.candidates(store.entry_key(revision.key, "plan"))
    revision.plan_seen = bool(candidates)
    for candidate in candidates:
        plan = candidate.get("plan")
        if _valid(plan, {"families": [], "predicate_tables": []}) \
                and isinstance(candidate.get("protections"), dict) \
                and holds(revision.states, candidate["manifest"]):
            revision.plan = plan
            revision.protections.append(candidate["protections"])
            break
    if revision.plan is not None:
        load_groups(store, revision)


def load_groups(store: EmitStore, revision: Revision) -> None:
    """The pieces the cache holds for the groups of the revision's plan."""
    assert revision.key is not None and revision.states is not None
    plan = revision.plan
    assert plan is not None
    for group in groups_of(plan["enumerated"]):
        for candidate in store.candidates(store.entry_key(revision.key, f"group:{group.id}")):
            piece = candidate.get("piece")
            if _valid(plan, piece) and complete(piece, group) \
                    and isinstance(candidate.get("protections"), dict) \
                    and holds(revision.states, candidate["manifest"]):
                revision.pieces[group.id] = piece
                revision.protections.append(candidate["protections"])
                break


def _valid(plan: Any, piece: Any) -> bool:
    """`plan` has every revision field and a well-formed `enumerated` list, and `piece`
    holds lists of families and tables (their content is checked by `complete`)."""
    try:
        return (isinstance(plan, dict) and all(name in plan for name in REVISION_FIELDS)
                and all(isinstance(f["id"], str) and isinstance(f["source"], str)
                        and isinstance(f["arch"], str) and type(f["variants"]) is int
                        for f in plan["enumerated"])
                and isinstance(piece, dict) and isinstance(piece["families"], list)
                and isinstance(piece["predicate_tables"], list))
    except (TypeError, KeyError):
        return False


def _abandoned_work(document: Mapping[str, Any]) -> bool:
    """Whether the child left a timed-out family or table behind: its worker thread may
    still have run tree code while later families were built, so nothing that child
    built is kept."""
    return any(f["status"] == BuildStatus.TIMED_OUT for f in document["families"]) or any(
        t["status"] == TableStatus.TIMED_OUT for t in document["predicate_tables"])


def _read_reads(run: Run) -> dict[str, Any] | None:
    """The reads file a finished child wrote, checked against its schema (None: absent,
    unreadable or off its schema; then nothing that child built is stored)."""
    if run.reads is None or run.status != RunStatus.DONE:
        return None
    try:
        reads = json.loads(read_regular(run.reads, limit=READS_LIMIT_BYTES).decode("utf-8"))
        validate(reads, READS_SCHEMA)
        return reads
    except Exception:  # no file (the recorder did not start), not a regular file (a FIFO,
        # a device, a symlink), bad JSON, off the schema
        return None


def _manifest(revision: Revision, windows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The manifest a piece is stored under. The reads record is written by the child's
    own process, where the revision's code runs and can rewrite it (empty it: a manifest
    that holds for every tree). Only the base's code is reviewed, so only a base child's
    record narrows a manifest to what it read; a head child's pieces are kept under the
    tree ids of the whole roots, reused for exactly those trees (content-addressed)."""
    assert revision.states is not None
    if revision.label != ViewName.BASE:
        windows = [{"opaque": "the head's own code wrote this record"}]
    return manifest_of(revision.states, windows)


def store_built(store: EmitStore, revision: Revision, plan: Mapping[str, Any],
                 documents: list[tuple[Run, dict[str, Any] | None]]) -> None:
    """Each complete group a child built, and the plan, with the manifest of what the
    child read for it (a group's with the plan's reads: its variants come from the
    enumeration; a head's, the whole roots: `_manifest`); what was built without a record
    of its reads is not stored."""
    assert revision.key is not None and revision.states is not None
    groups = {g.id: g for g in groups_of(plan["enumerated"])}
    for run, document in documents:
        reads = _read_reads(run)
        if document is None or "enumerated" not in document or _abandoned_work(document) \
                or reads is None or "plan" not in reads["windows"]:
            continue
        windows = reads["windows"]
        for gid, piece in pieces_of(document).items():
            if gid in groups and gid in windows and complete(piece, groups[gid]):
                store.add_candidate(store.entry_key(revision.key, f"group:{gid}"), {
                    "manifest": _manifest(revision, [windows["plan"], windows[gid]]),
                    "piece": piece, "protections": run.protections})
    # The plan (what the tree enumerates, skips and cannot read) is settled before any
    # family is built, so it is kept even when no group was.
    origin = revision.plan_run or (documents[0][0] if documents else None)
    if origin is None:
        return  # every group came from the cache, the plan with them
    reads = _read_reads(origin)
    if reads is None or "plan" not in reads["windows"]:
        return
    store.add_candidate(store.entry_key(revision.key, "plan"), {
        "manifest": _manifest(revision, [reads["windows"]["plan"]]),
        "plan": dict(plan), "protections": origin.protections})

