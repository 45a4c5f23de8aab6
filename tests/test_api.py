"""The public surface: each name in impact.__all__ exists, once, and is in the package map
with its real signature; a Session shares what it should and writes only where it is asked
to, and errors are raised. (The command line prints what the library entry gives:
tests/test_cli.py.)"""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import impact
from impact import api, checks, extract
from impact.errors import EXIT_BREAKS, ImpactError, UnknownRevision
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

MAP = impact.__doc__ or ""
BODY_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                      "return (spec.num_waves * 64 + 0, 1, 1)")
OTHER_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                       "return (spec.num_waves * 64 + 1, 1, 1)")


def test_public_names_are_exported_once() -> None:
    assert len(impact.__all__) == len(set(impact.__all__))
    for name in impact.__all__:
        assert getattr(impact, name) is not None
        assert name in MAP


def test_the_library_entry_is_exported_whole() -> None:
    assert set(api.__all__) <= set(impact.__all__)
    for name in api.__all__:
        assert getattr(impact, name) is getattr(api, name)


def _documented(name: str) -> list[str] | None:
    """The parameter names the map writes for `name(...)`, in order (None: not written as
    a call)."""
    found = re.search(rf"`{re.escape(name)}\(([^`]*)\)", MAP.replace("\n", " "))
    if found is None:
        return None
    names = []
    for part in found.group(1).split(","):
        part = part.strip().split("=", 1)[0].strip()
        if part and part not in ("*", "..."):
            names.append(part)
    return names


@pytest.mark.parametrize("name", [n for n in impact.__all__ if callable(getattr(impact, n))])
def test_the_map_writes_the_real_signature(name: str) -> None:
    documented = _documented(name)
    if documented is None:
        assert inspect.isclass(getattr(impact, name)) or name in MAP
        return
    target = getattr(impact, name)
    signature = inspect.signature(target.__init__ if inspect.isclass(target) else target)
    real = [p for p in signature.parameters if p != "self"]
    assert documented == real, name


def _repo(build, *, other: bool = False) -> Path:
    """`head` adds a kernel argument on the Python side only (BREAKS); `other`, when asked
    for, edits a builder's body instead."""
    heads = (Change("arg", edits=(e.add_builder_param(e.GFX950_DENSE, "dropout_seed",
                                                      "I32"),)),)
    target = (Change("body", edits=(OTHER_EDIT,)),) if other else ()
    return build(Scenario(base=rocke_tree_files(), head=heads, target=target)).path


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    for table in (extract.EXTRACTORS, extract.KIND_EXTRACTORS):
        for name, real in list(table.items()):
            monkeypatch.setitem(table, name, lambda p, s, m, real=real: parsed.append(p)
                                or real(p, s, m))
    return parsed


def test_a_session_shares_facts_between_reports(build, monkeypatch) -> None:
    repo = _repo(build, other=True)
    parsed = _count_parses(monkeypatch)
    session = impact.Session(use_cache=False)
    first = impact.report(repo, base="base", head="head", session=session)
    assert first.verdict["kind"] == "BREAKS" and parsed
    parsed.clear()
    second = impact.report(repo, base="base", head="target", session=session)
    assert second.verdict["kind"] == "NEEDS-DEVICE"
    assert parsed == [e.GFX950_DENSE]  # only the blob the first report had not read
    parsed.clear()
    impact.report(repo, base="base", head="target", session=impact.Session(use_cache=False))
    assert e.GFX950_DENSE_PACK in parsed  # a new Session starts cold


def test_a_session_is_current_while_active(build) -> None:
    repo = _repo(build)
    session = impact.Session(use_cache=False)
    with session.active():
        assert impact.current_session() is session
        first = impact.report(repo, base="base", head="head")
    assert impact.current_session() is not session
    assert first.document == impact.report(repo, base="base", head="head",
                                           session=session).document


def test_no_cache_writes_nothing_under_the_cache_folder(build, tmp_path) -> None:
    repo = _repo(build)
    off, on = tmp_path / "off", tmp_path / "on"
    quiet = impact.report(repo, base="base", head="head",
                          session=impact.Session(off, use_cache=False))
    assert not off.exists()
    cached = impact.report(repo, base="base", head="head", session=impact.Session(on))
    assert sorted(p.name for p in on.iterdir()) == ["facts", "reports"]
    assert quiet.document == cached.document
    again = impact.Session(on)
    assert dict(again.cache_usage())["reports"].entries == 1
    assert impact.report(repo, base="base", head="head", session=again).document \
        == cached.document


def test_errors_are_raised_with_their_exit_code(build, tmp_path) -> None:
    repo = _repo(build)
    with pytest.raises(UnknownRevision) as caught:
        impact.report(repo, base="base", head="nope", session=impact.Session(use_cache=False))
    assert caught.value.exit_code == 3 and "nope" in str(caught.value)
    with pytest.raises(ImpactError, match="exclude each other"):
        impact.report(repo, base="base", head="head", emit=tmp_path / "e.json", run_emit=True)
    with pytest.raises(ImpactError, match="no report format"):
        impact.report(repo, base="base", head="head").render("pdf")
    with pytest.raises(ImpactError, match="no contract named"):
        impact.explain("nope")
    assert impact.explain("kernargs") == inspect.cleandoc(checks.explain("kernargs") or "")


def test_write_output_is_whole_or_nothing(tmp_path) -> None:
    target = tmp_path / "r.txt"
    impact.write_output("text\n", target)
    assert target.read_text() == "text\n"
    with pytest.raises(ImpactError, match="folder does not exist"):
        impact.write_output("x", tmp_path / "no" / "r.txt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.txt"]


def test_a_stored_report_imports_no_check(build, tmp_path) -> None:
    """Read back from the store, a report and all its renderings but SARIF and GitHub's
    load no check, parser or graph (a fresh process, so nothing was imported before)."""
    repo, cache = _repo(build), tmp_path / "cache"
    impact.report(repo, base="base", head="head", session=impact.Session(cache))
    code = ("import sys, impact\n"
            f"found = impact.report({str(repo)!r}, base='base', head='head',"
            f" session=impact.Session({str(cache)!r}))\n"
            "found.render('text'), found.render('json'), found.render('markdown')\n"
            "print(found.exit_code, sorted(m for m in ('impact.checks', 'impact.graph',"
            " 'networkx', 'tree_sitter', 'impact.python') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == [str(EXIT_BREAKS), "[]"], done.stdout + done.stderr
