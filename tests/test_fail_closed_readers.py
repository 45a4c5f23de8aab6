"""Every reader refuses what the real consumer refuses (issue 13): a file Python will not
compile, JSON with a duplicate key, YAML with aliases or too many nodes, a file too large
to read, and a blob that cannot be read at all each become a `changed` row naming the file,
never an `inert` one, and the report never reads NONE or N/A for them."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from dulwich.objects import Blob
from harness import report

from impact.bindings import extract_sources_map_facts
from impact.checks import run_checks
from impact.checks.base import CheckContext
from impact.descriptors import extract_descriptor_facts, extract_profile_facts
from impact.descriptors.aot import extract_aot_family_facts
from impact.document import build_report
from impact.dvc import extract_dvc_facts
from impact.extract import FactCache
from impact.facts import PARSE_FAILURE, Fact
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot, Views
from impact.git.snapshot import GITLINK, Entry, tree_id_of
from impact.python import extract_python_facts
from impact.rows import Status
from impact.surface import load_surface_map

TREE = rocke_tree_files()
SAFE = ("Runtime impact: NONE", "Runtime impact: N/A")


def failures(facts: list[Fact]) -> list[str]:
    return [str(f.data["reason"]) for f in facts if f.kind == PARSE_FAILURE]


# 1. Python: what `compile(source, path, "exec")` refuses is unreadable.

NOT_COMPILABLE = {
    "nul byte in a comment": b"x = 1  # a \x00 byte\n",
    "unknown encoding declaration": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "return outside a function": b"return 1\n",
    "nonlocal at module level": b"nonlocal x\n",
    "assignment to a literal keyword": b"def f():\n    None = 1\n",
}


@pytest.mark.parametrize("source", NOT_COMPILABLE.values(), ids=NOT_COMPILABLE.keys())
def test_python_that_does_not_compile_is_a_parse_failure(source: bytes) -> None:
    found = failures(extract_python_facts("pkg/mod.py", source))
    assert found, "a file Python refuses to compile must not be understood"


def test_python_that_compiles_is_still_read() -> None:
    facts = extract_python_facts("pkg/mod.py", b'"""doc \\d"""\ndef f(x):\n    return x\n')
    assert not failures(facts)


def test_nul_byte_in_a_builder_comment_is_never_none() -> None:
    nul = e.replace(e.GFX950_DENSE, e.DENSE_COMMENT, e.DENSE_COMMENT + " \x00")
    doc = report(Scenario(base=TREE, head=(Change("nul", edits=(nul,)),)))
    assert doc["verdict"]["line"] not in SAFE
    rows = [r for r in doc["rows"] if r["subject"] == e.GFX950_DENSE or
            e.GFX950_DENSE in {s["file"] for s in r["sides"]}]
    assert any(r["status"] == "changed" for r in rows)
    assert not any(r["status"] == "inert" for r in rows)


# 2. JSON: a duplicate key is refused, naming the key.

def test_duplicate_key_in_a_kdp_names_the_key() -> None:
    text = TREE[e.GFX950_DENSE_KDP].decode()
    doubled = text.replace('"arch":', '"arch": ["gfx942"],\n  "arch":', 1)
    assert doubled != text
    found = failures(extract_descriptor_facts(e.GFX950_DENSE_KDP, doubled.encode()))
    assert any("duplicate key 'arch'" in reason for reason in found)


def test_duplicate_key_in_every_json_reader() -> None:
    aot = b'{"kernels": [], "kernels": []}'
    sources = b'{"m": {"srcs": ["a.cu"]}, "m": {"srcs": ["b.cu"]}}'
    assert any("duplicate key 'kernels'" in r
               for r in failures(extract_aot_family_facts("x/family.json", aot)))
    assert any("duplicate key 'm'" in r
               for r in failures(extract_sources_map_facts("x/opt.json", sources)))


def test_duplicate_key_in_a_profile_is_refused() -> None:
    source = PROFILE + b"engine: other\n"
    assert any("duplicate key 'engine'" in r
               for r in failures(extract_profile_facts(PROFILE_PATH, source)))


def test_duplicate_kdp_key_is_never_none() -> None:
    def doubled(files: dict[str, bytes]) -> None:
        text = files[e.GFX950_DENSE_KDP].decode()
        files[e.GFX950_DENSE_KDP] = text.replace(
            '"arch":', '"arch": ["gfx942"],\n  "arch":', 1).encode()

    doc = report(Scenario(base=TREE, head=(Change("dup", edits=(doubled,)),)))
    assert doc["verdict"]["line"] not in SAFE
    assert any(r["status"] == "changed" and e.GFX950_DENSE_KDP in
               {s["file"] for s in r["sides"]} | {r["subject"]} for r in doc["rows"])


# 3. YAML: no anchors or aliases where none are used, and a node budget.

PROFILE = b"""engine: e
source: s.py
builder: s.py:build
launch_surface: []
"""
# A small bomb: 60 bytes a line, 9**7 (4.8 million) leaves once expanded.
LAUGHS = b"""a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""
PROFILE_PATH = "projects/hipdnn/tools/IngestorGenerator/configs/x.profile.yaml"
BOMBS = {
    "profile": (PROFILE_PATH, PROFILE + LAUGHS),
    "dvc": ("data/x.tar.gz.dvc", b"outs:\n- md5: a\n  size: 1\n  path: x.tar.gz\n" + LAUGHS),
}


