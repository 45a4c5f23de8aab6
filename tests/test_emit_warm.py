"""A second emit (`impact.api.emit`) of the same trees.

The warm emit must do only what it must (issue 16): compute the key, read the cached
groups, join and write; no child, no temporary folder, no parser imported. It is run in a
fresh interpreter, so what it imports is its own. (`impact cache info|clear` over the emit
store: tests/test_cache_cli.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from impact import api
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.session import Session

REPO = Path(__file__).resolve().parents[1]
COMMENT = Change("comment", edits=(e.edit_comment(e.GFX950_DENSE),))
# Runs an emit of base -> head of the repository argv[1] into argv[2] over the cache folder
# argv[3] in this interpreter, and says which of the heavy modules it imported, how many
# temporary folders it made and how many processes it started.
PROBE = """
import json, subprocess, sys, tempfile
made, started = [], []
mkdtemp, popen = tempfile.mkdtemp, subprocess.Popen.__init__
tempfile.mkdtemp = lambda *a, **k: made.append(1) or mkdtemp(*a, **k)
def counted(self, *a, **k):
    started.append(1)
    popen(self, *a, **k)
subprocess.Popen.__init__ = counted
from impact.api import emit
from impact.errors import ImpactError, failure
from impact.session import Session
try:
    emit(sys.argv[1], output=sys.argv[2], base="base", head="head",
         session=Session(sys.argv[3]))
    code = 0
except ImpactError as exc:  # the exit code a way in would end with
    code = failure(exc)[1]
print(json.dumps({"code": code, "folders": len(made), "processes": len(started),
                  "modules": sorted(m for m in ("impact.extract", "impact.python.scaffold")
                                    if m in sys.modules)}))
"""


@pytest.fixture(scope="module")
def cold(tmp_path_factory):
    """A repository, and a cache folder one emit of its base..head filled."""
    from impact.fixtures import build_repository

    where = tmp_path_factory.mktemp("warm")
    repo = build_repository(Scenario(base=rocke_tree_files(), head=(COMMENT,)), where / "repo")
    cache = where / "cache"
    out = where / "cold.json"
    api.emit(repo.path, output=out, base="base", head="head", jobs=2,
             session=Session.for_command(cache))
    return repo, cache, json.loads(out.read_text())


def emit_in_a_fresh_process(repo, cache: Path, out: Path) -> dict:
    env = {**os.environ, "CI": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(repo.path), str(out), str(cache)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def without_work(document: dict) -> dict:
    return {label: {k: v for k, v in revision.items() if k != "work"}
            for label, revision in document["revisions"].items()}


def test_a_warm_emit_starts_no_child_and_imports_no_parser(cold, tmp_path) -> None:
    repo, cache, first = cold
    assert all(r["work"]["groups_built"] > 0 for r in first["revisions"].values())
    out = tmp_path / "warm.json"
    probe = emit_in_a_fresh_process(repo, cache, out)
    # No parser (the rules are not rebuilt), no temporary folder (nothing written out), no
    # process (no child, no jail, no watchdog, no interpreter asked for its path).
    assert probe == {"code": 0, "folders": 0, "processes": 0, "modules": []}
    warm = json.loads(out.read_text())
    for revision in warm["revisions"].values():
        assert revision["work"]["children"] == 0 and revision["work"]["groups_built"] == 0
        assert revision["work"]["groups_cached"] > 0
    assert without_work(warm) == without_work(first)


def test_a_cold_emit_in_a_fresh_process_does_import_them(cold, tmp_path) -> None:
    """The probe above can fail: with an empty cache the same command needs both."""
    repo, _, _ = cold
    probe = emit_in_a_fresh_process(repo, tmp_path / "empty", tmp_path / "cold.json")
    assert probe["code"] == 0 and probe["modules"] == ["impact.extract", "impact.python.scaffold"]
    assert probe["folders"] >= 1 and probe["processes"] >= 3  # watchdog, two children


def test_tree_ids_are_the_same_read_from_git_or_computed_from_files(cold) -> None:
    """The key and `report --emit` name each root by its git tree id: read from the commit
    (one folder per path level) it must equal the id computed from the files under it, as
    for a tree held in memory (a worktree), and the empty tree for a root that is absent."""
    from dulwich.index import commit_tree
    from dulwich.object_store import MemoryObjectStore

    from emit.trees import EMPTY_TREE, roots_of, tree_ids
    from impact.git import Snapshot, open_views
    from impact.surface import load_surface_map

    repo, _, _ = cold
    snapshot = open_views(repo.path, base="base", head="head").head
    assert snapshot.lazy
    roots = (*roots_of(load_surface_map()), "no/such/folder")
    from_git = tree_ids(snapshot, roots)
    in_memory = Snapshot.from_files({path: snapshot.read(path) for path in snapshot})
    assert not in_memory.lazy and tree_ids(in_memory, roots) == from_git
    assert from_git["no/such/folder"] == EMPTY_TREE
    for root in roots[:-1]:
        prefix = root + "/"
        entries = [(p[len(prefix):].encode(), snapshot[p].sha.encode(), snapshot[p].mode)
                   for p in snapshot if p.startswith(prefix)]
        assert entries and from_git[root] == commit_tree(MemoryObjectStore(), entries).decode()
