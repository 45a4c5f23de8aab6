"""`impact queue --target T PR...`: the pull requests waiting to land on one target, each
alone and two at a time.

Why: a merge queue reruns CI on each batch; nothing compares the pull requests with each
other before they land. Two changes that are each fine alone can break a contract
together: one adds an argument to a builder, the other a copy of its list that the first
never saw. Each pull request is reported as `impact report --base T --head PR
--target-tip T` reports it (the head merged onto the target, from its merge base with T:
`impact.git.queue_views`, the same three-way merge), and each pair as the later one
merged onto the earlier one merged onto the target, so that a copy one changed and a
counterpart the other changed meet in one merged tree, where the checks find the race as
they find one with the target tip (the head's copy against the tip's).

Cost: a pair is merged only when its two pull requests touch a contract subject in common
(or a file on a surface): an index subject -> pull requests built from each one's own
charged rows gives the candidate pairs in time linear in the rows, never every pair of
fifty; the others are counted as disjoint. `shard` (K, N) analyses every Nth candidate
pair, so CI jobs split a long queue; `merge_queues` joins their documents.

Maintainers: one Session's caches serve every view (facts, tree indexes and graphs by
tree are shared: the target's merge bases are built once). Which rows a pair holds that
neither pull request holds alone, and every verdict, are `impact.rollup`'s (`together`,
`rollup`, `worst`); the words are `impact/render/words/queue.py`'s. The document is
checked against `impact/contracts/queue.schema.json` when rendered and merged.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from dulwich.objects import Commit

from impact.caches import Caches
from impact.contracts import validate
from impact.document import check_context, checked_rows
from impact.errors import BadUsage
from impact.git import (
    BASE_TO_HEAD,
    HEAD_TO_TIP,
    Repository,
    Revision,
    View,
    merged_commit,
    open_repository,
    queue_views,
    revision_snapshot,
)
from impact.kinds import ViewName
from impact.render.words import queue as words
from impact.rollup import Outcome, Verdict, counts, rollup, together, worst
from impact.rows import Row, Status
from impact.surface import SurfaceMap, load_surface_map
from impact.treeaudit import worded
from impact.version import SCHEMA_VERSION, tool_version

QUEUE_SCHEMA = "queue.schema.json"
_GLOB = set("*?[")
_SHORT = ("refs/heads/", "refs/remotes/", "refs/tags/", "refs/")
_RANK = {Outcome.BREAKS: 0, Outcome.NEEDS_DEVICE: 1, Outcome.NONE: 2,
         Outcome.NOT_APPLICABLE: 3}


@dataclass
class _Single:
    """One pull request merged alone onto the target: its rows, what it touched, and the
    commit its merged tree is (for the pairs it is part of)."""

    revision: Revision
    merge_base: str
    rows: list[Row]
    verdict: Verdict
    touched: frozenset[str]
    merged: View | None
    keys: set[str] = field(default_factory=set)
    commit: Commit | None = None

    @property
    def mergeable(self) -> bool:
        return self.merged is not None and self.merged.new is not None \
            and not self.merged.conflicts


def expand(repository: Repository, specs: Sequence[str]) -> list[Revision]:
    """Each pull request named: a revision as spelled, or a glob pattern matched against
    every ref in full and without its `refs/heads/`, `refs/remotes/`, `refs/tags/` or
    `refs/` prefix. A pattern that matches nothing is an error, never an empty queue;
    a pull request named twice is analysed once."""
    names = repository.ref_names()
    found: dict[str, Revision] = {}
    for spec in specs:
        if not _GLOB & set(spec):
            found.setdefault(spec, repository.resolve(spec))
            continue
        hits = [short for name in names
                for short in [_short(name)] if fnmatch.fnmatchcase(name, spec)
                or fnmatch.fnmatchcase(short, spec)]
        if not hits:
            raise BadUsage(f"no ref matches the pattern '{spec}'",
                           "name pull request branches or a pattern of them, "
                           "e.g. 'pr/*' or 'refs/remotes/origin/pr/*'")
        for short in sorted(set(hits)):
            found.setdefault(short, repository.resolve(short))
    return list(found.values())


def _short(name: str) -> str:
    return next((name[len(p):] for p in _SHORT if name.startswith(p)), name)


def _keys(rows: list[Row], touched: frozenset[str]) -> set[str]:
    """What a pull request touches, for the pair index: the (contract, subject) of every
    row charged to it, every copy those rows compared (file and symbol of each side: a
    new copy of a list names the builder another pull request changed), and every file
    on a surface it changed (two edits of one file may conflict)."""
    keys = set()
    for row in rows:
        if counts(row):
            keys.add(f"subject\x00{row.contract}\x00{row.subject}")
            keys.update(f"site\x00{side.file}\x00{side.symbol}" for side in row.sides)
    return keys | {f"file\x00{path}" for path in touched}


def candidate_pairs(singles: Sequence[set[str]]) -> list[tuple[int, int]]:
    """The pairs (i < j) whose keys intersect, from an index key -> pull requests: linear
    in the keys, plus the pairs found; every other pair is disjoint."""
    index: dict[str, list[int]] = {}
    for i, keys in enumerate(singles):
        for key in keys:
            index.setdefault(key, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for members in index.values():
        pairs.update(combinations(sorted(members), 2))
    return sorted(pairs)


def _single(repository: Repository, target: Revision, pr: Revision, surface: SurfaceMap,
            caches: Caches | None) -> _Single:
    views = queue_views(repository, target, pr)
    ctx = check_context(views, surface, caches)
    with ctx.caches.active():
        rows = checked_rows(ctx)
    head = views.view(ViewName.HEAD)
    touched = frozenset(p for p in (head.diff.paths if head is not None else ())
                        if surface.classify(p) is not None)
    bases = views.merge_bases.get(BASE_TO_HEAD) or [""]
    single = _Single(pr, bases[0], rows, rollup(rows, surface.all_archs), touched,
                     views.view(ViewName.MERGED))
    single.keys = _keys(rows, touched)
    return single


def _by(side_file: str, first: _Single, second: _Single) -> str | None:
    """Which pull request of a pair changed the file a side names (both, one, or none)."""
    who = [s.revision.spelled for s in (first, second) if side_file in s.touched]
    return " and ".join(who) or None


def _pair(repository: Repository, target: Revision, first: _Single, second: _Single,
          surface: SurfaceMap, caches: Caches | None) -> dict[str, Any]:
    """`second` merged onto `first` merged onto the target; the rows neither has alone."""
    if first.commit is None:
        assert first.merged is not None
        first.commit = merged_commit(repository, first.merged, target, first.revision)
    assert first.commit is not None
    views = queue_views(repository, target, second.revision,
                        onto=(first.revision, first.commit))
    ctx = check_context(views, surface, caches)
    with ctx.caches.active():
        rows = checked_rows(ctx)
    merged = views.view(ViewName.MERGED)
    pair_rows = [r for r in rows if r.view == ViewName.MERGED]
    new = together(pair_rows, first.rows + second.rows)
    verdict = rollup(new, surface.all_archs)
    shown = []
    for row in new:
        data = worded(row.to_json())
        data["sides"] = [{**side, "by": _by(side["file"], first, second)}
                         for side in data["sides"]]
        shown.append(data)
    return {"first": first.revision.spelled, "second": second.revision.spelled,
            "verdict": verdict.to_json(), "rows": shown,
            "mismatches": sum(1 for r in new if r.status == Status.MISMATCH),
            "merge_bases": views.merge_bases.get(HEAD_TO_TIP, []),
            "conflicts": list(merged.conflicts) if merged is not None else [],
            "unavailable": merged.unavailable if merged is not None else None}


def rank_key(pair: dict[str, Any]) -> tuple[Any, ...]:
    """Worst first: BREAKS, then by how many mismatches; then the pair's names."""
    return (_RANK[Outcome(pair["verdict"]["kind"])], -pair["mismatches"], -len(pair["rows"]),
            pair["first"], pair["second"])


