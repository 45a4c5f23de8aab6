"""How one revision's families are split among children and CI shards, and put back together.

Maintainers: this module only plans and joins JSON documents; it starts no process and
reads no file. The unit of work is a *group*: every family of one source module for one
target arch, because the child's sign findings compare the support predicates of the
families of one module and arch (emit/child/probes.py `sign_findings`); a group split across
children would lose them. A group's cost is its variant count. `assign` is greedy over
the groups sorted by cost (largest first, ties by id) onto the least loaded bin (ties to
the lowest index), so every machine given the same trees computes the same slices.
`assemble` joins the documents of one revision's children (or cached pieces) and refuses
a set that does not cover each enumerated family exactly once or whose children disagree
on what the tree holds; `merge_files` joins the emit files of `impact emit --shard K/N`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from emit.child.vocabulary import BuildStatus, RunStatus, TableStatus
from emit.children import OPTIONAL_PROTECTIONS
from impact.errors import BadUsage
from impact.kinds import ViewName

# The child document's fields that describe the whole revision, not one family: every
# child of one revision must write them equal.
REVISION_FIELDS = ("schema_version", "flavor", "backend_pin", "enumerator",
                   "enumerator_error", "error", "skipped", "not_inspected", "enumerated")
STATUS_ORDER = (RunStatus.CRASHED, RunStatus.TIMED_OUT, RunStatus.NOT_STARTED,
                RunStatus.DONE)  # worst first

Document = dict[str, Any]


@dataclass(frozen=True)
class Group:
    """The families of one source module and arch: built together, cached together."""

    id: str
    families: tuple[str, ...]
    variants: int


class Uncovered(ValueError):
    """Documents that do not cover every enumerated family exactly once, or disagree."""


def groups_of(enumerated: Sequence[Mapping[str, Any]]) -> list[Group]:
    """The groups of a child's `enumerated` list, in the order of their first family."""
    members: dict[str, list[str]] = {}
    cost: dict[str, int] = {}
    for family in enumerated:
        gid = f"{family['source']}@{family['arch']}"
        members.setdefault(gid, []).append(family["id"])
        cost[gid] = cost.get(gid, 0) + int(family["variants"])
    return [Group(gid, tuple(ids), cost[gid]) for gid, ids in members.items()]


