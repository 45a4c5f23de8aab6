"""The labelled real-history corpus: its file is valid, the surface maps it names are valid
maps, realhist passes a map to `impact report`, and where the public snapshots are on this
machine its commits exist and the report agrees with a hand-checked label.

CI has no network and no snapshots: only the schema, map and command-line parts run there."""

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
         "Dao-AILab/flash-attention": MIRRORS / "Dao-AILab+flash-attention" / "repo",
         "deepseek-ai/FlashMLA": MIRRORS / "deepseek-ai+FlashMLA" / "repo"}
NAMED = {("ROCm/aiter", "e4048607a5"), ("ROCm/aiter", "243bebbe13"),
         ("Dao-AILab/flash-attention", "d7e4dba3e5")}
FLASHMLA_MAP = ROOT / "benchmarks" / "maps" / "flashmla.surface.toml"


def realhist_module():
    """benchmarks/realhist.py, imported the way its own tests need it (not a package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import realhist
    finally:
        sys.path.pop(0)
    return realhist


def entries() -> list[dict]:
    return json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]


def test_the_corpus_is_valid_and_large_enough() -> None:
    document = json.loads(CORPUS.read_text(encoding="utf-8"))
    jsonschema.validate(document, json.loads(SCHEMA.read_text(encoding="utf-8")))
    found = entries()
    assert len(found) >= 100
    assert {e["repo"] for e in found} == set(REPOS)
    # The older-history labels of issue 24: at least 22 per bindings repository beyond
    # the first 57, and 12 of the third repository.
    later = found[57:]
    for repo, least in (("ROCm/aiter", 22), ("Dao-AILab/flash-attention", 22),
                        ("deepseek-ai/FlashMLA", 12)):
        assert sum(e["repo"] == repo for e in later) >= least, repo
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


def test_flashmla_entries_name_a_valid_map_of_their_own() -> None:
    """FlashMLA fits no built-in map: the corpus names benchmarks/maps/flashmla.surface.toml
    for it, load_corpus resolves it for every FlashMLA entry (only those), and the file is a
    map impact accepts."""
    from impact.surface import parse_surface_map

    loaded = realhist_module().load_corpus(CORPUS)
    mla = [e for e in loaded if e["repo"] == "deepseek-ai/FlashMLA"]
    assert mla and {e["surface_map"] for e in mla} == {str(FLASHMLA_MAP.resolve())}
    assert not [e for e in loaded if e["repo"] != "deepseek-ai/FlashMLA" and "surface_map" in e]
    parsed = parse_surface_map(FLASHMLA_MAP.read_bytes(), str(FLASHMLA_MAP))
    assert parsed.name == "flashmla"


def test_a_corpus_naming_a_missing_map_is_refused(tmp_path: Path) -> None:
    document = {"schema_version": 1, "surface_maps": {"deepseek-ai/FlashMLA": "nowhere.toml"},
                "entries": [{"repo": "deepseek-ai/FlashMLA", "commit": "7d69520",
                             "expected": "NONE", "reason": "a docstring only, as a sample"}]}
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValueError, match=r"nowhere\.toml"):
        realhist_module().load_corpus(corpus)


def test_the_surface_map_reaches_the_report_command_line() -> None:
    realhist = realhist_module()
    given = ["--commit", "abc1234"]
    with_map = realhist.report_command("/r", given, False, "/maps/m.toml")
    assert with_map[with_map.index("--surface-map") + 1] == "/maps/m.toml"
    assert "--surface-map" not in realhist.report_command("/r", given, False, None)


def test_a_missing_surface_map_option_is_exit_3(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        realhist_module().main(["--repo", str(tmp_path), "--surface-map",
                                str(tmp_path / "absent.toml")])
    assert stop.value.code == 3


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
    realhist = realhist_module()
    entry = next(e for e in entries() if e["commit"] == "d7e4dba3e5")
    sha, subject = realhist.resolve(str(path), entry["commit"])
    outcome = realhist.run_one(str(path), sha, subject, 300.0, None, cache=False)
    assert outcome.verdict == entry["expected"], outcome


def test_flashmla_reports_only_with_its_map() -> None:
    """A FlashMLA commit through realhist's runner: without a map no built-in one fits and
    the report is an error; with the corpus's map it reads as labelled (a docstring-only
    change, NONE)."""
    path = _present("deepseek-ai/FlashMLA")
    realhist = realhist_module()
    entry = next(e for e in realhist.load_corpus(CORPUS) if e["commit"] == "7d69520")
    sha, subject = realhist.resolve(str(path), entry["commit"])
    bare = realhist.run_one(str(path), sha, subject, 300.0, None, cache=False)
    assert bare.verdict == "ERROR" and "exit 3" in bare.note, bare
    mapped = realhist.run_one(str(path), sha, subject, 300.0, None, cache=False,
                              surface_map=entry["surface_map"])
    assert mapped.verdict == entry["expected"], mapped
