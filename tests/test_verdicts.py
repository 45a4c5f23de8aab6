"""Scenario tests on the fixture tree, each with its expected verdict line.

The kernel-argument scenarios live beside their check; these are the ones the
surface, lane and conflict checks settle.
"""

from __future__ import annotations

import json

import pytest
from harness import coded_report, rendered, report, statuses

from impact.errors import EXIT_NEEDS_DEVICE, EXIT_NONE
from impact.fixtures import BuiltRepository, Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
UED = f"{e.DESCRIPTORS}/gfx950_attention_dense/gfx950_attention_dense.ued.json"
LOWER = f"{e.HKP}/rocke/platform/python/rocke/core/lower_llvm.py"


def _repo(build, *changes: Change, target: tuple[Change, ...] = (),
          base: dict[str, bytes] | None = None) -> BuiltRepository:
    return build(Scenario(base=base or TREE, head=changes, target=target))


def test_body_edit_needs_a_gfx950_device(build) -> None:
    edit = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                     "return (spec.num_waves * 64 + 0, 1, 1)")
    code, doc = coded_report(_repo(build, Change("body", edits=(edit,))))
    assert doc["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE gfx950"
    assert code == EXIT_NEEDS_DEVICE


COSMETIC = [
    e.edit_comment(e.GFX950_DENSE),
    e.replace(e.GFX950_DENSE, '    """Build the dense attention kernel for ``spec``."""',
              '    """Build the gfx950 dense attention kernel for ``spec``."""'),
    e.replace(e.GFX950_DENSE_PACK, "    // Knob selection: whole K/V tiles only.",
              "    // Knob selection: only whole K/V tiles."),
    e.replace(e.GFX950_DENSE_PACK,
              "        launcher.launch(q, k, v, o, scale, batch, seqlenQ, seqlenKv);",
              "        launcher.launch(q, k, v, o, scale,\n"
              "                        batch, seqlenQ, seqlenKv);"),
    lambda files: files.__setitem__(  # the same document, re-indented and keys reordered
        UED, json.dumps(json.loads(files[UED]), indent=4, sort_keys=True).encode()),
]


@pytest.mark.parametrize("edit", COSMETIC)
def test_cosmetic_edits_are_none(build, edit) -> None:
    code, doc = coded_report(_repo(build, Change("cosmetic", edits=(edit,))))
    assert doc["verdict"]["line"] == "Runtime impact: NONE"
    assert code == EXIT_NONE
    assert {r["status"] for r in doc["rows"]} == {"inert"}


def test_all_cosmetic_edits_together_are_none(build) -> None:
    doc = report(_repo(build, Change("cosmetic", edits=tuple(COSMETIC))))
    assert doc["verdict"]["line"] == "Runtime impact: NONE"


def test_outside_every_surface_is_na(build) -> None:
    code, doc = coded_report(_repo(build, Change("docs", edits=(
        e.append("docs/hipdnn/kernel_ingestor.md", "\nMore words.\n"),
        e.append("projects/hipdnn/tools/unrelated_lint/lint.py", "\n# more\n")))))
    assert doc["verdict"]["line"] == "Runtime impact: N/A" and doc["rows"] == []
    assert code == EXIT_NONE


def test_surface_file_that_no_longer_parses_is_never_none(build) -> None:
    broken = e.replace(e.GFX950_DENSE, "def attention_dense_block(spec)",
                       "def attention_dense_block(spec")
    code, doc = coded_report(_repo(build, Change("broken", edits=(broken,))))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE" and code == EXIT_NEEDS_DEVICE
    assert e.GFX950_DENSE in doc["coverage"]["parse_failures"]
    assert ("head", "surface", "changed") in statuses(doc)


@pytest.mark.parametrize(("edit", "lane"), [
    (e.append(e.ENGINE_CMAKE, "\ntarget_compile_options(hip_kernel_provider_impl PRIVATE -O2)\n"),
     "BUILD"),
    (e.replace(e.REQUIREMENTS, "numpy>=1.24,<3", "numpy>=2.0,<3"), "DEPS"),
])
def test_build_and_deps_changes_are_left_to_their_lanes(build, edit, lane) -> None:
    code, doc = coded_report(_repo(build, Change("lane", edits=(edit,))))
    assert doc["verdict"]["line"] == f"Runtime impact: N/A (left to the {lane} lane)"
    assert [r["lane"] for r in doc["rows"]] == [lane]
    assert code == EXIT_NONE


def test_both_lanes_together(build) -> None:
    doc = report(_repo(build, Change("lanes", edits=(
        e.append(e.ENGINE_CMAKE, "\nset(X 1)\n"),
        e.replace(e.REQUIREMENTS, "numpy>=1.24,<3", "numpy>=2.0,<3")))))
    assert doc["verdict"]["line"] == "Runtime impact: N/A (left to the BUILD and DEPS lanes)"


def test_dvc_pointer_change_is_changed(build) -> None:
    doc = report(_repo(build, Change("data", edits=(e.touch_dvc(),))))
    assert ("head", "dvc", "changed") in statuses(doc)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


def test_packer_path_edit_reaches_every_arch(build) -> None:
    edit = e.replace(LOWER, 'p8 = "p8:128:128" if flavor == "llvm20" else "p8:128:128:128:48"',
                     'p8 = "p8:128:128" if flavor == "llvm20" else "p8:128:128:128:64"')
    doc = report(_repo(build, Change("lowering", edits=(edit,))))
    archs = doc["verdict"]["archs"]
    assert {"gfx942", "gfx950"} <= set(archs)


def test_conflicted_merge_gets_one_conflict_row_and_drops_rows_reading_it(build) -> None:
    head = Change("head", edits=(e.replace(e.GFX950_DENSE_PACK, "// Knob selection: whole K/V",
                                           "// Knob choice: whole K/V"),
                                 e.edit_comment(e.GFX950_DENSE)))
    target = Change("target", edits=(e.replace(e.GFX950_DENSE_PACK, "// Knob selection: whole",
                                               "// Knob pick: whole"),))
    doc = report(_repo(build, head, target=(target,)), target_tip="target")
    merged = [r for r in doc["rows"] if r["view"] == "merged"]
    assert [r["contract"] for r in merged if r["contract"] == "conflict"] == ["conflict"]
    assert not any(e.GFX950_DENSE_PACK in [s["file"] for s in r["sides"]]
                   for r in merged if r["contract"] != "conflict")
    # The cleanly merged builder file is still analysed in the merged view.
    assert any(r["subject"] == e.GFX950_DENSE for r in merged)


def test_same_inputs_same_bytes(build) -> None:
    repo = build(Scenario(base=TREE, head=(Change("h", edits=(e.touch_dvc(),)),)))
    first = rendered(repo, "json", range="base..head")
    assert rendered(repo, "json", range="base..head") == first


SDK = "projects/hipdnn/plugin_sdk/include/hipdnn_plugin_sdk"
ENGINE_CPP = f"{e.HKP}/rocke/platform/cpp/engine/lower.cpp"


def test_sdk_header_outside_the_ingestor_include_closure_is_na(build) -> None:
    lonely = Change("lonely header", edits=(e.append(f"{SDK}/Unrelated.hpp", "int u();\n"),))
    base = {**TREE, f"{SDK}/Unrelated.hpp": b"int t();\n"}
    doc = report(_repo(build, lonely, base=base))
    assert doc["verdict"]["line"] == "Runtime impact: N/A"


def test_sdk_header_the_loader_includes_is_on_the_surface(build) -> None:
    arch = e.append(f"{SDK}/ArchMatch.hpp", "\nint extra();\n")
    doc = report(_repo(build, Change("arch header", edits=(arch,))))
    assert ("head", "sdk-header", "changed") in statuses(doc)


def test_rocke_engine_source_is_inert_while_dormant(build) -> None:
    base = {**TREE, ENGINE_CPP: b"int lower() { return 1; }\n"}
    edit = e.replace(ENGINE_CPP, "return 1;", "return 2;")
    doc = report(_repo(build, Change("engine", edits=(edit,)), base=base))
    assert doc["verdict"]["line"] == "Runtime impact: NONE"
    wired = e.append(e.ENGINE_CMAKE, "\ntarget_link_libraries(hip_kernel_provider_impl "
                                     "PRIVATE rocke_engine)\n")
    doc = report(_repo(build, Change("engine wired", edits=(edit, wired)), base=base))
    assert ("head", "surface", "changed") in statuses(doc)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


def test_file_outside_the_shipped_closure_widens_the_arch_its_path_names(build) -> None:
    experiment = f"{e.KERNELS}/gfx942/experiments/tile_sweep.py"
    base = {**TREE, experiment: b"TILES = (64, 128)\n"}
    edit = e.replace(experiment, "(64, 128)", "(64, 128, 256)")
    doc = report(_repo(build, Change("experiment", edits=(edit,)), base=base))
    # gfx942's KDP names gfx9-4-generic too: its members are reached.
    assert doc["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE gfx940, gfx941, gfx942, gfx950"


def test_conflicted_merge_still_finds_a_race_in_cleanly_merged_files(build) -> None:
    pin = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
           "TestGfx950AttentionDenseSignature.cpp")
    head = Change("dropout_seed everywhere", edits=(
        e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),
        e.add_pack_argument(e.GFX950_DENSE_PACK, "dropout_seed"),
        e.add_pack_argument(pin, "dropout_seed"),
        e.add_launch_argument(e.GFX950_DENSE_PACK, "dropoutSeed"),
        e.replace(f"{e.HKP}/rocke/aot_catalog/gfx950/attention_dense_prefill/family.json",
                  '{"name": "seqlen_kv", "type": "i32"}',
                  '{"name": "seqlen_kv", "type": "i32"},\n'
                  '        {"name": "dropout_seed", "type": "i32"}'),
        e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                  "launcher.launch(q, k, v, o, scale); // head"),
    ))
    target = Change("window_left in the list; the gfx942 launch reworded", edits=(
        e.add_pack_argument(e.GFX950_DENSE_PACK, "window_left", after="q_ptr"),
        e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                  "launcher.launch(q, k, v, o, scale); // target"),
    ))
    doc = report(_repo(build, head, target=(target,)), target_tip="target")
    merged = {(r["contract"], r["status"]) for r in doc["rows"] if r["view"] == "merged"}
    assert ("conflict", "changed") in merged
    assert ("kernargs", "mismatch") in merged
    assert not any(r["status"] == "mismatch" for r in doc["rows"] if r["view"] == "head")
    assert doc["verdict"]["kind"] == "BREAKS"


