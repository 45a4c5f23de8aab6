"""The JSON report: sorted, deterministic, validated against its schema before it is written."""

from __future__ import annotations

import json
from typing import Any

from impact.contracts import REPORT_SCHEMA, validate
from impact.render.words import pack_time_line, reason_text, step_text, verdict_line


def with_words(report: dict[str, Any]) -> dict[str, Any]:
    """A copy of the report whose rows and hops carry their sentences (`says`), and whose
    verdicts carry their lines."""
    rows = []
    for row in report["rows"]:
        evidence = [{**hop, "says": step_text(hop["step"], hop["args"])}
                    for hop in row["evidence"]]
        rows.append({**row, "says": reason_text(row["reason"], row["details"]),
                     "evidence": evidence})
    return {**report, "rows": rows,
            "verdict": {**report["verdict"], "line": verdict_line(report["verdict"])},
            "pack_time": {**report["pack_time"], "line": pack_time_line(report["pack_time"])}}


def render_json(report: dict[str, Any]) -> str:
    """The report as canonical JSON; raises if it does not fit `report.schema.json`."""
    report = with_words(report)
    validate(report, REPORT_SCHEMA)
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
