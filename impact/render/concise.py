"""The concise format: one line per finding, `path:line:col: CONTRACT-REASON message`.

Why: editors, `grep`, CI log matchers and problem matchers already parse the shape ruff,
mypy and compilers print; a finding in it opens at its changed line with one click.
Maintainers: a pure rendering of `findings(report)`; it decides nothing. It lists what the
text report lists (the charged findings of the IMPACT lane that are `mismatch` or
`changed`), each anchored as SARIF and the annotations are (`Finding.anchor`: the changed
copy, on the line the change changed), column 1 (no column is tracked); a finding naming
no place is written at `.`. The last line is the verdict, as the text report's.
"""

from __future__ import annotations

from typing import Any

from impact.render.findings import Finding, findings, where
from impact.render.words import finding_message, pack_time_lines, printable, verdict_line
from impact.rows import Lane, Status


def _line(finding: Finding) -> str:
    anchor = finding.anchor
    place = f"{anchor['file']}:{anchor['line'] or 1}:1" if anchor is not None else ".:1:1"
    message = finding_message(finding, lambda _i, side: where(side),
                              views=len(finding.views) > 1)
    return f"{place}: {finding.contract}-{finding.reason} {finding.status}: {message}"


def shown(report: dict[str, Any]) -> list[Finding]:
    """The findings a concise report lists, most severe first."""
    return [f for f in findings(report) if f.counts and f.lane == Lane.IMPACT
            and f.status in (Status.MISMATCH, Status.CHANGED)]


def render_concise(report: dict[str, Any]) -> str:
    """One line per finding, then the Pack-time (where the map has an emitter) and verdict."""
    report = printable(report)  # no control character of a path reaches a line
    lines = [_line(f) for f in shown(report)]
    lines += [*pack_time_lines(report["pack_time"]), verdict_line(report["verdict"])]
    return "\n".join(lines) + "\n"
