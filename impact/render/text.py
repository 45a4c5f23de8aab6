"""The text report, for a person at a terminal: the answer first, then each finding.

Maintainers: the default report is the Pack-time and verdict lines, then each charged
finding of the IMPACT lane (`impact.render.findings`) wrapped to WIDTH, the first
MAX_FINDINGS of them and a count of the rest, then one line each for
what has no runtime effect, what is pre-existing and what is left to other lanes. With
`verbose`, the revisions, views, changed paths, every row's sides and evidence follow.
"""

from __future__ import annotations

import posixpath
import re
import textwrap
from collections.abc import Mapping
from typing import Any

from impact.kinds import InputForm, SurfaceKind, ViewName
from impact.reasons import Reason
from impact.render.findings import Finding, findings, where
from impact.render.words import (
    CONFLICTED,
    CONTRACT_ROWS,
    MERGE_BASES_HEADING,
    MORE_DETAIL,
    NO_CONTRACT_ROWS,
    NO_FINDINGS,
    NO_ROWS,
    PACK_TABLES_HEADING,
    PREEXISTING_FLAG,
    REVISIONS_HEADING,
    TEXT_RUNS,
    VIEW_TITLES,
    WORKTREE_HEAD,
    action_text,
    basis_text,
    confirms_text,
    conflicts_text,
    device_run_text,
    finding_text,
    inert_text,
    input_text,
    lane_tag_text,
    lanes_text,
    left_to_lane_text,
    merge_bases_text,
    more_findings_text,
    pack_time_lines,
    paths_under_text,
    plan_text,
    preexisting_text,
    printable,
    reason_text,
    report_heading,
    step_text,
    surface_map_text,
    unanchored_text,
    verdict_line,
    view_paths_text,
    view_unavailable_text,
    views_text,
    waived_text,
    waiver_state_text,
)
from impact.render.words.queue import BASELINED_FLAG
from impact.rows import Confirms, Lane, Status

# A terminal's width for the text report's findings, and how many it lists before it
# counts the rest (--verbose lists every one).
WIDTH = 160
MAX_FINDINGS = 30
_CONTINUED = "    "


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "-"


def _view_lines(view: dict[str, Any]) -> list[str]:
    title = VIEW_TITLES[ViewName(view["name"])]
    if view["unavailable"]:
        return [view_unavailable_text(title, view["unavailable"])]
    rows = (
        [("A", p) for p in view["added"]]
        + [("D", p) for p in view["removed"]]
        + [("M", p) for p in view["modified"]]
        + [("R", f"{r['from']} -> {r['to']}") for r in view["renamed"]]
    )
    rows.sort(key=lambda row: row[1])
    count = len(rows)
    lines = [view_paths_text(title, count, _short(view["old_tree"]),
                                   _short(view["new_tree"]))]
    conflicts = set(view["conflicts"])
    surface = {row["path"]: row for row in view["surfaces"]}

    def tag(shown: str) -> str:
        path = shown.split(" -> ")[-1]
        row = surface.get(path)
        label = row["kind"] if row else SurfaceKind.OUTSIDE
        if row and Lane(row["lane"]) not in (Lane.IMPACT, Lane.NONE):
            label += lane_tag_text(Lane(row["lane"]))
        return f"[{label}]" + (f" {CONFLICTED}" if path in conflicts else "")

    lines += [f"  {kind} {path}  {tag(path)}" for kind, path in rows]
    for path in sorted(conflicts - {p for _, p in rows}):
        lines.append(f"  C {path}  {CONFLICTED}")
    if conflicts:
        lines.append(f"  {conflicts_text(len(conflicts))}")
    return lines


def _places(sides: tuple[Mapping[str, Any], ...], under: str = "") -> list[str]:
    """Each distinct place once, in order (a file changed at base and head is one place,
    and a file cited on a line is not cited again whole),
    written relative to the folder `under` (the findings' common one, said once)."""
    lined = {s["file"] for s in sides if s["line"]}
    return list(dict.fromkeys(where(s).removeprefix(under) for s in sides
                              if s["line"] or s["file"] not in lined))


