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
    (b"engine: e\nsource: s\n", "schema: $: 'builder' is a required"),
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
