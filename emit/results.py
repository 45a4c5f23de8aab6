"""What the children of a revision wrote, read back and checked, and joined into the
revision's record in the emit file.

Maintainers: every child document is checked against its schema before use (else the
child reads as crashed); the documents of one revision must cover each enumerated family
exactly once (emit/shard.py `assemble`), a slice exactly its groups' families. Reads the
children's files only; starts nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from emit.cache import EmitStore
from emit.child.vocabulary import RunStatus
from emit.children import Run, unprotected
from emit.emitfile import CHILD_SCHEMA
from emit.reuse import store_built
from emit.revision import Revision
from emit.shard import (
    REVISION_FIELDS,
    STATUS_ORDER,
    Group,
    Uncovered,
    assemble,
    groups_of,
    merge_protections,
)
from impact.contracts import validate
from impact.safefile import read_regular

# The most a child's document may hold: a child's files are bounded by its RLIMIT_FSIZE
# (emit/children.py), and what it left at its output path is read only if it is a regular
# file of at most this size (never a FIFO, a device or a symlink; impact/safefile.py).
RESULT_LIMIT_BYTES = 256 << 20


def read_result(run: Run) -> dict[str, Any] | None:
    """The document a finished child wrote, checked against its schema (else crashed)."""
    if run.status != RunStatus.DONE:
        return None
    try:
        result = json.loads(read_regular(run.out, limit=RESULT_LIMIT_BYTES).decode("utf-8"))
        validate(result, CHILD_SCHEMA)
        return result
    except Exception as exc:  # not a regular file, unreadable JSON or off its schema
        run.status = RunStatus.CRASHED
        run.reason = f"child document unusable: {getattr(exc, 'message', exc)}"
        return None


def read_plan(revision: Revision) -> None:
    run = revision.plan_run
    assert run is not None
    result = read_result(run)
    if result is not None and "enumerated" not in result:
        run.status = RunStatus.CRASHED
        run.reason = "the child did not list the families it enumerated"
        result = None
    if result is not None:
        revision.plan = {name: result[name] for name in REVISION_FIELDS}


def finish(revision: Revision, store: EmitStore | None, shard: tuple[int, int] | None
            ) -> dict[str, Any]:
    """The revision's record in the emit file; what it built goes to the cache."""
    ran = [r for r in ([revision.plan_run] if revision.plan_run else []) + revision.runs]
    documents = [(run, read_result(run)) for run in revision.runs]
    protections = merge_protections([r.protections for r in ran] + revision.protections)
    record: dict[str, Any] = {
        "commit": revision.commit, "trees": revision.trees, "status": RunStatus.DONE,
        "reason": None,
        "network_isolated": protections["network"], "protections": protections,
        "result": None,
        "work": {"children": len(ran), "groups_cached": len(revision.pieces),
                 "groups_built": 0, "cache": revision.cache_state}}
    if revision.refused:  # its children saw another tree than git's: fail closed
        record.update(status=RunStatus.CRASHED, reason=(
            f"the tree holds {len(revision.refused)} path(s) no checkout writes, left "
            f"unwritten: {', '.join(revision.refused[:3])}"))
        return record
    failed = [r for r in ran if r.status != RunStatus.DONE]
    if failed:
        worst = min(failed, key=lambda r: STATUS_ORDER.index(r.status))
        prefix = "" if worst.label == revision.label else f"{worst.label}: "
        record.update(status=worst.status, reason=prefix + (worst.reason or worst.status))
        return record
    results = [doc for _, doc in documents if doc is not None]
    plan = revision.plan or {name: results[0][name] for name in REVISION_FIELDS
                             if name in results[0]}
    wanted = revision.wanted
    if wanted is None and "enumerated" in plan:
        wanted = groups_of(plan["enumerated"])
    pieces = [revision.pieces[g.id] for g in wanted or [] if g.id in revision.pieces]
    try:
        result = assemble(plan, [*pieces, *results],
                          exact=shard is None and "enumerated" in plan)
        if shard is not None:
            _check_slice(result, wanted or [])
    except Uncovered as exc:
        record.update(status=RunStatus.CRASHED, reason=str(exc))
        return record
    record["result"] = result
    record["work"]["groups_built"] = len({f"{f['source']}@{f['arch']}"
                                          for doc in results for f in doc["families"]})
    if store is not None and revision.key is not None and result.get("error") is None \
            and "enumerated" in plan:
        store_built(store, revision, plan, documents)
    return record


def _check_slice(result: Mapping[str, Any], wanted: list[Group]) -> None:
    """A slice holds exactly the families of the groups assigned to it."""
    got = [f["id"] for f in result["families"]]
    want = [fid for g in wanted for fid in g.families]
    if sorted(got) != sorted(want):
        lost = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want)) + sorted({f for f in got if got.count(f) > 1})
        raise Uncovered(f"the slice's children did not build its families exactly once "
                        f"(missing {lost[:3]}, unexpected or doubled {extra[:3]})")



def not_built(commit: str | None, trees: dict[str, str], why: str) -> dict[str, Any]:
    """The record of a revision no child was started for, and why (no result: nothing
    folds and Pack-time reads INCOMPLETE)."""
    return {"commit": commit, "trees": trees, "status": RunStatus.NOT_STARTED, "reason": why,
            "network_isolated": False, "protections": unprotected("never started"),
            "result": None,
            "work": {"children": 0, "groups_cached": 0, "groups_built": 0, "cache": "off"}}
