"""The C++ digest compares syntax trees: layout is inert, code is not (issue 11)."""

from __future__ import annotations

import pytest

from impact.cpp.scaffold import parse, token_digest

BASE = """// Pack.
#include <vector>
#define ALIGN 8

enum class ArgKind { global_buffer, by_value };

static std::vector<KernelArgument> signature()
{
    return {
        KernelArgument{ArgKind::global_buffer, 8, 0, "q_ptr"},
        KernelArgument{ArgKind::by_value, 4, 8, "scale"}
    };
}

int grid(int sq, int bm)
{
    const int n = (sq + bm - 1) / bm;
    return n * 2 + launch(q, k, scale);
}
"""

INERT = {
    "line comment": BASE.replace("int grid(", "// rows\nint grid("),
    "block comment": BASE.replace("8, 0,", "8, /* offset */ 0,"),
    "whitespace": BASE.replace("    return n * 2", "  return n*2"),
    "line breaks": BASE.replace("int grid(int sq, int bm)\n{", "int grid(int sq,\n  int bm) {"),
    "trailing comma in an init list": BASE.replace(
        '"scale"}\n    };', '"scale"},\n    };'),
    "trailing comma in an enum": BASE.replace("by_value };", "by_value, };"),
    "redundant parentheses": BASE.replace("return n * 2", "return n * (2)").replace(
        "const int n = (sq + bm - 1) / bm;", "const int n = ((sq + bm - 1)) / (bm);"),
    "parentheses matching precedence": BASE.replace("n * 2 + launch", "(n * 2) + launch"),
    "macro spacing": BASE.replace("#define ALIGN 8", "#define ALIGN   8"),
}

CHANGED = {
    "operator": BASE.replace("bm - 1", "bm + 1"),
    "reordered arguments": BASE.replace("launch(q, k, scale)", "launch(k, q, scale)"),
    "string literal": BASE.replace('"scale"', '"scale_raw"'),
    "spaces in a string literal": BASE.replace('"scale"', '"sc ale"'),
    "number": BASE.replace("8, 0,", "4, 0,"),
    "enum value": BASE.replace("ArgKind::by_value, 4", "ArgKind::global_buffer, 4"),
    "dropped list entry": BASE.replace(
        'KernelArgument{ArgKind::global_buffer, 8, 0, "q_ptr"},\n', ""),
    "precedence": BASE.replace("(sq + bm - 1) / bm", "sq + (bm - 1) / bm"),
    "parentheses around a returned name": BASE.replace("return n * 2 + launch(q, k, scale);",
                                                       "return (n);").replace(
        "return n;", "return n;"),
    "macro body": BASE.replace("#define ALIGN 8", "#define ALIGN 16"),
}


def digest(code: str) -> str:
    tree = parse(code.encode())
    assert not tree.root_node.has_error, code
    return token_digest(tree.root_node)


@pytest.mark.parametrize("name", sorted(INERT))
def test_layout_edits_are_inert(name: str) -> None:
    assert INERT[name] != BASE
    assert digest(INERT[name]) == digest(BASE)


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_code_edits_count(name: str) -> None:
    assert CHANGED[name] != BASE
    assert digest(CHANGED[name]) != digest(BASE)


@pytest.mark.parametrize(("plain", "parenthesised"), [
    # decltype((x)) is a reference type; decltype(x) is not.
    ("decltype(x) y;", "decltype((x)) y;"),
    # (f)(x) turns off argument-dependent lookup.
    ("int g() { return f(x); }", "int g() { return (f)(x); }"),
    # return (x) in a decltype(auto) function returns a reference.
    ("decltype(auto) g() { return x; }", "decltype(auto) g() { return (x); }"),
    # A macro pastes its argument's text: M((a + b)) is not M(a + b)...
    ("int g() { return M(a + b); }", "int g() { return M((a + b)); }"),
    # ...and may spell it (#x): M((a)) is not M(a) either.
    ("int g() { return M(a); }", "int g() { return M((a)); }"),
])
def test_parentheses_that_can_mean_something_count(plain: str, parenthesised: str) -> None:
    assert digest(plain + "\n") != digest(parenthesised + "\n")


def test_a_comma_is_only_dropped_before_a_closing_brace() -> None:
    assert digest("int a[] = {1, 2};\n") == digest("int a[] = {1, 2,};\n")
    assert digest("int a[] = {1, 2};\n") != digest("int a[] = {1, 2, 3};\n")
    # The comma operator inside parentheses is not a trailing comma.
    assert digest("int g() { return f((a, b)); }\n") != digest("int g() { return f(a, b); }\n")
