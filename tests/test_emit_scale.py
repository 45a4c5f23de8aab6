"""The emitter at scale: children per group of families, the cache of built variants, slices.

Every test compares what it gets against an emit of the same trees built afresh (no cache,
one child per revision), so a cache or a split that changed a result fails here.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pytest
from harness import outcome, refusal

from emit.cache import EmitStore
from emit.emitfile import write_emit_file
from emit.runner import run_emit
from impact import api
from impact.errors import EXIT_BAD_INPUT
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import open_views
from impact.surface import load_surface_map

# Every test here runs the emitter's children (several emits of the fixture tree).
pytestmark = pytest.mark.slow

TREE = rocke_tree_files()
TILED = f"{e.KERNELS}/gfx950/attention_tiled_2d.py"
COMMENT = Change("comment", edits=(e.edit_comment(e.GFX950_DENSE),))
TILED_BODY = Change("tiled", edits=(e.replace(
    TILED, '    elem = BF16 if spec.dtype == "bf16" else F16',
    '    elem = F16 if spec.dtype != "bf16" else BF16'),))


def results(document: dict) -> dict:
    """The revisions as a report reads them: everything but how they were obtained."""
    out = copy.deepcopy(document["revisions"])
    for revision in out.values():
        revision.pop("work", None)
        revision.pop("protections", None)
        revision.pop("network_isolated", None)
        assert revision["status"] == "done", revision["reason"]
    return out


def emit(repo, store: EmitStore | None = None, **options) -> dict:
    views = open_views(repo.path, base="base", head="head")
    return run_emit(views, load_surface_map(), store=store, **options)


def work(document: dict, label: str) -> dict:
    return document["revisions"][label]["work"]


@pytest.fixture(scope="module")
def comment_repo(tmp_path_factory):
    from impact.fixtures import build_repository

    return build_repository(Scenario(base=TREE, head=(COMMENT,)),
                            tmp_path_factory.mktemp("comment") / "repo")


@pytest.fixture(scope="module")
def fresh(comment_repo) -> dict:
    """The comment edit, built afresh: one child per revision, no cache."""
    return emit(comment_repo, jobs=2)


def test_a_second_emit_of_the_same_trees_starts_no_child(comment_repo, fresh, tmp_path) -> None:
    store = EmitStore(tmp_path / "cache")
    first = emit(comment_repo, store, jobs=2)
    second = emit(comment_repo, EmitStore(tmp_path / "cache"), jobs=2)
    assert results(first) == results(second) == results(fresh)
    for label in ("base", "head"):
        assert work(first, label)["children"] == 1
        assert work(second, label)["children"] == 0
        assert work(second, label)["groups_built"] == 0
        assert work(second, label)["groups_cached"] == work(first, label)["groups_built"] > 1
        # The protections a cached result was built under are carried with it.
        assert second["revisions"][label]["protections"] == first["revisions"][label][
            "protections"]


def test_a_head_changing_one_family_rebuilds_that_group_only(comment_repo, build,
                                                              tmp_path) -> None:
    store_dir = tmp_path / "cache"
    first = emit(comment_repo, EmitStore(store_dir), jobs=2)
    # Another repository, the same base trees (git ids are content), a head whose tiled
    # builder changed: the base comes from the cache, and of the head only the tiled
    # group (the one whose module changed) is built again (emit/manifest.py).
    repo = build(Scenario(base=TREE, head=(TILED_BODY,)))
    cached = emit(repo, EmitStore(store_dir), jobs=2)
    assert work(cached, "base")["children"] == 0
    assert work(cached, "head")["children"] == 1 and work(cached, "head")["groups_built"] == 1
    assert work(cached, "head")["groups_cached"] == work(first, "head")["groups_built"] - 1
    assert results(cached) == results(emit(repo, jobs=2))


def test_damaged_entries_are_built_again_never_trusted(comment_repo, fresh, tmp_path) -> None:
    store_dir = tmp_path / "cache"
    emit(comment_repo, EmitStore(store_dir), jobs=2)
    entries = sorted((store_dir / "emit").rglob("*.json"))
    assert entries
    for number, entry in enumerate(entries):
        header_line, _, body = entry.read_bytes().partition(b"\n")
        header = json.loads(header_line)
        if number % 4 == 0:
            entry.write_bytes(entry.read_bytes()[:-20])  # truncated
        elif number % 4 == 1:  # one byte of the value changed
            entry.write_bytes(header_line + b"\n" + body.replace(b"built", b"bui1t", 1))
        elif number % 4 == 2:  # whole, under the right file name, another key inside
            header["key"]["what"] = "forged"
            entry.write_bytes(json.dumps(header).encode() + b"\n" + body)
        else:  # the right key and a matching digest, a value of the wrong shape
            body = json.dumps({"plan": {"families": 7}, "piece": {"families": 7},
                               "protections": {}}).encode()
            header["sha256"] = hashlib.sha256(body).hexdigest()
            entry.write_bytes(json.dumps(header).encode() + b"\n" + body)
    again = emit(comment_repo, EmitStore(store_dir), jobs=2)
    assert results(again) == results(fresh)
    assert all(work(again, label)["groups_cached"] == 0 for label in ("base", "head"))
    healed = emit(comment_repo, EmitStore(store_dir), jobs=2)
    assert all(work(healed, label)["children"] == 0 for label in ("base", "head"))


def test_an_untrusted_head_is_neither_read_from_nor_written_to_the_cache(comment_repo,
                                                                         tmp_path) -> None:
    store_dir = tmp_path / "cache"
    untrusted = emit(comment_repo, EmitStore(store_dir), jobs=2, untrusted_head=True)
    assert work(untrusted, "head")["cache"].startswith("not used")
    later = emit(comment_repo, EmitStore(store_dir), jobs=2)
    assert work(later, "base")["children"] == 0  # the base was written
    assert work(later, "head")["children"] == 1  # the untrusted head was not
    again = emit(comment_repo, EmitStore(store_dir), jobs=2, untrusted_head=True)
    assert work(again, "head")["children"] == 1  # and is not read, though now cached
    assert work(again, "base")["children"] == 0


def test_more_jobs_split_each_revision_and_change_no_result(comment_repo, fresh) -> None:
    split = emit(comment_repo, jobs=6)
    assert results(split) == results(fresh)
    for label in ("base", "head"):
        # a child that lists the families, then at least two building groups
        assert work(split, label)["children"] >= 3
        assert split["revisions"][label]["protections"]["detail"] == fresh["revisions"][
            label]["protections"]["detail"]


def test_slices_merge_into_the_whole_emit_and_alone_are_refused(comment_repo, fresh,
                                                               tmp_path) -> None:
    repo = str(comment_repo.path)
    files = []
    for k in (1, 2):  # in the test run's Session: no cache folder
        out = tmp_path / f"slice{k}.json"
        api.emit(repo, output=out, base="base", head="head", shard=(k, 2))
        files.append(str(out))
    slices = [json.loads(Path(f).read_text()) for f in files]
    assert [s["slice"] for s in slices] == [{"index": 1, "count": 2}, {"index": 2, "count": 2}]
    built = [{f["id"] for f in s["revisions"]["head"]["result"]["families"]} for s in slices]
    assert built[0] and built[1] and not built[0] & built[1]

    merged = tmp_path / "merged.json"
    api.merge_emits(files[::-1], output=merged)
    assert results(json.loads(merged.read_text())) == results(fresh)
    whole = tmp_path / "whole.json"
    write_emit_file(fresh, whole)
    by_merged, by_whole = (outcome(repo, emit=str(file)) for file in (merged, whole))
    assert by_merged[0] == by_whole[0]
    assert json.loads(by_merged[1])["verdict"] == json.loads(by_whole[1])["verdict"]

    code, _, err = outcome(repo, emit=files[0])
    assert code == EXIT_BAD_INPUT
    err = err.strip().splitlines()
    assert len(err) == 1 and "is slice 1/2" in err[0] and "missing:" in err[0]

    half = tmp_path / "half.json"
    code, err = refusal(lambda: api.merge_emits([files[0]], output=half))
    assert code == EXIT_BAD_INPUT
    err = err.strip().splitlines()
    assert len(err) == 1 and "the slices are 1 of 2" in err[0]
    assert not half.exists()

    doubled = json.loads(merged.read_text())
    families = doubled["revisions"]["base"]["result"]["families"]
    families.append(families[0])
    (tmp_path / "doubled.json").write_text(json.dumps(doubled))
    code, _, err = outcome(repo, emit=str(tmp_path / "doubled.json"))
    assert code == EXIT_BAD_INPUT
    err = err.strip().splitlines()
    assert len(err) == 1 and "doubled" in err[0] and families[0]["id"] in err[0]


def test_nothing_a_child_built_after_a_timeout_is_kept(build, tmp_path) -> None:
    hang = e.replace(TILED, '    elem = BF16 if spec.dtype == "bf16" else F16',
                     '    import time\n    time.sleep(600)\n'
                     '    elem = BF16 if spec.dtype == "bf16" else F16')
    repo = build(Scenario(base=TREE, head=(Change("hang", edits=(hang,)),)))
    from emit.children import Limits

    first = emit(repo, EmitStore(tmp_path / "cache"), jobs=2, limits=Limits(family_budget=2))
    head = first["revisions"]["head"]["result"]
    assert "timed-out" in {f["status"] for f in head["families"]}
    second = emit(repo, EmitStore(tmp_path / "cache"), jobs=2, limits=Limits(family_budget=2))

    def timed_out(label: str) -> bool:
        result = first["revisions"][label]["result"]
        return any(f["status"] == "timed-out" for f in result["families"]) or any(
            t["status"] == "timed-out" for t in result["predicate_tables"])

    assert timed_out("head")  # its builder hangs
    if timed_out("base"):  # 2 s was too short: the plan was kept, the groups were not
        assert work(second, "base")["groups_cached"] == 0
        assert work(second, "base")["children"] >= 1
    else:
        assert work(second, "base")["children"] == 0
    # Nothing the head's child built was kept: its groups are built again, but for those
    # the base built whole from the same files (every group but the hanging one), which
    # the cache serves to both revisions (emit/manifest.py).
    enumerated = {f"{f['source']}@{f['arch']}" for f in head["enumerated"]}
    shared = 0 if timed_out("base") else len(enumerated) - 1
    assert work(second, "head")["groups_cached"] == shared
    assert work(second, "head")["children"] >= 1 and work(second, "head")["groups_built"] >= 1
