"""The emitter end to end: the sandbox, the emit file and its refusals, the fold, Pack-time."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from harness import coded_report, outcome, report

from emit.children import Limits
from emit.emitfile import emit_document, load_emit_file, write_emit_file
from emit.jail import child_environment
from emit.runner import run_emit
from emit.trees import expected_trees
from impact.contracts import validate
from impact.errors import EXIT_BAD_INPUT
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import open_views
from impact.surface import load_surface_map

TREE = rocke_tree_files()
TILED = f"{e.KERNELS}/gfx950/attention_tiled_2d.py"
UNIFIED = f"{e.KERNELS}/gfx950/unified_attention.py"
TILED_BUNDLE = f"{e.DESCRIPTORS}/gfx950_attention_tiled_2d/"
SLOW_BUILDER = "    elem = BF16 if spec.dtype"


def emit_and_report(build, tmp_path: Path, *changes: Change,
                    base: dict[str, bytes] | None = None, **limits) -> tuple[dict, dict]:
    repo = build(Scenario(base=base or TREE, head=changes))
    views = open_views(repo.path, base="base", head="head")
    surface = load_surface_map()
    document = run_emit(views, surface, limits=Limits(**limits))
    out = tmp_path / "emit.json"
    write_emit_file(document, out)
    code, found = coded_report(repo, emit=str(out))
    assert code in (0, 1, 2)
    return document, found


def test_every_variant_builds_at_both_revisions(build, tmp_path) -> None:
    document, report = emit_and_report(build, tmp_path,
                                       Change("c", edits=(e.edit_comment(e.GFX950_DENSE),)))
    validate(document, "emit.schema.json")
    for label in ("base", "head"):
        revision = document["revisions"][label]
        assert revision["status"] == "done", revision["reason"]
        families = revision["result"]["families"]
        assert families and all(f["status"] == "built" for f in families)
    assert report["emit"]["source"].startswith("file:")
    assert report["pack_time"]["line"] == "Pack-time: CLEAN"


@pytest.mark.slow  # children spawned
def test_ir_changing_body_edit_stays_changed(build, tmp_path) -> None:
    # A different constant in the kernel body: same arguments, different IR. (A change
    # below f32 precision, such as dropping the last digits, lowers to equal IR and folds.)
    edit = e.replace(e.GFX950_DENSE, "LOG2E = 1.4426950408889634", "LOG2E = 1.5")
    _, report = emit_and_report(build, tmp_path, Change("body", edits=(edit,)))
    assert report["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE gfx950"


@pytest.mark.slow  # children spawned
def test_refactor_with_equal_ir_folds_to_none(build, tmp_path) -> None:
    # The same value through a local name: the code differs, the emitted IR does not. (The
    # tiled module: no launch-surface profile names it, so no host-side rule keeps it.)
    edit = e.replace(TILED, '    elem = BF16 if spec.dtype == "bf16" else F16',
                     '    is_bf16 = spec.dtype == "bf16"\n    elem = BF16 if is_bf16 else F16')
    _, report = emit_and_report(build, tmp_path, Change("refactor", edits=(edit,)))
    rows = [r for r in report["rows"] if r["subject"] == TILED]
    assert rows and all(r["status"] == "inert" for r in rows), rows
    assert report["verdict"]["line"] == "Runtime impact: NONE"


def test_a_map_without_emitter_conventions_builds_nothing_and_folds_nothing(
        build, tmp_path) -> None:
    """Fail closed: with no [conventions.emitter] the child would not know what to call, so
    no child starts, both revisions read not-started, nothing folds (the refactor that
    folds with them stays changed) and Pack-time is INCOMPLETE, never CLEAN."""
    edit = e.replace(TILED, '    elem = BF16 if spec.dtype == "bf16" else F16',
                     '    is_bf16 = spec.dtype == "bf16"\n    elem = BF16 if is_bf16 else F16')
    repo = build(Scenario(base=TREE, head=(Change("refactor", edits=(edit,)),)))
    hipdnn = load_surface_map()
    bare = dataclasses.replace(hipdnn, conventions=dataclasses.replace(hipdnn.conventions,
                                                                       emitter=None))
    document = run_emit(open_views(repo.path, base="base", head="head"), bare)
    for revision in document["revisions"].values():
        assert revision["status"] == "not-started" and revision["result"] is None
        assert "no emitter conventions" in revision["reason"]
        assert revision["work"]["children"] == 0
    out = tmp_path / "emit.json"
    write_emit_file(document, out)
    found = report(repo, emit=str(out))
    rows = [r for r in found["rows"] if r["subject"] == TILED]
    assert rows and not any(r["status"] == "inert" for r in rows), rows
    assert found["pack_time"]["line"].startswith("Pack-time: INCOMPLETE")


@pytest.mark.slow  # children spawned
def test_companion_launch_with_changed_arguments_does_not_fold(build, tmp_path) -> None:
    edit = e.replace(UNIFIED, 'b.param("num_seqs", I32)', 'b.param("num_seqs", I64)')
    _, report = emit_and_report(build, tmp_path, Change("reduce", edits=(edit,)))
    assert report["verdict"]["kind"] in ("NEEDS-DEVICE", "BREAKS")
    assert not any(r["subject"] == UNIFIED and r["status"] == "inert" for r in report["rows"])


@pytest.mark.slow  # children spawned
def test_child_environment_is_allow_listed(build, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "fake-token-for-the-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("ROCKE_TEST_KNOB", "kept")
    dump = e.replace(TILED, SLOW_BUILDER, "    import os\n" + SLOW_BUILDER)
    name = e.replace(TILED, "    b = IRBuilder(spec.kernel_name())",
                     "    b = IRBuilder(spec.kernel_name() + '.' + '.'.join(sorted(os.environ)))")
    document, _ = emit_and_report(build, tmp_path, Change("env", edits=(dump, name)))
    head = document["revisions"]["head"]["result"]
    symbols = [k["symbol"] for f in head["families"] for v in f["variants"] for k in v["kernels"]
               if f["source"].endswith("attention_tiled_2d")]
    assert symbols
    names = set(symbols[0].split("."))
    assert {"HOME", "TMPDIR", "PATH", "ROCKE_TEST_KNOB"} <= names
    assert not names & {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HTTPS_PROXY"}


def test_environment_allow_list_unit(tmp_path) -> None:
    env = child_environment(tmp_path, {"PATH": "/bin", "LC_ALL": "C", "HKP_PACK_JOBS": "2",
                                       "SSH_AUTH_SOCK": "x", "NPM_TOKEN": "y", "HOME": "/root"})
    assert env == {"PATH": "/bin", "LC_ALL": "C", "HKP_PACK_JOBS": "2",
                   "HOME": str(tmp_path), "TMPDIR": str(tmp_path / "tmp")}


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.slow  # children spawned
def test_timeout_ends_the_whole_process_group(build, tmp_path) -> None:
    marker = f"impact-grandchild-{os.getpid()}"
    hang = e.replace(TILED, SLOW_BUILDER,
                     "    import subprocess, sys, time\n"
                     f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)',"
                     f" '{marker}'])\n    time.sleep(600)\n" + SLOW_BUILDER)
    document, report = emit_and_report(build, tmp_path, Change("hang", edits=(hang,)),
                                       timeout=8, family_budget=300)
    assert document["revisions"]["head"]["status"] == "timed-out"
    assert document["revisions"]["base"]["status"] == "done"
    assert _processes_with(marker) == []
    # Nothing folds on a revision the child did not finish.
    assert not any(r["status"] == "inert" and r["subject"] == TILED for r in report["rows"])


@pytest.mark.slow  # children spawned
def test_family_budget_cuts_a_hanging_builder_and_keeps_the_rest(build, tmp_path) -> None:
    hang = e.replace(TILED, SLOW_BUILDER, "    import time\n    time.sleep(600)\n" + SLOW_BUILDER)
    document, _ = emit_and_report(build, tmp_path, Change("hang", edits=(hang,)),
                                  family_budget=2)
    head = document["revisions"]["head"]
    assert head["status"] == "done"
    statuses = {f["source"].rsplit(".", 1)[-1]: f["status"] for f in head["result"]["families"]}
    assert statuses["attention_tiled_2d"] == "timed-out"
    assert statuses["attention_dense"] == "built"


@pytest.fixture
def views_and_file(build, tmp_path):
    repo = build(Scenario(base={"a.txt": "a\n"}, head=(Change("h", write={"a.txt": "b\n"}),)))
    views = open_views(repo.path, base="base", head="head")
    trees = expected_trees(views, load_surface_map())
    revision = {"commit": None, "trees": {}, "status": "not-started", "reason": "test",
                "network_isolated": False, "result": None}
    document = emit_document({"base": {**revision, "trees": trees["base"]},
                              "head": {**revision, "trees": trees["head"]}})
    path = tmp_path / "emit.json"
    write_emit_file(document, path)
    return repo, trees, document, path


def test_loader_accepts_what_the_writer_wrote(views_and_file) -> None:
    _, trees, document, path = views_and_file
    assert load_emit_file(path, trees) == document


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda d: d.update(schema_version=0), "schema version 0"),
    (lambda d: d["revisions"].pop("head"), "malformed"),
    (lambda d: d["revisions"]["base"].update(status="fine"), "malformed"),
    (lambda d: d["revisions"]["head"]["trees"].update(x="0" * 40), "other trees"),
])
def test_bad_emit_files_are_refused(views_and_file, mutate, needle) -> None:
    repo, _, document, path = views_and_file
    bad = json.loads(json.dumps(document))
    mutate(bad)
    path.write_text(json.dumps(bad))
    code, _, err = outcome(repo, surface_map="hipdnn", emit=str(path))
    assert code == EXIT_BAD_INPUT
    err = err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]


def test_not_json_is_refused(views_and_file) -> None:
    repo, _, _, path = views_and_file
    path.write_text("{not json")
    code, _, err = outcome(repo, commit="head", surface_map="hipdnn", emit=str(path))
    assert code == EXIT_BAD_INPUT
    assert "cannot be read as JSON" in err


@pytest.mark.slow  # children spawned
def test_pack_time_new_finding(build, tmp_path) -> None:
    # The primary (segment) predicate starts refusing a non-positive head count that the
    # reduce predicate still accepts.
    refuse = e.replace(UNIFIED, '        return False, "spec must be a UnifiedAttentionSpec"\n',
                       '        return False, "spec must be a UnifiedAttentionSpec"\n'
                       '    if spec.num_query_heads <= 0:\n'
                       '        return False, "num_query_heads must be positive"\n')
    _, report = emit_and_report(build, tmp_path, Change("refuse", edits=(refuse,)))
    assert report["pack_time"]["new"] >= 1 and report["pack_time"]["first_shipped"] == 0
    assert report["pack_time"]["line"].startswith("Pack-time: NEW ")
    signs = [f for f in report["pack_time"]["findings"] if f["kind"] == "sign"]
    assert signs and signs[0]["field"] == "num_query_heads" and signs[0]["status"] == "new"


@pytest.mark.slow  # children spawned
def test_pack_time_first_shipped_finding(build, tmp_path) -> None:
    flawed = dict(TREE)
    e.replace(TILED, SLOW_BUILDER, "    if spec.block_n > 64:\n"
              "        raise ValueError('block_n over 64 spills LDS')\n" + SLOW_BUILDER)(flawed)
    unshipped = {p: c for p, c in flawed.items() if not p.startswith(TILED_BUNDLE)}
    ship = Change("ship tiled 2d", write={p: c for p, c in flawed.items()
                                          if p.startswith(TILED_BUNDLE)})
    _, report = emit_and_report(build, tmp_path, ship, base=unshipped)
    assert report["pack_time"]["first_shipped"] >= 1 and report["pack_time"]["new"] == 0
    assert {f["status"] for f in report["pack_time"]["findings"]} == {"first-shipped"}


@pytest.mark.slow  # children spawned
def test_progress_bar_counts_families(build, tmp_path) -> None:
    import io

    repo = build(Scenario(base=TREE))
    bar = io.StringIO()
    run_emit(open_views(repo.path, commit="base"), load_surface_map(), bar=bar)
    shown = bar.getvalue()
    assert "base " in shown and "head " in shown and " families" in shown


@pytest.mark.slow  # children spawned
def test_host_side_launch_surface_edit_never_folds(build, tmp_path) -> None:
    # attention_dense_block is the profile's launch_block: equal IR proves nothing about it.
    edit = e.replace(e.GFX950_DENSE, "    return (spec.num_waves * 64, 1, 1)",
                     "    threads = spec.num_waves * 64\n    return (threads, 1, 1)")
    _, report = emit_and_report(build, tmp_path, Change("block", edits=(edit,)))
    assert ("launch-surface", "changed") in {(r["contract"], r["status"]) for r in report["rows"]}
    assert report["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE gfx950"


@pytest.mark.slow  # children spawned
def test_untrusted_head_never_folds_and_the_emit_file_is_hashed(build, tmp_path) -> None:
    """The refactor that folds to NONE when the head is trusted stays changed when it is
    not (its own code produced the evidence), and the report records the sha256 of the
    exact emit file bytes it judged."""
    import hashlib

    edit = e.replace(TILED, '    elem = BF16 if spec.dtype == "bf16" else F16',
                     '    is_bf16 = spec.dtype == "bf16"\n    elem = BF16 if is_bf16 else F16')
    repo = build(Scenario(base=TREE, head=(Change("refactor", edits=(edit,)),)))
    views = open_views(repo.path, base="base", head="head")
    out = tmp_path / "emit.json"
    write_emit_file(run_emit(views, load_surface_map()), out)
    code, trusted = coded_report(repo, emit=str(out))
    assert code == 0
    code, untrusted = coded_report(repo, emit=str(out), untrusted_head=True)
    assert code == 2
    assert trusted["verdict"]["kind"] == "NONE"
    assert untrusted["verdict"]["kind"] == "NEEDS-DEVICE"
    assert not any(r["subject"] == TILED and r["status"] == "inert" for r in untrusted["rows"])
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    assert trusted["emit"]["sha256"] == untrusted["emit"]["sha256"] == digest
    assert trusted["emit"]["fold"] == "applied"
    assert untrusted["emit"]["fold"].startswith("off")
