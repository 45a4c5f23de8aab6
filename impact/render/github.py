"""GitHub workflow-command annotations, for runners without code scanning.

Maintainers: a pure rendering of `findings(report)`; it decides nothing. One line per
finding (`::error` for a mismatch, `::warning` for changed, `::notice` for inert,
outside or pre-existing), anchored on the changed copy and naming every other copy in
the message (`words.finding_message`, as SARIF has it, with the views), then the verdict
as a last `::error` (BREAKS) or `::notice` line. Values are escaped as the Actions
runner parses them: `%`, CR and LF in the message; those and `:` and `,` in a property;
and before that every string of the report is `printable`, so no ESC, U+2028 or bidi
control of a path reaches the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from impact.render.findings import Finding, findings, where
from impact.render.words import (
    annotation_title,
    finding_message,
    pack_time_lines,
    printable,
    verdict_line,
)
from impact.rollup import Outcome
from impact.rows import Status

COMMANDS = {Status.MISMATCH: "error", Status.CHANGED: "warning", Status.INERT: "notice",
            Status.OUTSIDE: "notice"}


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: the message's escapes and `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: str) -> str:
    """`::name key=value,...::message`, every part escaped."""
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def _annotation(finding: Finding) -> str:
    anchor = finding.anchor
    text = finding_message(finding, lambda _i, side: where(side), views=True)
    name = "notice" if not finding.counts else COMMANDS[finding.status]
    props: dict[str, str] = {}
    if anchor is not None:
        props["file"] = str(anchor["file"])
        if anchor["line"]:
            props["line"] = str(anchor["line"])
    props["title"] = annotation_title(finding)
    return command(name, text, **props)


def _verdict(report: Mapping[str, Any]) -> str:
    name = "error" if Outcome(report["verdict"]["kind"]) == Outcome.BREAKS else "notice"
    message = "\n".join([verdict_line(report["verdict"]), *pack_time_lines(report["pack_time"])])
    return command(name, message, title="impact")


def render_github(report: dict[str, Any]) -> str:
    """One annotation per finding, most severe first, then the verdict."""
    return render_github_findings(report) + render_github_verdict(report)


def render_github_findings(report: dict[str, Any]) -> str:
    """One annotation per finding, without the verdict (the Action says the verdict once,
    with its gate)."""
    report = printable(report)  # no control character of a path reaches the log
    return "".join(_annotation(f) + "\n" for f in findings(report))


def render_github_verdict(report: dict[str, Any]) -> str:
    """The verdict annotation alone (`impact report --format github -q`)."""
    return _verdict(printable(report)) + "\n"
