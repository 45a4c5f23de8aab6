"""The labelled real-history corpus: its file is valid, and where the public snapshots are
on this machine its commits exist and the report agrees with a hand-checked label.

CI has no network and no snapshots: only the schema part runs there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "realhist_corpus.json"
SCHEMA = ROOT / "benchmarks" / "realhist_corpus.schema.json"
MIRRORS = Path(os.environ.get("IMPACT_REALHIST_MIRRORS", "/work/.mirror"))
REPOS = {"ROCm/aiter": MIRRORS / "ROCm+aiter" / "repo",
         "Dao-AILab/flash-attention": MIRRORS / "Dao-AILab+flash-attention" / "repo"}
NAMED = {("ROCm/aiter", "e4048607a5"), ("ROCm/aiter", "243bebbe13"),
         ("Dao-AILab/flash-attention", "d7e4dba3e5")}


def entries() -> list[dict]:
    return json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]


def test_the_corpus_is_valid_and_large_enough() -> None:
    document = json.loads(CORPUS.read_text(encoding="utf-8"))
    jsonschema.validate(document, json.loads(SCHEMA.read_text(encoding="utf-8")))
    found = entries()
    assert len(found) >= 30
    assert {e["repo"] for e in found} == set(REPOS)
    assert {(e["repo"], e["commit"]) for e in found} >= NAMED
    assert len({(e["repo"], e["commit"]) for e in found}) == len(found), "a commit twice"
    # A break and its fix are both there: the fix is judged too.
    pairs = {e["pair"] for e in found if "pair" in e}
    assert pairs and pairs <= {e["commit"] for e in found}


def test_a_malformed_entry_is_refused() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    bad = {"schema_version": 1, "entries": [
        {"repo": "ROCm/aiter", "commit": "e4048607a5", "expected": "BROKEN", "reason": "x" * 20}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def _present(repo: str) -> Path:
    path = REPOS[repo]
    if not path.is_dir():
        pytest.skip(f"no snapshot of {repo} at {path} (CI has none)")
    return path


@pytest.mark.parametrize("repo", sorted(REPOS))
def test_every_commit_exists_in_the_snapshot(repo: str) -> None:
    path = _present(repo)
    for entry in (e for e in entries() if e["repo"] == repo):
        done = subprocess.run(["git", f"--git-dir={path}", "cat-file", "-e",
                               entry["commit"] + "^{commit}"], capture_output=True)
        assert done.returncode == 0, entry


def test_the_one_word_comment_fix_reads_none() -> None:
    """The cheapest labelled entry, run for real through realhist's own runner."""
    repo = "Dao-AILab/flash-attention"
    path = _present(repo)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import realhist
    finally:
        sys.path.pop(0)
    entry = next(e for e in entries() if e["commit"] == "d7e4dba3e5")
    sha, subject = realhist.resolve(str(path), entry["commit"])
    outcome = realhist.run_one(str(path), sha, subject, 300.0, None, cache=False)
    assert outcome.verdict == entry["expected"], outcome