def _with_kpack_variant(files: dict[str, bytes]) -> None:
    """Append a packed (kind: kpack) UKD whose recorded signature is the gfx950 8-arg ABI."""
    signature = [{"kind": "global_buffer", "size": 8, "offset": 8 * i, "name": n}
                 for i, n in enumerate(("q_ptr", "k_ptr", "v_ptr", "o_ptr"))]
    signature += [{"kind": "by_value", "size": 4, "offset": 32 + 4 * i, "name": n}
                  for i, n in enumerate(("scale", "batch", "seqlen_q", "seqlen_kv"))]

    def change(doc):
        doc["kernelDescriptors"].append({
            "id": "0f0e0d0c-0b0a-4000-8000-000000000001", "version": "1.0",
            "name": "attention_dense.packed_sample.gfx950",
            "kernel_source": {"kind": "kpack", "library": "../../kpack/hkp_gfx950.kpack",
                              "toc_key": "sample", "symbol": "attention_dense_sample",
                              "sha256": "0" * 64, "signature": signature}})

    e.edit_json(e.GFX950_DENSE_KDP, change)(files)


def test_packed_descriptor_signature_is_a_copy_of_the_builder_list(build) -> None:
    base = dict(TREE)
    _with_kpack_variant(base)
    head = Change("dropout_seed in the builder only",
                  edits=(e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),))
    doc = report(_repo(build, head, base=base))
    packed = [r for r in doc["rows"] if r["contract"] == "kernargs"
              and "kpack-signature" in r["subject"]]
    assert packed and all(r["status"] == "mismatch" and not r["preexisting"] for r in packed)
    # At the base the packed signature agreed with the builder: no row without a change.
    comment = Change("comment", edits=(e.edit_comment(e.GFX950_DENSE),))
    quiet = report(_repo(build, comment, base=base))
    assert not [r for r in quiet["rows"] if "kpack-signature" in r["subject"]]


