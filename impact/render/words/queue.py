"""What `impact audit` and `impact queue` say around their rows: headings, tallies, the
lines naming a pull request or a pair, and the verdict lines of both.

Maintainers: the rows' own sentences are `rows.py`'s (`reason_text`); these are the
documents' and their text and Markdown renderings'. Nothing here decides a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from impact.render.words.report import verdict_line

# --- impact audit ----------------------------------------------------------------------


def audit_heading(spelled: str, sha: str, map_name: str) -> str:
    return f"impact audit of {spelled} ({sha[:12]}), surface map {map_name}"


def audit_tally(findings: int, baselined: int) -> str:
    """How many mismatches the tree holds, and how many of them a baseline recorded."""
    if not findings:
        return "No copy of any contract disagrees with another: no drift."
    noun = "mismatch" if findings == 1 else "mismatches"
    tail = f", {baselined} of them baselined" if baselined else ""
    return f"{findings} {noun} between copies the tree keeps by hand{tail}:"


BASELINED_FLAG = " (baselined)"


def unsettled_text(counts: Mapping[str, int]) -> str:
    """The rows an audit leaves aside: copies that agree as far as static analysis can
    tell, or whose agreement only a device run proves; not drift."""
    total = sum(counts.values())
    parts = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
    return (f"{total} copies are not provably in agreement without a device run (not drift): "
            f"{parts}") if total else "Every copy compared was settled statically."


def unreadable_text(files: list[str]) -> str:
    """Files an audit could not read or parse: their contracts were not checked (fail
    closed: named, never counted as consistent)."""
    shown = ", ".join(files[:_LISTED])
    more = f" and {len(files) - _LISTED} more (--format json lists them all)" \
        if len(files) > _LISTED else ""
    return (f"{len(files)} file(s) could not be read or parsed, so their contracts were not "
            f"checked: {shown}{more}")


_LISTED = 10


def baseline_written_text(path: str, count: int) -> str:
    return f"Baseline written to {path}: {count} finding(s) recorded."


def audit_line(verdict: Mapping[str, Any]) -> str:
    """`Audit: BREAKS` or `Audit: NONE` (the audit's own verdict, impact.rollup.audit)."""
    return "Audit: " + verdict_line(verdict).split(": ", 1)[1]


# --- impact queue ----------------------------------------------------------------------


def queue_heading(target: str, sha: str, prs: int) -> str:
    return f"impact queue onto {target} ({sha[:12]}): {prs} pull request(s)"


def pairs_text(total: int, disjoint: int, analysed: int, unmergeable: int,
               shard: Mapping[str, int] | None) -> str:
    """How many pairs there were, how many were skipped because their two pull requests
    touch no contract subject in common, and how many were merged and analysed."""
    where = f" (shard {shard['k']}/{shard['n']})" if shard else ""
    text = (f"pairs: {total}; {disjoint} skipped as disjoint (no contract subject in common); "
            f"{analysed} merged together and analysed{where}")
    if unmergeable:
        text += f"; {unmergeable} not analysed: one of the two does not merge onto the target"
    return text


def single_line(ref: str, verdict: Mapping[str, Any]) -> str:
    return f"  {ref}: {verdict_line(verdict).split(': ', 1)[1]} alone"


def pair_line(first: str, second: str, verdict: Mapping[str, Any], new: int) -> str:
    kind = verdict_line(verdict).split(": ", 1)[1]
    return f"  {first} + {second}: {kind} together ({new} row(s) neither has alone)"


def pair_unavailable_text(first: str, second: str, why: str) -> str:
    return f"  {first} + {second}: not analysed ({why})"


def changed_by_text(ref: str | None) -> str:
    """Who changed the file a side names: one of the pair, or neither (the target's)."""
    return f"changed by {ref}" if ref else "as on the target"


SINGLES_HEADING = "each pull request merged alone onto the target:"
PAIRS_HEADING = "pairs that break together but not alone, worst first:"
NO_PAIRS = "No pair of pull requests breaks together what each keeps alone."
CARD_AUDIT_HEADING = "| contract | subject | why | sides |"
CARD_AUDIT_RULE = "|---|---|---|---|"
CARD_QUEUE_TITLE = "### impact: merge queue"
CARD_PAIRS_HEADING = "| pair | contract | subject | why | sides |"
CARD_PAIRS_RULE = "|---|---|---|---|---|"


def queue_line(verdict: Mapping[str, Any]) -> str:
    """`Merge queue: ...`: the worst of every pull request and pair (impact.rollup.worst)."""
    return "Merge queue: " + verdict_line(verdict).split(": ", 1)[1]


def merge_refused_text(why: str) -> str:
    return f"cannot merge the queue shards: {why}"


MERGE_FIX = ("give every file of impact queue --shard K/N for K = 1..N, made for the same "
             "target and pull requests")
