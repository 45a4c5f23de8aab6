"""The text report, for a person at a terminal."""

from __future__ import annotations

from typing import Any

from impact.kinds import SurfaceKind
from impact.render.words import pack_time_line, reason_text, step_text, verdict_line
from impact.rows import Lane


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "-"


def _view_lines(view: dict[str, Any]) -> list[str]:
    title = {
        "head": "head view (merge base -> head)",
        "merged": "merged view (merge base -> head merged onto the target tip)",
    }[view["name"]]
    if view["unavailable"]:
        return [f"{title}: could not be computed: {view['unavailable']}"]
    rows = (
        [("A", p) for p in view["added"]]
        + [("D", p) for p in view["removed"]]
        + [("M", p) for p in view["modified"]]
        + [("R", f"{r['from']} -> {r['to']}") for r in view["renamed"]]
    )
    rows.sort(key=lambda row: row[1])
    count = len(rows)
    head = f"{title}: {count} path{'s' if count != 1 else ''} changed"
    head += f" (tree {_short(view['old_tree'])} -> {_short(view['new_tree'])})"
    lines = [head]
    conflicts = set(view["conflicts"])
    surface = {row["path"]: row for row in view["surfaces"]}

    def tag(shown: str) -> str:
        path = shown.split(" -> ")[-1]
        row = surface.get(path)
        label = row["kind"] if row else SurfaceKind.OUTSIDE
        if row and row["lane"] not in (Lane.IMPACT, "NONE"):
            label += f", {row['lane']} lane"
        return f"[{label}]" + (" [conflicted]" if path in conflicts else "")

    lines += [f"  {kind} {path}  {tag(path)}" for kind, path in rows]
    for path in sorted(conflicts - {p for _, p in rows}):
        lines.append(f"  C {path}  [conflicted]")
    if conflicts:
        lines.append(f"  {len(conflicts)} conflicted; every other path merged cleanly")
    return lines


def render_text(report: dict[str, Any]) -> str:
    """Revisions, merge bases, then each view's changed paths."""
    args = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in report["input"]["arguments"].items())
    surface = report["surface_map"]
    lines = [f"impact {report['tool']['version']} report on {report['repository']}",
             f"input: {report['input']['form']} ({args})",
             f"surface map: {surface['name']} ({surface['source']}; {surface['reason']})", "",
             "revisions:"]
    for role, rev in report["revisions"].items():
        lines.append(f"  {role:<11} {rev['sha']}  ({rev['spelled']})")
    if report["input"]["form"] == "worktree":
        lines.append(f"  {'head':<11} the working tree and index (uncommitted work)")
    if report["merge_bases"]:
        lines.append("merge bases:")
        for pair, shas in report["merge_bases"].items():
            lines.append(f"  {pair:<17} {', '.join(shas) if shas else 'none'}")
    for view in report["views"]:
        lines += ["", *_view_lines(view)]
    lines += ["", *_row_lines(report["rows"])]
    if report["pack_time"]["findings"]:
        lines += ["", "support-predicate tables (pack time):"]
        lines += [f"  {f['status']}: {f['family']}: {f['kind']} {f['field']}={f['value']}: "
                  f"{f['detail']}" for f in report["pack_time"]["findings"]]
    lines += ["", pack_time_line(report["pack_time"]), verdict_line(report["verdict"])]
    return "\n".join(lines) + "\n"


def _row_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Rows grouped by view and contract; lane rows last, named as left to their lane."""
    if not rows:
        return ["contract rows: none (no changed file is on the runtime surface)"]
    lines = ["contract rows:"]
    ordered = sorted(rows, key=lambda r: (r["lane"] != Lane.IMPACT, r["view"], r["contract"],
                                          r["subject"]))
    group = None
    for row in ordered:
        key = (row["view"], row["contract"], row["lane"])
        if key != group:
            group = key
            lane = "" if row["lane"] == Lane.IMPACT else f", left to the {row['lane']} lane"
            lines.append(f"  [{row['view']}] {row['contract']}{lane}")
        flag = " (pre-existing)" if row["preexisting"] else ""
        archs = f" [{', '.join(row['archs'])}]" if row["archs"] else ""
        says = reason_text(row["reason"], row["details"])
        lines.append(f"    {row['status']}{flag}: {row['subject']}: {says}{archs}")
        for side in row["sides"]:
            where = f"{side['file']}:{side['line']}" if side["line"] else side["file"]
            lines.append(f"      {side['role']:<11} {where} ({side['revision']})")
        for hop in row["evidence"]:
            says = step_text(hop["step"], hop["args"])
            lines.append(f"      -> {hop['file']}:{hop['line']}: {says}")
    return lines
