"""The JSON report: sorted, deterministic, validated against its schema before it is written."""

from __future__ import annotations

import json
from typing import Any

from impact.contracts import REPORT_SCHEMA, validate


def render_json(report: dict[str, Any]) -> str:
    """The report as canonical JSON; raises if it does not fit `report.schema.json`."""
    validate(report, REPORT_SCHEMA)
    return json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
