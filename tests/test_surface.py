"""The surface map: classification of real hipDNN paths, loading, and bad maps."""

from __future__ import annotations

import pytest

from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot
from impact.surface import BadSurfaceMap, load_surface_map, parse_surface_map

HKP = "dnn-providers/hip-kernel-provider"
ENGINE = f"{HKP}/src/engines/kernel_ingestor_engine"

CLASSIFY = [
    (f"{HKP}/rocke/library/kernels/gfx950/attention_dense.py", "rocke-library", "IMPACT"),
    (f"{HKP}/rocke/library/kernels/common/__init__.py", "rocke-library", "IMPACT"),
    (f"{HKP}/rocke/platform/python/rocke/core/lower_llvm.py", "rocke-platform", "IMPACT"),
    (f"{HKP}/rocke/platform/python/rocke/runtime/launcher.py", "rocke-runtime", "IMPACT"),
    (f"{HKP}/descriptor-packaging/python/hkp_pack/rocke_compile.py", "hkp-pack", "IMPACT"),
    (f"{ENGINE}/packs/Gfx950AttentionDenseNative.cpp", "ingestor-pack", "IMPACT"),
    (f"{ENGINE}/packs/Gfx950AttentionDenseGeometry.hpp", "ingestor-pack", "IMPACT"),
    (f"{ENGINE}/IngestorPacks.cpp", "ingestor-engine", "IMPACT"),
    (f"{ENGINE}/descriptors/rocKE/gfx950_attention_dense/gfx950_attention_dense.kdp.json",
     "descriptor", "IMPACT"),
    (f"{ENGINE}/descriptors/rocKE/x/kernel_dtype_matches_graph.umd.json", "descriptor", "IMPACT"),
    (f"{ENGINE}/descriptors/hip/pointwise_add/pointwise_add.cpp", "descriptor-kernel-source",
     "IMPACT"),
    (f"{HKP}/src/tests/engines/kernel_ingestor_engine/packs/TestGfx950AttentionDensePacks.cpp",
     "test-pin", "IMPACT"),
    ("projects/hipdnn/tools/IngestorGenerator/configs/gfx950_attention_dense.profile.yaml",
     "launch-surface-profile", "IMPACT"),
    ("projects/hipdnn/flatbuffers_sdk/schemas/sdpa_attributes.fbs", "flatbuffers-schema",
     "IMPACT"),
    ("projects/hipdnn/flatbuffers_sdk/flatc_flags.txt", "flatc-flags", "IMPACT"),
    ("projects/hipdnn/flatbuffers_sdk/include/hipdnn_flatbuffers_sdk/data_objects/"
     "sdpa_attributes_generated.h", "generated-header", "IMPACT"),
    ("projects/hipdnn/plugin_sdk/include/hipdnn_plugin_sdk/GenericTargets.hpp",
     "generic-target", "IMPACT"),
    ("projects/hipdnn/plugin_sdk/include/hipdnn_plugin_sdk/ingestor/Descriptors.hpp",
     "ingestor-sdk-header", "IMPACT"),
    ("projects/hipdnn/plugin_sdk/include/hipdnn_plugin_sdk/ArchMatch.hpp", "sdk-header",
     "IMPACT"),
    (f"{HKP}/rocke/platform/cpp/engine/lower.cpp", "rocke-engine", "IMPACT"),
    (f"{HKP}/rocke/aot_catalog/gfx950/attention_dense_prefill/family.json", "aot-catalog",
     "IMPACT"),
    (f"{HKP}/rocke/aot_catalog/gfx950/attention_dense_prefill/produce_x_co.py",
     "aot-catalog-producer", "IMPACT"),
    (f"{HKP}/rocke/aot_catalog/gfx950/attention_dense_prefill/TestParity.cpp",
     "aot-catalog-source", "IMPACT"),
    (f"{HKP}/src/engines/aot_catalog_engine/ops/SdpaAdapter.cpp", "aot-catalog-source",
     "IMPACT"),
    (f"{ENGINE}/CMakeLists.txt", "build", "BUILD"),
    ("cmake/HkpPackaging.cmake", "build", "BUILD"),
    (f"{HKP}/rocke/library/requirements.txt", "deps", "DEPS"),
    (f"{HKP}/rocke/platform/pyproject.toml", "deps", "DEPS"),
    (f"{HKP}/rocke/library/tests/reference_bundles/gfx942.tar.gz.dvc", "dvc-pointer", "IMPACT"),
]


@pytest.mark.parametrize(("path", "kind", "lane"), CLASSIFY)
def test_builtin_map_classifies_real_paths(path: str, kind: str, lane: str) -> None:
    entry = load_surface_map().classify(path)
    assert entry is not None and (entry.kind, entry.lane) == (kind, lane)


@pytest.mark.parametrize("path", [
    "docs/hipdnn/kernel_ingestor.md",
    "projects/hipdnn/tools/unrelated_lint/lint.py",
    "README.md",
    f"{HKP}/rocke/library/kernels/gfx950/attention_dense.py.orig",
])
def test_paths_outside_every_surface(path: str) -> None:
    assert load_surface_map().classify(path) is None


