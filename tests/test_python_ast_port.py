"""The Python extractors on the standard `ast`: a node's text is what libcst wrote for it
(its own parentheses, not the call's; continuation lines without the block's indentation),
offsets survive CRLF, form feeds and non-ASCII text, and hostile input still fails closed.
benchmarks/pyfacts_diff.py compares them with the libcst extractors on real history."""

from __future__ import annotations

import ast
import textwrap

import pytest

from impact.bindings import extract_binding_python_facts
from impact.facts import INTERNAL_ERROR, PARSE_FAILURE, Fact
from impact.python import extract_python_facts
from impact.python.digest import body_digest, digest_code
from impact.python.scaffold import parse_python


def _facts(source: str, **kwargs) -> list[Fact]:
    return extract_python_facts("m.py", textwrap.dedent(source).encode(), **kwargs)


def _one(facts: list[Fact], kind: str, name: str) -> Fact:
    found = [f for f in facts if f.kind == kind and f.name == name]
    assert len(found) == 1, [f.to_json() for f in facts]
    return found[0]


def _content(facts: list[Fact]) -> dict:
    return next(f for f in facts if f.kind == "content").data


def _bindings(source: str | bytes) -> list[Fact]:
    data = source.encode() if isinstance(source, str) else source
    return extract_binding_python_facts("aiter/ops/x.py", data)


def test_a_parameter_default_keeps_its_own_parentheses() -> None:
    facts = _facts("def f(a: (int) = (1), b=(1, 2), *, c=((3))) -> (None): pass\n")
    data = _one(facts, "function", "f").data
    assert [(p["name"], p["default"], p["annotation"]) for p in data["params"]] == [
        ("a", "(1)", "(int)"), ("b", "(1, 2)", None), ("c", "((3))", None)]
    assert data["returns"] == "(None)"


def test_a_call_argument_does_not_take_the_calls_parentheses() -> None:
    facts = _facts("""
        def build():
            b.param("x", (I32))
            b.param("y", T)
            km = KernelModule([(k1), k2])
            km.add("g", (x for x in y))
    """)
    assert _one(facts, "param", "build:x").data["type"] == "I32"
    assert _one(facts, "param", "build:y").data["type"] == "T"
    kernels = _one(facts, "kernel-module", "build").data["kernels"]
    assert [k["kernel"] for k in kernels] == ["(k1)", "k2", "(x for x in y)"]


def test_a_sole_generator_argument_is_written_without_the_call_parentheses() -> None:
    parsed = parse_python("m.py", b"f(x for x in y)\ng((x for x in y))\n")
    assert not isinstance(parsed, Fact)
    gens = [n for n in ast.walk(parsed.tree) if isinstance(n, ast.GeneratorExp)]
    assert sorted(parsed.code(g) for g in gens) == ["(x for x in y)", "x for x in y"]


def test_a_multi_line_value_loses_the_block_indentation_only() -> None:
    facts = _facts('''
        if True:
            X = [
                1,  # one
                2,
            ]
            S = """a
            b"""
    ''')
    assert _one(facts, "assignment", "X").data["value"] == "[\n    1,  # one\n    2,\n]"
    # inside a string the text is the string's: nothing is taken out
    assert _one(facts, "assignment", "S").data["value"] == '"""a\n    b"""'


def test_elif_and_else_if_are_told_apart() -> None:
    elif_ = _facts("if a:\n    pass\nelif b:\n    def f(): pass\n")
    nested = _facts("if a:\n    pass\nelse:\n    if b:\n        def f(): pass\n")
    assert _one(elif_, "function", "f").data["scope"] == ["else of if a", "elif b"]
    assert _one(nested, "function", "f").data["scope"] == ["else of if a", "if b"]


def test_with_items_are_written_with_their_commas() -> None:
    facts = _facts("with a as b, (c) as d:\n    def f(): pass\n"
                   "with (e, g,):\n    def h(): pass\n")
    assert _one(facts, "function", "f").data["scope"] == ["with a as b,, (c) as d"]
    assert _one(facts, "function", "h").data["scope"] == ["with e,, g,"]


def test_reads_count_names_an_import_or_global_spells() -> None:
    facts = _facts("""
        def f():
            global G
            import a.b as c
            from x import y
            return c
    """)
    assert _one(facts, "reads", "f").data["names"] == ["G", "a", "a.b", "c", "x", "y"]


STUBS = '''import torch
from aiter.jit.core import compile_ops
import aiter.ops as ops


@compile_ops("module_x")
def stub(a: int,
         b: int = 2) -> None:
    """Doc."""
    ...


def caller(x):
    return ops.thing(x,  # what it passes
                     1)
'''


@pytest.mark.parametrize("variant", ["crlf", "form feed", "non-ascii"])
def test_spans_survive_line_ends_and_wide_characters(variant: str) -> None:
    base = _bindings(STUBS)
    if variant == "crlf":
        other = STUBS.replace("\n", "\r\n")
    elif variant == "form feed":
        other = STUBS.replace("\n\n\ndef caller", "\n\x0c\n\ndef caller")
    else:
        other = STUBS.replace("def caller(x):", "def caller(x):  # é ü ∑")
    changed = _bindings(other)
    assert _content(changed) == _content(base)
    assert [f.to_json() for f in changed if f.kind != "content"] == \
        [f.to_json() for f in base if f.kind != "content"]


def test_the_blanked_spans_are_the_ones_the_facts_state() -> None:
    base = _content(_bindings(STUBS))
    edited = _content(_bindings(STUBS.replace("b: int = 2", "b: int = 3")))
    assert edited["beyond_bindings"] == base["beyond_bindings"]  # the stub's params
    assert edited["digest"] != base["digest"]
    docstring = _content(_bindings(STUBS.replace("Doc.", "Other doc.")))
    assert docstring == base
    body = _content(_bindings(STUBS.replace("return ops", "print(1)\n    return ops")))
    assert body["beyond_bindings"] != base["beyond_bindings"]


def test_body_digest_leaves_the_tree_as_it_was() -> None:
    tree = ast.parse('def f():\n    "doc"\n    "not a docstring"\n    return 1\n')
    before = ast.dump(tree)
    first = body_digest(tree.body[0])
    assert ast.dump(tree) == before
    assert body_digest(tree.body[0]) == first
    assert first != body_digest(ast.parse("def f():\n    return 1\n").body[0])
    assert digest_code('"doc"\n"not a docstring"\n') != digest_code("")


@pytest.mark.parametrize("source", [
    b"x = " + b"a." * 20000 + b"b\n",
    b"x = " + b"[" * 150 + b"]" * 150 + b"\n",
    b"x = " + b"not " * 10000 + b"y\n",
    b"f(" + b"a, " * 30000 + b")\n",
])
def test_hostile_nesting_fails_closed(source: bytes) -> None:
    for facts in (extract_python_facts("m.py", source), _bindings(source)):
        failures = [f for f in facts if f.kind == PARSE_FAILURE]
        assert not failures or len(facts) == 1
        for fact in failures:
            assert not fact.data["reason"].startswith(INTERNAL_ERROR), fact.data["reason"]


def test_a_written_tuple_target_starts_at_its_first_name() -> None:
    facts = _facts("(\n    a,\n    b,\n) = f()\nc, d = g()\n")
    assert _one(facts, "assignment", "( a, b, )").line == 2
    assert _one(facts, "assignment", "c, d").line == 5
