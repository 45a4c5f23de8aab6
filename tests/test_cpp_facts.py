"""Tests of the C++ and CMake extractors, on inline sources and on the fixture tree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact.cpp import extract_cmake_facts, extract_cpp_facts, resolve_include
from impact.facts import PARSE_FAILURE, Fact
from impact.kinds import FactKind
from impact.surface import builtin_map

ROOT = Path(__file__).resolve().parent.parent / "impact" / "fixtures" / "rocke_tree"
ENGINE = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine"
PACKS = f"{ENGINE}/packs"
SDK = "projects/hipdnn/plugin_sdk/include"
SIGNATURE_TEST = next(
    p.relative_to(ROOT).as_posix() for p in ROOT.rglob("TestGfx950AttentionDenseSignature.cpp")
)
# The hipDNN map names the pack registration array (s_packs); the extractor spells no name.
PACK_ARRAY = builtin_map("hipdnn").conventions.pack_array
FIXTURE_SOURCES = sorted(
    p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.suffix in (".cpp", ".hpp")
)


def facts_of(path: str, source: bytes | None = None) -> list[Fact]:
    data = (ROOT / path).read_bytes() if source is None else source
    return extract_cpp_facts(path, data, pack_array=PACK_ARRAY)


def of_kind(facts: list[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def entries(fact: Fact) -> list[tuple[str, int, int, str]]:
    return [(e["kind"], e["size"], e["offset"], e["name"]) for e in fact.data["entries"]]


GFX950_DENSE = [
    ("global_buffer", 8, 0, "q_ptr"),
    ("global_buffer", 8, 8, "k_ptr"),
    ("global_buffer", 8, 16, "v_ptr"),
    ("global_buffer", 8, 24, "o_ptr"),
    ("by_value", 4, 32, "scale"),
    ("by_value", 4, 36, "batch"),
    ("by_value", 4, 40, "seqlen_q"),
    ("by_value", 4, 44, "seqlen_kv"),
]


# -- the fixture tree ------------------------------------------------------------------


@pytest.mark.parametrize("path", FIXTURE_SOURCES)
def test_fixture_sources_parse_cleanly_and_are_json_ready(path: str) -> None:
    facts = facts_of(path)
    assert not of_kind(facts, PARSE_FAILURE)
    json.dumps([f.to_json() for f in facts])
    assert facts == sorted(facts, key=Fact.sort_key)


@pytest.mark.parametrize(
    ("path", "name", "function", "expected"),
    [
        (
            f"{PACKS}/Gfx950AttentionDenseNative.cpp",
            "attentionDenseKernelSignature",
            "attentionDenseKernelSignature",
            GFX950_DENSE,
        ),
        (SIGNATURE_TEST, "pythonAbi.expected", "pythonAbi", GFX950_DENSE),
    ],
)
def test_fixture_argument_lists(path: str, name: str, function: str, expected: list) -> None:
    lists = of_kind(facts_of(path), "kernel-argument-list")
    assert [f.name for f in lists] == [name]
    assert lists[0].data["function"] == function
    assert lists[0].data["dynamic"] is False
    assert entries(lists[0]) == expected


def test_tiled2d_list_reads_raw_strings_past_brace_comment() -> None:
    (fact,) = of_kind(facts_of(f"{PACKS}/Gfx950AttentionTiled2dNative.cpp"), "kernel-argument-list")
    names = [e[3] for e in entries(fact)]
    assert names == [
        "q_ptr",
        "k_ptr",
        "v_ptr",
        "o_ptr",
        "sink_ptr",
        "scale",
        "seqlen_q",
        "seqlen_kv",
        "alibi_slopes",
    ]
    assert [e[2] for e in entries(fact)] == [0, 8, 16, 24, 32, 40, 44, 48, 56]
    assert fact.data["dynamic"] is False


def test_unified_pack_has_two_lists_and_two_launches() -> None:
    facts = facts_of(f"{PACKS}/Gfx950UnifiedAttentionNative.cpp")
    lists = {f.name: f for f in of_kind(facts, "kernel-argument-list")}
    assert set(lists) == {"unifiedAttentionSegmentSignature", "unifiedAttentionReduceSignature"}
    assert len(lists["unifiedAttentionSegmentSignature"].data["entries"]) == 10
    reduce_names = [e[3] for e in entries(lists["unifiedAttentionReduceSignature"])]
    assert reduce_names[4] == "o_ptr"
    launches = {f.data["receiver"]: f for f in of_kind(facts, "launch-call")}
    assert set(launches) == {"segmentLauncher", "reduceLauncher"}
    assert len(launches["segmentLauncher"].data["arguments"]) == 10
    assert launches["reduceLauncher"].data["arguments"] == [
        "segmOut",
        "segmMax",
        "segmExpsum",
        "seqLens",
        "o",
        "numSeqs",
    ]
    assert launches["reduceLauncher"].name == "launch:reduceLauncher"


@pytest.mark.parametrize(
    ("pack", "arguments"),
    [
        ("Gfx942AttentionDenseNative.cpp", ["q", "k", "v", "o", "scale"]),
        (
            "Gfx950AttentionDenseNative.cpp",
            ["q", "k", "v", "o", "scale", "batch", "seqlenQ", "seqlenKv"],
        ),
        ("PointwiseNative.cpp", ["a", "b", "out", "n"]),
    ],
)
def test_fixture_launch_calls(pack: str, arguments: list[str]) -> None:
    (launch,) = of_kind(facts_of(f"{PACKS}/{pack}"), "launch-call")
    assert launch.data["arguments"] == arguments
    assert launch.data["function"] == "launch"
    assert launch.data["receiver"] == "launcher"
    assert launch.data["class"] and launch.data["class"].endswith("Dispatch")


def test_gfx942_pack_has_no_argument_list() -> None:
    assert not of_kind(facts_of(f"{PACKS}/Gfx942AttentionDenseNative.cpp"), "kernel-argument-list")


def test_fixture_metadata_reads_resolve_constants() -> None:
    facts = facts_of(f"{PACKS}/Gfx950AttentionDenseNative.cpp")
    reads = of_kind(facts, "metadata-read")
    by_constant = {f.data["field_constant"]: f for f in reads if f.data["field_constant"]}
    assert by_constant["FIELD_DTYPE"].data["field"] == "dtype"
    assert by_constant["FIELD_DTYPE"].data["method"] == "getStringMetadata"
    assert by_constant["FIELD_BLOCK_N"].name == "block_n"
    literal = [f for f in reads if f.name == "block_m"]
    assert literal and literal[0].data["field_constant"] is None
    consts = {f.name: f.data for f in of_kind(facts, "constexpr-string")}
    assert consts["FIELD_CAUSAL"] == {
        "value": "causal",
        "namespace": "hip_kernel_provider::ingestor::gfx950_attention_dense",
    }


def test_fixture_geometry_calls() -> None:
    calls = of_kind(facts_of(f"{PACKS}/Gfx950UnifiedAttentionNative.cpp"), "geometry-call")
    assert [c.name for c in calls] == ["setGridSize", "setBlockSize"] * 2
    assert calls[0].data == {
        "function": "prepare",
        "arguments": ["seg.grid[0]", "seg.grid[1]", "seg.grid[2]"],
    }


def test_fixture_s_packs_rows() -> None:
    rows = of_kind(facts_of(f"{ENGINE}/IngestorPacks.cpp"), "pack-row")
    assert [r.name for r in rows] == [
        "hipkernel:Pointwise",
        "hipkernel:Gfx942AttentionDense",
        "hipkernel:Gfx950AttentionDense",
        "hipkernel:Gfx950AttentionTiled2d",
        "hipkernel:Gfx950UnifiedAttention",
    ]
    assert rows[0].data == {
        "register": "registerPointwiseSymbols",
        "owns_module_cache": "false",
        "reset": "nullptr",
    }
    assert rows[2].data == {
        "register": "registerGfx950AttentionDenseSymbols",
        "owns_module_cache": "true",
        "reset": "resetGfx950AttentionDenseModuleCache",
    }


def test_pack_rows_come_from_the_array_the_map_names() -> None:
    """The array's name is the map's `pack_array`: without one no row is read, and a
    library that names its table otherwise has its rows read under that name."""
    source = 'static const PackRow s_packs[] = {{"e", &reg, true, &reset}};'
    assert PACK_ARRAY == "s_packs"
    assert not of_kind(extract_cpp_facts("x.cpp", source.encode()), "pack-row")
    renamed = extract_cpp_facts("x.cpp", source.replace("s_packs", "kPacks").encode(),
                                pack_array="kPacks")
    assert [r.name for r in of_kind(renamed, "pack-row")] == ["e"]



def test_fixture_includes_and_resolution() -> None:
    loader = f"{SDK}/hipdnn_plugin_sdk/ingestor/DescriptorLoader.hpp"
    includes = {f.name: f.data for f in of_kind(facts_of(loader), "include")}
    assert includes["Descriptors.hpp"]["quoted"] is True
    assert includes["hipdnn_plugin_sdk/ArchMatch.hpp"]["quoted"] is False
    existing = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()}
    assert resolve_include(loader, "Descriptors.hpp", True, existing, [SDK]) == (
        f"{SDK}/hipdnn_plugin_sdk/ingestor/Descriptors.hpp"
    )
    assert resolve_include(loader, "hipdnn_plugin_sdk/ArchMatch.hpp", False, existing, [SDK]) == (
        f"{SDK}/hipdnn_plugin_sdk/ArchMatch.hpp"
    )
    assert resolve_include(loader, "vector", False, existing, [SDK]) is None


def test_fixture_function_definitions() -> None:
    facts = facts_of(f"{PACKS}/Gfx950AttentionDenseNative.cpp")
    functions = {f.name: f for f in of_kind(facts, "function-definition")}
    launch = functions["hip_kernel_provider::ingestor::Gfx950AttentionDenseDispatch::launch"]
    assert launch.data["parameters"] == [
        {"type": "const LaunchBuffers&", "name": "buffers"},
        {"type": "void*", "name": "stream"},
    ]
    assert launch.data["line_end"] > launch.line
    assert launch.data["class"] == "Gfx950AttentionDenseDispatch"


def test_fixture_cmake_target_sources() -> None:
    path = f"{ENGINE}/CMakeLists.txt"
    facts = extract_cmake_facts(path, (ROOT / path).read_bytes())
    sources = of_kind(facts, "target-sources")
    assert [f.name for f in sources] == [
        "IngestorPacks.cpp",
        "packs/PointwiseNative.cpp",
        "packs/Gfx942AttentionDenseNative.cpp",
        "packs/Gfx950AttentionDenseNative.cpp",
        "packs/Gfx950AttentionTiled2dNative.cpp",
        "packs/Gfx950UnifiedAttentionNative.cpp",
    ]
    assert sources[0].data == {"target": "hip_kernel_provider_impl", "visibility": "PRIVATE"}
    (definition,) = of_kind(facts, "compile-definition")
    assert definition.name == "HIPDNN_ENABLE_KERNEL_INGESTOR=1"
    assert definition.data == {"target": "hip_kernel_provider_impl", "visibility": "PUBLIC"}


# -- inline sources ----------------------------------------------------------------------

LIST_CASES = [
    # (source, expected name, expected entries, dynamic)
    (
        'std::vector<KernelArgument> sig() { return {{"a", 8, 0, "x"}, {"b", 4, 8, "y"}}; }',
        "sig",
        [("a", 8, 0, "x"), ("b", 4, 8, "y")],
        False,
    ),
    (
        'std::vector<KernelArgument> sig() { return {{"a", 8, 0, R"({x})"}}; }',
        "sig",
        [("a", 8, 0, "{x}")],
        False,
    ),
    (
        'std::vector<KernelArgument> sig() { return {{"a", 8, 0, u8R"x(o_ptr)x"}}; }',
        "sig",
        [("a", 8, 0, "o_ptr")],
        False,
    ),
    (
        'std::vector<KernelArgument> sig() { return {{"a", 8, 0, LR"(o_ptr)"} /* { */, '
        '{"b", 0x4, 8, "y" /* } */}}; }',
        "sig",
        [("a", 8, 0, "o_ptr"), ("b", 4, 8, "y")],
        False,
    ),
    (
        'void t() { const std::vector<KernelArgument> expected = {{"a", 8, 0, "x"}}; }',
        "t.expected",
        [("a", 8, 0, "x")],
        False,
    ),
    ('KernelArgument table[] = {{"a", 8, 0, "x"}};', "table", [("a", 8, 0, "x")], False),
    (
        'void t() { std::vector<KernelArgument> v = {{"a", 8, 0, "x"}}; v.push_back(extra()); }',
        "t.v",
        [("a", 8, 0, "x")],
        True,
    ),
    # A push_back sequence is read in order; only one in a loop stays unread.
    ('void t() { std::vector<KernelArgument> v; v.push_back({"a", 8, 0, "x"}); }', "t.v",
     [("a", 8, 0, "x")], False),
    ('void t(int n) { std::vector<KernelArgument> v; for (int i = 0; i < n; ++i) '
     'v.push_back({"a", 8, 0, "x"}); }', "t.v", [], True),
    (
        'std::vector<KernelArgument> sig() { return {{"a", 8, 0, "x"}, makeArg("b")}; }',
        "sig",
        [("a", 8, 0, "x")],
        True,
    ),
    (
        'std::vector<KernelArgument> sig() { return {{"a", n, 0, "x"}}; }',
        "sig",
        [("a", None, 0, "x")],
        True,
    ),
    ("std::vector<KernelArgument> sig() { return buildArgs(); }", "sig", [], True),
]


@pytest.mark.parametrize(("source", "name", "expected", "dynamic"), LIST_CASES)
def test_inline_argument_lists(source: str, name: str, expected: list, dynamic: bool) -> None:
    facts = extract_cpp_facts("x.cpp", source.encode())
    assert not of_kind(facts, PARSE_FAILURE)
    (fact,) = of_kind(facts, "kernel-argument-list")
    assert fact.name == name
    assert entries(fact) == expected
    assert fact.data["dynamic"] is dynamic


def test_argument_list_inside_ifdef() -> None:
    source = (
        b"#ifdef X\nnamespace n {\nstd::vector<KernelArgument> s()\n{\n"
        b'    return {\n        {"a", 8, 0, "x"},\n    };\n}\n}\n#endif\n'
    )
    (fact,) = of_kind(extract_cpp_facts("x.cpp", source), "kernel-argument-list")
    assert fact.line == 5 and fact.data["entries"][0]["line"] == 6


INLINE_CASES = [
    # (source, kind, name, data subset)
    (
        "void run() { segL.launch(a, b + 1, f(c)); }",
        "launch-call",
        "run:segL",
        {"receiver": "segL", "function": "run", "class": None, "arguments": ["a", "b + 1", "f(c)"]},
    ),
    (
        'constexpr std::string_view NAME = "v";',
        "constexpr-string",
        "NAME",
        {"value": "v", "namespace": None},
    ),
    (
        'namespace a::b { static constexpr const char* P = "x" "y"; }',
        "constexpr-string",
        "P",
        {"value": "xy", "namespace": "a::b"},
    ),
    (
        'void f() { k.getIntMetadata("block_m"); }',
        "metadata-read",
        "block_m",
        {"method": "getIntMetadata", "function": "f", "field": "block_m", "field_constant": None},
    ),
    (
        'constexpr std::string_view F = "dtype";\nvoid f() { k.getStringMetadata(F); }',
        "metadata-read",
        "dtype",
        {"method": "getStringMetadata", "function": "f", "field": "dtype", "field_constant": "F"},
    ),
    (
        "void f() { k.getIntMetadata(UNKNOWN); }",
        "metadata-read",
        "UNKNOWN",
        {"field": None, "field_constant": "UNKNOWN"},
    ),
    (
        "void f() { c.setGridSize(1, n, 1); }",
        "geometry-call",
        "setGridSize",
        {"function": "f", "arguments": ["1", "n", "1"]},
    ),
    ('#include "a/b.hpp"', "include", "a/b.hpp", {"quoted": True, "line": 1}),
    ("#include <vector>", "include", "vector", {"quoted": False, "line": 1}),
    (
        'static const PackRow s_packs[] = {{"e", &reg, true, &reset}};',
        "pack-row",
        "e",
        {"register": "reg", "owns_module_cache": "true", "reset": "reset"},
    ),
    (
        "namespace n { struct S { int m(const A& a, int b = 2) { return b; } }; }",
        "function-definition",
        "n::S::m",
        {"parameters": [{"type": "const A&", "name": "a"}, {"type": "int", "name": "b"}]},
    ),
]


@pytest.mark.parametrize(("source", "kind", "name", "data"), INLINE_CASES)
def test_inline_facts(source: str, kind: str, name: str, data: dict) -> None:
    facts = extract_cpp_facts("x.cpp", source.encode(), pack_array=PACK_ARRAY)
    assert not of_kind(facts, PARSE_FAILURE)
    (fact,) = of_kind(facts, kind)
    assert fact.name == name
    assert {k: fact.data[k] for k in data} == data


# -- failures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (b"void f() {\n  int x = ;\n}\n", 2),
        (b"#include <a>\nvoid f()\n{\n  int x = 1;\n", 4),  # MISSING `}`
        (
            b'#include <a>\nstd::vector<KernelArgument> s() { return {{"a", 8, 0, "x"}}; }\n'
            b"void g( {\n",
            3,
        ),
    ],
)
def test_broken_source_keeps_clean_facts_and_one_failure(source: bytes, line: int) -> None:
    facts = extract_cpp_facts("bad.cpp", source)
    failures = of_kind(facts, PARSE_FAILURE)
    assert len(failures) == 1
    assert failures[0].name == "bad.cpp" and failures[0].line == line


def test_broken_source_still_reports_includes() -> None:
    facts = extract_cpp_facts("bad.cpp", b"#include <a>\nvoid g( {\n")
    assert [f.kind for f in facts].count(PARSE_FAILURE) == 1
    assert of_kind(facts, "include")[0].name == "a"


def test_undecodable_source_is_one_failure() -> None:
    facts = extract_cpp_facts("bad.cpp", b"int x = 1; \xff\xfe")
    assert [f.kind for f in facts] == [PARSE_FAILURE]
    assert [f.kind for f in extract_cmake_facts("CMakeLists.txt", b"\xff")] == [PARSE_FAILURE]


# -- includes and CMake ------------------------------------------------------------------

RESOLVE_CASES = [
    # (including, header, quoted, existing, roots, expected)
    ("a/b/x.hpp", "y.hpp", True, {"a/b/y.hpp", "inc/y.hpp"}, ["inc"], "a/b/y.hpp"),
    ("a/b/x.hpp", "../c/y.hpp", True, {"a/c/y.hpp"}, [], "a/c/y.hpp"),
    ("a/b/x.hpp", "y.hpp", True, {"inc/y.hpp"}, ["inc"], "inc/y.hpp"),
    ("a/b/x.hpp", "y.hpp", False, {"a/b/y.hpp"}, ["inc"], None),
    ("a/b/x.hpp", "y.hpp", False, {"a/b/y.hpp", "i2/y.hpp"}, ["i1", "i2"], "i2/y.hpp"),
    ("x.cpp", "./y.hpp", True, {"y.hpp"}, [], "y.hpp"),
    ("x.cpp", "../y.hpp", True, {"../y.hpp"}, [], None),
]


@pytest.mark.parametrize(
    ("including", "header", "quoted", "existing", "roots", "expected"), RESOLVE_CASES
)
def test_resolve_include(
    including: str,
    header: str,
    quoted: bool,
    existing: set[str],
    roots: list[str],
    expected: str | None,
) -> None:
    assert resolve_include(including, header, quoted, existing, roots) == expected


def test_cmake_visibility_switches_and_comments() -> None:
    text = b"""target_sources(t # comment (x)
    PRIVATE a.cpp "b c.cpp"
    PUBLIC
      d.hpp)
