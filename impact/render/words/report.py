"""What a report says around its rows' own sentences, in every format, and the sentences
the report document itself holds.

Maintainers: each phrase takes data the report already holds; none decides anything. The
report document (impact/document.py) writes the coverage, emit and device-run sentences at
the end of this file into the report; the renderers print them as they are. The report's
strings become enum members where a phrase compares them (`Outcome(verdict["kind"])`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from impact.kinds import ViewName
from impact.render.words.rows import reason_text, subject_text
from impact.rollup import Outcome, PackOutcome
from impact.rows import Confirms, Lane, Role, Status

if TYPE_CHECKING:
    from impact.render.findings import Finding

def verdict_line(verdict: Mapping[str, Any]) -> str:
    """`Runtime impact: ...` from the report's verdict data."""
    kind = Outcome(verdict["kind"])
    text = str(kind)
    if kind == Outcome.NEEDS_DEVICE:
        text += " " + ", ".join(verdict["archs"])
    lanes = list(verdict["other_lanes"])
    if lanes:
        text += f" (left to the {' and '.join(lanes)} lane{'s' if len(lanes) > 1 else ''})"
    return f"Runtime impact: {text}"


def pack_time_lines(pack_time: Mapping[str, Any]) -> list[str]:
    """The Pack-time line where the map has an emitter, else none (the renderers that
    lead with it: text, the card, the job summary)."""
    if PackOutcome(pack_time["kind"]) == PackOutcome.NOT_APPLICABLE:
        return []
    return [pack_time_line(pack_time)]


def pack_time_line(pack_time: Mapping[str, Any]) -> str:
    """`Pack-time: ...` from the report's pack-time data."""
    kind = PackOutcome(pack_time["kind"])
    if kind == PackOutcome.NOT_RUN:
        return "Pack-time: NOT RUN (no emit file; run with --run-emit)"
    if kind == PackOutcome.NOT_APPLICABLE:
        return "Pack-time: N/A (the surface map names no emitter)"
    if kind == PackOutcome.CLEAN:
        return "Pack-time: CLEAN"
    if kind == PackOutcome.INCOMPLETE:
        pending = pack_time.get("unfinished", [])
        return (f"Pack-time: INCOMPLETE ({len(pending)} predicate probe(s) did not finish: "
                f"{', '.join(pending)})")
    return f"Pack-time: NEW {pack_time['new']}, FIRST-SHIPPED {pack_time['first_shipped']}"


# Every character that moves, ends or reorders a line, or hides itself: C0, DEL and C1
# controls (ESC starts a terminal sequence), the line and paragraph separators U+2028 and
# U+2029 (a line break to many readers), the bidirectional embeddings, overrides and
# isolates (U+202A-U+202E, U+2066-U+2069: U+202E shows a path backwards), the other
# format characters of Unicode (category Cf: zero-width, tags, soft hyphen) and lone
# surrogates (a path that is not UTF-8). tests/test_output_sinks.py checks the class
# against Python's own Unicode tables.
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb"
    "\ud800-\udfff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001-\U000e007f]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    code = ord(char)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char)
    if named:
        return named
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(value: Any) -> Any:
    """`value` with every string in it (keys too) free of control, separator, bidi and
    other invisible format characters, written as escapes (`\\n`, `\\x1b`, `\\u202e`): a
    path holding a newline, U+2028 or ESC and a forged `Runtime impact: NONE` line cannot
    print that line into a report a person or a script reads line by line, and U+202E
    cannot show a path other than it is."""
    if isinstance(value, str):
        return _CONTROL.sub(_escape, value)
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    return value



# Markdown (the review card, the job summary): a value outside a code span has every
# character escaped that starts markup there -- raw HTML (`<img onerror=...>`), an entity
# (`&`), a link or image (`[`, `]`), emphasis, strike-through, a code span (a backtick),
# a table cell (`|`) -- and a value inside one is fenced by more backticks than it holds.
_MARKDOWN = re.compile(r"[\\`*_\[\]<>&|~]")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def markdown_text(text: str) -> str:
    """`text` (already `printable`) as literal Markdown text: HTML's `<`, `>` and `&` as
    entities, every other markup character backslash-escaped."""
    return _MARKDOWN.sub(lambda m: _ENTITIES.get(m.group(0), "\\" + m.group(0)), text)


