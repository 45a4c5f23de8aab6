"""Tests of the descriptor and tool-profile extractors, on the fixture tree and inline documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact.descriptors import (
    descriptor_type,
    expand_arch,
    extract_descriptor_facts,
    extract_profile_facts,
    normalize_rocke_source,
)
from impact.descriptors.arch import arch_problems
from impact.facts import PARSE_FAILURE, Fact

ROOT = Path(__file__).resolve().parent.parent / "impact" / "fixtures" / "rocke_tree"
ENGINE = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine"
DESC = f"{ENGINE}/descriptors"
PACKS = f"{ENGINE}/packs"
CONFIGS = "projects/hipdnn/tools/IngestorGenerator/configs"
DENSE950 = f"{DESC}/rocKE/gfx950_attention_dense/gfx950_attention_dense"
DENSE942 = f"{DESC}/rocKE/gfx942_attention_dense/gfx942_attention_dense"
TILED = f"{DESC}/rocKE/gfx950_attention_tiled_2d"
UNIFIED = f"{DESC}/rocKE/gfx950_unified_attention/gfx950_unified_attention"
POINTWISE = f"{DESC}/hip/pointwise_add"
DESCRIPTOR_FILES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / DESC).rglob("*.json"))
PROFILE_FILES = sorted(p.relative_to(ROOT).as_posix()
                       for p in (ROOT / CONFIGS).glob("*.profile.yaml"))


def facts_of(path: str, source: bytes | None = None) -> list[Fact]:
    data = (ROOT / path).read_bytes() if source is None else source
    return extract_descriptor_facts(path, data)


def of_kind(facts: list[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def only(facts: list[Fact], kind: str) -> Fact:
    found = of_kind(facts, kind)
    assert len(found) == 1, facts
    return found[0]


def failure_reason(facts: list[Fact]) -> str:
    assert len(facts) == 1 and facts[0].kind == PARSE_FAILURE, facts
    return facts[0].data["reason"]


def constexpr_strings(pack: str) -> set[str]:
    text = (ROOT / PACKS / pack).read_text(encoding="utf-8")
    return {line.split('"')[1] for line in text.splitlines()
            if line.startswith("constexpr std::string_view") and "SYMBOL" in line}


# --- file names ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("path", "expected"), [
    ("a/b/gfx950_attention_dense.kdp.json", "kdp"),
    ("x.bf16_d128.gfx950.ukd.json", "ukd"),
    ("e.ued.json", "ued"), ("m.umd.json", "umd"), ("d.udd.json", "udd"),
    ("h.uhd.json", "uhd"), ("k.kmd.json", "kmd"),
    ("plain.json", None), ("x.KDP.json", None), ("x.kdp.yaml", None), (".kdp.json", None),
    ("x.abc.json", None), ("kdp.json", None),
])
def test_descriptor_type(path: str, expected: str | None) -> None:
    assert descriptor_type(path) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("kernels/gfx950/attention_dense.py", "kernels.gfx950.attention_dense"),
    ("kernels.gfx950.attention_dense", "kernels.gfx950.attention_dense"),
    ("kernels/common/__init__.py", "kernels.common"),
    ("pointwise_add.cpp", "pointwise_add.cpp"),
    ("../kernels/x.py", "../kernels/x.py"),
    ("", ""),
])
def test_normalize_rocke_source(source: str, expected: str) -> None:
    assert normalize_rocke_source(source) == expected


# --- arch ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("archs", "expected"), [
    (["gfx942", "gfx9-4-generic"], ["gfx942", "gfx940", "gfx941", "gfx950"]),
    (["gfx9-4-generic"], ["gfx940", "gfx941", "gfx942", "gfx950"]),
    (["gfx950"], ["gfx950"]),
    ([], []),
    (["gfx1100", "gfx11-generic", "gfx1100"],
     ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"]),
    (["gfx12-generic", "gfx90a"], ["gfx90a", "gfx1200", "gfx1201"]),
    (["gfx942:xnack-"], ["gfx942:xnack-"]),
])
def test_expand_arch(archs: list[str], expected: list[str]) -> None:
    assert expand_arch(archs) == expected


@pytest.mark.parametrize(("archs", "needle"), [
    (["gfx942:xnack-"], "feature suffix"),
    (["sm_90"], "not a bare gfx id"),
    (["gfx99-generic"], "generic target missing"),
    ([7], "not a string"),
])
def test_arch_problems(archs: list[object], needle: str) -> None:
    problems = arch_problems(archs)
    assert len(problems) == 1 and needle in problems[0]


def test_arch_problems_empty_for_plain_ids() -> None:
    assert arch_problems(["gfx942", "gfx9-4-generic", "gfx950"]) == []


# --- fixture descriptors ------------------------------------------------------------------------

@pytest.mark.parametrize("path", DESCRIPTOR_FILES)
def test_every_fixture_descriptor_parses(path: str) -> None:
    facts = facts_of(path)
    assert not of_kind(facts, PARSE_FAILURE)
    descriptor = only(facts, "descriptor")
    assert descriptor.data["type"] == descriptor_type(path)
    assert descriptor.data["version"] == "1.0"
    assert all(f.line >= 0 for f in facts)
    json.dumps([f.to_json() for f in facts])


def test_gfx950_dense_kdp() -> None:
    facts = facts_of(f"{DENSE950}.kdp.json")
    kdp = only(facts, "kdp")
    assert kdp.name == "gfx950_attention_dense"
    assert kdp.line == 3
    assert kdp.data["arch"] == ["gfx950"]
    assert kdp.data["arch_expanded"] == ["gfx950"]
    assert kdp.data["arch_problems"] == []
    assert kdp.data["inline_count"] == 38
    assert kdp.data["ukd_refs"] == []
    assert kdp.data["matchers"] == ["4cbc57d4-dd3d-5ed4-80b7-bb04efca85a5"]
    assert kdp.data["provenance_contract"]["schema_version"] == 1
    variants = of_kind(facts, "variant")
    assert len(variants) == 38
    assert len({v.line for v in variants}) == 38
    first = min(variants, key=lambda v: v.line)
    assert first.name == "attention_dense.bf16_d64_hq8_kv1_bm256_bn64_causal.gfx950"
    assert first.data["priority"] == 100
    assert first.data["metadata"]["dtype"] == "BF16"
    for variant in variants:
        assert variant.data["kdp"] == "gfx950_attention_dense"
        assert variant.data["arch"] is None
        assert variant.data["arch_expanded"] == ["gfx950"]
        assert variant.data["problems"] == []
        (launch,) = variant.data["launches"]
        assert launch["launch"] is None
        assert launch["kind"] == "rocke"
        assert launch["source"] == "kernels.gfx950.attention_dense"  # 12 are slash-spelled
        assert launch["builder"] == "build_attention_dense"
        assert launch["problems"] == []


def test_gfx942_kdp_generic_arch_and_narrowed_variant() -> None:
    facts = facts_of(f"{DENSE942}.kdp.json")
    kdp = only(facts, "kdp")
    assert kdp.data["arch"] == ["gfx942", "gfx9-4-generic"]
    assert set(kdp.data["arch_expanded"]) >= {"gfx940", "gfx941", "gfx942", "gfx950"}
    variants = of_kind(facts, "variant")
    assert len(variants) == 6
    narrowed = [v for v in variants if v.data["arch"] is not None]
    assert [v.data["arch"] for v in narrowed] == [["gfx942"]]
    assert narrowed[0].data["arch_expanded"] == ["gfx942"]
    assert narrowed[0].name.endswith("persist304_qbm.gfx942")
    wide = [v for v in variants if v.data["arch"] is None]
    assert all(v.data["arch_expanded"] == kdp.data["arch_expanded"] for v in wide)


def test_tiled_kdp_references_standalone_ukds() -> None:
    facts = facts_of(f"{TILED}/gfx950_attention_tiled_2d.kdp.json")
    kdp = only(facts, "kdp")
    assert kdp.data["ukd_refs"] == ["6e5c8a4c-8f7b-5c20-87c8-ff5d377b8d96",
                                    "c3a16887-2a14-595d-b769-f4dd4ff25625"]
    assert kdp.data["inline_count"] == 2
    assert len(of_kind(facts, "variant")) == 2


def test_standalone_ukd() -> None:
    path = f"{TILED}/attention_tiled_2d.bf16_d128_hq16_kv2_bm64_bn64_w4_full_alibi.gfx950.ukd.json"
    variant = only(facts_of(path), "variant")
    assert variant.name == "attention_tiled_2d.bf16_d128_hq16_kv2_bm64_bn64_w4_full_alibi.gfx950"
    assert variant.data["id"] == "6e5c8a4c-8f7b-5c20-87c8-ff5d377b8d96"
    assert variant.data["kdp"] is None
    assert variant.data["arch_expanded"] == []
    assert variant.data["priority"] == 50
    (launch,) = variant.data["launches"]
    assert (launch["kind"], launch["source"], launch["builder"]) == (
        "rocke", "kernels.gfx950.attention_tiled_2d", "build_attention_tiled_2d")
    assert launch["spec"]["use_alibi"] is True


def test_unified_multi_launch_variants() -> None:
    facts = facts_of(f"{UNIFIED}.kdp.json")
    variants = of_kind(facts, "variant")
    assert len(variants) == 2
    for variant in variants:
        assert variant.data["problems"] == []
        launches = variant.data["launches"]
        assert [x["launch"] for x in launches] == ["segment", "reduce"]
        assert [x["builder"] for x in launches] == ["build_unified_attention_segment",
                                                    "build_unified_attention_reduce"]
        assert {x["source"] for x in launches} == {"kernels.gfx950.unified_attention"}
        assert "tile_n" in launches[0]["spec"] and "tile_n" not in launches[1]["spec"]


def test_pointwise_hip_and_hsaco() -> None:
    facts = facts_of(f"{POINTWISE}/pointwise_add.kdp.json")
    assert only(facts, "kdp").data["arch_expanded"] == ["gfx942", "gfx950"]
    by_name = {v.name: v for v in of_kind(facts, "variant")}
    hip = by_name["pointwise_add.f32.hip"].data["launches"][0]
    assert (hip["kind"], hip["source"], hip["entry"]) == ("hip", "pointwise_add.cpp",
                                                          "pointwise_add_f32")
    assert hip["build"] == {"defines": ["VECTOR_WIDTH=4"], "flags": ["-O3"]}
    prebuilt = by_name["pointwise_add.f32.prebuilt.gfx942"]
    hsaco = prebuilt.data["launches"][0]
    assert (hsaco["kind"], hsaco["file"], hsaco["symbol"]) == (
        "hsaco", "pointwise_add.gfx942.hsaco", "pointwise_add_f32")
    assert prebuilt.data["arch_expanded"] == ["gfx942"]


SYMBOL_CASES = [
    (f"{DENSE950}", "Gfx950AttentionDenseNative.cpp"),
    (f"{DENSE942}", "Gfx942AttentionDenseNative.cpp"),
    (f"{TILED}/gfx950_attention_tiled_2d", "Gfx950AttentionTiled2dNative.cpp"),
    (f"{UNIFIED}", "Gfx950UnifiedAttentionNative.cpp"),
    (f"{POINTWISE}/pointwise_add", "PointwiseNative.cpp"),
]


@pytest.mark.parametrize(("stem", "pack"), SYMBOL_CASES)
def test_symbols_equal_pack_constexprs(stem: str, pack: str) -> None:
    umd = f"{posix_dir(stem)}/kernel_dtype_matches_graph.umd.json"
    roles = {}
    for path in (f"{stem}.ued.json", f"{stem}.udd.json", f"{stem}.uhd.json", umd):
        for fact in of_kind(facts_of(path), "symbol"):
            roles[fact.data["role"]] = fact.name
    assert set(roles) == {"graph_match", "dispatch_symbol", "heuristic_payload", "match_symbol"}
    assert set(roles.values()) == constexpr_strings(pack)


def posix_dir(stem: str) -> str:
    return stem.rsplit("/", 1)[0]


def test_symbol_literals_gfx950_dense() -> None:
    names = {f.name for f in facts_of(f"{DENSE950}.ued.json") if f.kind == "symbol"}
    assert names == {"hipkernel.gfx950_attention_dense.graph_match"}
    dispatch = only(facts_of(f"{DENSE950}.udd.json"), "symbol")
    assert dispatch.name == "hipkernel.gfx950_attention_dense.dispatch"
    assert dispatch.line == 5


def test_ued_engine_fact() -> None:
    facts = facts_of(f"{DENSE950}.ued.json")
    engine = only(facts, "engine")
    assert engine.name == "hipkernel:Gfx950AttentionDense"
    assert engine.data["metadata"] == "4b5752bc-1cf5-59eb-a91f-86d925e6e883"
    assert engine.data["sdk_version"] == "1.4"
    assert engine.data["knobs"] == []
    symbol = only(facts, "symbol")
    assert symbol.data == {"role": "graph_match", "descriptor": "ued",
                           "engine_name": "hipkernel:Gfx950AttentionDense"}


def test_umd_scope() -> None:
    symbol = only(facts_of(f"{DESC}/rocKE/gfx950_attention_dense/"
                           "kernel_dtype_matches_graph.umd.json"), "symbol")
    assert symbol.data["role"] == "match_symbol" and symbol.data["scope"] == "kernel"


def test_kmd_fields() -> None:
    fields = {f.name: f for f in of_kind(facts_of(f"{POINTWISE}/pointwise_add.kmd.json"),
                                         "kmd-field")}
    assert list(fields) == ["dtype", "op", "vector_width"]
    assert fields["dtype"].data["mandatory"] is True
    assert fields["op"].data["mandatory"] is False
    assert fields["op"].data["default_value"] == "add"
    assert fields["vector_width"].data["type"] == "int"
    assert fields["dtype"].line < fields["op"].line < fields["vector_width"].line


def test_uhd_non_native_is_a_heuristic() -> None:
    doc = {"id": "u1", "name": "h", "version": "1.0", "adapter": "tree_data", "kind": "model"}
    facts = extract_descriptor_facts("x.uhd.json", json.dumps(doc, indent=1).encode())
    heuristic = only(facts, "heuristic")
    assert heuristic.data["adapter"] == "tree_data" and heuristic.data["kind"] == "model"
    assert not of_kind(facts, "symbol")


# --- bad documents ------------------------------------------------------------------------------

def kdp_with(ukd: object, **extra: object) -> bytes:
    doc = {"id": "k", "name": "pack", "version": "1.0", "matchers": [], "engine": "e",
           "dispatch": "d", "kernelDescriptors": [ukd], **extra}
    return json.dumps(doc, indent=2).encode()


@pytest.mark.parametrize(("path", "source", "needle"), [
    ("x.kdp.json", b"{not json", "not JSON"),
    ("x.kdp.json", b"[1, 2]", "not a JSON object"),
    ("x.kdp.json", b"\xff\xfe", "not UTF-8"),
    ("x.kdp.json", b'{"a": NaN}', "not JSON"),
    ("x.foo.json", b"{}", "unknown descriptor type"),
    ("x.json", b"{}", "unknown descriptor type"),
    ("x.kdp.json", b'{"id": "k", "version": "1.0"}', "schema: $: 'name' is a required"),
    ("x.udd.json", b'{"id": "k", "version": "1.0", "dispatch_symbol": 3}',
     "schema: $.dispatch_symbol: 3 is not of type 'string'"),
    ("x.kdp.json", kdp_with(5), "schema: $.kernelDescriptors[0]"),
    ("x.kmd.json", b'{"id": "k", "version": "1.0", "fields": [{"type": "int"}]}',
     "schema: $.fields[0]"),
])
def test_bad_documents_give_one_parse_failure(path: str, source: bytes, needle: str) -> None:
    assert needle in failure_reason(extract_descriptor_facts(path, source))


@pytest.mark.parametrize(("ukd", "needle"), [
    ({"id": "u", "name": "n", "kernel_source": "kernels.x"}, "kernel_source is a string"),
    ({"id": "u", "name": "n", "kernel_source": {"kind": "rocke", "source": "kernels.x",
                                                 "builder": 7}}, "builder is a number"),
    ({"id": "u", "sources": [{"launch": "a", "kind": "rocke"}]}, "multi-launch UKD has no name"),
    ({"id": "u", "name": "n"}, "neither kernel_source nor sources"),
    ({"id": "u", "name": "n", "sources": [3]}, "sources[0] is a number"),
    ({"id": "u", "name": "n", "kernel_source": {"kind": "rocke", "spec": []}},
     "spec is an array"),
    ({"id": "u", "name": "n", "kernel_source": {"kind": "rocke"}, "metadata": 1},
     "metadata is not an object"),
])
def test_defective_ukd_is_a_variant_with_problems(ukd: dict[str, object], needle: str) -> None:
    facts = extract_descriptor_facts("x.kdp.json", kdp_with(ukd))
    assert not of_kind(facts, PARSE_FAILURE)
    variant = only(facts, "variant")
    assert variant.data["problems"], variant
    assert any(needle in p for p in variant.data["problems"]), variant.data["problems"]


def test_single_launch_without_name_is_named_by_id() -> None:
    facts = extract_descriptor_facts("x.kdp.json", kdp_with(
        {"id": "u-1", "kernel_source": {"kind": "hsaco", "file": "a.hsaco", "symbol": "k"}}))
    variant = only(facts, "variant")
    assert variant.name == "u-1" and variant.data["problems"] == []


def test_kpack_launch() -> None:
    source = {"kind": "kpack", "library": "../../kpack/hip_kernel_provider_gfx950.kpack",
              "toc_key": "t", "symbol": "attention_dense_kernel", "sha256": "0" * 64,
              "signature": [{"kind": "ptr", "size": 8, "offset": 0, "name": "q"},
                            {"kind": "i32", "size": 4, "offset": 8}]}
    variant = only(extract_descriptor_facts("x.kdp.json", kdp_with(
        {"id": "u", "name": "n", "kernel_source": source})), "variant")
    launch = variant.data["launches"][0]
    assert launch["library"].endswith(".kpack") and launch["sha256"] == "0" * 64
    assert launch["symbol"] == "attention_dense_kernel"
    assert launch["signature"] == [{"kind": "ptr", "size": 8, "offset": 0, "name": "q"},
                                   {"kind": "i32", "size": 4, "offset": 8, "name": None}]


def test_feature_suffix_is_reported() -> None:
    facts = extract_descriptor_facts("x.kdp.json", kdp_with(
        {"id": "u", "name": "n", "kernel_source": {"kind": "rocke"}, "arch": ["gfx942:xnack-"]},
        arch=["gfx942:xnack-", "gfx9-4-generic"]))
    kdp = only(facts, "kdp")
    assert any("feature suffix" in p for p in kdp.data["arch_problems"])
    assert "gfx942:xnack-" in kdp.data["arch_expanded"]
    assert "gfx942" in kdp.data["arch_expanded"]
    variant = only(facts, "variant")
    assert any("feature suffix" in p for p in variant.data["arch_problems"])


# --- profiles -----------------------------------------------------------------------------------

def surfaces(path: str) -> dict[str, Fact]:
    facts = extract_profile_facts(path, (ROOT / path).read_bytes())
    assert not of_kind(facts, PARSE_FAILURE)
    return {f.name: f for f in of_kind(facts, "launch-surface")}


@pytest.mark.parametrize("path", PROFILE_FILES)
def test_profiles_parse(path: str) -> None:
    facts = extract_profile_facts(path, (ROOT / path).read_bytes())
    profile = only(facts, "profile")
    assert profile.name == path
    assert profile.data["builder"] == "build_attention_dense"
    assert "dtype" in profile.data["kmd_fields"]
    assert of_kind(facts, "launch-surface")


GFX950_PROFILE = f"{CONFIGS}/gfx950_attention_dense.profile.yaml"


@pytest.mark.parametrize(("name", "field", "file_end", "symbol"), [
    ("kernel_arguments", "python_source", "gfx950/attention_dense.py", "build_attention_dense"),
    ("spec_rules", "python_source", "attention_dense_spec.py", "AttentionDenseSpec.__post_init__"),
    ("positional_launch", "python_source", "gfx950/attention_dense.py", None),
    ("positional_launch", "cpp_mirror", "Gfx950AttentionDenseNative.cpp",
     "Gfx950AttentionDenseDispatch::launch"),
    ("launch_grid", "cpp_mirror", "Gfx950AttentionDenseGeometry.hpp",
     "gfx950AttentionDenseGeometry"),
])
def test_profile_locators(name: str, field: str, file_end: str, symbol: str | None) -> None:
    locator = surfaces(GFX950_PROFILE)[name].data[field]
    assert locator["file"].endswith(file_end)
    assert locator["symbol"] == symbol
    assert locator["raw"].startswith(locator["file"])


def test_profile_explicit_none() -> None:
    found = surfaces(GFX950_PROFILE)
    optional = found["optional_arguments"].data
    assert optional["cpp_mirror"] is None
    assert optional["test"] is None
    assert optional["guard"].endswith(":kernelMatch")
    assert found["launch_grid"].data["guard"] is None
    assert found["launch_grid"].data["kmd_fields"] == ["block_m"]
    assert found["kernel_arguments"].line == 57


@pytest.mark.parametrize(("source", "needle"), [
    (b"engine: [unclosed\n", "not YAML"),
    (b"- just\n- a list\n", "not a YAML mapping"),
    # The launch_surface list and an entry's name, python_source and cpp_mirror are read.
    (b"engine: e\nlaunch_surface: 5\n", "schema: $.launch_surface:"),
    (b"launch_surface:\n  - {name: x, python_source: a.py:f, cpp_mirror: {a: 1}}\n",
     "schema: $.launch_surface[0].cpp_mirror:"),
    (b"engine: e\nsource: s\nbuilder: b\nlaunch_surface:\n  - name: x\n", "python_source"),
    (b"\xff", "not UTF-8"),
])
def test_bad_profiles(source: bytes, needle: str) -> None:
    assert needle in failure_reason(extract_profile_facts("p.profile.yaml", source))


def test_profile_none_in_any_case() -> None:
    text = ("engine: e\nsource: s\nbuilder: b\nlaunch_surface:\n"
            "  - {name: x, python_source: a.py:f, cpp_mirror: NONE, guard: None, test: t.cpp}\n")
    surface = only(extract_profile_facts("p.profile.yaml", text.encode()), "launch-surface")
    assert surface.data["cpp_mirror"] is None and surface.data["guard"] is None
    assert surface.data["test"] == "t.cpp"


# --- never raises -------------------------------------------------------------------------------

FIXTURE_TEXTS = [(ROOT / p).read_text(encoding="utf-8") for p in DESCRIPTOR_FILES[:12]] + [
    (ROOT / p).read_text(encoding="utf-8") for p in PROFILE_FILES]
DESCRIPTOR_NAMES = ["x.kdp.json", "x.ukd.json", "x.ued.json", "x.umd.json", "x.udd.json",
                    "x.uhd.json", "x.kmd.json", "x.json"]


@st.composite
def mangled_fixture(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 40)))
        text = text[:start] + draw(st.text(max_size=8)) + text[end:]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=150, deadline=None)
@given(source=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(
    lambda t: t.encode("utf-8", "surrogatepass")), mangled_fixture()),
    name=st.sampled_from(DESCRIPTOR_NAMES))
def test_extractors_never_raise(source: bytes, name: str) -> None:
    for facts in (extract_descriptor_facts(name, source),
                  extract_profile_facts("p.profile.yaml", source)):
        assert isinstance(facts, list)
        assert all(isinstance(f, Fact) for f in facts)
        json.dumps([f.to_json() for f in facts])


# --- issue 11: the real shapes, `none`, and fields impact does not read ----------------------

REAL_SHAPED_PROFILE = b"""\
arch: gfx950
source: kernels/gfx950/attention_dense.py
builder: build_attention_dense
dispatch:
  module: dispatch.attention.gfx950
  function: dense_spec_for_request