MEASURE = """
import json, resource, sys, time
from impact.extract import FactCache
from impact.git import Snapshot
from impact.surface import load_surface_map
path, source = sys.argv[1], sys.stdin.buffer.read()
cache, snap = FactCache(load_surface_map()), Snapshot.from_files({path: source})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
facts = cache.facts(snap, path)
print(json.dumps({"cpu": time.process_time() - start,
                  "grown_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before,
                  "failures": [f.data["reason"] for f in facts if f.kind == "parse-failure"]}))
"""


@pytest.mark.parametrize("which", BOMBS, ids=BOMBS)
def test_billion_laughs_fails_fast_and_small(which) -> None:
    """Measured in a fresh process, so the peak RSS is this reader's alone."""
    path, source = BOMBS[which]
    proc = subprocess.run([sys.executable, "-c", MEASURE, path], input=source,
                          capture_output=True, timeout=120, check=True)
    seen = json.loads(proc.stdout)
    assert seen["failures"]
    assert seen["cpu"] < 0.5, f"{seen['cpu']:.1f} s of CPU"
    assert seen["grown_kb"] < 16 * 1024, f"{seen['grown_kb']} kB more RSS"


def test_profile_with_an_anchor_or_alias_is_refused() -> None:
    source = PROFILE + b"x: &anchor 1\ny: *anchor\n"
    found = failures(extract_profile_facts(PROFILE_PATH, source))
    assert any("YAML anchor &anchor" in r for r in found)
    alias_only = failures(extract_dvc_facts("x.dvc", b"outs:\n- *nowhere\n"))
    assert any("alias" in r for r in alias_only)


def test_dvc_pointer_with_a_duplicate_key_is_refused() -> None:
    source = b"outs:\n- md5: a\n  md5: b\n  path: x.tar.gz\n"
    assert any("duplicate key 'md5'" in r for r in failures(extract_dvc_facts("x.dvc", source)))


def test_yaml_node_budget(monkeypatch) -> None:
    from impact import strict
    monkeypatch.setattr(strict, "YAML_NODE_BUDGET", 50)
    items = "".join(f"- {i}\n" for i in range(60))
    source = PROFILE + b"extra:\n" + items.encode()
    assert any("more than 50 YAML nodes" in r
               for r in failures(extract_profile_facts(PROFILE_PATH, source)))
    assert not failures(extract_profile_facts(PROFILE_PATH, PROFILE))


# 4. A size limit per file, checked before parsing.

def test_a_file_over_the_size_limit_is_too_large_to_read(monkeypatch,
                                                         fresh_session) -> None:
    from impact import strict
    monkeypatch.setattr(strict, "MAX_FILE_BYTES", 1000)
    path = e.GFX950_DENSE
    big = TREE[path] + b"# padding\n" * 200
    snap = Snapshot.from_files({path: big})
    found = failures(FactCache(load_surface_map()).facts(snap, path))
    assert any(r.startswith("too large to read:") and "MB" in r for r in found)


def test_a_large_python_file_is_refused_quickly(fresh_session) -> None:
    from impact import strict
    path = e.GFX950_DENSE
    big = b"x = [" + b"1, " * (strict.MAX_FILE_BYTES // 3) + b"]\n"
    start = time.monotonic()
    found = failures(FactCache(load_surface_map()).facts(Snapshot.from_files({path: big}), path))
    assert time.monotonic() - start < 2
    assert any(r.startswith("too large to read:") for r in found)


# 5. An unreadable blob is a changed row that names the file.

# Without the AOT catalog and the profile, only the pack's own rows name the pack.
PROFILE_OF_DENSE = ("projects/hipdnn/tools/IngestorGenerator/configs/"
                    "gfx950_attention_dense.profile.yaml")
BARE = {p: c for p, c in TREE.items() if "/aot_catalog/" not in p and p != PROFILE_OF_DENSE}
PIN = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
       "TestGfx950AttentionDenseSignature.cpp")
