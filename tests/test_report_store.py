"""Stored reports (impact/reportstore.py): a report asked for again with the same inputs is
read back, in every format, with the same bytes; any input that differs is a miss; a damaged
or foreign entry is computed afresh; --no-cache stores nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from impact import api, reportstore
from impact import document as report_module
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.reportstore import REPORTS_FOLDER
from impact.session import Session

TREE = rocke_tree_files()
BODY_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                      "return (spec.num_waves * 64 + 0, 1, 1)")
OTHER_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                       "return (spec.num_waves * 64 + 1, 1, 1)")


class Runs:
    """Runs `impact.api.report` against one cache folder, counting how many times a report
    was computed (build_report called)."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folder = folder
        self.computed = 0
        real = report_module.build_report

        def counting(*args, **kwargs):
            self.computed += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(report_module, "build_report", counting)

    def __call__(self, repo: str | Path, fmt: str = "text", **options: object,
                 ) -> tuple[int, str]:
        """The exit code and the report in `fmt`, in a Session of its own over the folder
        (nothing in memory from an earlier run)."""
        found = api.report(repo, session=Session(self.folder), **options)
        return found.exit_code, found.render(fmt)

    def entries(self) -> list[Path]:
        return sorted((self.folder / REPORTS_FOLDER).glob("*/*.json"))


@pytest.fixture
def runs(tmp_path, monkeypatch) -> Runs:
    return Runs(tmp_path / "cache", monkeypatch)


def _repo(build, *, other: bool = False) -> Path:
    """Branch `head` edits a builder's body; with `other`, branch `target` edits it
    otherwise (a second head to ask about)."""
    return build(Scenario(base=TREE, head=(Change("head", edits=(BODY_EDIT,)),),
                          target=(Change("other", edits=(OTHER_EDIT,)),) if other else (),
                          )).path


def test_the_same_report_again_is_read_back_in_every_format(build, runs) -> None:
    repo = str(_repo(build))
    form = {"base": "base", "head": "head"}
    first = {fmt: runs(repo, fmt, **form) for fmt in ("text", "json")}
    assert runs.computed == 1 and len(runs.entries()) == 1  # the document, not a rendering
    for fmt in ("text", "json", "markdown", "sarif", "github"):
        again = runs(repo, fmt, **form)
        if fmt in first:
            assert again == first[fmt]
        assert again[0] == 2  # NEEDS-DEVICE
    assert runs.computed == 1
    assert json.loads(first["json"][1])["verdict"]["kind"] == "NEEDS-DEVICE"


def test_a_stored_report_is_the_bytes_a_fresh_one_is(build, runs) -> None:
    repo = str(_repo(build))
    form = {"base": "base", "head": "head"}
    runs(repo, "json", **form)
    stored = runs(repo, "json", **form)
    found = api.report(repo, session=Session(use_cache=False), **form)
    fresh = found.exit_code, found.render("json")
    assert stored == fresh and runs.computed == 2  # the first run and the --no-cache one


def test_another_head_another_map_or_another_option_is_a_miss(build, runs, tmp_path) -> None:
    repo = _repo(build, other=True)
    runs(repo, base="base", head="head")
    runs(repo, base="base", head="target")                      # another head
    runs(repo, range="base..head")                              # another input form
    runs(repo, base="base", head="head", untrusted_head=True)   # the head not trusted
    shipped = Path(reportstore.__file__).parent / "contracts" / "hipdnn.surface.toml"
    own = tmp_path / "map.surface.toml"
    own.write_text(shipped.read_text() + "\n# the same map, other bytes\n")
    runs(repo, base="base", head="head", surface_map=str(own))  # another map file
    assert runs.computed == 5 and len(runs.entries()) == 5
    runs(repo, base="base", head="head")
    assert runs.computed == 5


def test_a_branch_that_moved_is_a_miss(build, runs) -> None:
    from dulwich.repo import Repo

    repo = _repo(build, other=True)
    form = {"base": "base", "head": "head"}
    first = runs(repo, "json", **form)
    git = Repo(str(repo))
    git.refs[b"refs/heads/head"] = git.refs[b"refs/heads/target"]
    moved = runs(repo, "json", **form)
    assert runs.computed == 2
    shas = [json.loads(doc)["revisions"]["head"]["sha"] for _, doc in (first, moved)]
    assert shas[0] != shas[1]


def test_an_edit_in_the_work_tree_is_a_miss(build, runs) -> None:
    repo = build(Scenario(base=TREE, head=(Change("head", edits=(BODY_EDIT,)),)), checkout=True)
    clean = runs(repo.path, "json", worktree=True)
    assert runs(repo.path, "json", worktree=True) == clean and runs.computed == 1
    path = repo.path / e.GFX950_DENSE
    path.write_text(path.read_text().replace("num_waves * 64 + 0", "num_waves * 64 + 1"))
    edited = runs(repo.path, "json", worktree=True)
    assert runs.computed == 2 and edited != clean


