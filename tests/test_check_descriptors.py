"""descriptor-symbol and variant-set: descriptor strings, census pins and pack registration."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from harness import check_rows, scenario, status_set

from impact.checks.descriptor_symbol import DescriptorSymbolCheck
from impact.checks.variant_set import (
    VariantSetCheck,
    census_family,
    census_literals,
    family_key,
)
from impact.cpp import extract_cpp_facts
from impact.fixtures import Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.render.words import reason_text
from impact.surface import load_surface_map

TREE = rocke_tree_files()
DENSE = f"{e.DESCRIPTORS}/gfx950_attention_dense"
UED = f"{DENSE}/gfx950_attention_dense.ued.json"
CENSUS = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
          "TestGfx950AttentionDensePacks.cpp")
TABLE = f"{e.ENGINE}/IngestorPacks.cpp"
HEADER = f"{e.ENGINE}/IngestorPacks.hpp"
NEW_PACK = f"{e.PACKS}/Gfx950ConvFwdNative.cpp"

GRAPH_MATCH = "hipkernel.gfx950_attention_dense.graph_match"
RENAMED = "hipkernel.gfx950_attention_dense.graph_match_v2"
FIRST = "attention_dense.bf16_d64_hq8_kv1_bm256_bn64_causal.gfx950"
LAST = "attention_dense.bf16_d64_hq8_kv1_bm256_bn64_causal_sw128.gfx950"
ADDED = "attention_dense.bf16_d64_hq8_kv1_bm256_bn64_causal_wide.gfx950"
PACK_COMMENT = "// BSHD: dims are reported as [B, H, S, D]; the innermost stride is D, then H*D."
CHECKS = (DescriptorSymbolCheck(), VariantSetCheck())

NEW_PACK_SOURCE = """\
// Native pack of the hipkernel:Gfx950ConvFwd engine.
#ifdef HIPDNN_ENABLE_KERNEL_INGESTOR

#include "IngestorPacks.hpp"

#include <string_view>

namespace hip_kernel_provider::ingestor
{
namespace
{
constexpr std::string_view GRAPH_MATCH_SYMBOL = "hipkernel.gfx950_conv_fwd.graph_match";
} // namespace

void registerGfx950ConvFwdSymbols(SymbolScope<Handle>& scope)
{
    (void)scope;
}

} // namespace hip_kernel_provider::ingestor

