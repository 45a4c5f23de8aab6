"""`impact cache info|clear` and the cache options (`--cache-dir`, `--no-cache`, the default
folder) of the command line, over the three stores: facts, built variants, stored reports.

What the stores keep and give back is tested through the library entry beside each store
(tests/test_fact_cache.py, tests/test_report_store.py, tests/test_emit_scale.py); here is
what the commands print and which folder the options reach.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_report_store import Runs

from emit.cache import EmitStore
from impact.cli import main
from impact.factstore import FactStore
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.reportstore import REPORTS_FOLDER
from impact.session import Session

TREE = rocke_tree_files()
BODY_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                      "return (spec.num_waves * 64 + 0, 1, 1)")
BODY = Scenario(base=TREE, head=(Change("body", edits=(BODY_EDIT,)),))


def _command(argv: list[str]) -> int:
    """One command in a Session of its own: nothing parsed before is in memory."""
    with Session(use_cache=False).active():
        return main(argv)


def _files(folder: Path, store: str) -> list[Path]:
    return sorted((folder / store).glob("*/*.json"))


def test_cache_info_and_clear(build, capsys, tmp_path) -> None:
    repo = build(BODY)
    folder = tmp_path / "c"
    assert main(["cache", "info", "--cache-dir", str(folder)]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [f"folder: {folder}", "entries: 0"]
    assert not folder.exists()  # looking never creates it
    _command(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
              "--cache-dir", str(folder)])
    capsys.readouterr()
    every = sorted(folder.glob("*/*/*.json"))  # facts and the stored report
    count = len(every)
    assert count > 2 and len(list((folder / REPORTS_FOLDER).glob("*/*.json"))) == 1
    assert main(["cache", "info", "--cache-dir", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    size = sum(p.stat().st_size for p in every)
    assert lines[1] == f"entries: {count}" and lines[2].startswith(f"size: {size} bytes")
    assert main(["cache", "clear", "--cache-dir", str(folder)]) == 0
    assert f"{count} entries" in capsys.readouterr().out
    assert not list(folder.glob("*/*/*.json"))
    main(["cache", "info", "--cache-dir", str(folder)])
    assert "entries: 0" in capsys.readouterr().out


def test_the_default_folder_follows_xdg_cache_home(build, capsys, tmp_path,
                                                   monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    repo = build(BODY)
    _command(["facts", "--repo", str(repo.path), "--rev", "head", e.GFX950_DENSE])
    assert len(_files(tmp_path / "xdg" / "impact", "facts")) == 1
    capsys.readouterr()
    main(["cache", "info"])
    assert capsys.readouterr().out.startswith(f"folder: {tmp_path / 'xdg' / 'impact'}\n")
    _command(["facts", "--repo", str(repo.path), "--rev", "base", e.GFX950_DENSE,
              "--no-cache"])
    assert len(_files(tmp_path / "xdg" / "impact", "facts")) == 1


def test_no_cache_stores_no_report(build, capsys, tmp_path, monkeypatch) -> None:
    runs = Runs(tmp_path / "cache", monkeypatch)
    repo = str(build(BODY).path)
    folder = tmp_path / "elsewhere"
    for _ in range(2):
        main(["report", "--repo", repo, "--base", "base", "--head", "head", "--no-cache",
              "--cache-dir", str(folder)])
    capsys.readouterr()
    assert runs.computed == 2 and not (folder / REPORTS_FOLDER).exists()


def test_cache_info_counts_and_clear_removes_the_stored_reports(build, capsys, tmp_path,
                                                                monkeypatch) -> None:
    runs = Runs(tmp_path / "cache", monkeypatch)
    repo = str(build(BODY).path)
    runs(repo, base="base", head="head")
    assert main(["cache", "info", "--cache-dir", str(runs.folder)]) == 0
    info = capsys.readouterr().out
    assert "reports: 1 entries" in info, info
    assert main(["cache", "clear", "--cache-dir", str(runs.folder)]) == 0
    assert "reports 1" in capsys.readouterr().out
    assert runs.entries() == []
    runs(repo, base="base", head="head")
    assert runs.computed == 2


def test_cache_info_and_clear_cover_the_emit_store(tmp_path, capsys) -> None:
    cache = tmp_path / "cache"
    # Entries of each store, as an emit and a report leave them.
    emitted = EmitStore(cache)
    for what in ("plan", "group:0", "group:1"):
        emitted.add_candidate(emitted.entry_key({"tree": "0" * 40}, what),
                              {"manifest": {"files": []}, "value": {"families": []}})
    facts = FactStore(cache)
    key = facts.key("0" * 64, "a.py", "1" * 40)
    assert key is not None
    facts.save(key, "[]")
    emit_files, fact_files = _files(cache, "emit"), _files(cache, "facts")
    assert emit_files and fact_files
    assert main(["cache", "info", "--cache-dir", str(cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    emit_size = sum(p.stat().st_size for p in emit_files)
    fact_size = sum(p.stat().st_size for p in fact_files)
    assert lines[1] == f"entries: {len(emit_files) + len(fact_files)}"
    assert lines[2].startswith(f"size: {emit_size + fact_size} bytes")
    assert f"facts: {len(fact_files)} entries, {fact_size} bytes" in lines[3]
    assert f"emit: {len(emit_files)} entries, {emit_size} bytes" in lines[4]
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert f"{len(emit_files) + len(fact_files)} entries" in out
    assert f"emit {len(emit_files)}" in out
    assert not _files(cache, "emit") and not _files(cache, "facts")
    assert main(["cache", "info", "--cache-dir", str(cache)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "entries: 0" and lines[4].startswith("emit: 0 entries")


@pytest.mark.slow
def test_cache_flags_are_the_fact_caches(build, tmp_path) -> None:
    repo = str(build(Scenario(base=TREE, head=(Change("comment", edits=(
        e.edit_comment(e.GFX950_DENSE),)),))).path)
    common = ["emit", "--repo", repo, "--base", "base", "--head", "head"]
    off = tmp_path / "off"
    assert main([*common, "--cache-dir", str(off), "--no-cache", "-o",
                 str(tmp_path / "a.json")]) == 0
    assert not list(off.rglob("*.json"))
    on = tmp_path / "on"
    assert main([*common, "--cache-dir", str(on), "-o", str(tmp_path / "b.json")]) == 0
    assert list((on / "emit").rglob("*.json"))
