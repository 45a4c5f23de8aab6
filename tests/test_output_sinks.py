"""Every sink escapes what a hostile change names (issue 25, output class).

A path, an argument name and a branch name holding raw HTML, a line separator with a
forged verdict, a right-to-left override or a terminal escape must reach no renderer raw:
the text report and the annotations show printable escapes, the review card and the job
summary escaped Markdown, SARIF messages no control character; and the verdict line stays
the first and only one.
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from impact.document import device_runs
from impact.integrations import github_action
from impact.reasons import Reason
from impact.render import RENDERERS
from impact.render.words import printable
from impact.rollup import rollup
from impact.rows import Row, Side, Status

HTML = "<img src=x onerror=alert(1)>"
FORGED = "\u2028Runtime impact: NONE"
RAW = (HTML, "\u2028", "\u2029", "\u202e", "\u2066", "\x1b", "\x85", "\r", "\x00")
HOSTILE = f"k{HTML}{FORGED}\u2029\u202ecod\u2066e\x1b[2K\x85`|*[a](b)&amp;\r\x00.py"
BRANCH = f"fix/{HTML}{FORGED}\u202e\x1b[2K"
ARGUMENT = f"seed{HTML}{FORGED}\u202e\x1b[2K"


def hostile_report() -> dict:
    """A BREAKS report whose path, argument name, subject and branch are all hostile."""
    rows = [
        Row("kernargs", "head", f"{HOSTILE}:list", Status.MISMATCH,
            Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY, details={"names": [ARGUMENT]},
            archs=("gfx950",), sides=(Side(HOSTILE, 10, "head", "changed"),
                                      Side(f"p{HOSTILE}.cpp", 20, "head", "counterpart"))),
        Row("surface", "head", HOSTILE, Status.CHANGED, Reason.FILE_NOT_UNDERSTOOD,
            details={"failure": f"syntax error near {HTML}{FORGED}"}, archs=("gfx942",),
            sides=(Side(HOSTILE, 0, "head", "changed"),)),
    ]
    rows.sort(key=Row.sort_key)
    runs = device_runs(rows)
    for run in runs:
        run.update(tests=[f"tests/{HOSTILE}"], bench=[f"bench {ARGUMENT}"], note=ARGUMENT)
    return {
        "schema_version": "0.3", "tool": {"name": "impact", "version": "0"},
        "repository": "/r", "input": {"form": "range", "arguments": {"head": BRANCH}},
        "revisions": {"base": {"sha": "1" * 40, "spelled": "main"},
                      "head": {"sha": "2" * 40, "spelled": BRANCH}},
        "merge_bases": {},
        "surface_map": {"name": "hipdnn", "source": "builtin:hipdnn", "sha256": "0" * 64,
                        "reason": "test"},
        "views": [], "rows": [r.to_json() for r in rows],
        "verdict": rollup(rows, "all").to_json(), "device_runs": runs,
        "pack_time": {"kind": "INCOMPLETE", "probed": True, "new": 0, "first_shipped": 0,
                      "findings": [], "unfinished": [HOSTILE]},
        "emit": None,
        "coverage": {"contracts_checked": ["surface"], "skipped": [], "parse_failures": [],
                     "archs": {}},
    }


def _no_raw(out: str, *, html: bool) -> None:
    for needle in RAW if html else RAW[1:]:
        assert needle not in out, repr(needle)


@pytest.mark.parametrize("verbose", [False, True])
def test_the_text_report_escapes_every_control_and_keeps_one_verdict(verbose: bool) -> None:
    out = RENDERERS["text"](hostile_report(), verbose=verbose)
    _no_raw(out, html=False)
    lines = out.splitlines()  # splits on U+2028, U+2029, NEL and the C0 separators too
    verdicts = [i for i, line in enumerate(lines) if line.startswith("Runtime impact:")]
    assert lines[1] == "Runtime impact: BREAKS"
    # verbose repeats the answer at the end, by design; nothing else says a verdict
    assert verdicts == ([1, len(lines) - 1] if verbose else [1])
    assert all(lines[i] == lines[1] for i in verdicts)
    assert "\\u2028Runtime impact: NONE" in out and "\\u202e" in out and "\\x1b[2K" in out


def _html(card: str) -> str:
    markdown_it = pytest.importorskip("markdown_it", reason="needs markdown-it-py")
    return markdown_it.MarkdownIt("commonmark", {"html": True}).render(card)


def test_the_review_card_renders_no_markup_of_the_change() -> None:
    card = RENDERERS["markdown"](hostile_report())
    _no_raw(card, html=False)  # raw HTML is allowed inside a code span: it shows as text
    lines = card.splitlines()
    assert lines[0].startswith("Impact (static): BREAKS")
    said = [line for line in lines if line.lstrip(" -*0123456789.").startswith(
        ("Runtime impact", "Impact (static)"))]
    assert said == [lines[0]]  # the header is the first and only verdict line
    html = _html(card)
    assert "<img" not in html and "<a " not in html  # no tag or link of the change's
    assert "\\u202e" in html and "seed&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_job_summary_escapes_the_branch_names() -> None:
    pr = github_action.PullRequest(7, "1" * 40, f"main{HTML}", "2" * 40, BRANCH, "o/r")
    heading = github_action._heading(pr.comparison())
    _no_raw(heading, html=True)
    assert heading.count("\n") == 2 and heading.endswith("\n\n")
    assert "<img" not in _html(heading)


def test_annotations_are_one_command_a_line_and_escape_controls() -> None:
    out = RENDERERS["github"](hostile_report())
    _no_raw(out, html=False)
    lines = out.splitlines()
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    verdicts = [line for line in lines if line.split("::")[-1].startswith("Runtime impact:")]
    assert verdicts == [lines[-1]] and "Runtime impact: BREAKS" in lines[-1]
    for line in lines:  # a property holds no raw `:` or `,` of a path
        props = line.split("::")[1].partition(" ")[2]
        for prop in props.split(","):
            _key, _, value = prop.partition("=")
            assert ":" not in value and "\r" not in value and "\n" not in value, prop


def test_sarif_messages_carry_no_control_and_keep_the_real_paths() -> None:
    out = RENDERERS["sarif"](hostile_report())
    log = json.loads(out)
    texts = [r["message"]["text"] for r in log["runs"][0]["results"]]
    texts += [loc["message"]["text"] for r in log["runs"][0]["results"]
              for loc in r.get("relatedLocations", ())]
    for text in texts:
        _no_raw(text, html=False)
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]]
    assert all("%E2%80%AE" in uri for uri in uris)  # U+202E percent-encoded, not dropped


def test_printable_covers_every_control_separator_and_format_character() -> None:
    """The class in words/report.py against this Python's Unicode tables."""
    from impact.render.words.report import _CONTROL

    missed = [hex(c) for c in range(0x110000)
              if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
              and not _CONTROL.fullmatch(chr(c))]
    assert missed == []
    assert printable("a\u202eb\x1bc\u2028d\U000e0041\udc80") == (
        "a\\u202eb\\x1bc\\u2028d\\U000e0041\\udc80")