def assign(groups: Iterable[Group], bins: int) -> list[list[Group]]:
    """`groups` in `bins` slices balanced by variant count; deterministic."""
    slices: list[list[Group]] = [[] for _ in range(max(1, bins))]
    load = [0] * len(slices)
    for group in sorted(groups, key=lambda g: (-g.variants, g.id)):
        lightest = min(range(len(slices)), key=lambda i: (load[i], i))
        slices[lightest].append(group)
        load[lightest] += max(1, group.variants)
    return slices


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` (1 <= K <= N) as (K, N); a clear usage error otherwise."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        k = n = 0
    if not 1 <= k <= n:
        raise BadUsage(f"--shard '{text}' is not K/N with 1 <= K <= N",
                       "give the slice as K/N, e.g. --shard 2/4 for the second of four")
    return k, n


def pieces_of(document: Document) -> dict[str, Document]:
    """A child document's families and predicate tables, by group id (for the cache)."""
    by_family = {f["id"]: f"{f['source']}@{f['arch']}" for f in document["enumerated"]}
    tables = {t["family"]: t for t in document["predicate_tables"]}
    pieces: dict[str, Document] = {}
    for family in document["families"]:
        piece = pieces.setdefault(by_family[family["id"]], {"families": [],
                                                             "predicate_tables": []})
        piece["families"].append(family)
        if family["id"] in tables:
            piece["predicate_tables"].append(tables[family["id"]])
    return pieces


def complete(piece: Document, group: Group) -> bool:
    """A piece worth caching: every family of its group, each built, each table done."""
    try:
        families = [f["id"] for f in piece["families"]]
        return (families == list(group.families)
                and all(f["status"] == BuildStatus.BUILT and isinstance(f["variants"], list)
                        for f in piece["families"])
                and [t["family"] for t in piece["predicate_tables"]] == families
                and all(t["status"] == TableStatus.DONE for t in piece["predicate_tables"]))
    except (TypeError, KeyError):  # a damaged piece is not complete
        return False


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def assemble(revision: Mapping[str, Any], parts: Sequence[Mapping[str, Any]],
             *, exact: bool = True) -> Document:
    """One child document from `revision` (the revision fields) and `parts` (documents or
    pieces holding families and predicate tables), families in enumeration order.

    Raises Uncovered when a part's revision fields differ from `revision`, or (when
    `exact`) the parts do not cover every enumerated family exactly once."""
    for part in parts:
        for name in REVISION_FIELDS:
            if name in part and _key(part[name]) != _key(revision.get(name)):
                raise Uncovered(f"children of one revision disagree on '{name}'")
    families = [f for part in parts for f in part["families"]]
    tables = [t for part in parts for t in part["predicate_tables"]]
    document = {name: revision[name] for name in REVISION_FIELDS if name in revision}
    order = {f["id"]: i for i, f in enumerate(revision.get("enumerated", []))}
    families.sort(key=lambda f: order.get(f["id"], len(order)))
    tables.sort(key=lambda t: order.get(t["family"], len(order)))
    document["families"], document["predicate_tables"] = families, tables
    if exact:
        missing, doubled = coverage(document)
        if missing or doubled:
            raise Uncovered(describe(missing, doubled))
    return document


def coverage(result: Mapping[str, Any]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(missing, doubled): enumerated families absent from `families` (or with fewer
    variants than enumerated), and families present more than once or not enumerated;
    each with its variant count."""
    enumerated = {f["id"]: int(f["variants"]) for f in result.get("enumerated", [])}
    seen: dict[str, int] = {}
    counts: dict[str, int] = {}
    for family in result["families"]:
        seen[family["id"]] = seen.get(family["id"], 0) + 1
        counts[family["id"]] = len(family["variants"])
    missing = [(fid, n) for fid, n in enumerated.items()
               if seen.get(fid, 0) == 0 or counts[fid] < n]
    doubled = [(fid, counts[fid]) for fid, times in seen.items()
               if times > 1 or fid not in enumerated or counts[fid] > enumerated[fid]]
    return missing, doubled


def describe(missing: Sequence[tuple[str, int]], doubled: Sequence[tuple[str, int]]) -> str:
    """One phrase naming what is missing and what is doubled."""
    said = []
    for what, items in (("missing", missing), ("doubled or unknown", doubled)):
        if items:
            names = ", ".join(fid for fid, _ in items[:3])
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            said.append(f"{what}: {sum(n for _, n in items)} variants of {len(items)} "
                        f"families ({names}{more})")
    return "; ".join(said)


def merge_protections(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """What every child of a revision had: a flag holds only when it held for each."""
    records = list(records)
    merged: dict[str, Any] = {name: all(r[name] for r in records) and bool(records)
                              for name in ("user", "network", "pid", "mount")}
    for name in OPTIONAL_PROTECTIONS:  # recorded by newer jails only: held only if by each
        if any(name in r for r in records):
            merged[name] = all(r.get(name, False) for r in records)
    details = []
    for record in records:
        if record["detail"] and record["detail"] not in details:
            details.append(record["detail"])
    merged["detail"] = "; ".join(details) or (None if records else "no child ran")
    return merged


def merge_files(documents: Sequence[Mapping[str, Any]], names: Sequence[str]) -> Document:
    """One emit document from the emit files of `impact emit --shard K/N` (K = 1..N each
    once, the same trees and tool). Raises Uncovered naming the file or field at fault."""
    if not documents:
        raise Uncovered("no emit file to merge")
    first = documents[0]
    for doc, name in zip(documents, names, strict=True):
        if "slice" not in doc:
            raise Uncovered(f"'{name}' is not a slice (made without --shard)")
        if doc["tool"] != first["tool"]:
            raise Uncovered(f"'{name}' was made by impact {doc['tool']['version']}, "
                            f"'{names[0]}' by {first['tool']['version']}")
        for label in (ViewName.BASE, ViewName.HEAD):
            for field in ("trees", "commit"):
                if doc["revisions"][label][field] != first["revisions"][label][field]:
                    raise Uncovered(f"'{name}' was made for other {label} {field} than "
                                    f"'{names[0]}'")
    count = first["slice"]["count"]
    indexes = sorted(doc["slice"]["index"] for doc in documents)
    if any(doc["slice"]["count"] != count for doc in documents) or \
            indexes != list(range(1, count + 1)):
        raise Uncovered(f"the slices are {', '.join(str(i) for i in indexes)} of "
                        f"{count}: give each of 1..{count} exactly once")
    ordered = sorted(documents, key=lambda doc: doc["slice"]["index"])
    revisions = {label: _merge_revision([doc["revisions"][label] for doc in ordered])
                 for label in (ViewName.BASE, ViewName.HEAD)}
    return {"schema_version": first["schema_version"], "tool": dict(first["tool"]),
            "merged": {"count": count}, "revisions": revisions}


def _merge_revision(slices: Sequence[Mapping[str, Any]]) -> Document:
    first = slices[0]
    protections = merge_protections(s["protections"] for s in slices if "protections" in s)
    merged = {"commit": first["commit"], "trees": first["trees"],
              "network_isolated": protections["network"], "protections": protections}
    worst = min(slices, key=lambda s: STATUS_ORDER.index(s["status"]))
    if worst["status"] != RunStatus.DONE or any(s["result"] is None for s in slices):
        index = slices.index(worst) + 1
        status = worst["status"] if worst["status"] != RunStatus.DONE else RunStatus.CRASHED
        merged.update(status=status, reason=f"slice {index}: {worst['reason'] or 'no result'}",
                      result=None)
        return merged
    result = assemble(first["result"], [s["result"] for s in slices])
    merged.update(status=RunStatus.DONE, reason=None, result=result)
    return merged
