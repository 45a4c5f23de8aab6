"""The cache of built groups keyed by what each group read (emit/manifest.py, issue 16).

A head that edits one family's module rebuilds that group only; an edit to a file a group
read (a shared kernel module, a data file its module opens) rebuilds the groups that read
it; an edit to a file no group read rebuilds nothing. Each emit is compared with an emit
of the same trees without the cache: the same document, but for how it was obtained.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from harness import emit
from test_emit_scale import TILED, TREE

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.session import Session

# Every test here runs the emitter's children (an emit with the cache, one without).
pytestmark = pytest.mark.slow

COMMON = f"{e.KERNELS}/common"
DENSE_SPEC = f"{COMMON}/attention_dense_spec.py"
TUNE = f"{e.KERNELS}/gfx950/tiled_tune.json"
EXP = "    p = b.exp2(s)\n"
TILED_BODY = Change("tiled", edits=(e.replace(TILED, EXP, EXP + "    p = b.mul(p, scale)\n"),))
READS_TUNE = ("import json as _json\nimport os as _os\n\n"
              "with open(_os.path.join(_os.path.dirname(__file__), 'tiled_tune.json')) as _f:\n"
              "    _TUNE = _json.load(_f)\n")


def requirements(line: str) -> Change:
    """An edit of a file no group reads (under a Python root, not on any surface)."""
    return Change("requirements", edits=(e.append(e.REQUIREMENTS, f"{line}\n"),))


def emit_file(repo, out: Path, cache: Path | None) -> dict:
    """The emit file of base -> head, over the cache folder `cache` (None: no cache)."""
    session = Session.for_command(cache, use_cache=cache is not None)
    return emit(repo, out, jobs=2, session=session)


def without_work(document: dict) -> bytes:
    """The emit file's bytes but for each revision's `work` record (how it was obtained)."""
    document = json.loads(json.dumps(document))
    for revision in document["revisions"].values():
        assert revision["status"] == "done", revision["reason"]
        revision.pop("work")
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def groups(document: dict, label: str) -> set[str]:
    result = document["revisions"][label]["result"]
    return {f"{f['source']}@{f['arch']}" for f in result["enumerated"]}


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> tuple[Path, dict]:
    """A cache one emit of the fixture tree filled (its head edits no file a group reads)."""
    from impact.fixtures import build_repository

    where = tmp_path_factory.mktemp("groups")
    repo = build_repository(Scenario(base=TREE, head=(requirements("numpy"),)), where / "repo")
    first = emit_file(repo, where / "first.json", where / "cache")
    for label in ("base", "head"):
        assert first["revisions"][label]["work"]["groups_built"] == len(groups(first, label)) > 3
    return where / "cache", first


def again(filled, build, tmp_path: Path, head: tuple[Change, ...], base=TREE
          ) -> tuple[dict, dict]:
    """(an emit of base..head on a copy of the filled cache, the same emit without one)."""
    cache = tmp_path / "cache"
    shutil.copytree(filled[0], cache)
    repo = build(Scenario(base=base, head=head))
    cached = emit_file(repo, tmp_path / "cached.json", cache)
    cold = emit_file(repo, tmp_path / "cold.json", None)
    assert without_work(cached) == without_work(cold)
    return cached, cold


def test_one_familys_module_edited_builds_that_group_only(filled, build, tmp_path) -> None:
    cached, cold = again(filled, build, tmp_path, (TILED_BODY,))
    head = cached["revisions"]["head"]["work"]
    assert head["groups_built"] == 1 and head["children"] == 1
    assert head["groups_cached"] == len(groups(cached, "head")) - 1
    assert cached["revisions"]["base"]["work"]["children"] == 0
    # The edit does change what is built: the cache did not serve the old tiled group.
    tiled = [f["id"] for f in cold["revisions"]["head"]["result"]["families"]
             if "attention_tiled_2d" in f["id"]]
    assert tiled
    digests = {label: [k["ir_sha256"] for f in cached["revisions"][label]["result"]["families"]
                       if f["id"] in tiled for v in f["variants"] for k in v["kernels"]]
               for label in ("base", "head")}
    assert digests["base"] and digests["base"] != digests["head"]


def test_an_edit_to_a_shared_module_rebuilds_the_groups_that_read_it(filled, build,
                                                                    tmp_path) -> None:
    cached, _ = again(filled, build, tmp_path, (Change("spec", edits=(
        e.append(DENSE_SPEC, "# shared by the dense kernels only\n"),)),))
    head = cached["revisions"]["head"]["work"]
    dense = {g for g in groups(cached, "head") if ".attention_dense@" in g}
    assert len(dense) == 3  # gfx942 (two archs) and gfx950 import the dense spec
    assert head["groups_built"] == len(dense)
    assert head["groups_cached"] == len(groups(cached, "head")) - len(dense)


def test_an_edit_to_the_dsl_platform_rebuilds_every_group(filled, build, tmp_path) -> None:
    ir = f"{e.HKP}/rocke/platform/python/rocke/core/ir.py"
    edit = Change("ir", edits=(e.append(ir, "# every kernel lowers through here\n"),))
    cached, _ = again(filled, build, tmp_path, (edit,))
    head = cached["revisions"]["head"]["work"]
    assert head["groups_cached"] == 0 and head["groups_built"] == len(groups(cached, "head"))


def test_an_edit_to_a_file_no_group_read_starts_no_child(filled, build, tmp_path) -> None:
    cached, _ = again(filled, build, tmp_path, (requirements("scipy"),))
    for label in ("base", "head"):
        work = cached["revisions"][label]["work"]
        assert work["children"] == 0 and work["groups_built"] == 0
        assert work["groups_cached"] == len(groups(cached, label))


def test_a_data_file_a_module_opens_keys_its_group(build, tmp_path) -> None:
    """The tiled module reads a JSON file with open() when imported: an edit to that file
    rebuilds the tiled group (and only it), though no Python module changed."""
    tree = dict(TREE)
    tree[TUNE] = b'{"block_m": 64}\n'
    Change("tune", edits=(e.insert_after(TILED, "from __future__ import annotations\n",
                                         READS_TUNE),)).apply(tree)
    cache = tmp_path / "cache"
    first = build(Scenario(base=tree, head=(requirements("numpy"),)))
    emit_file(first, tmp_path / "first.json", cache)
    repo = build(Scenario(base=tree, head=(Change("retune", write={
        TUNE: b'{"block_m": 128}\n'}),)))
    cached = emit_file(repo, tmp_path / "cached.json", cache)
    head = cached["revisions"]["head"]["work"]
    assert head["groups_built"] == 1
    assert head["groups_cached"] == len(groups(cached, "head")) - 1
    assert without_work(cached) == without_work(emit_file(repo, tmp_path / "cold.json", None))


def test_a_group_that_started_a_process_is_keyed_by_the_whole_roots(build, tmp_path) -> None:
    """What a process the tree's code starts reads is not seen: that group is kept under
    the tree ids of every root, so an edit to a file no group read rebuilds it (and only
    it), where the groups whose reads were all seen stay cached."""
    tree = dict(TREE)
    Change("spawn", edits=(e.insert_after(
        TILED, "from __future__ import annotations\n",
        "import subprocess as _subprocess\nimport sys as _sys\n\n"
        "_subprocess.run([_sys.executable, '-c', 'pass'], check=True)\n"),)).apply(tree)
    cache = tmp_path / "cache"
    first = build(Scenario(base=tree, head=(requirements("numpy"),)))
    emit_file(first, tmp_path / "first.json", cache)
    repo = build(Scenario(base=tree, head=(requirements("scipy"),)))
    cached = emit_file(repo, tmp_path / "cached.json", cache)
    assert cached["revisions"]["base"]["work"]["children"] == 0
    head = cached["revisions"]["head"]["work"]
    assert head["groups_built"] == 1
    assert head["groups_cached"] == len(groups(cached, "head")) - 1
    assert without_work(cached) == without_work(emit_file(repo, tmp_path / "cold.json", None))