def test_the_shortcuts_switch_and_another_tool_are_misses(build, runs, monkeypatch) -> None:
    repo = str(_repo(build))
    runs(repo, base="base", head="head")
    monkeypatch.setenv("IMPACT_FULL_PATH", "1")
    runs(repo, base="base", head="head")
    assert runs.computed == 2
    monkeypatch.delenv("IMPACT_FULL_PATH")
    monkeypatch.setattr(reportstore, "tool_digest", lambda: "0" * 64)  # impact changed
    runs(repo, base="base", head="head")
    assert runs.computed == 3


def test_the_tool_digest_follows_every_source_but_the_fixtures(tmp_path, monkeypatch) -> None:
    """A copy of the packages: an edit to any module changes the digest, an edit to the
    demo's fixture trees does not."""
    import shutil

    root = Path(reportstore.__file__).resolve().parents[1]
    copy = tmp_path / "src"
    for package in ("impact", "emit"):
        shutil.copytree(root / package, copy / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    script = ("import sys; sys.path.insert(0, sys.argv[1]); "
              "from impact.reportstore import tool_digest; print(tool_digest())")

    def digest() -> str:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run([sys.executable, "-c", script, str(copy)], check=True,
                              capture_output=True, text=True, env=env,
                              cwd=tmp_path).stdout.strip()

    before = digest()
    fixture = next((copy / "impact" / "fixtures").rglob("*.py"))
    fixture.write_text(fixture.read_text() + "\n# a fixture edit\n")
    assert digest() == before
    check = copy / "impact" / "checks" / "kernargs.py"
    check.write_text(check.read_text() + "\n# a check edit\n")
    assert digest() != before


def _damaged(kind: str, file: Path, others: list[Path]) -> None:
    raw = file.read_bytes()
    header, _, body = raw.partition(b"\n")
    if kind == "truncated":
        file.write_bytes(raw[: len(raw) // 2])
    elif kind == "empty":
        file.write_bytes(b"")
    elif kind == "another key's":
        file.write_bytes(others[0].read_bytes())
    elif kind == "body edited":  # the header's sha256 no longer matches
        file.write_bytes(header + b"\n" + body.replace(b"NEEDS-DEVICE", b"NONE"))
    elif kind == "not a report":  # a consistent entry whose value is no report
        key = json.loads(header)["key"]
        value = json.dumps({"report": {"verdict": {"kind": "NONE", "exit_code": 0}}},
                           sort_keys=True, separators=(",", ":")).encode()
        import hashlib

        head = json.dumps({"key": key, "sha256": hashlib.sha256(value).hexdigest()},
                          sort_keys=True).encode()
        file.write_bytes(head + b"\n" + value)


@pytest.mark.parametrize("kind", ["truncated", "empty", "another key's", "body edited",
                                  "not a report"])
def test_a_damaged_entry_is_computed_afresh(build, runs, kind) -> None:
    repo = _repo(build, other=True)
    runs(repo, "json", base="base", head="target")
    other = runs.entries()
    form = {"base": "base", "head": "head"}
    first = runs(repo, "json", **form)
    (mine,) = [p for p in runs.entries() if p not in other]
    original = mine.read_bytes()
    _damaged(kind, mine, other)
    assert runs(repo, "json", **form) == first and runs.computed == 3
    assert mine.read_bytes() == original  # written again, whole
    assert runs(repo, "json", **form) == first and runs.computed == 3


def test_a_stored_report_keeps_the_documents_own_order(build, runs) -> None:
    """Renderers walk the document's dicts in order: the stored one is the same object,
    key order included (read back equal as a list of items, at every level)."""
    repo = str(_repo(build))
    runs(repo, base="base", head="head")
    (entry,) = runs.entries()
    stored = json.loads(entry.read_bytes().partition(b"\n")[2])["report"]
    from impact.document import build_report
    from impact.git import open_views
    from impact.surface import map_for_views

    views = open_views(repo, base="base", head="head")
    fresh = build_report(views, {"base": "base", "head": "head"}, map_for_views(None, views),
                         caches=Session(use_cache=False).caches)
    fresh = json.loads(json.dumps(fresh))  # tuples as lists, as JSON holds them

    def ordered(value):
        if isinstance(value, dict):
            return [(k, ordered(v)) for k, v in value.items()]
        if isinstance(value, list):
            return [ordered(v) for v in value]
        return value

    assert ordered(stored) == ordered(fresh)


def test_unreadable_tool_sources_store_nothing_and_the_report_is_computed(build, runs,
                                                                         monkeypatch) -> None:
    """When impact's own sources cannot be digested, no key can name the report: it is
    computed every time, the same, and nothing is stored."""
    def unreadable() -> str:
        raise OSError("a source file cannot be read")

    monkeypatch.setattr(reportstore, "tool_digest", unreadable)
    repo = str(_repo(build))
    first = runs(repo, "json", base="base", head="head")
    assert (runs(repo, "json", base="base", head="head") == first and runs.computed == 2
            and runs.entries() == [])
    assert json.loads(first[1])["verdict"]["kind"] == "NEEDS-DEVICE"