def verdict_of(data: dict[str, Any]) -> Verdict:
    """A verdict as a document holds it, read back."""
    return Verdict(Outcome(data["kind"]), tuple(data["archs"]), tuple(data["other_lanes"]))


def run_queue(repo: str | os.PathLike[str], *, target: str, prs: Sequence[str],
              surface_map: str | None = None, shard: tuple[int, int] | None = None,
              caches: Caches | None = None) -> dict[str, Any]:
    """The queue document: every pull request of `prs` (revisions or ref patterns)
    merged alone onto `target`, and every pair of them that touches a contract subject in
    common merged together onto it (in `shard` (K, N), the Kth of every N such pairs)."""
    repository = open_repository(repo)
    tip = repository.resolve(target)
    revisions = expand(repository, prs)
    if not revisions:
        raise BadUsage("impact queue needs at least one pull request",
                       "name pull request branches or a pattern of them after --target T")
    # The target configures the review: never one of the changes under it.
    surface = load_surface_map(surface_map, revision_snapshot(repository, tip))
    singles = [_single(repository, tip, pr, surface, caches) for pr in revisions]
    candidates = candidate_pairs([s.keys for s in singles])
    total = len(singles) * (len(singles) - 1) // 2
    k, n = shard or (1, 1)
    mine = [pair for index, pair in enumerate(candidates) if index % n == k - 1]
    pairs, unmergeable = [], []
    for i, j in mine:
        first, second = singles[i], singles[j]
        if not (first.mergeable and second.mergeable):
            why = next(s.revision.spelled for s in (first, second) if not s.mergeable)
            unmergeable.append({"first": first.revision.spelled,
                                "second": second.revision.spelled, "not_mergeable": why})
            continue
        pairs.append(_pair(repository, tip, first, second, surface, caches))
    pairs.sort(key=rank_key)
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "impact", "version": tool_version()},
        "repository": str(repository.path),
        "target": {"spelled": tip.spelled, "sha": tip.sha},
        "surface_map": {"name": surface.name, "source": surface.source,
                        "every_arch": surface.all_archs},
        "prs": [_single_json(s) for s in singles],
        "counts": {"prs": len(singles), "pairs": total,
                   "disjoint": total - len(candidates), "candidates": len(candidates),
                   "analysed": len(pairs), "unmergeable": len(unmergeable)},
        "shard": None if shard is None else {"k": k, "n": n},
        "pairs": pairs,
        "unmergeable": unmergeable,
    }
    document["verdict"] = queue_verdict(document, surface.all_archs).to_json()
    return document