def common_folder(shown: list[Finding]) -> str:
    """The deepest folder (with its `/`) every side of the findings lies in, when there
    are at least two folders to drop; else "" (nothing to shorten)."""
    files = [str(s["file"]) for f in shown for s in f.sides]
    if not files:
        return ""
    folder = posixpath.commonpath([posixpath.dirname(p) or "." for p in files])
    return f"{folder}/" if folder not in ("", ".") and folder.count("/") >= 1 else ""


def finding_run(finding: Finding, report: Mapping[str, Any], *, code: bool = False) -> str:
    """The device run that settles a finding, from the report's deduplicated runs: per
    target, the union of the archs of the runs that name any of its rows."""
    targets: dict[str, set[str]] = {}
    for run in report["device_runs"]:
        if set(run["rows"]) & set(finding.row_ids):
            targets.setdefault(run["target"], set()).update(run["archs"])
    if not targets:
        return device_run_text(finding.device_test, finding.archs, code=code)
    return "; ".join(device_run_text(target, sorted(archs), code=code)
                     for target, archs in sorted(targets.items()))


def _finding_line(finding: Finding, report: Mapping[str, Any], under: str = "",
                  views_said: bool = False) -> str:
    parts = [f"{finding.status} {finding.contract}", finding_text(finding)]
    changed = _places(finding.changed_sides, under)
    counterparts = _places(finding.counterparts, under)
    cited = [f"changed {', '.join(changed)}"] if changed else []
    cited += [f"({unanchored_text(file.removeprefix(under), why)})"
              for file, why in sorted(finding.details.get("unanchored", {}).items())]
    cited += [f"counterpart {', '.join(counterparts)}"] if counterparts else []
    parts.append(", ".join(cited) if cited else finding.subject)
    if views_text(finding.views) and not views_said:
        parts.append(views_text(finding.views))
    parts.append(action_text(finding.status, finding_run(finding, report)))
    return " — ".join(parts)


def summary_lines(report: Mapping[str, Any], *, cap: int | None = MAX_FINDINGS) -> list[str]:
    """The answer: Pack-time and verdict, each finding (the first `cap`, then how many
    more), wrapped to fit a terminal, then the one-line tallies."""
    lines = [*pack_time_lines(report["pack_time"]), verdict_line(report["verdict"]), ""]
    every = findings(report)
    charged = [f for f in every if f.counts and f.lane == Lane.IMPACT]
    shown = [f for f in charged if f.status in (Status.MISMATCH, Status.CHANGED)]
    under = common_folder(shown[:cap])
    held = {f.views for f in shown[:cap]}
    views = views_text(next(iter(held))) if len(held) == 1 and len(shown) > 1 else ""
    if under or views:
        lines.append(paths_under_text(under, views))
    inside = re.compile(rf"(?<![\w/.-]){re.escape(under)}") if under else None
    for finding in shown[:cap]:
        line = _finding_line(finding, report, under, views_said=bool(views))
        lines += fitted(inside.sub("", line) if inside is not None else line)
    if cap is not None and len(shown) > cap:
        lines.append(more_findings_text(len(shown) - cap))
    if not every:
        lines.append(NO_ROWS)
    elif not shown:
        lines.append(NO_FINDINGS)
    inert = [f for f in charged if f.status not in (Status.MISMATCH, Status.CHANGED)]
    layout = sum(1 for f in inert if f.reason == Reason.ONLY_LAYOUT_CHANGED)
    elsewhere = sum(1 for f in inert if f.reason == Reason.STATED_CHANGED_JUDGED_ELSEWHERE)
    tallies = [inert_text(layout, elsewhere, len(inert) - layout - elsewhere)] if inert else []
    pre = sum(1 for f in every if f.preexisting)
    tallies += [preexisting_text(pre)] if pre else []
    tallies += [waived_text(f) for f in every if f.waived and not f.preexisting]
    tallies += [waiver_state_text(w) for w in report["coverage"].get("waivers", ())
                if w["state"] in ("expired", "copies-changed")]
    lanes: dict[str, list[str]] = {}
    for f in every:
        if f.lane != Lane.IMPACT and f.counts:
            lanes.setdefault(f.lane, []).append(f.subject)
    tallies += [lanes_text({k: sorted(set(v)) for k, v in lanes.items()})] if lanes else []
    if tallies:
        lines += ["", *(part for tally in tallies for part in fitted(tally))]
    return lines


