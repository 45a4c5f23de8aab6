"""Spellings the third fixture tree (rocke_tree_c) uses that the readers had to learn: a
`b.param` made through `functools.partial`, and a constexpr symbol string initialised with
braces. Each is read as the fact its plain spelling gives; what cannot be settled (a partial
rebound) stays unplaced, never guessed."""

from __future__ import annotations

import textwrap

import pytest

from impact.cpp.facts import extract_cpp_facts
from impact.kinds import FactKind
from impact.python.facts import extract_python_facts


def _params(source: str) -> list[tuple[str, str | None, dict]]:
    facts = extract_python_facts("kernels/k.py", textwrap.dedent(source).encode(),
                                 package="kernels")
    return [(f.data["param"], f.data["type"], f.data["attrs"]) for f in facts
            if f.kind == FactKind.PARAM]


def _unread(source: str) -> list[str]:
    facts = extract_python_facts("kernels/k.py", textwrap.dedent(source).encode(),
                                 package="kernels")
    return [f.name for f in facts if f.kind == FactKind.PARAM_UNREAD]


PARTIAL = """
import functools
from functools import partial

def build_k(spec, *, arch):
    b = IRBuilder("k")
    pointer = {ctor}(b.param, type=PtrType(F16), noalias=True)
    x = pointer("x_ptr", readonly=True)
    w = b.param("w_ptr", PtrType(F16))
    y = pointer("y_ptr", noalias=False)
    n = b.param("n", I32)
    return b.finish()
"""


@pytest.mark.parametrize("ctor", ["functools.partial", "partial"])
def test_a_partial_b_param_is_read_as_the_call_it_makes(ctor: str) -> None:
    assert _params(PARTIAL.format(ctor=ctor)) == [
        ("x_ptr", "PtrType(F16)", {"noalias": "True", "readonly": "True"}),
        ("w_ptr", "PtrType(F16)", {}),
        ("y_ptr", "PtrType(F16)", {"noalias": "False"}),  # the call's keyword wins
        ("n", "I32", {}),
    ]


def test_the_plain_spelling_gives_the_same_arguments() -> None:
    plain = """
    def build_k(spec, *, arch):
        b = IRBuilder("k")
        x = b.param("x_ptr", PtrType(F16), noalias=True, readonly=True)
        w = b.param("w_ptr", PtrType(F16))
        y = b.param("y_ptr", PtrType(F16), noalias=False)
        n = b.param("n", I32)
        return b.finish()
    """
    assert _params(plain) == _params(PARTIAL.format(ctor="partial"))


def test_a_partial_rebound_is_unplaced_not_guessed() -> None:
    rebound = """
    from functools import partial

    def build_k(spec, *, arch):
        b = IRBuilder("k")
        pointer = partial(b.param, type=PtrType(F16))
        if spec.wide:
            pointer = partial(b.param, type=PtrType(F32))
        x = pointer("x_ptr")
        n = b.param("n", I32)
        return b.finish()
    """
    assert [name for name, _, _ in _params(rebound)] == ["n"]
    assert _unread(rebound) == ["build_k"]


def test_a_partial_of_something_else_is_not_a_param() -> None:
    other = """
    from functools import partial

    def build_k(spec, *, arch):
        b = IRBuilder("k")
        load = partial(b.load, align=16)
        v = load(spec.ptr)
        n = b.param("n", I32)
        return b.finish()
    """
    assert [name for name, _, _ in _params(other)] == ["n"]
    assert _unread(other) == []


@pytest.mark.parametrize("declaration", [
    'inline constexpr std::string_view kScore{"ns.eng.score"};',
    'constexpr std::string_view kScore("ns.eng.score");',
    'constexpr std::string_view kScore = "ns.eng.score";',
    'static constexpr const char* kScore = "ns.eng.score";',
])
def test_a_constexpr_symbol_string_in_every_initialiser(declaration: str) -> None:
    source = f"namespace hipkernel {{\n{declaration}\n}}\n".encode()
    facts = extract_cpp_facts("packs/XNative.cpp", source)
    strings = [(f.name, f.data["value"]) for f in facts if f.kind == FactKind.CONSTEXPR_STRING]
    assert strings == [("kScore", "ns.eng.score")]


def test_a_braced_initialiser_of_two_strings_is_no_symbol() -> None:
    source = b'constexpr std::array<std::string_view, 2> kBoth{"a.b", "c.d"};\n'
    facts = extract_cpp_facts("packs/XNative.cpp", source)
    assert not [f for f in facts if f.kind == FactKind.CONSTEXPR_STRING]


CONDITIONAL = """
def build_k(spec, *, arch):
    b = IRBuilder("k")
    x = b.param("x_ptr", PtrType(F16))
    bias = b.param("bias_ptr", PtrType(F16)) if spec.bias else None
    sink = spec.sinks and b.param("sink_ptr", PtrType(F32))
    alt = spec.fixed or b.param("alt", I32)
    n = b.param("n", I32) if spec.wide else b.param("m", I32)
    return b.finish()
"""


def test_a_b_param_in_a_conditional_expression_carries_its_condition() -> None:
    facts = extract_python_facts("kernels/k.py", CONDITIONAL.encode(), package="kernels")
    guards = {f.data["param"]: f.data["guard"] for f in facts if f.kind == FactKind.PARAM}
    assert guards == {"x_ptr": "always", "bias_ptr": "spec.bias", "sink_ptr": "spec.sinks",
                      "alt": "not (spec.fixed)", "n": "spec.wide", "m": "not (spec.wide)"}


def test_the_ternary_guard_is_the_if_statement_guard() -> None:
    ternary = """
    def build_k(spec, *, arch):
        b = IRBuilder("k")
        bias = b.param("bias_ptr", PtrType(F16)) if spec.bias else None
    """
    statement = """
    def build_k(spec, *, arch):
        b = IRBuilder("k")
        bias = None
        if spec.bias:
            bias = b.param("bias_ptr", PtrType(F16))
    """
    def guards(src: str) -> list[tuple[str, str]]:
        facts = extract_python_facts("kernels/k.py", textwrap.dedent(src).encode(),
                                     package="kernels")
        return [(f.data["param"], f.data["guard"]) for f in facts if f.kind == FactKind.PARAM]

    assert guards(ternary) == guards(statement) == [("bias_ptr", "spec.bias")]
