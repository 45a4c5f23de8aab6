"""`impact facts`: what the tool sees in named files, and the blob-id cache behind it."""

from __future__ import annotations

import json

from impact.cli import main
from impact.contracts import validate
from impact.errors import EXIT_BAD_INPUT, EXIT_NONE
from impact.extract import EXTRACTORS, FactCache
from impact.fixtures import Scenario
from impact.fixtures.edits import GFX950_DENSE_KDP, GFX950_DENSE_PACK
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot
from impact.surface import load_surface_map

FBS = "projects/hipdnn/flatbuffers_sdk/schemas/sdpa_attributes.fbs"


def test_facts_of_a_pack_and_a_descriptor(build, capsys) -> None:
    repo = build(Scenario(base=rocke_tree_files()))
    argv = ["facts", "--repo", str(repo.path), "--rev", "base", GFX950_DENSE_PACK,
            GFX950_DENSE_KDP, FBS]
    assert main(argv) == EXIT_NONE
    first = capsys.readouterr().out
    assert main(argv) == EXIT_NONE
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    validate(doc, "facts.schema.json")
    pack = doc["files"][GFX950_DENSE_PACK]
    assert pack["surface"] == "ingestor-pack" and pack["language"] == "cpp"
    lists = [f for f in pack["facts"] if f["kind"] == "kernel-argument-list"]
    assert [e["name"] for e in lists[0]["data"]["entries"]][-1] == "seqlen_kv"
    kdp = doc["files"][GFX950_DENSE_KDP]["facts"]
    assert sum(f["kind"] == "variant" for f in kdp) == 38
    # No flatbuffers extractor yet: the schema is reported as not understood, never as empty.
    assert [f["kind"] for f in doc["files"][FBS]["facts"]] == ["parse-failure"]


def test_missing_path_is_bad_input(build, capsys) -> None:
    repo = build(Scenario(base={"a.py": "A = 1\n"}))
    assert main(["facts", "--repo", str(repo.path), "b.py"]) == EXIT_BAD_INPUT
    assert "no file b.py at HEAD" in capsys.readouterr().err


def test_a_blob_is_parsed_once(monkeypatch, fresh_session) -> None:
    calls: list[str] = []
    real = EXTRACTORS["cpp"]
    monkeypatch.setitem(EXTRACTORS, "cpp", lambda p, s, m: calls.append(p) or real(p, s, m))
    base = Snapshot.from_files({"a.cpp": "int f();\n", "b.cpp": "int g();\n"})
    head = Snapshot.from_files({"a.cpp": "int f();\n", "b.cpp": "int h();\n"})
    cache = FactCache(load_surface_map())
    for snap in (base, head, base):
        cache.facts(snap, "a.cpp")
        cache.facts(snap, "b.cpp")
    assert calls == ["a.cpp", "b.cpp", "b.cpp"]


def test_unreadable_content_is_a_parse_failure(fresh_session) -> None:
    snap = Snapshot(dict(Snapshot.from_files({"a.cpp": "x"})), lambda sha: 1 / 0, label="t")
    facts = FactCache(load_surface_map()).facts(snap, "a.cpp")
    assert [f.kind for f in facts] == ["parse-failure"]


def test_the_maps_dsl_modules_reach_the_python_extractor() -> None:
    """`rocke.core.ir.SignatureBuilder()` is a builder because the hipDNN map names
    `rocke.core.ir` among its DSL modules, not because the extractor knows rocKE."""
    path = "dnn-providers/hip-kernel-provider/rocke/library/kernels/gfx950/q.py"
    source = "def sig(s):\n    return rocke.core.ir.SignatureBuilder().ptr('a').build()\n"
    surface = load_surface_map()
    assert "rocke.core.ir" in surface.conventions.dsl_modules
    facts = FactCache(surface).facts(Snapshot.from_files({path: source}), path)
    (builder,) = [f for f in facts if f.kind == "signature-builder"]
    assert [e["name"] for e in builder.data["entries"]] == ["a"]
