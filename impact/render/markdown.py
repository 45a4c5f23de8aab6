"""The review card: the IMPACT lane of an automated PR review, in Markdown.

Maintainers: the card follows the review format its consumers parse (docs: the card
format of the ROCm review skills): a header line `Impact (static): <verdict> — <n> device
runs named; <m> BREAKS`, then at most five findings most severe first, each with a
severity mark, a [verified]/[inferred] tag, **Problem** (the changed side's file:line and
its counterpart's), **Impact** (the row's reason) and an **Action** that ends "Author
must …" or "Reviewer should ask …"; then the device runs, the other lanes and the
pre-existing count. No contract names or other codes in the text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from impact.render.findings import Finding, findings, where
from impact.render.text import finding_run
from impact.render.words import (
    CARD_BREAK_RUNS,
    CARD_INFERRED,
    CARD_MARK_BREAK,
    CARD_MARK_NOTE,
    CARD_MARK_WARN,
    CARD_RUNS,
    CARD_VERIFIED,
    NO_FINDINGS,
    card_action_ask_agree,
    card_action_ask_run,
    card_action_author,
    card_header,
    card_impact,
    card_more,
    card_preexisting,
    card_problem,
    code_span,
    device_run_text,
    finding_text,
    lanes_text,
    markdown_text,
    pack_time_lines,
    plan_text,
    printable,
    views_text,
)
from impact.rows import Confirms, Lane, Status

MAX_FINDINGS = 5


def mark(finding: Finding) -> str:
    """🔴 a traced mismatch; ⚠️ a changed row or an untraced mismatch; 📝 anything else."""
    if finding.status == Status.MISMATCH:
        return CARD_MARK_BREAK if finding.traced else CARD_MARK_WARN
    return CARD_MARK_WARN if finding.status == Status.CHANGED else CARD_MARK_NOTE


def _cited(sides: tuple[Mapping[str, Any], ...]) -> list[str]:
    return list(dict.fromkeys(code_span(where(s)) for s in sides))


def _finding(number: int, finding: Finding, report: Mapping[str, Any]) -> list[str]:
    tag = CARD_VERIFIED if finding.traced else CARD_INFERRED
    changed = _cited(finding.changed_sides) or [code_span(finding.subject)]
    if finding.status == Status.MISMATCH:
        action = card_action_author() if finding.traced else card_action_ask_agree()
    else:
        action = card_action_ask_run(finding_run(finding, report, code=True))
    problem = card_problem(changed, _cited(finding.counterparts), views_text(finding.views))
    return [f"{number}. {mark(finding)} {tag}",
            f"   - {problem}",
            f"   - {card_impact(finding_text(finding), finding.archs)}",
            f"   - {action}"]


def _run_lines(run: dict[str, Any]) -> list[str]:
    """One device run: what it exercises, then the map's tests and bench (and its note)."""
    lines = [f"- {device_run_text(run['target'], run['archs'], run['subjects'], code=True)}"]
    if "tests" in run:
        if run["tests"] or run["bench"] or not run.get("note"):
            lines.append(f"  - {plan_text(run['tests'], run['bench'], code=True)}")
        if run.get("note"):
            lines.append(f"  - {markdown_text(run['note'])}")
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The card: header, the most severe findings citing both sides, device runs, lanes."""
    # No control character of a path reaches a line; and below, every value the report
    # holds is a code span (`code_span`) or escaped text (`markdown_text`), never markup.
    report = printable(report)
    every = findings(report)
    shown = [f for f in every if f.counts and f.lane == Lane.IMPACT
             and f.status in (Status.MISMATCH, Status.CHANGED)]
    breaks = sum(1 for f in shown if f.status == Status.MISMATCH)
    confirms = [(Confirms(r.get("confirms", Confirms.CHANGE)), r) for r in report["device_runs"]]
    runs = [r for purpose, r in confirms if purpose == Confirms.CHANGE]
    break_runs = [r for purpose, r in confirms if purpose == Confirms.BREAK]
    lines = [card_header(report["verdict"], len(runs), breaks),
             *map(markdown_text, pack_time_lines(report["pack_time"])), ""]
    for number, finding in enumerate(shown[:MAX_FINDINGS], start=1):
        lines += _finding(number, finding, report)
    if len(shown) > MAX_FINDINGS:
        lines.append(card_more(len(shown) - MAX_FINDINGS))
    if not shown:
        lines.append(NO_FINDINGS)
    for title, group in ((CARD_RUNS, runs), (CARD_BREAK_RUNS, break_runs)):
        if group:
            lines += ["", title]
            lines += [line for r in group for line in _run_lines(r)]
    lanes: dict[str, list[str]] = {}
    for f in every:
        if f.lane != Lane.IMPACT and f.counts:
            lanes.setdefault(f.lane, []).append(f.subject)
    if lanes:
        lines += ["", lanes_text({k: sorted(set(v)) for k, v in lanes.items()}, code=True)]
    pre = sum(1 for f in every if f.preexisting)
    if pre:
        lines += ["", card_preexisting(pre)]
    return "\n".join(lines) + "\n"