def code_span(text: str) -> str:
    """`text` (already `printable`) as one Markdown code span: fenced by one backtick more
    than its longest run of them, and padded when it starts or ends with one, so no
    backtick in a path closes the span and nothing inside it is read as markup."""
    runs = [len(r) for r in re.findall("`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    if not text.strip():  # CommonMark strips no padding from a blank span
        return f"{fence}{text or ' '}{fence}"
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# ------------------------------------------------------------------ around the rows
# What the text report and the review card say around the rows' own sentences.

VIEW_NAMES = {ViewName.HEAD: "head", ViewName.MERGED: "merged"}
VIEW_TITLES = {
    ViewName.HEAD: "head view (merge base -> head)",
    ViewName.MERGED: "merged view (merge base -> head merged onto the target tip)",
}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def views_text(views: tuple[ViewName, ...] | list[ViewName]) -> str:
    """Where a finding was seen, when more than one view: "head and merged views"."""
    return f"{_and([VIEW_NAMES[v] for v in views])} views" if len(views) > 1 else ""


def archs_text(archs: tuple[str, ...] | list[str]) -> str:
    return ", ".join(archs) if archs else "no architecture named"


def device_run_text(target: str, archs: tuple[str, ...] | list[str],
                    subjects: tuple[str, ...] | list[str] = (), *, code: bool = False) -> str:
    """One device run: the test a map or profile names, else the shipped variants that
    reach the subjects (or "it", the finding's own subject, when none are given). With
    `code` (Markdown), the names are code spans and the archs escaped text."""
    q = code_span if code else str
    if target:
        what = q(target)
        if subjects:
            what += " (for " + ", ".join(q(s) for s in subjects) + ")"
    else:
        what = ("the shipped variants reaching "
                + (", ".join(q(s) for s in subjects) if subjects else "it"))
    archs_said = markdown_text(archs_text(archs)) if code else archs_text(archs)
    return f"{what} on {archs_said}"


ACTION_MISMATCH = "make the copies agree"
ACTION_DEVICE = "device run: {run}"


def action_text(status: Status, run: str) -> str:
    """What to do about a finding: agree the copies (mismatch), or the device run (else)."""
    return ACTION_MISMATCH if status == Status.MISMATCH else ACTION_DEVICE.format(run=run)


def contract_list_text(docs: Mapping[str, str]) -> str:
    """`impact explain` with no name: each contract with the first sentence of what its
    check's docstring says it checks, then how to read the whole of one."""
    width = max(len(name) for name in docs)
    lines = ["Contracts (impact explain NAME says what each checks, and why):"]
    for name in sorted(docs):
        body = docs[name].split("What it checks:", 1)[-1].strip()
        first = " ".join(body.split(". ")[0].split())
        if len(first) > 100:
            first = first[:99].rstrip() + "…"
        lines.append(f"  {name.ljust(width)}  {first}")
    return "\n".join(lines)


def waived_text(finding: Finding) -> str:
    """A finding a waiver of the base acknowledges: listed, moving no verdict."""
    subject = subject_text(finding.subject, finding.details, finding.sides) or finding.subject
    return (f"Waived: {finding.status} {finding.contract} {subject} — {finding.waived} "
            "(moves no verdict)")


WAIVER_STATES = {
    "expired": "its day passed on {expires}: the finding counts again",
    "copies-changed": "a copy it was reviewed on changed since: the finding counts again",
}


def waiver_state_text(waiver: Mapping[str, Any]) -> str:
    """A waiver of the base whose finding this report holds but no longer waives, and why."""
    name = waiver["subject"] or waiver["finding"]
    return (f"Waiver of {name} ({waiver['finding']}) holds no longer: "
            + WAIVER_STATES[waiver["state"]].format(expires=waiver["expires"]))


def preexisting_text(count: int) -> str:
    return f"{count} pre-existing, not charged"


def inert_text(layout: int, elsewhere: int, settled: int) -> str:
    """The tally of rows with no runtime effect of their own: files where only comments,
    docstrings or layout changed; files whose changes other rows judge (what an op file's
    facts state is the bindings rows'); rows a rule settled (a removed unit nothing built,
    parameters renamed alike), which --verbose lists with their reasons."""
    if not elsewhere and not settled:
        return f"{layout} with no runtime effect (comments, docstrings or layout only)"
    parts = [f"{layout} comments, docstrings or layout only"] if layout else []
    parts += [f"{elsewhere} whose changes the rows above judge"] if elsewhere else []
    parts += [f"{settled} settled by a rule, --verbose says which"] if settled else []
    return f"{layout + elsewhere + settled} with no runtime effect ({'; '.join(parts)})"


def lanes_text(lanes: Mapping[str, list[str]], *, code: bool = False) -> str:
    """Rows left to other reviewers: "Left to other lanes: BUILD (a, b); DEPS (c)"; with
    `code` (Markdown), the subjects as code spans."""
    q = code_span if code else str
    parts = [f"{lane} ({', '.join(q(s) for s in subjects)})"
             for lane, subjects in sorted(lanes.items())]
    return "Left to other lanes: " + "; ".join(parts)


# Why a changed copy is not on a changed line (impact/anchors.py `Unanchored`).
UNANCHORED = {
    "removed": "the file is gone at the head",
    "only-removals": "the change only removed lines of it",
    "elsewhere": "the lines that changed lie outside this copy",
    "unread": "too large or binary to compare line by line",
}


def finding_text(finding: Finding) -> str:
    """A finding's sentence: what it is about (`subject_text`), then its reason's."""
    says = reason_text(finding.reason, finding.details)
    subject = subject_text(finding.subject, finding.details, finding.sides)
    return f"{subject}: {says}" if subject else says


def unanchored_text(file: str, why: str) -> str:
    """After a changed copy that keeps its check's line: why no changed line is given."""
    return f"{file} is not cited on a changed line: {UNANCHORED.get(why, why)}"


def finding_message(finding: Finding, cite: Callable[[int, Mapping[str, Any]], str], *,
                    say: Callable[[str], str] = str, views: bool = False) -> str:
    """A finding as one message, a GitHub annotation's or a SARIF result's: its reason's
    sentence (through `say`: SARIF escapes it), every other copy it names (its `related`
    sides, numbered from 1, each as `cite` writes it: a place, or a link to a related
    location), its views when `views`, the lane it is left to and whether it is
    pre-existing."""
    text = say(finding_text(finding)) + "."
    related = list(enumerate(finding.related, 1))
    counterparts = [cite(i, side) for i, side in related if side["role"] != Role.CHANGED]
    others = [cite(i, side) for i, side in related if side["role"] == Role.CHANGED]
    if counterparts:
        label = "Counterpart" if len(counterparts) == 1 else "Counterparts"
        text += f" {label}: " + ", ".join(counterparts) + "."
    if others:
        text += " Also changed: " + ", ".join(others) + "."
    for file, why in sorted(finding.details.get("unanchored", {}).items()):
        text += " " + say(unanchored_text(file, why)) + "."
    if views:
        text += f" ({' and '.join(finding.views)} view{'s' if len(finding.views) > 1 else ''})"
    if finding.lane != Lane.IMPACT:
        text += f" Left to the {finding.lane} lane."
    if finding.waived:
        text += f" Waived: {say(finding.waived)}."
    if finding.preexisting:
        text += " Pre-existing: not charged to this change."
    return text


NO_FINDINGS = "No runtime contract needs attention."
NO_ROWS = "No changed file is on the runtime surface."
MORE_DETAIL = "(--verbose adds the revisions, the changed paths, every copy and the evidence)"


def paths_under_text(folder: str, views: str = "") -> str:
    """The line above the text report's findings when every path they cite shares a folder
    (and, when every finding holds in the same views, which: said once, not per finding)."""
    held = f"Every finding below holds in the {views}" if views else ""
    if not folder:
        return held
    return f"{held}; paths are under {folder}" if held else f"Paths below are under {folder}"


def more_findings_text(count: int) -> str:
    """The line past the text report's cap on findings."""
    return f"{count} more finding{'s' if count != 1 else ''} — --verbose lists every one"


# The review card (the IMPACT lane of an automated PR review).
CARD_MARK_BREAK = "🔴"      # a mismatch with both sides traced
CARD_MARK_WARN = "⚠️"       # a changed row, or a mismatch not fully traced
CARD_MARK_NOTE = "📝"       # anything else
CARD_VERIFIED = "[verified]"
CARD_INFERRED = "[inferred]"


def card_header(verdict: Mapping[str, Any], runs: int, breaks: int) -> str:
    """`Impact (static): <verdict> — <n> device runs named; <m> BREAKS`."""
    kind = Outcome(verdict["kind"])
    text = str(kind)
    if kind == Outcome.NEEDS_DEVICE:
        text += " " + markdown_text(",".join(verdict["archs"]))
    return (f"Impact (static): {text} — {runs} device run{'s' if runs != 1 else ''} named; "
            f"{breaks} BREAKS")


def card_problem(changed: list[str], counterparts: list[str], views: str) -> str:
    text = "; ".join([*(f"{c} (changed)" for c in changed),
                      *(f"{c} (counterpart)" for c in counterparts)])
    return f"**Problem:** {text}" + (f", in the {views}" if views else "")


def card_impact(reason: str, archs: tuple[str, ...] | list[str]) -> str:
    """The finding's reason (as `reason_text` says it) and archs, escaped for Markdown."""
    return f"**Impact:** {markdown_text(reason)} (on {markdown_text(archs_text(archs))})."


def card_action_author() -> str:
    return ("**Action:** **Author must** make every copy of this contract agree before "
            "merging.")


def card_action_ask_agree() -> str:
    return ("**Action:** **Reviewer should ask** whether every copy of this contract still "
            "agrees: only one side could be traced.")


def card_action_ask_run(run: str) -> str:
    return f"**Action:** **Reviewer should ask** for the device run that settles it: {run}."


def card_more(count: int) -> str:
    return f"… and {count} more finding{'s' if count != 1 else ''} in the full report."


CARD_RUNS = "Device runs that would settle the changed findings:"


def card_preexisting(count: int) -> str:
    return f"Pre-existing, not charged to this change: {count}."


# --- The device-run plan (impact validate's input): tests and bench commands per run ---

CARD_BREAK_RUNS = "Device runs that would confirm the breaks:"
TEXT_RUNS = "device runs (impact validate --from-report runs their tests and bench commands):"


def plan_text(tests: list[str], bench: list[str], *, code: bool = False) -> str:
    """`tests: a, b; bench: cmd`, or that the map names none; with `code` (Markdown), each
    test and command a code span."""
    q = code_span if code else str
    parts = []
    if tests:
        parts.append("tests: " + ", ".join(q(t) for t in tests))
    if bench:
        parts.append("bench: " + ", ".join(q(b) for b in bench))
    return "; ".join(parts) if parts else "no test or bench named by the surface map"


def confirms_text(confirms: Confirms) -> str:
    """What a passing run would settle: the change is safe, or the break is real."""
    return "confirms the break" if confirms == Confirms.BREAK else "settles the change"


def annotation_title(finding: Finding) -> str:
    """A GitHub annotation's title: `impact <contract>: <status> (<subject>)`."""
    subject = subject_text(finding.subject, finding.details, finding.sides) or finding.subject
    return f"impact {finding.contract}: {finding.status} ({subject})"


def side_label(side: Mapping[str, Any]) -> str:
    """A related location's label in SARIF: `counterpart NAME (base)`, `changed copy (head)`."""
    what = "counterpart" if side["role"] != Role.CHANGED else "changed copy"
    symbol = f" {side['symbol']}" if side["symbol"] else ""
    return f"{what}{symbol} ({side['revision']})"


# ------------------------------------------------------------------ in the document
# Sentences impact/document.py writes into the report itself (the JSON holds them as
# they are): what was skipped and why, the emit fold, the device runs' notes.

GIVEN = "given"  # where an emit file or a surface map came from when the caller named it
EMIT_FOLD = "emit fold"
NO_EMIT_FILE = "no emit file given (--emit or --run-emit)"
NO_TARGET_TIP = "no --target-tip given"
FOLD_APPLIED = "applied"
FOLD_OFF_UNTRUSTED = "off: the head is not trusted (--untrusted-head)"


def view_text(view: ViewName) -> str:
    """A view as coverage names what was skipped: "merged view"."""
    return f"{view} view"


def revision_text(revision: ViewName) -> str:
    """A revision whose children left no result, as Pack-time names it: "head revision"."""
    return f"{revision} revision"


def check_text(contract: str) -> str:
    return f"{contract} check"


def map_lacks_files_text(map_name: str) -> str:
    """Why a check did not run: the map classifies none of the files it reads."""
    return f"the {map_name} surface map has none of the files it reads"


def device_test_basis(map_name: str, index: int, pattern: str, path: str) -> str:
    """Which `[[device_tests]]` entry named a run's tests or bench, for which file."""
    return f"{map_name} device_tests[{index}] '{pattern}' matched {path}"


def no_device_test_text(files: list[str]) -> str:
    return f"the surface map names no device test for {', '.join(files) or 'its subjects'}"


def not_in_head_text(tests: list[str]) -> str:
    """Tests an entry names that the head tree lacks (never emitted as a run's tests)."""
    return "not in the head tree, so not emitted: " + ", ".join(tests)


# ------------------------------------------------------------------ the verbose text
# What `impact report --verbose` says of the revisions, the views and every row.

REVISIONS_HEADING = "revisions:"
WORKTREE_HEAD = "the working tree and index (uncommitted work)"
MERGE_BASES_HEADING = "merge bases:"
CONFLICTED = "[conflicted]"
CONTRACT_ROWS = "contract rows:"
NO_CONTRACT_ROWS = "contract rows: none (no changed file is on the runtime surface)"
PREEXISTING_FLAG = " (pre-existing)"
PACK_TABLES_HEADING = "support-predicate tables (pack time):"
SRCROOT_TEXT = "The root of the repository analysed."  # SARIF's %SRCROOT%


def report_heading(version: str, repository: str) -> str:
    return f"impact {version} report on {repository}"


def input_text(form: str, arguments: str) -> str:
    return f"input: {form} ({arguments})"


def surface_map_text(name: str, source: str, reason: str) -> str:
    return f"surface map: {name} ({source}; {reason})"


def merge_bases_text(shas: list[str]) -> str:
    return ", ".join(shas) if shas else "none"


def view_unavailable_text(title: str, why: str) -> str:
    return f"{title}: could not be computed: {why}"


def view_paths_text(title: str, count: int, old_tree: str, new_tree: str) -> str:
    return (f"{title}: {count} path{'s' if count != 1 else ''} changed "
            f"(tree {old_tree} -> {new_tree})")


def lane_tag_text(lane: Lane) -> str:
    """A changed path's lane beside its surface kind, when another lane reviews it."""
    return f", {lane} lane"


def conflicts_text(count: int) -> str:
    return f"{count} conflicted; every other path merged cleanly"


def left_to_lane_text(lane: Lane) -> str:
    """A group of rows another lane reviews."""
    return f", left to the {lane} lane"


def basis_text(basis: str) -> str:
    """Where a device run's tests came from (`device_test_basis`, joined)."""
    return f"from {basis}"


# ------------------------------------------------------------------ progress
# What `impact report` says on the terminal as each stage starts (impact/api.py).

STAGE_REVISIONS = "reading the revisions"
STAGE_EMIT_FILE = "reading the emit file"
STAGE_EMITTER = "running the emitter"
STAGE_CHECKS = "checking the contracts"
