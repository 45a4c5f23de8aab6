"""impact queue: pull requests alone and two at a time onto one target, on fixture trees.

A queue of pull requests each fine alone that break together reads that pair BREAKS; pairs
whose pull requests touch no contract subject in common are never merged (counted); the
pair list splits into shards that merge back into the same answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from impact import api, mergequeue
from impact.contracts import validate
from impact.errors import BadUsage
from impact.fixtures import Change, build_queue_repository
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files, tree_files
from impact.render.queue import QUEUE_RENDERERS
from impact.rollup import Outcome

# The AOT catalog restates the gfx950 list once more; leaving it out keeps a consistent
# argument addition consistent (tests/test_check_kernargs.py does the same).
TREE = {p: c for p, c in rocke_tree_files().items() if "/rocke/aot_catalog/" not in p}
PIN = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
       "TestGfx950AttentionDenseSignature.cpp")
PIN_COPY = PIN.replace("Signature.cpp", "SignatureCopy.cpp")


def everywhere(name: str) -> tuple[e.Edit, ...]:
    """An always-argument added to the gfx950 builder and every copy of its list."""
    return (e.add_builder_param(e.GFX950_DENSE, name, "I32"),
            e.add_pack_argument(e.GFX950_DENSE_PACK, name),
            e.add_pack_argument(PIN, name),
            e.add_launch_argument(e.GFX950_DENSE_PACK, "dropoutSeed"))


def copy_pin(files: dict[str, bytes]) -> None:
    """A new test pin restating the gfx950 list as it stands on the base."""
    files[PIN_COPY] = files[PIN].replace(b"TestGfx950AttentionDenseSignature",
                                         b"TestGfx950AttentionDenseSignatureCopy")


PRS = {
    "pr/arg": (Change("arg", edits=everywhere("dropout_seed")),),
    "pr/pin": (Change("pin", edits=(copy_pin,)),),
    "pr/dvc": (Change("dvc", edits=(e.touch_dvc(),)),),
    "pr/readme": (Change("readme", write={"docs/notes.md": "notes\n"}),),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("queue")
    build_queue_repository(TREE, PRS, path)
    return path


@pytest.fixture(scope="module")
def whole(repo: Path) -> dict:
    return api.queue(repo, target="main", prs=["pr/*"])


def test_a_pair_fine_alone_reads_breaks_together(whole: dict) -> None:
    alone = {pr["ref"]: Outcome(pr["verdict"]["kind"]) for pr in whole["prs"]}
    assert Outcome.BREAKS not in alone.values()
    (pair,) = [p for p in whole["pairs"] if p["rows"]]
    assert {pair["first"], pair["second"]} == {"pr/arg", "pr/pin"}
    assert Outcome(pair["verdict"]["kind"]) == Outcome.BREAKS
    (row,) = pair["rows"]
    assert row["contract"] == "kernargs" and row["subject"].startswith(PIN_COPY)
    by = {side["file"]: side["by"] for side in row["sides"]}
    assert by == {PIN_COPY: "pr/pin", e.GFX950_DENSE: "pr/arg"}
    assert all(side["line"] > 0 for side in row["sides"])
    assert Outcome(whole["verdict"]["kind"]) == Outcome.BREAKS
    assert whole["verdict"]["exit_code"] == 1


def test_disjoint_pairs_are_counted_and_never_merged(repo: Path, monkeypatch) -> None:
    merged: list[tuple[str, str]] = []
    real = mergequeue.queue_views

    def spy(repository, target, head, onto=None):
        if onto is not None:
            merged.append((onto[0].spelled, head.spelled))
        return real(repository, target, head, onto)

    monkeypatch.setattr(mergequeue, "queue_views", spy)
    document = api.queue(repo, target="main", prs=["pr/*"])
    counts = document["counts"]
    assert counts["prs"] == 4 and counts["pairs"] == 6
    assert counts["disjoint"] + counts["candidates"] == 6 and counts["disjoint"] >= 4
    assert len(merged) == counts["analysed"] == counts["candidates"]
    touched_nothing = {"pr/readme"}
    assert not any(set(pair) & touched_nothing for pair in merged)
    assert ("pr/arg", "pr/pin") in merged
    assert ("pr/dvc", "pr/readme") not in merged and ("pr/arg", "pr/readme") not in merged


def test_the_pair_index_is_built_from_rows_not_from_every_pair() -> None:
    keys = [{"a"}, {"b"}, {"a", "c"}, {"c"}, set()]
    assert mergequeue.candidate_pairs(keys) == [(0, 2), (2, 3)]


def test_shards_merge_back_into_the_whole_answer(repo: Path, whole: dict, tmp_path) -> None:
    files = []
    for k in (1, 2):
        part = api.queue(repo, target="main", prs=["pr/*"], shard=(k, 2))
        assert part["shard"] == {"k": k, "n": 2}
        path = tmp_path / f"q{k}.json"
        path.write_text(QUEUE_RENDERERS["json"](part))
        files.append(path)
    joined = api.merge_queues(files)
    assert joined["pairs"] == whole["pairs"] and joined["counts"] == whole["counts"]
    assert joined["verdict"] == whole["verdict"] and joined["shard"] is None
    with pytest.raises(BadUsage):
        api.merge_queues(files[:1])  # 1/2 alone does not cover the pairs


def test_every_rendering_is_written_and_the_json_is_schema_checked(whole: dict) -> None:
    validate(whole, mergequeue.QUEUE_SCHEMA)
    text = QUEUE_RENDERERS["text"](whole)
    assert "pr/arg + pr/pin" in text and "Merge queue: BREAKS" in text
    card = QUEUE_RENDERERS["markdown"](whole)
    assert "pr/arg + pr/pin" in card and PIN_COPY.rsplit("/", 1)[1] in card


def test_patterns_that_match_nothing_are_an_error(repo: Path) -> None:
    with pytest.raises(BadUsage):
        api.queue(repo, target="main", prs=["nothing/*"])
    document = api.queue(repo, target="main", prs=["refs/heads/pr/d*", "pr/dvc"])
    assert [pr["ref"] for pr in document["prs"]] == ["pr/dvc"]


def test_a_pull_request_that_conflicts_is_not_paired(tmp_path: Path) -> None:
    files = tree_files("aiter_tree")
    ops = "aiter/ops/activation.py"
    one = e.replace(ops, "def silu_and_mul(", "def silu_and_mul_one(")
    two = e.replace(ops, "def silu_and_mul(", "def silu_and_mul_two(")
    build_queue_repository(files, {"a": (Change("a", edits=(one,)),)}, tmp_path,
                           target=(Change("t", edits=(two,)),))
    document = api.queue(tmp_path, target="main", prs=["a", "main~1"])
    single = next(pr for pr in document["prs"] if pr["ref"] == "a")
    assert single["conflicts"] == [ops]
    assert Outcome(single["verdict"]["kind"]) != Outcome.NONE  # a conflict is never NONE
    assert all(p["not_mergeable"] == "a" for p in document["unmergeable"])
