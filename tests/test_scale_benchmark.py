"""benchmarks/scale.py's repository builder, run at a tiny size: the branches are there, the
grown KDP still reads, and the argument edit and the outside edit get their verdicts."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from dulwich.repo import Repo
from harness import coded_report
from script_loader import load_script

from impact import api
from impact.errors import EXIT_BREAKS, EXIT_NONE
from impact.factsdoc import facts_json
from impact.fixtures import edits as e

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "scale.py"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI")


def _load_scale():
    return load_script(SCRIPT, "scale_benchmark")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    scale = _load_scale()
    where = tmp_path_factory.mktemp("scale") / "repo"
    return scale.build(where, files=300, history=3, target_commits=2, variants=40,
                       log=lambda _: None)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def test_the_repository_has_its_size_and_branches(built) -> None:
    repo = Repo(str(built.path))
    try:
        heads = {ref.decode() for ref in repo.refs.as_dict(b"refs/heads")}
    finally:
        repo.close()
    assert heads == {"main", "target", "body-edit", "comment-edit", "arg-edit", "outside"}
    assert built.files == 300
    assert len(_git(built.path, "ls-tree", "-r", "--name-only", "main").split()) == 300
    assert _git(built.path, "rev-list", "--count", "main").strip() == "4"
    assert _git(built.path, "rev-list", "--count", "main..target").strip() == "2"
    for branch in ("body-edit", "comment-edit", "arg-edit", "outside"):
        assert _git(built.path, "rev-list", "--count", f"main..{branch}").strip() == "1"
    assert _git(built.path, "diff", "--name-only", "main...arg-edit").split() == [e.GFX950_DENSE]
    assert _git(built.path, "diff", "--name-only", "main...outside").split() == [built.outside]


def test_the_grown_kdp_reads_with_every_variant(built) -> None:
    document = api.read_facts(built.path, paths=[e.GFX950_DENSE_KDP], rev="main")
    facts = json.loads(facts_json(document))["files"][e.GFX950_DENSE_KDP]["facts"]
    variants = [f for f in facts if f["kind"] == "variant"]
    assert len(variants) == built.variants == 40
    assert len({v["name"] for v in variants}) == 40
    assert not [f for f in facts if f["kind"] == "parse-failure"]
    assert not [v for v in variants if v["data"]["problems"]]


@pytest.mark.parametrize(("branch", "code", "line"), [
    ("arg-edit", EXIT_BREAKS, "Runtime impact: BREAKS"),
    ("outside", EXIT_NONE, "Runtime impact: N/A"),
])
def test_reports_on_the_branches(built, branch, code, line) -> None:
    got, doc = coded_report(built.path, base="main", head=branch)
    assert (got, doc["verdict"]["line"]) == (code, line)
