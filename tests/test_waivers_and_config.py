"""Waivers and configuration, read from the base (issue 27): a reviewed finding is
acknowledged with a reason and a last day, listed as waived and moving no verdict, never
hiding a finding whose copies changed since or whose day passed; `[tool.impact]` (or
`.impact/config.toml`) sets the gate and the format, a flag overrides it, the head's own
configuration is not read, and a malformed file is one clear error."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from harness import report

from impact.cli import main
from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS, EXIT_NEEDS_DEVICE, EXIT_NONE
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.policy import WAIVERS, BadPolicy, Waiver, parse_pyproject, parse_waivers

TREE = rocke_tree_files()
BREAK = e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")
OTHER = e.add_builder_param(e.GFX950_DENSE, "philox_offset", "I32")


def _mismatches(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["status"] == "mismatch" and not r["preexisting"]]


def _with(files: dict, path: str, text: str) -> dict:
    return {**files, path: text.encode()}


def _waiver(row: dict, *, expires: datetime.date | None = None) -> str:
    day = expires or datetime.date.today() + datetime.timedelta(days=7)
    return Waiver(row["finding"], "reviewed: the pin follows", row["copies"], day).to_toml()


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> dict:
    from conftest import Build

    build = Build(tmp_path_factory.mktemp("plain"))
    return report(build(Scenario(base=TREE, head=(Change("head", edits=(BREAK,)),))))


def test_a_waiver_hides_exactly_its_finding(build, plain) -> None:
    target = _mismatches(plain)[0]
    base = _with(TREE, WAIVERS, _waiver(target))
    doc = report(build(Scenario(base=base, head=(Change("head", edits=(BREAK,)),))))
    waived = [r for r in doc["rows"] if r.get("waived")]
    assert {r["finding"] for r in waived} == {target["finding"]}
    assert all(r["waived"] == "reviewed: the pin follows" for r in waived)
    # The other mismatches still count: the verdict is still BREAKS.
    assert doc["verdict"]["kind"] == "BREAKS"
    assert [w["state"] for w in doc["coverage"]["waivers"]] == ["waived"]


def test_waiving_every_break_moves_the_verdict_and_says_so(build, plain) -> None:
    text = "\n".join(_waiver(r) for r in {r["finding"]: r for r in _mismatches(plain)}.values())
    repo = build(Scenario(base=_with(TREE, WAIVERS, text),
                          head=(Change("head", edits=(BREAK,)),)))
    doc = report(repo)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"
    out = Path(repo.path) / "out.txt"
    assert main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                 "-o", str(out)]) == EXIT_NEEDS_DEVICE
    assert out.read_text().count("Waived: mismatch kernargs") == len(
        {r["finding"] for r in _mismatches(plain)})


def test_an_expired_waiver_hides_nothing(build, plain) -> None:
    target = _mismatches(plain)[0]
    yesterday = datetime.date.today() - datetime.timedelta(days=1)
    base = _with(TREE, WAIVERS, _waiver(target, expires=yesterday))
    doc = report(build(Scenario(base=base, head=(Change("head", edits=(BREAK,)),))))
    assert not any(r.get("waived") for r in doc["rows"])
    assert [w["state"] for w in doc["coverage"]["waivers"]] == ["expired"]


def test_a_waiver_never_hides_a_finding_whose_copies_changed(build, plain) -> None:
    """Reviewed on one edit; the head now adds another argument to the same builder."""
    target = _mismatches(plain)[0]
    base = _with(TREE, WAIVERS, _waiver(target))
    doc = report(build(Scenario(base=base, head=(Change("head", edits=(BREAK, OTHER)),))))
    assert not any(r.get("waived") for r in doc["rows"])
    assert [w["state"] for w in doc["coverage"]["waivers"]] == ["copies-changed"]


def test_a_waiver_the_head_adds_waives_nothing(build, plain) -> None:
    """The change under review cannot acknowledge its own break."""
    target = _mismatches(plain)[0]
    add = _adding(WAIVERS, _waiver(target))
    doc = report(build(Scenario(base=TREE, head=(Change("head", edits=(BREAK, add)),))))
    assert not any(r.get("waived") for r in doc["rows"])
    assert doc["verdict"]["kind"] == "BREAKS"


def _adding(path: str, text: str):
    def edit(files: dict) -> None:
        files[path] = text.encode()
    return edit


def test_impact_waive_writes_a_waiver_that_reads_back(build, capsys) -> None:
    repo = build(Scenario(base=TREE, head=(Change("head", edits=(BREAK,)),)), checkout=True)
    doc = report(repo)
    target = _mismatches(doc)[0]
    argv = ["waive", target["finding"], "--reason", "the pin lands next", "--expires",
            "2099-01-31", "--repo", str(repo.path), "--base", "base", "--head", "head"]
    assert main(argv) == EXIT_NONE
    assert target["finding"] in capsys.readouterr().out
    [waiver] = parse_waivers((Path(repo.path) / WAIVERS).read_bytes())
    assert (waiver.finding, waiver.copies, waiver.expires.isoformat()) == (
        target["finding"], target["copies"], "2099-01-31")
    # Again with another reason: the entry is replaced, not doubled.
    assert main([*argv[:2], "--reason", "changed my mind", *argv[4:]]) == EXIT_NONE
    [waiver] = parse_waivers((Path(repo.path) / WAIVERS).read_bytes())
    assert waiver.reason == "changed my mind"
    assert main(["waive", "0" * 16, "--reason", "x", "--repo", str(repo.path), "--base",
                 "base", "--head", "head"]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.count("\n") == 1


def test_malformed_waivers_are_one_clear_error(build, capsys) -> None:
    for text in ("[[waiver]]\nfinding = 1\n", "not toml [", "[[waiver]]\nfinding = "
                 "\"0123456789abcdef\"\nreason = \"r\"\ncopies = \"" + "0" * 64 +
                 "\"\nexpires = \"2026-02-30\"\n"):
        with pytest.raises(BadPolicy):
            parse_waivers(text.encode())
    repo = build(Scenario(base=_with(TREE, WAIVERS, "not toml ["),
                          head=(Change("head", edits=(BREAK,)),)))
    code = main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and err.count("\n") == 1 and WAIVERS in err
    assert "Traceback" not in err


def _pyproject(table: str) -> str:
    return f"[project]\nname = 'x'\n\n[tool.impact]\n{table}\n"


def test_the_base_config_sets_the_gate_and_the_format_and_a_flag_wins(build, capsys) -> None:
    base = _with(TREE, "pyproject.toml", _pyproject('fail-on = "never"\nformat = "concise"'))
    repo = build(Scenario(base=base, head=(Change("head", edits=(BREAK,)),)))
    argv = ["report", "--repo", str(repo.path), "--base", "base", "--head", "head"]
    assert main(argv) == EXIT_NONE  # the repository's gate passes every verdict
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "Runtime impact: BREAKS" and ":1: kernargs-" in out
    assert main([*argv, "--fail-on", "breaks", "--format", "text"]) == EXIT_BREAKS
    assert capsys.readouterr().out.startswith("Pack-time: ")
    # .impact/config.toml wins over pyproject.toml.
    both = _with(base, ".impact/config.toml", 'fail-on = "breaks"\n')
    repo = build(Scenario(base=both, head=(Change("head", edits=(BREAK,)),)))
    assert main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                 "-q"]) == EXIT_BREAKS


def test_the_heads_config_is_not_read(build, capsys) -> None:
    head_config = _adding("pyproject.toml", _pyproject('fail-on = "never"'))
    repo = build(Scenario(base=TREE, head=(Change("head", edits=(BREAK, head_config)),)))
    assert main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                 "-q"]) == EXIT_BREAKS


def test_a_config_off_its_schema_is_one_clear_error(build, capsys) -> None:
    with pytest.raises(BadPolicy, match="fail-on"):
        parse_pyproject(_pyproject('fail-on = "sometimes"').encode())
    assert parse_pyproject(b"[project]\nname = 'x'\n") == {}
    assert parse_pyproject(b"not toml [ but not ours") == {}  # another tool's problem
    base = _with(TREE, "pyproject.toml", _pyproject('colour = "red"'))
    repo = build(Scenario(base=base, head=(Change("head", edits=(BREAK,)),)))
    code = main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head"])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and err.count("\n") == 1 and "tool.impact" in err