def test_review_card_names_the_profiles_device_test(build) -> None:
    edit = e.replace(e.GFX950_DENSE, "    return (spec.num_waves * 64, 1, 1)",
                     "    return (spec.num_waves * 64 + 0, 1, 1)")
    repo = build(Scenario(base=TREE, head=(Change("block", edits=(edit,)),)))
    card = rendered(repo, "markdown", commit="head")
    assert card.startswith("Impact (static): NEEDS-DEVICE gfx950 — ")
    runs = card.split("Device runs that would settle the changed findings:")[1]
    assert "TestGfx950AttentionDenseGeometry.cpp" in runs and "on gfx950" in runs


def test_aot_catalog_family_json_edit_is_never_silent(build) -> None:
    family = f"{e.HKP}/rocke/aot_catalog/gfx950/attention_dense_prefill/family.json"
    edit = e.replace(family, '"block": [256, 1, 1]', '"block": [128, 1, 1]')
    doc = report(_repo(build, Change("aot", edits=(edit,))))
    # The path names gfx950; gfx942's KDP ships gfx950 too (through gfx9-4-generic), so the
    # arch list widens to everything shipped alongside it.
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE" and "gfx950" in doc["verdict"]["archs"]


AOT_FAMILY = (f"{e.HKP}/rocke/aot_catalog/gfx950/attention_dense_prefill/family.json")


@pytest.mark.parametrize(("edits", "status"), [
    # The builder gains an argument the family's args_signature does not restate.
    ((e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),), "mismatch"),
    # args_signature's scale turns 64-bit while the builder keeps F32.
    ((e.replace(AOT_FAMILY, '{"name": "scale_raw", "type": "f32"}',
                '{"name": "scale_raw", "type": "f64"}'),), "mismatch"),
    # Renaming an entry: family.json names are its own and compared by position, so it
    # still agrees; the adapters may read the name, so it is changed rather than inert.
    ((e.replace(AOT_FAMILY, '{"name": "O", "type": "ptr"}', '{"name": "Out", "type": "ptr"}'),),
     "changed"),
])
def test_aot_family_args_signature_against_its_producers_builder(build, edits,
                                                                 status) -> None:
    doc = report(_repo(build, Change("aot", edits=edits)))
    rows = [r for r in doc["rows"]
            if r["contract"] == "kernargs" and "family.json" in r["subject"]]
    assert rows and {r["status"] for r in rows} == {status}, rows
