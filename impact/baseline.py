"""Baselines: the findings a tree already held on the day a team adopted impact.

Why: a tree that is not clean today (`impact audit` lists its drift) would fail every
report that touches a copy of a drifted contract. A baseline file records each finding by
the id its row has in the head view (contract and subject, never a line) and a digest of
the content of every file its sides name, so a report (`impact report --baseline FILE`)
marks a finding it holds as it was recorded `baselined` (listed, moving no verdict) while
one whose copies changed since is not hidden: its digest no longer matches (as mypy's and
ruff's baselines key an error on its message and file, not on its line).

Maintainers: a file's digest is its layout-blind content digest where its kind records
one (a comment or layout edit keeps the finding baselined), else its blob id; a file a
side names that its snapshot lacks digests as missing. This module marks rows; whether a
marked row counts is `impact.rollup.counts`. The file is checked against
`impact/contracts/baseline.schema.json` when written and when read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impact.contracts import validate
from impact.errors import BadUsage
from impact.kinds import ViewName
from impact.rows import Row, Status, row_id
from impact.version import tool_version

if TYPE_CHECKING:  # reading a baseline file loads no check and no git reader
    from impact.checks import CheckContext
    from impact.git import Snapshot, Views

BASELINE_SCHEMA = "baseline.schema.json"
BASELINE_VERSION = "1"
MISSING = "-"


@dataclass(frozen=True)
class Baseline:
    """A baseline file as read: its path, the sha256 of its bytes and the (id, digest)
    pairs of the findings it recorded."""

    path: str
    sha256: str
    keys: frozenset[tuple[str, str]]


def finding_id(row: Row) -> str:
    """The id a finding is recorded under: its row's id in the head view, so that the
    same drift read in the merged view of a report is the same finding."""
    return row_id(row.contract, row.subject, ViewName.HEAD)


def snapshots(views: Views) -> dict[str, Snapshot]:
    """The snapshot each side revision label names in `views`."""
    found: dict[str, Snapshot] = {ViewName.BASE: views.base, ViewName.HEAD: views.head}
    merged = views.view(ViewName.MERGED)
    if merged is not None and merged.new is not None:
        found[ViewName.MERGED] = merged.new
        if merged.tip is not None:
            found[ViewName.TARGET_TIP] = merged.tip
    return found


def sides_digest(row: Row, ctx: CheckContext, trees: Mapping[str, Snapshot]) -> str:
    """The digest of the content of every file the row's sides name, at the revision each
    side was read from (lines left out: a copy that only moved is the same copy)."""
    parts = set()
    for side in row.sides:
        snapshot = trees.get(side.revision)
        if snapshot is None or side.file not in snapshot:
            parts.add(f"{side.file}\t{MISSING}")
            continue
        facts = ctx.facts(snapshot, side.file)
        digest = None if ctx.parse_failure(facts) is not None else ctx.content(facts)
        parts.add(f"{side.file}\t{digest or 'blob:' + snapshot[side.file].sha}")
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()


def record(rows: Iterable[Row], ctx: CheckContext, revision: Mapping[str, str],
           surface_map: str) -> dict[str, Any]:
    """The baseline document of `rows` (an audit's findings): one entry per finding, sorted
    by id, checked against its schema."""
    trees = snapshots(ctx.views)
    findings = {}
    for row in rows:
        key = finding_id(row)
        findings[key] = {
            "id": key, "contract": row.contract, "subject": row.subject,
            "reason": str(row.reason), "sides_digest": sides_digest(row, ctx, trees),
            "sides": sorted(({"file": s.file, "line": s.line} for s in row.sides),
                            key=lambda s: (s["file"], s["line"]))}
    document = {"schema_version": BASELINE_VERSION,
                "tool": {"name": "impact", "version": tool_version()},
                "revision": dict(revision), "surface_map": surface_map,
                "findings": [findings[k] for k in sorted(findings)]}
    validate(document, BASELINE_SCHEMA)
    return document


def dumps(document: dict[str, Any]) -> str:
    """A baseline document as the canonical JSON written to its file."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load(path: str | Path) -> Baseline:
    """The baseline file at `path`, checked against its schema; a file that cannot be
    read or does not fit is one clear error, never an empty baseline."""
    import jsonschema

    fix = "give a file impact audit --baseline wrote"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadUsage(f"cannot read the baseline file '{path}' ({exc.strerror})", fix) from None
    try:
        document = json.loads(data)
        validate(document, BASELINE_SCHEMA)
    except (ValueError, jsonschema.ValidationError) as exc:
        what = exc.message if isinstance(exc, jsonschema.ValidationError) else str(exc)
        raise BadUsage(f"the baseline file '{path}' is not a baseline ({what})", fix) from None
    keys = frozenset((f["id"], f["sides_digest"]) for f in document["findings"])
    return Baseline(str(path), hashlib.sha256(data).hexdigest(), keys)


def apply(rows: Iterable[Row], baseline: Baseline, ctx: CheckContext) -> list[Row]:
    """`rows`, each mismatch the baseline recorded with the same sides' content marked
    baselined; every other row as it was."""
    trees = snapshots(ctx.views)
    out = []
    for row in rows:
        if row.status == Status.MISMATCH and not row.preexisting and (
                finding_id(row), sides_digest(row, ctx, trees)) in baseline.keys:
            row = replace(row, baselined=True)
        out.append(row)
    return out
