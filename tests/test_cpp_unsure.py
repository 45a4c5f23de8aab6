"""A C++/CUDA file with a declaration tree-sitter cannot read (a macro used as a
declaration specifier, as CUTLASS and CK write `CUTLASS_DEVICE void f()`) keeps the facts
of its other declarations: an edit to it is compared, never "syntax error"; an edit inside
the broken declaration still reads `changed`; and a check that would call an op's copy
missing says `changed` when a broken declaration may hold it."""

from __future__ import annotations

import pytest
from harness import charged_rows, report, scenario
from memory import tree_with

from impact.bindings import extract_binding_cpp_facts
from impact.bindings.cpp_unsure import unsure_regions
from impact.cpp.scaffold import CUDA, parse
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.kinds import FactKind

AITER = tree_files("aiter_tree")
KERNELS = "csrc/kernels/activation_kernels.cu"
DEFINITION = "void silu_and_mul(torch::Tensor& out, torch::Tensor& input)\n{"
# A device helper CUTLASS-style: tree-sitter reads `CUTLASS_DEVICE void` as an error.
HELPER = ("#define CUTLASS_DEVICE __forceinline__ __device__\n"
          "struct Rotary {\n"
          "  template <typename Engine>\n"
          "  CUTLASS_DEVICE void apply(Engine& t, int rotary_dim) {\n"
          "    t(0) = rotary_dim * 2;\n"
          "  }\n"
          "};\n\n")
WITH_HELPER = tree_with(AITER, e.replace(KERNELS, "namespace aiter {\n",
                                         "namespace aiter {\n\n" + HELPER))


def _syntax_rows(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if "syntax error" in str(r["details"].get("failure", ""))]


def test_a_broken_declaration_is_a_region_and_the_rest_is_read() -> None:
    text = WITH_HELPER[KERNELS]
    facts = extract_binding_cpp_facts(KERNELS, text)
    assert not [f for f in facts if f.kind == FactKind.PARSE_FAILURE]
    content = next(f for f in facts if f.kind == FactKind.CONTENT)
    [region] = content.data["unsure"]
    assert {"Rotary", "apply", "rotary_dim"} <= set(region["names"])
    lines = text.decode().splitlines()
    assert lines[region["start"] - 1].startswith("struct Rotary")
    # The host functions beside it are facts, their parameters read.
    functions = {f.name: f for f in facts if f.kind == FactKind.CPP_FUNCTION}
    assert [p["name"] for p in functions["silu_and_mul"].data["params"]] == ["out", "input"]
    assert "apply" not in functions


def test_binding_syntax_in_a_broken_declaration_fails_the_file() -> None:
    text = b"struct __align__(16) Holder { py::object owner; };\nvoid f(int x);\n"
    assert unsure_regions(parse(text, CUDA).root_node, text) is None
    facts = extract_binding_cpp_facts("csrc/holder.cu", text)
    assert [f.data["reason"] for f in facts if f.kind == FactKind.PARSE_FAILURE] == [
        "CUDA syntax error"]


def test_an_edit_inside_the_broken_declaration_reads_changed() -> None:
    doc = report(scenario(WITH_HELPER, e.replace(KERNELS, "rotary_dim * 2", "rotary_dim * 4")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert not _syntax_rows(doc), doc["rows"]
    assert [r["reason"] for r in charged_rows(doc, "changed")] == [
        "code-beyond-bindings-changed"], doc["rows"]


def test_a_comment_edit_beside_a_broken_declaration_is_none() -> None:
    doc = report(scenario(WITH_HELPER, e.replace(KERNELS, "struct Rotary {",
                                                 "// CuTe's rotary helper\nstruct Rotary {")))
    assert doc["verdict"]["kind"] == "NONE", doc["rows"]


def test_an_argument_edit_beside_a_broken_declaration_is_compared() -> None:
    doc = report(scenario(WITH_HELPER, e.replace(
        KERNELS, DEFINITION, DEFINITION.replace("input)", "input, int act)"))))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert not _syntax_rows(doc), doc["rows"]


def test_a_definition_hidden_in_a_broken_declaration_is_not_called_missing() -> None:
    """The definition gains a parameter, and the two-parameter overload the header still
    declares is defined beside it with a macro specifier tree-sitter cannot read: the
    declaration only seems defined nowhere, for the broken declaration names it."""
    overload = ("HOST_API void silu_and_mul(torch::Tensor& out, torch::Tensor& input)\n"
                "{\n    silu_and_mul(out, input, 0);\n}\n\n")
    doc = report(scenario(AITER, e.replace(
        KERNELS, DEFINITION,
        overload + DEFINITION.replace("input)", "input, int act)"))))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert not charged_rows(doc, "mismatch"), doc["rows"]
    assert not _syntax_rows(doc), doc["rows"]
    hidden = [r for r in doc["rows"] if r["reason"] == "declaration-without-definition"]
    assert hidden and all(r["status"] == "changed" for r in hidden), doc["rows"]


def test_a_broken_declaration_naming_the_op_leaves_a_py_arg_break_a_break() -> None:
    """A call that no longer binds to the `py::arg` list turns on no C++ parameter list:
    a broken declaration that spells the op (here a device helper calling it) does not
    soften it."""
    helper = HELPER.replace("t(0) = rotary_dim * 2;", "gelu_and_mul(t, t);")
    base = tree_with(AITER, e.replace(KERNELS, "namespace aiter {\n",
                                      "namespace aiter {\n\n" + helper))
    doc = report(scenario(base, e.replace(
        "aiter/ops/activation.py", "def gelu_and_mul(out: Tensor, input: Tensor)",
        "def gelu_and_mul(out: Tensor, input: Tensor = None)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert any(r["reason"] == "call-does-not-bind" for r in charged_rows(doc, "mismatch"))


@pytest.mark.parametrize(("text", "read"), [
    (b"int f( {\n", False),  # cut short: no compiler takes it
    (b"__device__ void g(int x) {\n  CUTLASS_PRAGMA_UNROLL\n  for (;;) {\n}\n", False),
    # One brace opened on each branch of an #if, closed once after it.
    (b"void h(int a) {\n#if A\n  if (a) {\n#else\n  if (!a) {\n#endif\n    a++;\n  }\n}\n"
     b"CUTLASS_DEVICE void k();\n", True),
    # Dead code under `#if 0` whose braces do not balance.
    (b"#if 0\nvoid old() {\n#else\nCUTLASS_DEVICE void k();\n#endif\n", True),
    # Braces inside comments, strings and characters do not count.
    (b"// {\nconst char* s = \"(\"; char c = '}';\nCUTLASS_DEVICE void k();\n", True),
])
def test_a_file_whose_brackets_do_not_balance_is_not_read_in_part(text: bytes,
                                                                   read: bool) -> None:
    assert parse(text, CUDA).root_node.has_error
    facts = extract_binding_cpp_facts("csrc/x.cuh", text)
    assert any(f.kind == FactKind.PARSE_FAILURE for f in facts) is not read, facts