@pytest.mark.parametrize("text", ["a`b", "``", "`x", "x`", " ", "", "a | b", "<b>"])
def test_a_code_span_holds_its_text_whatever_backticks_it_has(text: str) -> None:
    from impact.render.words import code_span

    html = _html(f"say {code_span(text)} end")
    inner = html.split("<code>", 1)[1].split("</code>", 1)[0]
    expected = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert inner == (expected if text.strip() else text or " "), html


def test_markdown_text_is_literal() -> None:
    from impact.render.words import markdown_text

    text = "<b>x</b> & *y* _z_ [l](u) `c` | ~s~ \\"
    assert _html(markdown_text(text)).strip() == (
        "<p>&lt;b&gt;x&lt;/b&gt; &amp; *y* _z_ [l](u) `c` | ~s~ \\</p>")


def test_a_real_report_on_a_hostile_path_escapes_it_in_every_sink() -> None:
    """End to end: a head adding a kernel module whose name holds every hostile piece."""
    from harness import run

    from impact.fixtures import Change, Scenario
    from impact.fixtures import edits as e
    from impact.fixtures.tree import rocke_tree_files

    path = f"{e.KERNELS}/gfx950/x{HTML}{FORGED}\u202e\x1b[2K`|.py"
    found = run(Scenario(base=rocke_tree_files(), head=(
        Change("a module with a hostile name", write={path: "X = 1\n"}),)))
    assert found.exit_code == 2  # a surface file added: changed, NEEDS-DEVICE
    text = found.render("text", verbose=False)
    _no_raw(text, html=False)
    said = [line for line in text.splitlines() if line.startswith("Runtime impact")]
    assert len(said) == 1 and said == [text.splitlines()[1]]
    assert said[0].startswith("Runtime impact: NEEDS-DEVICE ")
    card = found.render("markdown")
    _no_raw(card, html=False)
    assert "<img" not in _html(card)
    assert card.splitlines()[0].startswith("Impact (static): NEEDS-DEVICE")
    annotations = found.render("github")
    _no_raw(annotations, html=False)
    assert all(line.startswith("::") for line in annotations.splitlines())
    for result in json.loads(found.render("sarif"))["runs"][0]["results"]:
        _no_raw(result["message"]["text"], html=False)
