"""The review card: the IMPACT lane of an automated PR review, in Markdown."""

from __future__ import annotations

from typing import Any

from impact.render.words import pack_time_line, reason_text, verdict_line
from impact.rows import Lane, Role, Status

MAX_FINDINGS = 5
_SEVERITY = {Status.MISMATCH: 0, Status.CHANGED: 1, Status.INERT: 2, Status.OUTSIDE: 3}


def _where(side: dict[str, Any]) -> str:
    return f"`{side['file']}:{side['line']}`" if side["line"] else f"`{side['file']}`"


def _finding(row: dict[str, Any]) -> str:
    sides = sorted(row["sides"], key=lambda s: (s["role"] != Role.CHANGED, s["file"]))
    traced = len({s["file"] for s in sides}) > 1 and all(s["line"] for s in sides)
    tag = "[verified]" if traced else "[inferred]"
    cited = "; ".join(
        _where(s) + ("" if s["role"] == Role.CHANGED else " (counterpart)") for s in sides)
    if row["status"] == Status.MISMATCH:
        todo = "Make every copy of this contract agree before merging."
    else:
        archs = ", ".join(row["archs"]) or "the ingestor archs"
        todo = f"Run the device check on {archs} before merging."
    return (f"- **{row['status']}** {tag} `{row['contract']}` ({row['view']} view): "
            f"{reason_text(row['reason'], row['details'])}. {cited}. {todo}")


def _target(run: dict[str, Any]) -> str:
    """What to run: the test the map or a profile names, else the shipped variants that
    reach the changed files."""
    subjects = ", ".join(f"`{s}`" for s in run["subjects"])
    if run["target"]:
        return f"`{run['target']}` (for {subjects})"
    return f"the shipped variants reaching {subjects}"


def render_markdown(report: dict[str, Any]) -> str:
    """Verdict, the most severe findings with both sides cited, device runs, other lanes."""
    rows = [r for r in report["rows"] if r["lane"] == Lane.IMPACT and not r["preexisting"]]
    findings = sorted((r for r in rows if r["status"] in (Status.MISMATCH, Status.CHANGED)),
                      key=lambda r: (_SEVERITY[r["status"]], r["view"], r["contract"],
                                     r["subject"]))
    lines = [f"**{verdict_line(report['verdict'])}**", pack_time_line(report["pack_time"]), ""]
    if findings:
        lines.append("Findings:")
        lines += [_finding(r) for r in findings[:MAX_FINDINGS]]
        if len(findings) > MAX_FINDINGS:
            lines.append(f"- … and {len(findings) - MAX_FINDINGS} more in the full report.")
    else:
        lines.append("No runtime contract needs attention.")
    runs = report["device_runs"]
    if runs:
        lines += ["", "Device runs that would settle the `changed` rows:"]
        lines += [f"- on {', '.join(run['archs'])}: {_target(run)}" for run in runs]
    lanes = sorted({r["lane"] for r in report["rows"] if r["lane"] != Lane.IMPACT})
    if lanes:
        lines += ["", "Left to other lanes:"]
        for lane in lanes:
            subjects = sorted(r["subject"] for r in report["rows"] if r["lane"] == lane)
            lines.append(f"- {lane}: " + ", ".join(f"`{s}`" for s in subjects))
    pre = [r for r in report["rows"] if r["preexisting"]]
    if pre:
        lines += ["", f"Pre-existing (not charged to this change): {len(pre)} row(s)."]
    return "\n".join(lines) + "\n"