def test_every_fixture_file_outside_the_map_is_documentation_or_tooling() -> None:
    surface = load_surface_map()
    outside = [p for p in rocke_tree_files() if surface.classify(p) is None]
    assert outside and all(
        p.endswith((".md", "lint.py")) or p.endswith("gfx950_attention_dense.yaml")
        for p in outside), outside


MINIMAL = b'''schema_version = 1
name = "mine"
[[surface]]
kind = "kernels"
lane = "IMPACT"
language = "python"
patterns = ["src/**/*.py"]
'''


def test_repository_map_is_used_and_named() -> None:
    tree = Snapshot.from_files({".impact/surface.toml": MINIMAL, "src/a/b.py": "x = 1\n"})
    surface = load_surface_map(None, tree)
    assert surface.name == "mine" and surface.source == "repository:.impact/surface.toml"
    assert surface.classify("src/a/b.py").kind == "kernels"
    assert load_surface_map("hipdnn", tree).name == "hipdnn"


@pytest.mark.parametrize(("data", "needles"), [
    (b"schema_version = 1\nname = [", ["not valid TOML"]),
    (b'schema_version = 2\nname = "x"\nsurface = []\n', ["schema_version", "surface"]),
    (MINIMAL.replace(b'"IMPACT"', b'"LATER"'), ["LATER"]),
    (MINIMAL.replace(b'"src/**/*.py"', b'"src/[a"'), ["bad pattern"]),
])
def test_malformed_maps_name_every_problem(data: bytes, needles: list[str]) -> None:
    with pytest.raises(BadSurfaceMap) as exc:
        parse_surface_map(data, "test")
    for needle in needles:
        assert needle in str(exc.value)


def test_emitter_conventions_of_the_hipdnn_map_and_of_a_map_without_them() -> None:
    """The hipDNN map states what the emitter's child calls (module, name) pairs; a map
    without `[conventions.emitter]` has none (impact emit then builds nothing)."""
    emitter = load_surface_map("hipdnn").conventions.emitter
    assert emitter is not None and emitter.source_kind == "rocke"
    assert emitter.producer == ("hkp_pack.rocke_compile", "compile_rocke_variant")
    assert emitter.lowering == ("rocke.helpers.compile", "compile_kernel")
    assert emitter.enumerators[0] == (("hkp_pack.registry", "enumerate_variants"), "variants")
    assert parse_surface_map(MINIMAL, "test").conventions.emitter is None


def test_emitter_conventions_need_the_backend_and_the_dsl_modules() -> None:
    table = b"""
[conventions.emitter]
source_kind = "k"
flavor_env = "F"
flavor_ladders = []
enumerators = [{call = "a.b:c", returns = "variants"}]
producer = "a.b:c"
predicate_resolvers = []
builder_prefix = ""
support_predicates = []
lowering = "a:b"
lowering_reexports = []
"""
    with pytest.raises(BadSurfaceMap) as exc:
        parse_surface_map(MINIMAL + table, "test")
    assert "python_backend" in str(exc.value)
    with pytest.raises(BadSurfaceMap) as exc:
        parse_surface_map(MINIMAL + table.replace(b'"a.b:c"\npred', b'"a.b"\npred'), "test")
    assert "producer" in str(exc.value)


def test_a_pack_table_needs_the_name_of_its_array() -> None:
    """Without `pack_array` no pack row would be read and every pack would read
    unregistered: a map naming a pack table without it is refused."""
    with pytest.raises(BadSurfaceMap) as exc:
        parse_surface_map(MINIMAL + b'[conventions]\npack_table = "Packs.cpp"\n', "test")
    assert "pack_array" in str(exc.value)
    named = MINIMAL + b'[conventions]\npack_table = "Packs.cpp"\npack_array = "kPacks"\n'
    assert parse_surface_map(named, "test").conventions.pack_array == "kPacks"


def test_exclude_leaves_paths_off_every_surface() -> None:
    """A map's `exclude` patterns win over its surfaces' patterns, in classification and
    in the tree index alike; a bad one is named."""
    from impact.index import TreeIndex

    data = MINIMAL.replace(b'name = "mine"', b'name = "mine"\nexclude = ["src/**/test_*.py"]')
    surface = parse_surface_map(data, "test")
    assert surface.classify("src/a/b.py") is not None
    assert surface.classify("src/a/test_b.py") is None
    tree = Snapshot.from_files({"src/a/b.py": "x = 1\n", "src/a/test_b.py": "x = 2\n"})
    assert TreeIndex.of(tree, surface).surface_paths() == ["src/a/b.py"]
    with pytest.raises(BadSurfaceMap, match="exclude: bad pattern"):
        parse_surface_map(data.replace(b"src/**/test_*.py", b"src/[a"), "test")


def test_flash_attention_tests_beside_fa3_are_off_the_surface() -> None:
    surface = load_surface_map("flash-attention")
    assert surface.classify("hopper/test_flash_attn.py") is None
    assert surface.classify("hopper/benchmark_attn.py") is None
    assert surface.classify("hopper/flash_attn_interface.py") is not None
