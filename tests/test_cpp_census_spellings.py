"""A census test pins the shipped variants in any container C++ offers and by either name
a variant goes by (issue 11, point 1): the UKD name `family.<kernel>.gfxNNN`, or the kernel
name inside it, which is what a pack's census reports as `kernelNames`."""

from __future__ import annotations

import pytest

from impact.checks.variant_set import _census_names
from impact.cpp.facts import extract_cpp_facts

SHIPPED = {"attention_dense.attention_dense_bf16_d64_full.gfx950",
           "attention_dense.attention_dense_bf16_d64_causal.gfx950"}
FULL, CAUSAL = sorted(SHIPPED, reverse=True)

CENSUSES = [
    ("std_set_of_strings", 'const std::set<std::string> kNames = {\n'
     '    "attention_dense_bf16_d64_full",\n    "attention_dense_bf16_d64_causal",\n};\n'),
    ("std_array_of_string_views", 'using namespace std::string_view_literals;\n'
     'static constexpr std::array<std::string_view, 2> kNames = {\n'
     '    "attention_dense_bf16_d64_full"sv,\n    "attention_dense_bf16_d64_causal"sv,\n};\n'),
    ("c_array_of_full_names", 'const char* const kNames[] = {\n'
     '    "attention_dense.attention_dense_bf16_d64_full.gfx950",\n'
     '    "attention_dense.attention_dense_bf16_d64_causal.gfx950"};\n'),
]


@pytest.mark.parametrize("source", [c[1] for c in CENSUSES], ids=[c[0] for c in CENSUSES])
def test_census_spelling_pins_the_shipped_variants(source: str) -> None:
    text = 'const char* kPack = "hipkernel:Pack";\n' + source
    pinned = _census_names(extract_cpp_facts("TestPacks.cpp", text.encode()), SHIPPED)
    assert set(pinned) == SHIPPED
    lines = text.splitlines()
    for variant, line in pinned.items():  # each at the line that spells it
        assert variant.split(".")[1] in lines[line - 1]


def test_a_kernel_name_no_variant_has_is_not_pinned() -> None:
    facts = extract_cpp_facts("TestPacks.cpp",
                              b'const std::set<std::string> k = {"other_kernel"};\n')
    assert _census_names(facts, SHIPPED) == {}