def queue_verdict(document: dict[str, Any], every_arch: str = "all-archs") -> Verdict:
    """The worst verdict of the queue's pull requests alone and its pairs together."""
    return worst([verdict_of(s["verdict"]) for s in document["prs"]]
                 + [verdict_of(p["verdict"]) for p in document["pairs"]], every_arch)


def _single_json(single: _Single) -> dict[str, Any]:
    merged = single.merged
    return {"ref": single.revision.spelled, "sha": single.revision.sha,
            "verdict": single.verdict.to_json(),
            "rows": [worded(r.to_json()) for r in single.rows if counts(r)
                     and r.status in (Status.MISMATCH, Status.CHANGED)],
            "keys": len(single.keys),
            "conflicts": list(merged.conflicts) if merged is not None else [],
            "unavailable": merged.unavailable if merged is not None else None}


def merge_queues(documents: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, Any]:
    """One queue document from the documents of `--shard K/N` for every K of 1..N, made
    for the same target and pull requests; anything else is refused in one line."""
    for document, name in zip(documents, names, strict=True):
        _checked(document, name)
    shards = [d.get("shard") for d in documents]
    if any(s is None for s in shards):
        raise BadUsage(words.merge_refused_text("a file is not a shard (no --shard K/N)"),
                       words.MERGE_FIX)
    n = shards[0]["n"]
    ks = sorted(s["k"] for s in shards)
    if any(s["n"] != n for s in shards) or ks != list(range(1, n + 1)):
        raise BadUsage(words.merge_refused_text(
            "the slices are " + ", ".join(f"{s['k']}/{s['n']}" for s in shards) + ", "
            f"not 1..{n} of {n} once each"), words.MERGE_FIX)
    first = documents[0]
    same = ("target", "surface_map")
    for document in documents[1:]:
        if any(document[key] != first[key] for key in same) or [
                (p["ref"], p["sha"]) for p in document["prs"]] != [
                (p["ref"], p["sha"]) for p in first["prs"]]:
            raise BadUsage(words.merge_refused_text(
                "the shards were made for other targets or pull requests"), words.MERGE_FIX)
    pairs = sorted((p for d in documents for p in d["pairs"]), key=rank_key)
    unmergeable = sorted((u for d in documents for u in d["unmergeable"]),
                         key=lambda u: (u["first"], u["second"]))
    merged = {**first, "shard": None, "pairs": pairs, "unmergeable": unmergeable,
              "counts": {**first["counts"], "analysed": len(pairs),
                         "unmergeable": len(unmergeable)}}
    merged["verdict"] = queue_verdict(merged, first["surface_map"]["every_arch"]).to_json()
    validate(merged, QUEUE_SCHEMA)
    return merged


def _checked(document: Any, name: str) -> None:
    import jsonschema

    try:
        validate(document, QUEUE_SCHEMA)
    except jsonschema.ValidationError as exc:
        raise BadUsage(words.merge_refused_text(f"'{name}' is not a queue document "
                                                f"({exc.message})"), words.MERGE_FIX) from None
