"""KMD metadata reads in every spelling the real packs use (issue 26, bug 2).

The real gfx950 attention pack reads each field through a named constant wrapped in
`std::string(...)`, through a local lambda (`intField(HEAD_SIZE_FIELD)`) or a file-local
helper (`integerMetadata(kernel, BLOCK_M_FIELD)`); the conv pack through a template helper
(`metadataEquals(kernel, "tile_m", ...)`). Each is one `metadata-read` fact naming the field.
"""

from __future__ import annotations

import pytest

from impact.cpp import extract_cpp_facts

PACK = ("dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/packs/"
        "Gfx950AttentionDenseNative.cpp")
HELPERS = """
std::optional<int64_t> integerMetadata(const KernelDefinition& kernel, std::string_view field)
{
    const auto it = kernel.metadata.find(std::string(field));
    return it == kernel.metadata.end() ? std::nullopt : std::get_if<int64_t>(&it->second);
}

template <typename T>
bool metadataEquals(const KernelDefinition& kernel, const char* field, const T& expected)
{
    const auto it = kernel.metadata.find(field);
    return it != kernel.metadata.end();
}
"""


def reads(source: str) -> list[tuple[str, str | None, str | None]]:
    facts = extract_cpp_facts(PACK, source.encode(), pack_array="s_packs")
    return sorted((f.name, f.data.get("field"), f.data.get("via"))
                  for f in facts if f.kind == "metadata-read")


@pytest.mark.parametrize(("source", "field", "via"), [
    ('constexpr std::string_view F = "dtype";\n'
     "bool f(const K& kernel) { return kernel.getStringMetadata(std::string(F)) == x; }",
     "dtype", None),
    ('#define F "dtype"\nbool f(const K& kernel) { return kernel.getStringMetadata(F) == x; }',
     "dtype", None),
    ('static const std::string F = "layout";\n'
     "bool f(const K& kernel) { return kernel.getStringMetadata(F) == x; }", "layout", None),
    ('constexpr std::string_view H = "head_size";\n'
     "bool f(const K& kernel) {\n    const auto intField\n"
     "        = [&kernel](std::string_view field) "
     "{ return kernel.getIntMetadata(std::string(field)); };\n"
     "    return intField(H) != 1;\n}", "head_size", "intField"),
    ('constexpr std::string_view BLOCK_M_FIELD = "block_m";\n' + HELPERS
     + "bool g(const K& kernel) { return integerMetadata(kernel, BLOCK_M_FIELD) == 1; }",
     "block_m", "integerMetadata"),
    (HELPERS + 'bool g(const K& kernel) { return metadataEquals(kernel, "tile_m", 64); }',
     "tile_m", "metadataEquals"),
])
def test_each_spelling_reads_the_field(source: str, field: str, via: str | None) -> None:
    found = reads(source)
    assert [(f, v) for _n, f, v in found] == [(field, via)], found


def test_a_forwarded_parameter_is_no_field_of_its_own() -> None:
    # The helpers' own bodies read `field`, a parameter: only their callers name fields.
    assert reads(HELPERS) == []


def test_a_field_that_cannot_be_resolved_is_a_read_with_no_field() -> None:
    found = reads(HELPERS + "bool g(const K& kernel, const P& p) {\n"
                  "    return metadataEquals(kernel, p.first, 1); }")
    assert [(f, v) for _n, f, v in found] == [(None, "metadataEquals")]
