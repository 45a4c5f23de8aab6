"""The Python digest compares syntax trees: layout is inert, code is not (issue 11)."""

from __future__ import annotations

import ast
import sys

import pytest

from impact.python.digest import (
    arguments_digest,
    body_digest,
    digest_code,
    expression_digest,
    module_digest,
    module_digests,
)

BASE = '''"""Module doc."""
import os


def build(spec, *, arch):
    """Build it."""
    b = IRBuilder("k")
    b.param("q_ptr", PtrType(F32), noalias=True)
    b.param("scale", F32)
    x = spec.block_m + 1
    return b.finish(x, "name")


class Spec:
    """A spec."""

    block_m: int = 64
'''

INERT = {
    "comment": BASE.replace('    b.param("scale", F32)\n',
                            '    # the scale\n    b.param("scale", F32)  # f32\n'),
    "whitespace": BASE.replace("spec.block_m + 1", "spec.block_m+1").replace(
        "b.param(\"scale\", F32)", "b.param( \"scale\" ,  F32 )"),
    "trailing comma": BASE.replace('b.param("scale", F32)', 'b.param("scale", F32,)'),
    "trailing comma, wrapped": BASE.replace(
        'b.param("q_ptr", PtrType(F32), noalias=True)',
        'b.param(\n        "q_ptr",\n        PtrType(F32),\n        noalias=True,\n    )'),
    "line break in parentheses": BASE.replace(
        "return b.finish(x, \"name\")", "return b.finish(\n        x, \"name\"\n    )"),
    "redundant parentheses": BASE.replace("spec.block_m + 1", "(spec.block_m) + (1)"),
    "redundant parentheses around a sum": BASE.replace(
        "x = spec.block_m + 1", "x = (spec.block_m + 1)"),
    "docstring changed": BASE.replace('"""Build it."""', '"""Build the kernel."""'),
    "docstring removed": BASE.replace('    """Build it."""\n', ""),
    "module docstring removed": BASE.replace('"""Module doc."""\n', ""),
    "class docstring changed": BASE.replace('"""A spec."""', "'''Another.'''"),
    "blank lines": BASE.replace("\n\n\ndef build", "\ndef build"),
    "quote style": BASE.replace('"name"', "'name'"),
}

CHANGED = {
    "operator": BASE.replace("spec.block_m + 1", "spec.block_m - 1"),
    "reordered arguments": BASE.replace('b.finish(x, "name")', 'b.finish("name", x)'),
    "string literal": BASE.replace('"scale"', '"scale_raw"'),
    "number": BASE.replace("+ 1", "+ 2"),
    "int to float": BASE.replace("+ 1", "+ 1.0"),
    "added argument": BASE.replace('b.param("scale", F32)\n',
                                   'b.param("scale", F32)\n    b.param("batch", I32)\n'),
    "keyword value": BASE.replace("noalias=True", "noalias=False"),
    "statement moved into a block": BASE.replace(
        "    x = spec.block_m + 1\n", "    if arch:\n        x = spec.block_m + 1\n"),
    "a string that is not a docstring": BASE.replace(
        '    b = IRBuilder("k")\n', '    b = IRBuilder("k")\n    "note"\n'),
    "class default": BASE.replace("block_m: int = 64", "block_m: int = 128"),
}


@pytest.mark.parametrize("name", sorted(INERT))
def test_layout_edits_are_inert(name: str) -> None:
    assert digest_code(INERT[name]) == digest_code(BASE)


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_code_edits_count(name: str) -> None:
    assert CHANGED[name] != BASE
    assert digest_code(CHANGED[name]) != digest_code(BASE)


def test_parentheses_that_change_precedence_count() -> None:
    plain = BASE.replace("spec.block_m + 1", "spec.block_m + 1 * 2")
    grouped = BASE.replace("spec.block_m + 1", "(spec.block_m + 1) * 2")
    assert digest_code(plain) != digest_code(grouped)
    assert digest_code(plain) == digest_code(plain.replace("1 * 2", "(1 * 2)"))


def _def(code: str, index: int) -> ast.FunctionDef | ast.ClassDef:
    node = ast.parse(code).body[index]
    assert isinstance(node, (ast.FunctionDef, ast.ClassDef))
    return node


def test_body_digest_is_blind_to_layout_and_docstring() -> None:
    base = _def(BASE, 2)
    assert body_digest(_def(INERT["trailing comma, wrapped"], 2)) == body_digest(base)
    assert body_digest(_def(INERT["docstring removed"], 2)) == body_digest(base)
    assert body_digest(_def(CHANGED["reordered arguments"], 2)) != body_digest(base)


def test_body_digest_of_a_one_line_body() -> None:
    one = _def("def f(x): return x + 1\n", 0)
    block = _def("def f(x):\n    return (x +\n            1)\n", 0)
    assert body_digest(one) == body_digest(block)
    assert body_digest(_def("def f(x): return x - 1\n", 0)) != body_digest(one)


def _value(code: str) -> ast.expr:
    assign = ast.parse(code).body[0]
    assert isinstance(assign, ast.Assign)
    return assign.value


