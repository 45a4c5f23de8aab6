"""The renderings of an audit (`impact audit`) and of a merge queue (`impact queue`):
text for people, JSON for tools (checked against its schema before it is written) and a
Markdown card for the review thread.

Maintainers: reads the documents of `impact/treeaudit.py` and `impact/mergequeue.py`; every
sentence comes from `impact/render/words/queue.py` or the rows' own (`says`). Status and
verdict strings become enum members at the edge.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from impact.contracts import validate
from impact.render.words import markdown_text, verdict_line
from impact.render.words import queue as words
from impact.rollup import Outcome

AUDIT_SCHEMA = "audit.schema.json"
QUEUE_SCHEMA = "queue.schema.json"


def _json(document: dict[str, Any], schema: str) -> str:
    validate(document, schema)
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _sides(row: dict[str, Any], indent: str = "      ") -> list[str]:
    out = []
    for side in row["sides"]:
        symbol = f" {side['symbol']}" if side["symbol"] else ""
        who = f" ({words.changed_by_text(side['by'])})" if "by" in side else ""
        out.append(f"{indent}{side['file']}:{side['line']}{symbol}{who}")
    return out


def _row_text(row: dict[str, Any]) -> list[str]:
    flag = words.BASELINED_FLAG if row.get("baselined") else ""
    return [f"    {row['contract']}  {row['subject']}{flag}", f"      {row['says']}",
            *_sides(row)]


# --- audit -----------------------------------------------------------------------------

def render_audit_json(document: dict[str, Any]) -> str:
    """The audit document as canonical JSON; raises if it does not fit its schema."""
    return _json({**document, "verdict": {**document["verdict"],
                                          "line": words.audit_line(document["verdict"])}},
                 AUDIT_SCHEMA)


def render_audit_text(document: dict[str, Any]) -> str:
    revision = document["revision"]
    lines = [words.audit_heading(revision["spelled"], revision["sha"],
                                 document["surface_map"]["name"]), "",
             words.audit_tally(len(document["findings"]), document["baselined"])]
    for row in document["findings"]:
        lines += _row_text(row)
    lines += ["", words.unsettled_text(document["unsettled"])]
    if document["unreadable"]:
        lines.append(words.unreadable_text(document["unreadable"]))
    lines += ["", words.audit_line(document["verdict"])]
    return "\n".join(lines) + "\n"


def render_audit_markdown(document: dict[str, Any]) -> str:
    revision = document["revision"]
    heading = words.audit_heading(revision["spelled"], revision["sha"],
                                  document["surface_map"]["name"])
    line = words.audit_line(document["verdict"])
    lines = [f"### {markdown_text(heading)}", "", f"**{markdown_text(line)}**", "",
             markdown_text(words.audit_tally(len(document["findings"]), document["baselined"]))]
    if document["findings"]:
        lines += ["", words.CARD_AUDIT_HEADING, words.CARD_AUDIT_RULE]
        for row in document["findings"]:
            sides = "<br>".join(markdown_text(f"{s['file']}:{s['line']}") for s in row["sides"])
            flag = words.BASELINED_FLAG if row.get("baselined") else ""
            lines.append(f"| {markdown_text(row['contract'])} | "
                         f"{markdown_text(row['subject'] + flag)} | "
                         f"{markdown_text(row['says'])} | {sides} |")
    lines += ["", markdown_text(words.unsettled_text(document["unsettled"]))]
    if document["unreadable"]:
        lines.append(markdown_text(words.unreadable_text(document["unreadable"])))
    return "\n".join(lines) + "\n"


# --- queue -----------------------------------------------------------------------------

def render_queue_json(document: dict[str, Any]) -> str:
    """The queue document as canonical JSON; raises if it does not fit its schema."""
    return _json({**document, "verdict": {**document["verdict"],
                                          "line": words.queue_line(document["verdict"])}},
                 QUEUE_SCHEMA)


def _counts_text(document: dict[str, Any]) -> str:
    counts = document["counts"]
    return words.pairs_text(counts["pairs"], counts["disjoint"], counts["analysed"],
                            counts["unmergeable"], document["shard"])


def render_queue_text(document: dict[str, Any]) -> str:
    target = document["target"]
    lines = [words.queue_heading(target["spelled"], target["sha"], len(document["prs"])),
             "", words.SINGLES_HEADING]
    lines += [words.single_line(pr["ref"], pr["verdict"]) for pr in document["prs"]]
    lines += ["", _counts_text(document), ""]
    breaking = [p for p in document["pairs"] if p["rows"]]
    if breaking:
        lines.append(words.PAIRS_HEADING)
        for pair in breaking:
            lines.append(words.pair_line(pair["first"], pair["second"], pair["verdict"],
                                         len(pair["rows"])))
            for row in pair["rows"]:
                lines += _row_text(row)
    else:
        lines.append(words.NO_PAIRS)
    for pair in document["unmergeable"]:
        lines.append(words.pair_unavailable_text(pair["first"], pair["second"],
                                                 pair["not_mergeable"]))
    lines += ["", words.queue_line(document["verdict"])]
    return "\n".join(lines) + "\n"


def render_queue_markdown(document: dict[str, Any]) -> str:
    target = document["target"]
    lines = [words.CARD_QUEUE_TITLE, "",
             f"**{markdown_text(words.queue_line(document['verdict']))}**", "",
             markdown_text(words.queue_heading(target["spelled"], target["sha"],
                                               len(document["prs"]))), "",
             markdown_text(_counts_text(document))]
    breaking = [p for p in document["pairs"] if p["rows"]]
    if breaking:
        lines += ["", markdown_text(words.PAIRS_HEADING), "", words.CARD_PAIRS_HEADING,
                  words.CARD_PAIRS_RULE]
        for pair in breaking:
            names = markdown_text(f"{pair['first']} + {pair['second']}")
            for row in pair["rows"]:
                sides = "<br>".join(markdown_text(
                    f"{s['file']}:{s['line']} ({words.changed_by_text(s['by'])})")
                    for s in row["sides"])
                lines.append(f"| {names} | {markdown_text(row['contract'])} | "
                             f"{markdown_text(row['subject'])} | {markdown_text(row['says'])}"
                             f" | {sides} |")
    else:
        lines += ["", markdown_text(words.NO_PAIRS)]
    alone = [pr for pr in document["prs"] if Outcome(pr["verdict"]["kind"]) != Outcome.NONE
             and Outcome(pr["verdict"]["kind"]) != Outcome.NOT_APPLICABLE]
    if alone:
        lines += ["", markdown_text(words.SINGLES_HEADING), ""]
        lines += [f"- {markdown_text(pr['ref'])}: "
                  f"{markdown_text(verdict_line(pr['verdict']))}" for pr in alone]
    return "\n".join(lines) + "\n"


AUDIT_RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "json": render_audit_json, "markdown": render_audit_markdown, "text": render_audit_text}
QUEUE_RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "json": render_queue_json, "markdown": render_queue_markdown, "text": render_queue_text}