def render_text(report: dict[str, Any], *, verbose: bool = False) -> str:
    """The answer first; with `verbose`, then the revisions, merge bases, each view's
    changed paths and every row with its sides and evidence."""
    report = printable(report)  # no control character of a path reaches a line
    lines = summary_lines(report, cap=None if verbose else MAX_FINDINGS)
    if not verbose:
        return "\n".join([*lines, "", MORE_DETAIL]) + "\n"
    return "\n".join([*lines, "", *_detail_lines(report), "", *lines[:2]]) + "\n"


def fitted(line: str) -> list[str]:
    """One finding's line in lines of at most WIDTH characters (continued lines indented),
    broken between words only: a path or a long name is never cut."""
    if len(line) <= WIDTH:
        return [line]
    return textwrap.wrap(line, width=WIDTH, subsequent_indent=_CONTINUED,
                         break_long_words=False, break_on_hyphens=False)


def _detail_lines(report: dict[str, Any]) -> list[str]:
    """Roughly the full report: revisions, merge bases, views, rows, pack-time tables."""
    args = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in report["input"]["arguments"].items())
    surface = report["surface_map"]
    lines = [report_heading(report["tool"]["version"], report["repository"]),
             input_text(report["input"]["form"], args),
             surface_map_text(surface["name"], surface["source"], surface["reason"]), "",
             REVISIONS_HEADING]
    for role, rev in report["revisions"].items():
        lines.append(f"  {role:<11} {rev['sha']}  ({rev['spelled']})")
    if InputForm(report["input"]["form"]) == InputForm.WORKTREE:
        lines.append(f"  {ViewName.HEAD:<11} {WORKTREE_HEAD}")
    if report["merge_bases"]:
        lines.append(MERGE_BASES_HEADING)
        for pair, shas in report["merge_bases"].items():
            lines.append(f"  {pair:<17} {merge_bases_text(shas)}")
    for view in report["views"]:
        lines += ["", *_view_lines(view)]
    lines += ["", *_row_lines(report["rows"])]
    if report["device_runs"]:
        lines += ["", TEXT_RUNS]
        for run in report["device_runs"]:
            lines.append(f"  {device_run_text(run['target'], run['archs'], run['subjects'])} "
                         f"({confirms_text(Confirms(run.get('confirms', Confirms.CHANGE)))})")
            if "tests" in run:
                if run["tests"] or run["bench"] or not run.get("note"):
                    lines.append(f"    {plan_text(run['tests'], run['bench'])}")
                if run.get("basis"):
                    lines.append(f"    {basis_text(run['basis'])}")
                if run.get("note"):
                    lines.append(f"    {run['note']}")
    if report["pack_time"]["findings"]:
        lines += ["", PACK_TABLES_HEADING]
        lines += [f"  {f['status']}: {f['family']}: {f['kind']} {f['field']}={f['value']}: "
                  f"{f['detail']}" for f in report["pack_time"]["findings"]]
    return lines


def _row_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Rows grouped by view and contract; lane rows last, named as left to their lane."""
    if not rows:
        return [NO_CONTRACT_ROWS]
    lines = [CONTRACT_ROWS]
    lanes = [(Lane(row["lane"]), row) for row in rows]
    ordered = sorted(lanes, key=lambda pair: (pair[0] != Lane.IMPACT, pair[1]["view"],
                                              pair[1]["contract"], pair[1]["subject"]))
    group = None
    for lane, row in ordered:
        key = (row["view"], row["contract"], lane)
        if key != group:
            group = key
            left = "" if lane == Lane.IMPACT else left_to_lane_text(lane)
            lines.append(f"  [{row['view']}] {row['contract']}{left}")
        flag = BASELINED_FLAG if row.get("baselined") else \
            PREEXISTING_FLAG if row["preexisting"] else ""
        archs = f" [{', '.join(row['archs'])}]" if row["archs"] else ""
        says = reason_text(row["reason"], row["details"])
        lines.append(f"    {row['status']}{flag}: {row['subject']}: {says}{archs}")
        for side in row["sides"]:
            lines.append(f"      {side['role']:<11} {where(side)} ({side['revision']})")
        for hop in row["evidence"]:
            says = step_text(hop["step"], hop["args"])
            lines.append(f"      -> {hop['file']}:{hop['line']}: {says}")
    return lines