def test_expression_digest_spanning_lines() -> None:
    flat = _value("X = (1, 2, 3)\n")
    wrapped = _value("X = (\n    1,\n    2,\n    3,\n)\n")
    assert expression_digest(flat) == expression_digest(wrapped)
    assert expression_digest(_value("X = (1, 3, 2)\n")) != expression_digest(flat)
    # A parenthesised single value and a one-element tuple are different values.
    assert expression_digest(_value("X = (1)\n")) != expression_digest(_value("X = (1,)\n"))


def test_module_digest_matches_digest_code() -> None:
    assert module_digest(ast.parse(BASE)) == digest_code(BASE)


def test_code_ast_cannot_parse_is_digested_as_text() -> None:
    # Not Python that `ast` reads: digested as text, so any edit counts.
    broken = "def (:\n"
    assert digest_code(broken) != digest_code(broken + "# c\n")
    assert digest_code(broken) == digest_code(broken)


def test_a_string_value_is_not_a_docstring() -> None:
    # An assigned string is a value: its text counts, alone or in a module of one line.
    assert expression_digest(_value('X = "abc"\n')) != expression_digest(_value('X = "abd"\n'))
    assert expression_digest(_value('X = "abc"\n')) == expression_digest(_value("X = 'abc'\n"))
    assert digest_code('X = "abc"\n') != digest_code('X = "abd"\n')


def _call(code: str) -> ast.Call:
    node = ast.parse(code).body[0].value  # type: ignore[attr-defined]
    assert isinstance(node, ast.Call)
    return node


@pytest.mark.parametrize(("old", "new"), [
    ("f(q, k, scale=1.0)", "f(\n    q,  # the query\n    k,\n    scale=1.0,\n)"),
    ("f(q, k=k)", "f( q , k = k )"),
    ("f(x, 0x10)", "f((x), 16)"),
    ("f(*args, **kw)", "f(\n    *args,\n    **kw\n)"),
])
def test_a_calls_arguments_digest_is_blind_to_layout(old: str, new: str) -> None:
    """A call's arguments as their syntax trees: a comment, a line break or a keyword
    spaced otherwise is the same call (the text of `k=k` cannot be parsed alone)."""
    assert arguments_digest(_call(old)) == arguments_digest(_call(new))


@pytest.mark.parametrize(("old", "new"), [
    ("f(q, k)", "f(k, q)"),
    ("f(q, k)", "f(q, k, v)"),
    ("f(q, scale=1.0)", "f(q, scale=2.0)"),
    ("f(q, a=1, b=2)", "f(q, b=2, a=1)"),
    ("f(q, k)", "f(q, *k)"),
    ("f(q, kw)", "f(q, **kw)"),
    ("f(q, k=v)", "f(q, v)"),
])
def test_a_calls_arguments_digest_follows_what_it_passes(old: str, new: str) -> None:
    assert arguments_digest(_call(old)) != arguments_digest(_call(new))


def _both(code: str, blank_calls: str = "") -> tuple[str, str]:
    """`module_digests` of `code`, the arguments of every call of `blank_calls` left out of
    the second digest (as the bindings extractor leaves out an op call's)."""
    tree = ast.parse(code)
    blank = {id(node): frozenset({"args", "keywords"}) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == blank_calls}
    return module_digests(tree, blank)


@pytest.mark.parametrize("name", sorted(INERT))
def test_module_digests_are_blind_to_layout_and_docstrings(name: str) -> None:
    assert _both(INERT[name]) == _both(BASE)


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_module_digests_follow_code_edits(name: str) -> None:
    whole, beyond = _both(CHANGED[name])
    base_whole, base_beyond = _both(BASE)
    assert whole != base_whole and beyond != base_beyond


def test_the_second_digest_leaves_out_what_the_facts_state() -> None:
    """An edit inside a blanked call's arguments moves the whole digest only; an edit of
    the call's receiver, or anywhere else, moves both."""
    inside = BASE.replace('b.param("scale", F32)', 'b.param("scale", F16, 1)')
    assert _both(inside, "param")[0] != _both(BASE, "param")[0]
    assert _both(inside, "param")[1] == _both(BASE, "param")[1]
    receiver = BASE.replace('b.param("scale", F32)', 'c.param("scale", F32)')
    assert _both(receiver, "param")[1] != _both(BASE, "param")[1]
    assert _both(CHANGED["operator"], "param")[1] != _both(BASE, "param")[1]
    # A string value that reads like a field name is a value, not a field.
    assert _both("f(x='args=')\n") != _both("f(x=args)\n")


def test_a_tree_too_deep_to_recurse_digests_as_the_stack_walk_does() -> None:
    """The recursive walk and the stack walk write the same tokens, blanked spans and all;
    a module deeper than the recursion limit still digests (by the stack walk)."""
    from impact.python import digest

    code = BASE + "y = f(" + " + ".join(["a"] * 150) + ", k=g(1))\n"
    tree = ast.parse(code)
    blank = {id(node): frozenset({"args", "keywords"}) for node in ast.walk(tree)
             if isinstance(node, ast.Call)}
    assert digest._tokens(tree, blank) == digest._tokens_by_stack(tree, blank)
    deep = ast.parse("x = " + " + ".join(["a"] * 600) + "\n")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        shallow = module_digests(deep, {})
    finally:
        sys.setrecursionlimit(limit)
    assert shallow == module_digests(deep, {})
