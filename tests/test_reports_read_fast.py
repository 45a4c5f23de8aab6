"""Reports a person reads in ten seconds: the text report on one screen with both sides of
every finding, and the review card parsed the way the automated PR review parses it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from harness import run
from test_render_golden import sample_report

from impact.demo import demo_report
from impact.errors import EXIT_BREAKS
from impact.render.findings import findings
from impact.render.markdown import MAX_FINDINGS, render_markdown
from impact.render.words import counts_text, reason_text
from impact.rows import Lane, Status

# A terminal's height: the demo's seven findings, each naming its subject and both sides
# at 160 columns, fit with the verdict above them.
SCREEN = 30


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict:
    """The demo repository (`impact demo --keep DIR`), reported on as a user would, in
    text, as JSON and as the review card."""
    keep = tmp_path_factory.mktemp("demo") / "repo"
    demo_report(keep=str(keep))
    found = run(keep, target_tip="target")
    assert found.exit_code == EXIT_BREAKS
    out = {fmt: found.render(fmt) for fmt in ("text", "json", "markdown")}
    out["report"] = json.loads(out["json"])
    return out


def _where(side) -> str:
    return f"{side['file']}:{side['line']}" if side["line"] else side["file"]


def _charged(report: dict) -> list:
    return [f for f in findings(report) if not f.preexisting and f.lane == Lane.IMPACT
            and f.status in (Status.MISMATCH, Status.CHANGED)]


def _logical(lines: list[str]) -> list[str]:
    """The text report's lines with each finding's continued lines joined back."""
    joined: list[str] = []
    for line in lines:
        if line.startswith("    ") and joined:
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    return joined


def test_demo_text_report_fits_one_screen_and_names_both_sides(demo) -> None:
    text, report = demo["text"], demo["report"]
    lines = text.splitlines()
    assert len(lines) <= SCREEN, text
    assert all(len(line) <= 160 for line in lines), text
    assert lines[0].startswith("Pack-time: ") and lines[1] == "Runtime impact: BREAKS"
    lines = _logical(lines)
    # Every path the findings cite shares a folder: said once, above them.
    heading = lines[3]
    under = heading.rsplit(" under ", 1)[-1]
    assert lines[3] != under and under.endswith("/")
    lines = [ln.replace(f" {under}", " ") for ln in lines[4:]]
    charged = _charged(report)
    assert charged and any(f.status == Status.MISMATCH for f in charged)
    for finding in charged:
        says = reason_text(finding.reason, finding.details)
        says = says.replace(f" {under}", " ")
        line = next(ln for ln in lines if says in ln and all(
            _where(s).removeprefix(under) in ln for s in finding.sides))
        assert line.startswith(f"{finding.status} {finding.contract} — ")
        for side in finding.counterparts:
            assert f"counterpart {_where(side).removeprefix(under)}" in line
        if len(finding.views) > 1:  # said once above the findings when all share them
            assert "head and merged views" in line or "head and merged views" in heading
        assert ("make the copies agree" if finding.status == Status.MISMATCH
                else "device run: ") in line
    # The revisions and evidence chains are for --verbose only.
    assert "revisions:" not in text and " -> " not in text
    joined = " ".join(lines)
    assert "9 or 10" not in joined and "the builder declares 9 to 15 arguments" in joined


def test_verbose_adds_the_details_after_the_answer(tmp_path: Path, demo) -> None:
    """(`impact demo --verbose`, whose exit code tests/test_demo_cli.py checks.)"""
    out = demo_report(keep=str(tmp_path / "repo")).render("text", verbose=True)
    assert out.startswith(demo["text"].split("\n(--verbose")[0])
    for needle in ("revisions:", "merge bases:", "head view (merge base -> head)",
                   "contract rows:", "      -> ", "b.param 'dropout_seed' added"):
        assert needle in out, needle
    assert out.rstrip().splitlines()[-1] == "Runtime impact: BREAKS"


# ------------------------------------------------------------------ the review card

_FINDING = re.compile(r"^\d+\. (🔴|⚠️|📝) \[(verified|inferred)\]$")
_CITED = re.compile(r"`([^`]+)` \((changed|counterpart)\)")
_SEVERITY = {"🔴": 0, "⚠️": 1, "📝": 2}


def parse_card(card: str) -> tuple[str, list[dict]]:
    """The card as the review reads it: the header, then each finding's mark, tag,
    Problem, Impact and Action."""
    lines = card.splitlines()
    out: list[dict] = []
    for line in lines[1:]:
        match = _FINDING.match(line)
        if match:
            out.append({"mark": match[1], "tag": match[2]})
        elif out and line.startswith("   - **") and ":** " in line:
            label, text = line[len("   - **"):].split(":** ", 1)
            out[-1].setdefault(label, text)
    return lines[0], out


def _change_runs(report: dict) -> int:
    """The device runs the header counts: those that settle a change (a run that would
    only confirm a break is listed apart)."""
    return sum(1 for r in report["device_runs"] if r.get("confirms", "change") == "change")


def check_card(card: str, report: dict) -> list[dict]:
    header, cards = parse_card(card)
    breaks = sum(1 for f in _charged(report) if f.status == Status.MISMATCH)
    kind = report["verdict"]["kind"]
    assert re.fullmatch(rf"Impact \(static\): {re.escape(kind)}[^—]* — "
                        rf"{_change_runs(report)} device runs? named; {breaks} BREAKS",
                        header), header
    assert 0 < len(cards) <= MAX_FINDINGS
    assert [_SEVERITY[c["mark"]] for c in cards] == sorted(_SEVERITY[c["mark"]] for c in cards)
    changed_files = {s["file"] for r in report["rows"] for s in r["sides"]
                     if s["role"] == "changed"}
    for c in cards:
        assert set(c) == {"mark", "tag", "Problem", "Impact", "Action"}, c
        cited = _CITED.findall(c["Problem"])
        assert cited, c
        # No finding cites only unchanged files: a changed copy comes first.
        assert cited[0][1] == "changed" and cited[0][0].split(":")[0] in changed_files
        assert c["Impact"].endswith(".") and c["Impact"].count(". ") == 0
        action = c["Action"]
        assert re.search(r"\*\*(Author must|Reviewer should ask)\*\* [^*]+$", action), action
        if c["mark"] == "🔴":
            assert c["tag"] == "verified" and "**Author must**" in action
        if c["tag"] == "inferred":
            assert "**Reviewer should ask**" in action
    for code in ("kernargs", "launch-surface", "descriptor-symbol"):
        assert f"`{code}`" not in card  # no rule codes
    return cards


def test_demo_card_reads_as_the_review_reads_it(demo) -> None:
    cards = check_card(demo["markdown"], demo["report"])
    # Every finding the demo card shows is traced to a line on both sides.
    for c in cards:
        assert all(re.fullmatch(r".+:\d+", file) for file, _role in _CITED.findall(c["Problem"]))
    assert [c["mark"] for c in cards[:4]] == ["🔴"] * 4
    assert "more findings in the full report" in demo["markdown"]


def test_sample_card_reads_as_the_review_reads_it() -> None:
    report = sample_report()
    card = render_markdown(report)
    cards = check_card(card, report)
    assert cards[0]["mark"] == "🔴" and "9 to 15 arguments" in cards[0]["Impact"]
    assert "in the head and merged views" in cards[1]["Problem"]
    assert "Pre-existing, not charged to this change: 1." in card
    assert "Left to other lanes: BUILD (`CMakeLists.txt`)" in card
    # Device runs listed once each, as the report deduplicated them.
    runs = [ln for ln in card.splitlines() if ln.startswith("- ")]
    assert len(runs) == len(report["device_runs"]) == len(set(runs))


@pytest.mark.parametrize(("counts", "text"), [
    ([9], "9"), ([9, 10], "9 or 10"), ([9, 12], "9 or 12"), ([9, 11, 13], "9, 11 or 13"),
    ([15, 9, 10, 11, 12, 13, 14], "9 to 15"), ([], "none"),
])
def test_counts_read_as_ranges(counts, text) -> None:
    assert counts_text(counts) == text
