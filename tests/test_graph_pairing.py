"""Pairing is done once, in the graph: each launch() of a multi-launch pack pairs with its
own builder, whatever its launcher is called and wherever it sits; a pack that keeps no
KernelArgument list still pairs its launch() with its builder."""

from __future__ import annotations

from impact.extract import FactCache
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot
from impact.graph import PairedBy, build_graph
from impact.surface import load_surface_map

UNIFIED = f"{e.PACKS}/Gfx950UnifiedAttentionNative.cpp"
SEGMENT_CALL = ("        auto segmentLauncher = m_segment.makeLauncher(stream);\n"
                "        segmentLauncher.launch(q, kCache, vCache, blockTables, seqLens, scale, "
                "segmOut, segmMax, segmExpsum, blockTableStride);\n")
REDUCE_CALL = ("        auto reduceLauncher = m_reduce.makeLauncher(stream);\n"
               "        reduceLauncher.launch(segmOut, segmMax, segmExpsum, seqLens, o, "
               "numSeqs);\n")


def launches(files: dict[str, bytes]) -> dict[str, str]:
    graph = build_graph(Snapshot.from_files(files), FactCache(load_surface_map()))
    return {c.receiver: (c.pairing.builder.name if c.pairing.builder else "")
            for c in graph.kernels.launch_calls() if c.path == UNIFIED}


def test_companion_launches_pair_with_their_own_builders() -> None:
    assert launches(rocke_tree_files()) == {
        "segmentLauncher": "build_unified_attention_segment",
        "reduceLauncher": "build_unified_attention_reduce"}


def test_pairing_follows_the_names_passed_not_the_launcher_name_or_order() -> None:
    """Launchers named for nothing, in the opposite order to the lists: the names each
    call passes still find its builder (order alone would swap them)."""
    files = rocke_tree_files()
    edit = e.replace(UNIFIED, SEGMENT_CALL + REDUCE_CALL,
                     REDUCE_CALL.replace("reduceLauncher", "first")
                     + SEGMENT_CALL.replace("segmentLauncher", "second"))
    edit(files)
    assert launches(files) == {"second": "build_unified_attention_segment",
                               "first": "build_unified_attention_reduce"}


def test_pack_without_a_list_pairs_its_launch_by_names() -> None:
    graph = build_graph(Snapshot.from_files(rocke_tree_files()),
                        FactCache(load_surface_map()))
    (call,) = [c for c in graph.kernels.launch_calls() if c.path == e.GFX942_DENSE_PACK]
    assert call.pairing.builder is not None
    assert call.pairing.builder.name == "build_attention_dense"
    assert call.pairing.builder.path == e.GFX942_DENSE
    assert call.pairing.how in (PairedBy.NAMES, PairedBy.DECLARED)
    assert [a.name for a in call.kernel_arguments] == ["q", "k", "v", "o", "scale"]
