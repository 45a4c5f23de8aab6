"""`impact audit REV`: every contract of one revision checked against itself.

Why: a report charges a change only for copies it touched; the drift a tree already holds
(a list that disagrees with its builder since long ago) is listed as pre-existing when a
change comes near it, and otherwise never. An audit lists all of it at once, both sides
file:line, so a team adopting impact knows what it starts from and can record it as a
baseline (`impact/baseline.py`) that reports then honour.

How: the revision is compared with the empty tree (`impact.git.tree_views`): every path
is added, so every copy of every contract is a changed side, every check compares each
copy with the others of the same tree, and nothing is left aside as the base's. The rows
are the checks' own (`run_checks`); the audit keeps the mismatches (`impact.rollup.drift`)
and counts the rest by contract: against the empty tree every copy is `changed`, which is
what a device run settles, not drift. A file that could not be read is named.

Maintainers: decides nothing (the verdict is `impact.rollup.audit`'s) and says nothing
(`impact/render/words/queue.py`); the document is checked against
`impact/contracts/audit.schema.json` when rendered.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from impact.baseline import Baseline, record
from impact.baseline import apply as apply_baseline
from impact.caches import Caches
from impact.checks import REGISTRY, applies
from impact.checks.unreadable import UnreadableCheck
from impact.document import check_context, checked_rows
from impact.git import open_repository, tree_views
from impact.kinds import ViewName
from impact.render.words import reason_text, step_text
from impact.rollup import audit as audit_verdict
from impact.rollup import drift
from impact.rows import Status
from impact.surface import load_surface_map
from impact.version import SCHEMA_VERSION, tool_version

AUDIT_SCHEMA = "audit.schema.json"


def audit_tree(repo: str | os.PathLike[str], rev: str, *, surface_map: str | None = None,
               against: Baseline | None = None, caches: Caches | None = None,
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The audit document of `rev`, and the baseline document recording its findings
    (what `--baseline FILE` writes). With `against`, the findings that baseline
    recorded, copies unchanged, are marked baselined and move no verdict."""
    repository = open_repository(repo)
    views = tree_views(repository, rev)
    # The audited tree configures its own audit: nothing else is under review.
    surface = load_surface_map(surface_map, views.head)
    ctx = check_context(views, surface, caches)
    with ctx.caches.active():
        rows = checked_rows(ctx)
        found = drift(rows)
        revision = views.revisions[ViewName.HEAD]
        spelled = {"spelled": revision.spelled, "sha": revision.sha}
        baseline = record(found, ctx, spelled, surface.name)
        if against is not None:
            found = apply_baseline(found, against, ctx)
        unread = sorted({path for row in rows if row.contract == UnreadableCheck.name
                         for path in row.files}
                        | {path for path in views.views[0].diff.paths
                           if surface.classify(path) is not None
                           and ctx.parse_failure(ctx.facts(views.head, path))})
    verdict = audit_verdict(found)
    rest = Counter(row.contract for row in rows if row.status == Status.CHANGED)
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "impact", "version": tool_version()},
        "repository": views.location,
        "revision": spelled,
        "surface_map": {"name": surface.name, "source": surface.source},
        "findings": [worded(row.to_json()) for row in found],
        "baselined": sum(1 for r in found if r.baselined),
        "unsettled": dict(sorted(rest.items())),
        "unreadable": unread,
        "contracts_checked": sorted(c.name for c in REGISTRY if applies(c, ctx.surface)),
        "verdict": verdict.to_json(),
        "against": None if against is None else {"path": against.path,
                                                 "sha256": against.sha256},
    }
    return document, baseline


def worded(row: dict[str, Any]) -> dict[str, Any]:
    """A row as JSON with its sentence and its hops' sentences (`says`), as a JSON report
    holds it."""
    return {**row, "says": reason_text(row["reason"], row["details"]),
            "evidence": [{**hop, "says": step_text(hop["step"], hop["args"])}
                         for hop in row["evidence"]]}
