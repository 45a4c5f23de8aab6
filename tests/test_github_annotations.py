"""`--format github`: workflow-command annotations, read back the way the Actions runner
parses them (`::name key=value,...::message`; `%25`, `%0D`, `%0A` in the message and those,
`%3A` and `%2C` in a property value)."""

from __future__ import annotations

import copy
from pathlib import Path

import harness
import pytest
from test_render_golden import sample_report

from impact.demo import demo_report
from impact.render import RENDERERS
from impact.render.findings import findings
from impact.render.github import command, escape_data, escape_property, render_github
from impact.render.words import pack_time_line, printable, reason_text, verdict_line
from impact.rows import Role


def _unescape(text: str, *, prop: bool) -> str:
    text = text.replace("%0D", "\r").replace("%0A", "\n")
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%25", "%")


def parse(line: str) -> tuple[str, dict[str, str], str]:
    """One workflow command as the runner reads it: its name, properties and message."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    info, message = line[2:end], line[end + 2:]
    name, _, props = info.partition(" ")
    properties = {}
    for pair in filter(None, props.split(",")):
        key, _, value = pair.partition("=")
        properties[key] = _unescape(value, prop=True)
    return name, properties, _unescape(message, prop=False)


def annotations(text: str) -> list[tuple[str, dict[str, str], str]]:
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    assert all(line.startswith("::") for line in lines)  # one command a line, nothing else
    return [parse(line) for line in lines]


def test_escaping_follows_the_runner_rules() -> None:
    assert escape_data("100% done\r\nnext, a:b") == "100%25 done%0D%0Anext, a:b"
    assert escape_property("a,b:c%\n") == "a%2Cb%3Ac%25%0A"
    line = command("error", "m%\n::x", file="d,ir/f:1%.py", line="3", title="t: x, y")
    assert line == "::error file=d%2Cir/f%3A1%25.py,line=3,title=t%3A x%2C y::m%25%0A::x"
    assert parse(line) == ("error", {"file": "d,ir/f:1%.py", "line": "3",
                                     "title": "t: x, y"}, "m%\n::x")


def test_the_sample_report_as_annotations() -> None:
    report = sample_report()
    out = render_github(report)
    assert RENDERERS["github"] is render_github
    got = annotations(out)
    found = findings(report)
    assert len(got) == len(found) + 1
    by_subject = {f.subject: line for f, line in zip(found, got[:-1], strict=True)}
    name, props, msg = by_subject["packs/Gfx950Native.cpp:kArgs"]
    assert name == "error"
    assert props["file"] == "kernels/dense.py" and props["line"] == "12"
    assert "kernargs" in props["title"] and "mismatch" in props["title"]
    assert msg.startswith("kArgs: argument added on the Python side only: seed.")
    assert "Counterpart: packs/Gfx950Native.cpp:40." in msg
    assert by_subject["kernels/body.py"][0] == "warning"      # changed
    assert by_subject["kernels/notes.py"][0] == "notice"      # inert
    name, props, msg = by_subject["packs/Old.cpp:kArgs"]      # a pre-existing mismatch
    assert name == "notice" and "Pre-existing" in msg
    assert props["file"] == "kernels/old.py"                  # anchored on a counterpart
    # a whole-file side: the file, no line
    body = by_subject["kernels/body.py"][1]
    assert body == {"file": "kernels/body.py", "title": body["title"]}
    # the verdict is the last line: an error for BREAKS
    name, props, msg = got[-1]
    assert (name, props) == ("error", {"title": "impact"})
    assert msg == verdict_line(report["verdict"]) + "\n" + pack_time_line(report["pack_time"])


def test_a_verdict_other_than_breaks_is_a_notice() -> None:
    report = sample_report()
    report["rows"] = [r for r in report["rows"] if r["status"] != "mismatch"]
    report["verdict"] = {**report["verdict"], "kind": "NEEDS-DEVICE", "exit_code": 2,
                         "archs": ["gfx950"]}
    name, _props, msg = annotations(render_github(report))[-1]
    assert name == "notice" and msg.startswith("Runtime impact: NEEDS-DEVICE gfx950")


def test_paths_and_messages_holding_separators_survive() -> None:
    odd = "dir,one/we:ird%41\r\nname.py"
    report = sample_report()
    row = next(r for r in report["rows"] if r["contract"] == "kernargs" and r["view"] == "head"
               and r["reason"] == "argument-added-on-python-side-only")
    row["sides"] = [{**s, "file": odd} if s["role"] == Role.CHANGED else s
                    for s in row["sides"]]
    row["details"] = {"names": ["50%", "a,b:c", "line\nbreak\rhere"]}
    row["subject"] = "packs/X.cpp:k,1::a%"
    out = render_github(report)
    assert "\r" not in out and out.count("\n") == len(findings(report)) + 1
    parsed = {props.get("title"): (name, props, msg) for name, props, msg in annotations(out)}
    name, props, msg = parsed["impact kernargs: mismatch (k,1::a%)"]
    assert name == "error"
    # `%`, `,` and `:` survive the runner's escapes; CR and LF reach it as printable
    # escapes (`\r`), as every other control character does (issue 25)
    assert props["file"] == printable(odd) == "dir,one/we:ird%41\\r\\nname.py"
    assert props["line"] == "12"
    assert msg.startswith("k,1::a%: " + printable(reason_text(row["reason"], row["details"])) + ".")
    assert "50%, a,b:c, line\\nbreak\\rhere" in msg


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("demo") / "repo"
    demo_report(keep=str(where))
    return where


def test_the_demo_pull_request_as_annotations(demo_repo: Path) -> None:
    found = harness.run(demo_repo, target_tip="target")
    assert found.exit_code == 1
    got = annotations(found.render("github"))
    assert got[-1][0] == "error" and got[-1][2].startswith("Runtime impact: BREAKS")
    errors = [(props, msg) for name, props, msg in got[:-1] if name == "error"]
    assert errors
    for props, msg in errors:
        assert props["file"].endswith("attention_dense.py") and int(props["line"]) > 1
        assert "Counterpart: " in msg and "(head and merged views)" in msg
    # one annotation per finding: the merged view's copy of a row is not a second line
    titles = [props["title"] for _n, props, _m in got]
    assert len(titles) == len(set(titles))


def test_a_report_without_findings_is_the_verdict_alone() -> None:
    report = copy.deepcopy(sample_report())
    report["rows"] = []
    report["verdict"] = {**report["verdict"], "kind": "NONE", "exit_code": 0, "archs": []}
    got = annotations(render_github(report))
    assert len(got) == 1 and got[0][0] == "notice"
    assert got[0][2].startswith("Runtime impact: NONE")