predicate:
  module: kernels.gfx950.attention_dense
  function: supports_attention_dense
arch_spec:
  module: kernels.gfx950.attention_dense
  class: Gfx950AttentionDenseSpec
metadata_fields:
  - dtype
  - block_m
engine:
  name: "hipkernel:Gfx950AttentionDense"
  sdk_version: "1.0.0"
  knobs: [block_m]
  heuristic: native
kmd_fields:
  - name: dtype
    type: string
  - name: block_m
    type: int
    default_value: 256
runtime_param_fields: [batch]
launch_surface:
  - name: grid
    python_source: kernels/gfx950/attention_dense.py:attention_dense_grid
    cpp_mirror: packs/Gfx950AttentionDenseGeometry.hpp
    kmd_fields: [block_m, seqlen_q]
    guard: >
      throws for non-positive
      dimensions.
    test: tests/TestGeometry.cpp
  - name: scale
    python_source: kernels/gfx950/attention_dense.py:build_attention_dense
    cpp_mirror: none
    kmd_fields: none
    guard: none
    test: none
"""


def test_a_real_shaped_profile_reads() -> None:
    facts = extract_profile_facts("p.profile.yaml", REAL_SHAPED_PROFILE)
    profile = only(facts, "profile")
    assert profile.data["engine"] == "hipkernel:Gfx950AttentionDense"
    assert profile.data["predicate"] == {"module": "kernels.gfx950.attention_dense",
                                         "function": "supports_attention_dense"}
    assert profile.data["kmd_fields"] == ["dtype", "block_m"]
    assert profile.data["unread_fields"] == {}
    found = {f.name: f.data for f in of_kind(facts, "launch-surface")}
    assert found["grid"]["kmd_fields"] == ["block_m", "seqlen_q"]
    assert found["grid"]["guard"] == "throws for non-positive dimensions.\n"
    assert found["grid"]["cpp_mirror"]["file"] == "packs/Gfx950AttentionDenseGeometry.hpp"
    assert found["scale"]["kmd_fields"] == []
    assert found["scale"]["cpp_mirror"] is None and found["scale"]["test"] is None
    assert all(data["unread"] == {} for data in found.values())


def test_kmd_fields_none_at_the_top_is_no_fields() -> None:
    text = REAL_SHAPED_PROFILE.replace(
        b"kmd_fields:\n  - name: dtype\n    type: string\n  - name: block_m\n"
        b"    type: int\n    default_value: 256\n", b"kmd_fields: none\n")
    assert b"kmd_fields: none\n" in text
    profile = only(extract_profile_facts("p.profile.yaml", text), "profile")
    assert profile.data["kmd_fields"] == [] and profile.data["unread_fields"] == {}


@pytest.mark.parametrize(("old", "new", "field"), [
    (b"engine:\n  name: \"hipkernel:Gfx950AttentionDense\"", b"engine:\n  name: [1, 2]", "engine"),
    (b"metadata_fields:\n  - dtype\n  - block_m\n", b"metadata_fields: {a: 1}\n",
     "metadata_fields"),
    (b"predicate:\n  module", b"predicate: 7\nx_predicate:\n  module", "predicate"),
    (b"kmd_fields:\n  - name: dtype\n    type: string\n",
     b"kmd_fields:\n  - type: string\n", "kmd_fields"),
])
def test_a_field_impact_does_not_read_is_named_not_fatal(old: bytes, new: bytes,
                                                         field: str) -> None:
    assert old in REAL_SHAPED_PROFILE
    facts = extract_profile_facts("p.profile.yaml", REAL_SHAPED_PROFILE.replace(old, new, 1))
    assert not of_kind(facts, PARSE_FAILURE)
    profile = only(facts, "profile")
    assert list(profile.data["unread_fields"]) == [field]
    assert {f.name for f in of_kind(facts, "launch-surface")} == {"grid", "scale"}


def test_an_entry_field_in_an_unknown_shape_is_named_and_still_compared() -> None:
    def entry(kmd: bytes) -> dict:
        text = REAL_SHAPED_PROFILE.replace(b"kmd_fields: [block_m, seqlen_q]", kmd)
        facts = extract_profile_facts("p.profile.yaml", text)
        assert not of_kind(facts, PARSE_FAILURE)
        return next(f.data for f in of_kind(facts, "launch-surface") if f.name == "grid")

    odd = entry(b"kmd_fields: {block_m: 1}")
    assert list(odd["unread"]) == ["kmd_fields"]
    # Kept as its raw text, so an edit of the odd value is still an edit of the entry.
    assert odd["kmd_fields"] != entry(b"kmd_fields: {block_m: 2}")["kmd_fields"]
    assert odd["kmd_fields"] == entry(b"kmd_fields: {block_m: 1}")["kmd_fields"]
    assert odd["python_source"]["symbol"] == "attention_dense_grid"


def test_a_profile_without_the_fields_impact_does_not_read() -> None:
    text = b"launch_surface:\n  - {name: x, python_source: a.py:f, cpp_mirror: b.cpp:g}\n"
    facts = extract_profile_facts("p.profile.yaml", text)
    assert only(facts, "profile").data["builder"] is None
    assert only(facts, "launch-surface").data["cpp_mirror"]["symbol"] == "g"


@pytest.mark.parametrize(("path", "doc", "field"), [
    # A newer UHD's adapter as an object; the UED's knobs as a mapping.
    ("x.uhd.json", {"id": "h", "version": "1.0", "kind": "tree", "adapter": {"t": "x"}},
     "adapter"),
    ("x.ued.json", {"id": "e", "version": "1.0", "name": "ns:E",
                    "graph_match": {"native": "ns.e.graph_match"}, "knobs": {"a": 1},
                    "metadata": 5}, "knobs"),
    ("x.umd.json", {"id": "m", "version": "1.0", "match_symbol": "ns.m", "scope": 3},
     "scope"),
    ("x.kdp.json", {"id": "k", "name": "pack", "version": "1.0", "matchers": [],
                    "engine": "e", "dispatch": "d", "kernelDescriptors": [],
                    "provenance": "see README"}, "provenance"),
])
def test_a_descriptor_field_impact_does_not_read_is_named_not_fatal(
        path: str, doc: dict, field: str) -> None:
    facts = extract_descriptor_facts(path, json.dumps(doc).encode())
    assert not of_kind(facts, PARSE_FAILURE), facts
    descriptor = only(facts, "descriptor")
    assert field in descriptor.data["unread_fields"]
    if path.endswith(".ued.json"):
        assert sorted(descriptor.data["unread_fields"]) == ["knobs", "metadata"]
        assert [f.name for f in of_kind(facts, "symbol")] == ["ns.e.graph_match"]


@pytest.mark.parametrize(("path", "doc", "needle"), [
    ("x.uhd.json", {"id": "h", "version": "1.0", "kind": "native", "payload": {"s": 1}},
     "schema: $.payload"),
    ("x.ued.json", {"id": "e", "version": "1.0", "name": "ns:E", "graph_match": "ns.e"},
     "schema: $.graph_match"),
    ("x.kdp.json", {"id": "k", "name": "pack", "version": "1.0", "matchers": "m",
                    "engine": "e", "dispatch": "d", "kernelDescriptors": []},
     "schema: $.matchers"),
])
def test_a_descriptor_field_impact_reads_still_fails_the_file(path: str, doc: dict,
                                                               needle: str) -> None:
    assert needle in failure_reason(extract_descriptor_facts(path, json.dumps(doc).encode()))
