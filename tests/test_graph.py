"""The symbol graph: imports, aliases, re-exports, readers, reach, includes, list pairing."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest

from impact import archs
from impact.extract import FactCache
from impact.fixtures.tree import rocke_tree_files, tree_files
from impact.git import Snapshot
from impact.graph import PairedBy, SymbolGraph, build_graph, module_node, symbol_node
from impact.python import module_name_for
from impact.surface import load_surface_map, parse_surface_map

MAP = parse_surface_map(b'''schema_version = 1
name = "test"
python_roots = ["lib"]
include_roots = ["include"]
[[surface]]
kind = "code"
lane = "IMPACT"
language = "python"
patterns = ["lib/**/*.py"]
[[surface]]
kind = "native"
lane = "IMPACT"
language = "cpp"
patterns = ["include/**", "src/**"]
''', "test")


def graph_of(files: dict[str, str]) -> SymbolGraph:
    return build_graph(Snapshot.from_files(files), FactCache(MAP))


PKG = {
    "lib/pkg/__init__.py": "from .impl import helper\n",
    "lib/pkg/impl.py": "def helper(x):\n    return x + 1\n",
    "lib/pkg/other.py": "def helper(x):\n    return x - 1\n",
    "lib/user_a.py": "from pkg import helper\n\ndef run(x):\n    return helper(x)\n",
    "lib/user_b.py": "import pkg.other as o\n\ndef run(x):\n    return o.helper(x)\n",
    "lib/user_c.py": "from pkg.impl import helper as h\n\ndef run(x):\n    return h(x)\n",
}


def test_reexport_resolves_to_the_defining_module() -> None:
    g = graph_of(PKG)
    assert g.python.resolve("user_a", "helper") == symbol_node("pkg.impl", "helper")
    assert "pkg.impl" in g.python.module_closure(["user_a"])
    assert "pkg" in g.python.module_closure(["user_a"])


@pytest.mark.parametrize(("module", "target"), [
    ("user_a", "pkg.impl"),   # through the package __init__ re-export
    ("user_b", "pkg.other"),  # through a module alias
    ("user_c", "pkg.impl"),   # through an aliased name
])
def test_reads_edges(module: str, target: str) -> None:
    g = graph_of(PKG)
    assert g.python.reach(symbol_node(module, "run")) == {symbol_node(target, "helper")}


def test_readers_stay_bound_to_their_module_when_names_collide() -> None:
    g = graph_of(PKG)
    impl_readers = g.python.readers_of(symbol_node("pkg.impl", "helper"))
    other_readers = g.python.readers_of(symbol_node("pkg.other", "helper"))
    assert symbol_node("user_a", "run") in impl_readers
    assert symbol_node("user_c", "run") in impl_readers
    assert symbol_node("user_b", "run") not in impl_readers
    assert symbol_node("user_b", "run") in other_readers
    assert module_node("user_a") in impl_readers


def test_reach_follows_functions_and_base_classes() -> None:
    g = graph_of({
        "lib/base.py": "class Base:\n    def size(self):\n        return 4\n",
        "lib/spec.py": "from base import Base\n\nLIMIT = 8\n\nclass Spec(Base):\n    pass\n\n"
                       "def grid(s):\n    return clamp(s) + LIMIT\n\n"
                       "def clamp(s):\n    return Spec()\n",
    })
    reached = g.python.reach(symbol_node("spec", "grid"))
    assert reached == {symbol_node("spec", n) for n in ("clamp", "LIMIT", "Spec")} | {
        symbol_node("base", "Base")}


def test_function_defined_twice_keeps_both_sites() -> None:
    g = graph_of({"lib/m.py": "import os\nif os.name == 'nt':\n    def f():\n        return 1\n"
                              "else:\n    def f():\n        return 2\n"})
    sites = g.graph.nodes[symbol_node("m", "f")]["sites"]
    assert [s["line"] for s in sites] == [3, 6]
    assert sites[0]["digest"] != sites[1]["digest"]


def test_quoted_include_beside_the_header_and_angled_through_roots() -> None:
    g = graph_of({
        "include/sdk/Loader.hpp": '#include "Types.hpp"\n#include <sdk/Arch.hpp>\n',
        "include/sdk/Types.hpp": "struct T {};\n",
        "include/sdk/Arch.hpp": "struct A {};\n",
        "src/Types.hpp": "struct Decoy {};\n",
    })
    assert g.edges_of("cpp:include/sdk/Loader.hpp", {"includes"}) == {
        "cpp:include/sdk/Types.hpp", "cpp:include/sdk/Arch.hpp"}


def test_unparsable_files_are_recorded() -> None:
    g = graph_of({"lib/bad.py": "def (:\n", "src/bad.cpp": "int f( {\n"})
    assert set(g.parse_failures) == {"lib/bad.py", "src/bad.cpp"}


@pytest.fixture(scope="module")
def tree_graph() -> SymbolGraph:
    return build_graph(Snapshot.from_files(rocke_tree_files()), FactCache(load_surface_map()))


PACKS = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/packs"


@pytest.mark.parametrize(("cpp_list", "builder"), [
    (f"{PACKS}/Gfx950AttentionDenseNative.cpp:attentionDenseKernelSignature",
     "kernels.gfx950.attention_dense:build_attention_dense"),
    (f"{PACKS}/Gfx950UnifiedAttentionNative.cpp:unifiedAttentionReduceSignature",
     "kernels.gfx950.unified_attention:build_unified_attention_reduce"),
    (f"{PACKS}/Gfx950UnifiedAttentionNative.cpp:unifiedAttentionSegmentSignature",
     "kernels.gfx950.unified_attention:build_unified_attention_segment"),
    (f"{PACKS}/Gfx950AttentionTiled2dNative.cpp:attentionTiled2dKernelSignature",
     "kernels.gfx950.attention_tiled_2d:build_attention_tiled_2d"),
])
def test_fixture_lists_pair_with_the_builder_they_restate(tree_graph, cpp_list, builder) -> None:
    pairing = {a.subject: a.pairing for a in tree_graph.kernels.argument_lists()}[cpp_list]
    assert pairing.builder is not None
    assert f"{pairing.builder.module}:{pairing.builder.name}" == builder


def test_fixture_sdk_header_chain(tree_graph) -> None:
    sdk = "cpp:projects/hipdnn/plugin_sdk/include/hipdnn_plugin_sdk"
    included = tree_graph.edges_of(f"{sdk}/ingestor/DescriptorLoader.hpp", {"includes"})
    assert f"{sdk}/ingestor/Descriptors.hpp" in included


def test_member_read_through_a_subclass_is_the_base_classes() -> None:
    g = graph_of({
        "lib/base.py": "class Base:\n    def tile(self):\n        return 64\n",
        "lib/sub.py": "from base import Base\n\nclass Sub(Base):\n    pass\n\n"
                      "def use():\n    return Sub.tile(None)\n",
    })
    assert g.python.resolve("sub", "Sub.tile") == symbol_node("base", "Base.tile")
    assert symbol_node("sub", "use") in g.python.readers_of(symbol_node("base", "Base.tile"))


def test_function_local_import_reaches_and_ships() -> None:
    g = graph_of({
        "lib/compile.py": "def compile_kernel(k):\n    return k\n",
        "lib/packer.py": "def pack(k):\n    import compile as c\n    return c.compile_kernel(k)\n",
    })
    assert g.python.reach(symbol_node("packer", "pack")) == {
        symbol_node("compile", "compile_kernel")}
    assert g.python.module_closure(["packer"]) == {"packer", "compile"}


def test_fixture_shipped_closure_and_archs(tree_graph) -> None:
    shipped = tree_graph.descriptors.shipped_closure()
    # Through the package re-export, and through the packer's function-local import.
    assert {"kernels.common.tiling", "rocke.helpers.compile", "rocke.core.lower_llvm"} <= shipped
    assert "rocke.runtime.launcher" not in shipped
    everything = tree_graph.descriptors.all_archs()
    assert tree_graph.descriptors.archs_of("kernels.gfx950.attention_dense") == {"gfx950"}
    # gfx942's KDP names gfx9-4-generic: its members ship the gfx942 module.
    assert {"gfx940", "gfx941", "gfx942"} <= tree_graph.descriptors.archs_of(
        "kernels.gfx942.attention_dense")
    assert tree_graph.descriptors.archs_of("rocke.helpers.compile") == everything
    assert tree_graph.descriptors.archs_of("rocke.runtime.launcher") == set()


def test_fixture_descriptors_link_variants_symbols_and_profiles(tree_graph) -> None:
    g = tree_graph
    assert len(g.descriptors.variants()) >= 38
    assert g.descriptors.variants_building(symbol_node("kernels.gfx950.unified_attention",
                                           "build_unified_attention_reduce"))
    declared = [(a.subject, a.pairing.builder.id) for a in g.kernels.argument_lists()
                if a.pairing.how == PairedBy.DECLARED and a.pairing.builder is not None]
    assert (f"{PACKS}/Gfx950AttentionDenseNative.cpp:attentionDenseKernelSignature",
            symbol_node("kernels.gfx950.attention_dense", "build_attention_dense")) in declared
    dense = f"cpp:{PACKS}/Gfx950AttentionDenseNative.cpp"
    assert "symbol:hipkernel.gfx950_attention_dense.dispatch" in g.edges_of(
        dense, {"declares-symbol"})


CPP_LIST = ('#include <vector>\nstd::vector<KernelArgument> sig() {\n    return {\n'
            '        {"global_buffer", 8, 0, "a"},\n        {"global_buffer", 8, 8, "b"},\n'
            '        {"by_value", 4, 16, "n"},\n    };\n}\n')


def builder_file(*names: str) -> str:
    params = "".join(f'    {n} = b.param("{n}", I32)\n' for n in names)
    return f"def build(spec):\n    b = IRBuilder(spec)\n{params}    return b\n"


def test_lists_pair_by_closest_names_else_as_at_the_base() -> None:
    files = {"src/pack.cpp": CPP_LIST, "lib/near.py": builder_file("a", "b", "n", "extra"),
             "lib/far.py": builder_file("a", "b", "other", "more")}
    g = graph_of(files)
    (arglist,) = g.kernels.argument_lists()
    assert arglist.pairing.how == PairedBy.CLOSEST
    assert arglist.pairing.builder is not None and arglist.pairing.builder.module == "near"
    far = symbol_node("far", "build")
    (kept,) = g.kernels.argument_lists({arglist.subject: far})
    assert kept.pairing.how == PairedBy.AS_AT_BASE and kept.pairing.builder is not None
    assert kept.pairing.builder.id == far and [p.name for p in kept.pairing.builder.params] == [
        "a", "b", "other", "more"]


def test_list_whose_base_builder_no_longer_parses_stays_unpaired() -> None:
    files = {"src/pack.cpp": CPP_LIST, "lib/near.py": builder_file("a", "b", "n", "extra"),
             "lib/far.py": "def build(spec:\n"}
    g = graph_of(files)
    (arglist,) = g.kernels.argument_lists({f"src/pack.cpp:{'sig'}": symbol_node("far", "build")})
    assert arglist.pairing.builder is None
    assert arglist.pairing.how == PairedBy.BUILDER_UNREADABLE


def test_equal_names_pair_before_the_base_pairing() -> None:
    files = {"src/pack.cpp": CPP_LIST, "lib/same.py": builder_file("a", "b", "n"),
             "lib/far.py": builder_file("a", "b", "other")}
    g = graph_of(files)
    (arglist,) = g.kernels.argument_lists({"src/pack.cpp:sig": symbol_node("far", "build")})
    assert arglist.pairing.how == PairedBy.NAMES
    assert arglist.pairing.builder is not None and arglist.pairing.builder.module == "same"


@dataclass
class _Graphs:
    """What impact/archs.py reads, over in-memory snapshots (base and head the same)."""

    snapshot: Snapshot
    surface: object
    cache: FactCache = field(init=False)
    views: SimpleNamespace = field(init=False)

    def __post_init__(self) -> None:
        self.cache = FactCache(self.surface)
        self.views = SimpleNamespace(base=self.snapshot, head=self.snapshot)
        self._graph = build_graph(self.snapshot, self.cache)

    def graph(self, snapshot: Snapshot) -> SymbolGraph:
        return self._graph

    def module_of(self, path: str) -> str | None:
        return module_name_for(path, list(self.surface.python_roots))


@pytest.fixture(scope="module")
def tree_archs() -> _Graphs:
    return _Graphs(Snapshot.from_files(rocke_tree_files()), load_surface_map())


def test_pack_family_archs_come_from_its_kdp_else_its_name_else_every_arch(tree_archs) -> None:
    snap = tree_archs.snapshot
    # gfx942's KDP names gfx9-4-generic: the family's archs are the KDP's, widened.
    assert {"gfx940", "gfx941", "gfx942"} <= set(
        archs.archs_of_pack_family(tree_archs, f"{PACKS}/Gfx942AttentionDenseNative.cpp", snap))
    assert archs.archs_of_pack_family(
        tree_archs, f"{PACKS}/Gfx950AttentionDenseNative.cpp", snap) == ("gfx950",)
    assert archs.archs_of_pack_family(
        tree_archs, f"{PACKS}/Gfx90aNoSuchFamilyNative.cpp", snap) == ("gfx90a",)
    every = tree_archs.surface.all_archs
    assert archs.archs_of_pack_family(tree_archs, f"{PACKS}/PointwiseNative.cpp", snap) == (
        every,)


def test_every_arch_is_the_maps_own_label() -> None:
    ctx = _Graphs(Snapshot.from_files({"lib/m.py": "X = 1\n"}), MAP)
    assert archs.archs_for(ctx, "lib/m.py", ctx.snapshot) == (MAP.all_archs,)
    aiter = _Graphs(Snapshot.from_files({"aiter/ops/x.py": "X = 1\n"}),
                    load_surface_map("aiter"))
    assert archs.archs_for(aiter, "aiter/ops/x.py", aiter.snapshot) == ("all-archs",)


def test_arch_sources_name_the_descriptors_that_ship_each_arch(tree_archs) -> None:
    sources = archs.arch_sources(tree_archs)
    assert set(sources) == set(archs.all_archs(tree_archs)) == tree_archs.graph(
        tree_archs.snapshot).descriptors.all_archs()
    assert all(path.endswith((".json", ".yaml")) for paths in sources.values() for path in paths)
    assert any("gfx950" in path for path in sources["gfx950"])


def test_families_hold_the_inline_and_the_named_standalone_variants(tree_graph) -> None:
    """One family resolution: a KDP's file, and every variant it ships, inline or a
    standalone UKD it names by id (what the census pins and a pack's archs read)."""
    descriptors = tree_graph.descriptors
    family = descriptors.families()["gfx950attentiontiled2d"]
    assert family.path.endswith("gfx950_attention_tiled_2d.kdp.json") and family.broken is None
    inline = {v.name for v in descriptors.variants(family.path)}
    standalone = {v.name for v in descriptors.variants() if v.kdp is None
                  and v.path.endswith(".ukd.json") and "tiled_2d" in v.path}
    assert inline and standalone and set(family.variants) == inline | standalone


def test_the_bindings_domain_reads_only_the_files_asked_for() -> None:
    """Asking a snapshot's graph for its op copies builds no networkx graph and parses
    no file the question does not name (the bindings check stays lazy)."""
    files = tree_files("aiter_tree")
    cache = FactCache(load_surface_map("aiter"))
    read: list[str] = []
    facts = cache.facts

    def counted(snapshot: Snapshot, path: str) -> list:
        read.append(path)
        return facts(snapshot, path)

    cache.facts = counted  # type: ignore[method-assign]
    copies = build_graph(Snapshot.from_files(files), cache).bindings.copies(
        ["aiter/ops/norm.py"])
    assert copies.stubs and set(read) == {"aiter/ops/norm.py"}