target_compile_definitions(t PRIVATE FOO BAR=2)
"""
    facts = extract_cmake_facts("CMakeLists.txt", text)
    got = [(f.kind, f.name, f.line, f.data["visibility"]) for f in facts
           if f.kind in (FactKind.TARGET_SOURCES, FactKind.COMPILE_DEFINITION)]
    assert got == [
        ("target-sources", "a.cpp", 2, "PRIVATE"),
        ("target-sources", "b c.cpp", 2, "PRIVATE"),
        ("target-sources", "d.hpp", 4, "PUBLIC"),
        ("compile-definition", "BAR=2", 5, "PRIVATE"),
        ("compile-definition", "FOO", 5, "PRIVATE"),
    ]


# -- never raises ------------------------------------------------------------------------

FIXTURE_BYTES = [(ROOT / p).read_bytes() for p in FIXTURE_SOURCES]
_NOISE = st.sampled_from([*list("{}()[]\"'\\;,/*#<>R"), 'R"(', ')"', "/*", "*/", "//", "\n"])


@st.composite
def mangled_fixture(draw: st.DrawFn) -> bytes:
    text = bytearray(draw(st.sampled_from(FIXTURE_BYTES)))
    for _ in range(draw(st.integers(min_value=1, max_value=12))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        if draw(st.booleans()) and text:
            del text[at : at + draw(st.integers(min_value=1, max_value=40))]
        else:
            text[at:at] = draw(_NOISE).encode()
    return bytes(text)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode), mangled_fixture()))
def test_extract_never_raises(source: bytes) -> None:
    facts = extract_cpp_facts("fuzz.cpp", source)
    assert [f.kind for f in facts].count(PARSE_FAILURE) <= 1
    json.dumps([f.to_json() for f in facts])
    cmake = extract_cmake_facts("CMakeLists.txt", source)
    json.dumps([f.to_json() for f in cmake])


def test_named_constants_are_definitions_a_mirror_can_name() -> None:
    """A profile's C++ mirror may be a constant (`kConvThreads`), not only a function."""
    source = (b"namespace a::b {\nconstexpr uint32_t kThreads = 256;\n"
              b"static const int kWaves = 4;\nint notConst = 1;\n"
              b"inline int f() { constexpr int local = 2; return local; }\n}\n")
    facts = [f for f in facts_of("x/Geometry.hpp", source)
             if f.kind == FactKind.CONSTANT_DEFINITION]
    assert {(f.name, f.line) for f in facts} == {("a::b::kThreads", 2), ("a::b::kWaves", 3)}
