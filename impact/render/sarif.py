"""SARIF 2.1.0 for code scanning: one result per finding, anchored on the changed copy.

Maintainers: a pure rendering of `findings(report)`; it decides nothing. Each result's
`ruleId` is the contract, its message the finding's (`words.finding_message`, as the
GitHub annotations have it) with every other copy linked as a related location, its
level the status's (a pre-existing finding is a note), and its `partialFingerprints` the
finding's stable row id, so code scanning tracks it across pushes. The driver's version
is the report's (`tool_version()` when it was built). Rules carry the check's docstring
(what `impact explain` prints). The verdict, the archs, the exit code and the revisions'
shas sit in the run's properties. `tests/test_sarif.py` validates the output against the
official SARIF 2.1.0 schema.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from impact.render.findings import Finding, findings, where
from impact.render.words import (
    SRCROOT_TEXT,
    finding_message,
    pack_time_line,
    printable,
    side_label,
    verdict_line,
)
from impact.rows import Status

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "impactFindingId/v1"

LEVELS = {Status.MISMATCH: "error", Status.CHANGED: "warning", Status.INERT: "note",
          Status.OUTSIDE: "none"}


def _uri(path: str) -> str:
    """A repository-relative path as a relative URI reference: every byte outside the
    unreserved set and `/` percent-encoded (spaces, `%`, `:`, `#`, control characters)."""
    return quote(path, safe="/")


def _escape(text: str) -> str:
    """Text that goes into a message holding embedded links: `\\`, `[` and `]` escaped
    (SARIF 2.1.0 §3.11.6)."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _location(side: Mapping[str, Any]) -> dict[str, Any]:
    # A whole-file side (line 0) is anchored on line 1: code scanning needs a region.
    return {"physicalLocation": {
        "artifactLocation": {"uri": _uri(side["file"]), "uriBaseId": SRCROOT},
        "region": {"startLine": max(int(side["line"]), 1)}}}


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    anchor, related = finding.anchor, finding.related
    # A message's text carries no control character (a viewer may print it as it is);
    # the locations keep the real paths, percent-encoded (`_uri`).
    def say(text: str) -> str:
        return _escape(printable(text))

    text = finding_message(finding, lambda i, side: f"[{say(where(side))}]({i})", say=say)
    result: dict[str, Any] = {
        "ruleId": finding.contract,
        "ruleIndex": rule_index,
        "level": "note" if not finding.counts else LEVELS[finding.status],
        "message": {"text": text},
        "partialFingerprints": {FINGERPRINT: finding.row_ids[0]},
        "properties": {
            "status": finding.status, "subject": finding.subject, "lane": finding.lane,
            "views": list(finding.views), "rowIds": list(finding.row_ids),
            "archs": list(finding.archs), "preexisting": finding.preexisting,
            "traced": "verified" if finding.traced else "inferred",
            "deviceTest": finding.device_test},
    }
    if anchor is not None:
        result["locations"] = [_location(anchor)]
    if related:
        result["relatedLocations"] = [
            {**_location(side), "id": i, "message": {"text": printable(side_label(side))}}
            for i, side in enumerate(related, 1)]
    return result


def _paragraph(text: str) -> str:
    """A docstring section as one line, its `Heading:` line dropped."""
    lines = text.strip().splitlines()
    if len(lines) > 1 and lines[0].rstrip().endswith(":"):
        lines = lines[1:]
    return " ".join(line.strip() for line in lines)


def rule(contract: str) -> dict[str, Any]:
    """The reporting descriptor of a contract: its check's docstring, as `impact explain`
    prints it, for the help; its first section for the short description, its first two
    for the full one."""
    from impact.checks import explain  # here: rendering other formats loads no check

    doc = explain(contract)
    if doc is None:
        doc = contract
    doc = inspect.cleandoc(doc)
    sections = [s for s in doc.split("\n\n") if s.strip()]
    return {
        "id": contract,
        "name": contract,
        "shortDescription": {"text": _paragraph(sections[0])},
        "fullDescription": {"text": " ".join(_paragraph(s) for s in sections[:2])},
        "help": {"text": doc},
    }


def _srcroot(repository: str) -> dict[str, Any]:
    base: dict[str, Any] = {"description": {"text": SRCROOT_TEXT}}
    path = PurePosixPath(repository)
    if path.is_absolute():
        base["uri"] = path.as_uri().rstrip("/") + "/"
    return base


def sarif_log(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log of one run."""
    found = findings(report)
    contracts = sorted({f.contract for f in found})
    index = {c: i for i, c in enumerate(contracts)}
    verdict = report["verdict"]
    run = {
        "tool": {"driver": {"name": "impact", "version": str(report["tool"]["version"]),
                            "rules": [rule(c) for c in contracts]}},
        "originalUriBaseIds": {SRCROOT: _srcroot(str(report["repository"]))},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.contract]) for f in found],
        "properties": {
            "verdict": verdict["kind"],
            "verdictLine": verdict_line(verdict),
            "archs": list(verdict["archs"]),
            "otherLanes": list(verdict["other_lanes"]),
            "exitCode": verdict["exit_code"],
            "packTime": pack_time_line(report["pack_time"]),
            "revisions": {name: {"spelled": rev["spelled"], "sha": rev["sha"]}
                          for name, rev in report["revisions"].items()},
            "deviceRuns": list(report["device_runs"]),
            "surfaceMap": report["surface_map"]["name"],
        },
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(report: dict[str, Any]) -> str:
    """The report as SARIF 2.1.0 JSON, keys sorted so the same inputs give the same bytes."""
    return json.dumps(sarif_log(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