#endif // HIPDNN_ENABLE_KERNEL_INGESTOR
"""


def rename_in_ued() -> e.Edit:
    return e.replace(UED, f'"native": "{GRAPH_MATCH}"', f'"native": "{RENAMED}"')


def rename_in_pack() -> e.Edit:
    return e.replace(e.GFX950_DENSE_PACK, f'= "{GRAPH_MATCH}";', f'= "{RENAMED}";')


def add_variant() -> e.Edit:
    def change(doc: Any) -> None:
        ukd = copy.deepcopy(doc["kernelDescriptors"][0])
        ukd["id"] = "0b0e7d2c-2f6a-5a3e-9d1b-7c1f00000001"
        ukd["name"] = ADDED
        doc["kernelDescriptors"].append(ukd)

    return e.edit_json(e.GFX950_DENSE_KDP, change)


def pin_variant() -> e.Edit:
    return e.insert_after(CENSUS, f'    "{FIRST}",\n', f'    "{ADDED}",\n')


def unpin_last() -> e.Edit:
    return e.replace(CENSUS, f'    "{LAST}",\n', "")


def add_pack(*, source: bool = True, row: bool = True) -> tuple[e.Edit, ...]:
    out: list[e.Edit] = [
        e.append(NEW_PACK, NEW_PACK_SOURCE),
        e.insert_after(HEADER, "void registerGfx950UnifiedAttentionSymbols(SymbolScope<Handle>& "
                       "scope);\n", "void registerGfx950ConvFwdSymbols(SymbolScope<Handle>& "
                       "scope);\n"),
    ]
    if source:
        out.append(e.insert_after(e.ENGINE_CMAKE, "    packs/Gfx950UnifiedAttentionNative.cpp\n",
                                  "    packs/Gfx950ConvFwdNative.cpp\n"))
    if row:
        out.append(e.insert_after(
            TABLE, "&resetGfx950UnifiedAttentionModuleCache},\n",
            '    {"hipkernel:Gfx950ConvFwd", &registerGfx950ConvFwdSymbols, false, nullptr},\n'))
    return tuple(out)


def comment_in_pack() -> e.Edit:
    return e.replace(e.GFX950_DENSE_PACK, PACK_COMMENT, "// BSHD layout: innermost stride D.")


def on_tree(*edits: e.Edit, base: dict[str, bytes] | None = None) -> Scenario:
    """One change of `edits` on the fixture tree (or on `base`)."""
    return scenario(base or TREE, *edits)


SYMBOL, VARIANTS = DescriptorSymbolCheck.name, VariantSetCheck.name

# (case, edits, descriptor-symbol statuses, variant-set statuses)
CASES = [
    ("ued symbol no pack declares", (rename_in_ued(),), {"mismatch", "changed"}, set()),
    ("pack constant renamed alone", (rename_in_pack(),), {"mismatch"}, set()),
    ("both renamed consistently", (rename_in_ued(), rename_in_pack()), set(), set()),
    ("variant added without census", (add_variant(),), set(), {"mismatch"}),
    ("variant added with census", (add_variant(), pin_variant()), set(), {"changed"}),
    ("census drops a name alone", (unpin_last(),), set(), {"mismatch"}),
    ("new pack without s_packs row", add_pack(row=False), set(), {"mismatch"}),
    ("new pack without target_sources", add_pack(source=False), set(), {"mismatch"}),
    ("new pack fully registered", add_pack(), set(), set()),
    ("comment-only pack edit", (comment_in_pack(),), set(), set()),
    ("malformed ued", (e.replace(UED, '"knobs": []', '"knobs": ['),), {"changed"}, set()),
    ("malformed kdp", (e.replace(e.GFX950_DENSE_KDP, '"kernelDescriptors": [',
                                 '"kernelDescriptors": [[',),), set(), {"changed"}),
]


@pytest.mark.parametrize(("edits", "symbol", "variants"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_statuses(edits, symbol, variants) -> None:
    rows = check_rows(CHECKS, on_tree(*edits), charge=True)
    assert status_set(rows, SYMBOL) == symbol, [r.reason for r in rows]
    assert status_set(rows, VARIANTS) == variants, [r.reason for r in rows]
    assert not any(r.preexisting for r in rows)


def test_renamed_ued_symbol_names_both_sides() -> None:
    rows = check_rows(CHECKS, on_tree(rename_in_ued()), charge=True)
    by_subject = {r.subject: r for r in rows}
    broken = by_subject[f"symbol:{RENAMED}"]
    assert broken.status == "mismatch"
    assert {s.file for s in broken.sides} == {UED, e.GFX950_DENSE_PACK}
    assert "gfx950" in broken.archs
    assert by_subject[f"symbol:{GRAPH_MATCH}"].status == "changed"


def test_pack_rename_points_at_the_base_declaration() -> None:
    [row] = check_rows(CHECKS, on_tree(rename_in_pack()), charge=True)
    assert row.subject == f"symbol:{GRAPH_MATCH}"
    pack = [s for s in row.sides if s.file == e.GFX950_DENSE_PACK]
    assert pack and pack[0].revision == "base" and pack[0].line > 0


def test_census_mismatch_names_the_variant() -> None:
    [row] = check_rows(CHECKS, on_tree(add_variant()), charge=True)
    assert row.subject == f"census:{CENSUS}"
    assert row.details["unpinned"] == [ADDED] and row.details["not_shipped"] == []
    assert row.archs == ("gfx950",)
    [row] = check_rows(CHECKS, on_tree(unpin_last()), charge=True)
    assert row.details["not_shipped"] == [] and row.details["unpinned"] == [LAST]


def test_malformed_ued_is_changed_with_reason() -> None:
    rows = check_rows(CHECKS, on_tree(e.replace(UED, '"knobs": []', '"knobs": [')), charge=True)
    [row] = rows
    assert row.subject == f"descriptor:{UED}" and row.status == "changed"
    assert "cannot be understood" in reason_text(row.reason, row.details)


def test_new_pack_row_reaches_its_arch_and_names_the_gap() -> None:
    [row] = check_rows(CHECKS, on_tree(*add_pack(row=False)), charge=True)
    assert row.subject == f"pack:{NEW_PACK}"
    assert row.archs == ("gfx950",) and row.details["missing"] == ["s_packs"]


def test_half_fixing_a_preexisting_pack_gap_is_not_charged() -> None:
    """The base ships a pack with neither registration; the change adds its
    target_sources entry only. The s_packs gap is the base's, on copies the change
    did not touch: listed, not charged."""
    base = dict(TREE)
    for edit in add_pack(source=False, row=False):
        edit(base)
    source = e.insert_after(e.ENGINE_CMAKE, "    packs/Gfx950UnifiedAttentionNative.cpp\n",
                            "    packs/Gfx950ConvFwdNative.cpp\n")
    [row] = check_rows(CHECKS, on_tree(source, base=base), charge=True)
    assert (str(row.status), row.details["missing"], row.preexisting) == (
        "mismatch", ["s_packs"], True)
    assert e.ENGINE_CMAKE not in row.files


def test_removing_a_registration_is_charged() -> None:
    base = dict(TREE)
    for edit in add_pack():
        edit(base)
    drop = e.replace(e.ENGINE_CMAKE, "    packs/Gfx950ConvFwdNative.cpp\n", "")
    [row] = check_rows(CHECKS, on_tree(drop, base=base), charge=True)
    assert (str(row.status), row.details["missing"], row.preexisting) == (
        "mismatch", ["target_sources"], False)


def test_preexisting_symbol_mismatch_is_not_charged() -> None:
    base = dict(TREE)
    rename_in_ued()(base)
    rows = check_rows(CHECKS, on_tree(comment_in_pack(), base=base), charge=True)
    assert [(r.subject, str(r.status), r.preexisting) for r in rows] == [
        (f"symbol:{RENAMED}", "mismatch", True)]


def test_preexisting_census_gap_is_not_charged() -> None:
    base = dict(TREE)
    unpin_last()(base)
    comment = e.replace(CENSUS, "// Census of the", "// The census of the")
    rows = check_rows(CHECKS, on_tree(comment, base=base), charge=True)
    assert [(r.subject, str(r.status), r.preexisting) for r in rows] == [
        (f"census:{CENSUS}", "mismatch", True)]


def test_census_helpers() -> None:
    rules = load_surface_map().conventions
    assert census_family("a/TestGfx950AttentionDensePacks.cpp", rules) == "gfx950_attention_dense"
    assert census_family("a/TestGfx950AttentionDenseSignature.cpp", rules) is None
    assert family_key("Gfx950AttentionTiled2d") == family_key("gfx950_attention_tiled_2d")
    text = '// "a.b.gfx950"\nx = "c.d.gfx950"; /* "e.f.gfx1" */ y = "// g";\n'
    assert sorted(census_literals(extract_cpp_facts("a.cpp", text.encode()))) == sorted([
        ("c.d.gfx950", 2), ("// g", 2)])


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_docstring_headings(check) -> None:
    doc = type(check).__doc__ or ""
    for heading in ("What it checks:", "Why a break hurts at run time:", "Example:",
                    "When it says changed instead:", "Evidence:"):
        assert heading in doc, heading


def test_sides_changed_only_where_the_string_changed() -> None:
    rows = check_rows(CHECKS, on_tree(rename_in_ued()), charge=True)
    broken = next(r for r in rows if r.subject == f"symbol:{RENAMED}")
    roles = {(s.file, s.role) for s in broken.sides}
    assert (UED, "changed") in roles  # it names the new string
    assert (e.GFX950_DENSE_PACK, "counterpart") in roles  # its siblings did not move
    base = dict(TREE)
    rename_in_ued()(base)
    [row] = check_rows(CHECKS, on_tree(comment_in_pack(), base=base), charge=True)
    assert {s.role for s in row.sides} == {"counterpart"}
