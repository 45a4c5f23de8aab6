"""The emitter's parent: each revision's variants built by sandboxed children, from trees
written out of git objects, and joined into the emit file.

Maintainers: this module never imports analysed code; it decides which children run and
in what order, and leaves each job to its module: the folders and their tree ids
(emit/trees.py), the rules file the child reads (emit/rules.py: impact's readings, which
the child may not import), the jail's environment and folders (emit/jail.py), starting,
bounding and ending the children (emit/children.py, through emit/sandbox.py), one
revision's state (emit/revision.py), the cache of built groups (emit/reuse.py over
emit/cache.py), reading back what the children wrote (emit/results.py), and the emit file
(emit/emitfile.py). A surface map without emitter conventions starts no child: both
revisions read not-started, so nothing folds and Pack-time is INCOMPLETE.

At scale (`run_emit`): `jobs` children run at once. A revision is written out once (its
tree and rules, read-only to each of its children); each child has its own scratch folder,
jail, stderr buffer and protections record. With more jobs than revisions, or a
`--shard`, a first child per revision lists its families (`--only` with none), and
emit/shard.py deals the groups of families out among children or slices; the children's
documents are joined back and must cover each enumerated family exactly once. Groups
already built for the same key come from the cache (never the head's under
`untrusted_head`), and complete groups a child built are stored there. When the cache
holds every group wanted for both revisions the emit file is joined from it at once. Only
a revision that needs a child is written out, has its rules built, and gets a jail; its
children record what they read (`--reads`), so only the groups that missed are built, and
a revision whose plan the cache holds for other trees only is first planned by a child,
then built group by group.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, TextIO

from emit.cache import EmitStore
from emit.children import Limits, run_children, signals_end_the_run, temp_root
from emit.emitfile import emit_document
from emit.jail import hidden_paths
from emit.manifest import States
from emit.results import finish, not_built, read_plan
from emit.reuse import cache_key, load_cached, load_groups
from emit.revision import Revision
from emit.rules import child_rules
from emit.shard import Group, assign, groups_of
from emit.trees import expected_trees, roots_of
from impact.factstore import FactStore
from impact.git import BASE_TO_HEAD, Views
from impact.kinds import ViewName
from impact.surface import SurfaceMap


def default_jobs() -> int:
    """Children at once by default: the cores this process may run on."""
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def run_emit(views: Views, surface: SurfaceMap, *, jobs: int | None = None,
             limits: Limits = Limits(), flavor: str | None = None, bar: TextIO | None = None,
             isolate: bool = True, store: EmitStore | None = None,
             untrusted_head: bool = False,
             shard: tuple[int, int] | None = None,
             fact_store: FactStore | None = None) -> dict[str, Any]:
    """Build every shipped variant at the base and at the head (or slice K of N of them,
    `shard`); the emit document.

    `jobs` children run at once (default: the cores). With more jobs than revisions to
    build, or a shard, each revision is first asked for its families (a child that builds
    none) and its groups are split among children (emit/shard.py). `store` is the cache
    of built variants (emit/cache.py); with `untrusted_head` the head's results are
    neither read from it nor written to it, as the head's own code produced them. When
    the cache holds every group wanted, no child starts and no file is parsed.
    `fact_store`, the persistent fact cache the rules of a revision that needs a child
    are read through (None: the one the caller made active, if any).
    `isolate=False` runs the children without namespaces (the emit file records every
    protection as missing): for tests of that record, and callers that know the OS
    refuses them. A map without emitter conventions starts no child: both revisions read
    not-started (fail closed: nothing folds, Pack-time is INCOMPLETE)."""
    jobs = max(1, jobs or default_jobs())
    roots = roots_of(surface)
    trees = expected_trees(views, surface)
    commits = _commits(views)
    if store is not None and not store.enabled:
        store = None
    try:
        if surface.conventions.emitter is None:  # nothing says what to call: fail closed
            why = (f"the surface map {surface.name} has no emitter conventions "
                   "([conventions.emitter]): nothing was built")
            return emit_document({label: not_built(commits[label], trees[label], why)
                                  for label in (ViewName.BASE, ViewName.HEAD)}, shard)
        revisions = []
        for label, snapshot in ((ViewName.BASE, views.base), (ViewName.HEAD, views.head)):
            revision = Revision(label, commits[label], trees[label], snapshot=snapshot,
                                roots=roots)
            if store is not None and untrusted_head and label == ViewName.HEAD:
                revision.cache_state = "not used: the head is untrusted"
            elif store is not None:
                revision.key = cache_key(revision, snapshot, surface, flavor, limits, isolate)
                if revision.key is not None:
                    revision.cache_state = "used"
                    revision.states = States(snapshot, trees[label])
                    load_cached(store, revision)
            revisions.append(revision)
        if not any(_needs_child(r, shard) for r in revisions):
            records = {r.label: finish(r, store, shard) for r in revisions}
            return emit_document(records, shard)
        with signals_end_the_run(), temp_root() as tmp:
            _build(revisions, tmp, surface, jobs=jobs, limits=limits, isolate=isolate,
                   flavor=flavor, bar=bar, shard=shard, fact_store=fact_store, store=store,
                   hide=hidden_paths(views, tmp, extra=(store.root,) if store is not None else ()))
            records = {r.label: finish(r, store, shard) for r in revisions}
        return emit_document(records, shard)
    finally:
        if store is not None:
            store.close()


def _needs_child(revision: Revision, shard: tuple[int, int] | None) -> bool:
    """Whether the cache lacks the plan or a group this emit wants of `revision`."""
    if revision.plan is None:
        return True
    groups = groups_of(revision.plan["enumerated"])
    revision.wanted = assign(groups, shard[1])[shard[0] - 1] if shard else groups
    return any(g.id not in revision.pieces for g in revision.wanted)


def _build(revisions: list[Revision], tmp: Path, surface: SurfaceMap, *, jobs: int,
           limits: Limits, isolate: bool, flavor: str | None, bar: TextIO | None,
           shard: tuple[int, int] | None, fact_store: FactStore | None,
           store: EmitStore | None, hide: list[str]) -> None:
    """Write out each revision that needs a child (its tree and rules), plan and run the
    children; the revisions the cache serves whole get none. A revision whose plan the
    cache holds for other trees only is planned by a child first, so that the groups
    whose reads are unchanged come from the cache."""
    building = [r for r in revisions if _needs_child(r, shard)]
    built = {r.label for r in building}
    with contextlib.ExitStack() as facts:
        if fact_store is not None:
            from impact.extract import persistent_facts  # the parsers, for the rules only

            facts.enter_context(persistent_facts(fact_store))
        for revision in revisions:
            revision.folder = tmp / revision.label
            if revision.label in built:
                assert revision.snapshot is not None
                revision.rules = child_rules(revision.snapshot, surface)
            else:
                revision.snapshot = None  # nothing of it is written out
    common = {"limits": limits, "isolate": isolate, "roots_py": tuple(surface.python_roots),
              "roots_desc": tuple(surface.descriptor_roots), "flavor": flavor,
              "bar": bar, "hide": hide}
    split = shard is not None or jobs > len(revisions)
    planning = [r for r in building if r.plan is None and (split or r.plan_seen)]
    for revision in planning:
        revision.plan_run = revision.new_run("plan", [])
    if planning:
        run_children([r.plan_run for r in planning if r.plan_run], jobs=jobs, **common)
        for revision in planning:
            read_plan(revision)
            if store is not None and revision.key is not None and revision.plan is not None:
                load_groups(store, revision)
    _plan_children(revisions, jobs, shard)
    builds = sorted((run for r in revisions for run in r.runs), key=lambda r: -r.cost)
    if builds:
        run_children(builds, jobs=jobs, **common)


def _plan_children(revisions: list[Revision], jobs: int, shard: tuple[int, int] | None
                   ) -> None:
    """Which children each revision needs: none when the cache holds every group wanted;
    one building everything when no plan is known; else the missing groups split into
    as many children as the jobs allow."""
    missing: dict[str, list[Group]] = {}
    for revision in revisions:
        if revision.plan_run is not None and revision.plan is None:
            continue  # its planning child failed; the revision reads as that child did
        if revision.plan is None:
            revision.runs.append(revision.new_run("all", None))
            continue
        groups = groups_of(revision.plan["enumerated"])
        revision.wanted = assign(groups, shard[1])[shard[0] - 1] if shard else groups
        missing[revision.label] = [g for g in revision.wanted if g.id not in revision.pieces]
    building = [label for label, groups in missing.items() if groups] + [
        r.label for r in revisions if r.runs]
    per_revision = max(1, jobs // max(1, len(building)))
    for revision in revisions:
        groups = missing.get(revision.label)
        if not groups:
            continue
        for number, part in enumerate(assign(groups, min(per_revision, len(groups)))):
            if part:
                revision.runs.append(revision.new_run(
                    str(number), [fid for g in part for fid in g.families],
                    sum(g.variants for g in part)))


def _commits(views: Views) -> dict[str, str | None]:
    """The commit each built snapshot was read from (None for uncommitted work)."""
    merge_bases = views.merge_bases.get(BASE_TO_HEAD)
    base = views.revisions.get(ViewName.BASE)
    head = views.revisions.get(ViewName.HEAD)
    return {ViewName.BASE: merge_bases[0] if merge_bases else (base.sha if base else None),
            ViewName.HEAD: head.sha if head else None}