ADD_ARGUMENT = (e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),
                e.add_pack_argument(PIN, "dropout_seed"))


def _failing(files: dict[str, bytes], path: str, label: str, how: str) -> Snapshot:
    """`files` as a snapshot whose copy of `path` cannot be read: its blob is missing (a
    partial clone), corrupt, or the path is a gitlink."""
    snap = Snapshot.from_files(files, label=label)
    entries = dict(snap.items())
    readable = {snap[p].sha: files[p] for p in files}
    if how == "gitlink":
        entries[path] = Entry("1" * 40, GITLINK)
    bad = entries[path].sha

    def reader(sha: str) -> bytes:
        if sha == bad and how == "missing":
            raise KeyError(f"object {sha} is missing (a partial clone)")
        if sha == bad and how == "corrupt":
            raise ValueError(f"object {sha}: zlib: incorrect header check")
        return readable[sha]

    return Snapshot(entries, reader, label=label, tree_id=tree_id_of(entries))


def _views(how: str, *edits: e.Edit) -> Views:
    head = dict(BARE)
    for edit in edits:
        edit(head)
    return Views.from_snapshots(_failing(dict(BARE), e.GFX950_DENSE_PACK, "base", how),
                                _failing(head, e.GFX950_DENSE_PACK, "head", how))


@pytest.mark.parametrize("how", ["missing", "corrupt", "gitlink"])
def test_unreadable_unchanged_pack_is_named_and_never_none(how, fresh_session) -> None:
    surface = load_surface_map()
    doc = build_report(_views(how, *ADD_ARGUMENT), {}, surface)
    assert doc["verdict"]["kind"] not in ("NONE", "N/A")
    naming = [r for r in doc["rows"] if e.GFX950_DENSE_PACK in {s["file"] for s in r["sides"]}
              and not r["preexisting"]]
    assert naming, "no charged row names the unreadable pack"
    assert {r["status"] for r in naming} <= {"changed", "mismatch"}


def test_every_copy_readable_the_same_edit_breaks(fresh_session) -> None:
    """The control: with the pack readable the same edit is a mismatch on it."""
    head = dict(BARE)
    for edit in ADD_ARGUMENT:
        edit(head)
    views = Views.from_snapshots(Snapshot.from_files(BARE), Snapshot.from_files(head))
    rows = run_checks(CheckContext(views, load_surface_map()))
    assert any(r.status == Status.MISMATCH and e.GFX950_DENSE_PACK in r.files for r in rows)
    assert not [r for r in rows if r.contract == "unreadable"]


def test_unreadable_file_gets_one_row_per_view_unless_already_named(fresh_session) -> None:
    rows = run_checks(CheckContext(_views("missing", *ADD_ARGUMENT), load_surface_map()))
    unreadable = [r for r in rows if r.contract == "unreadable"]
    assert [(r.view, r.subject, r.status) for r in unreadable] == [
        ("head", e.GFX950_DENSE_PACK, Status.CHANGED)]
    assert not unreadable[0].preexisting
    assert "missing" in unreadable[0].details["error"]
    others = [r for r in rows if r.contract != "unreadable" and e.GFX950_DENSE_PACK in r.files
              and not r.preexisting]
    assert not others, "the unreadable row stands for a file no other charged row names"


def test_unreadable_file_already_named_gets_no_second_row(fresh_session) -> None:
    """With the profile kept, the launch-surface check names the unreadable mirror itself."""
    head = dict(TREE)
    e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")(head)
    views = Views.from_snapshots(_failing(dict(TREE), e.GFX950_DENSE_PACK, "base", "missing"),
                                 _failing(head, e.GFX950_DENSE_PACK, "head", "missing"))
    rows = run_checks(CheckContext(views, load_surface_map()))
    assert any(r.contract != "unreadable" and e.GFX950_DENSE_PACK in r.files for r in rows)
    assert not [r for r in rows if r.contract == "unreadable"]


def test_missing_pack_object_in_a_real_repository_is_named(build, fresh_session) -> None:
    """The issue's case on disk: the unchanged pack's loose object deleted from .git."""
    repo = build(Scenario(base=BARE, head=(Change("arg", edits=ADD_ARGUMENT),)))
    sha = Blob.from_string(BARE[e.GFX950_DENSE_PACK]).id.decode()
    (repo.path / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    doc = report(repo)
    assert doc["verdict"]["line"] not in SAFE
    assert [(r["contract"], r["status"]) for r in doc["rows"]
            if r["subject"] == e.GFX950_DENSE_PACK] == [("unreadable", "changed")]
