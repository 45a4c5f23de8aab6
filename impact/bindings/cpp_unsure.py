"""Where a C++ parse went wrong, kept local: the declarations tree-sitter could not read.

Why: real CUDA and CUTLASS/CuTe headers (`CUTLASS_DEVICE void f()`, `typename X::Y` in
a template argument, `[&] __device__` lambdas) always leave a few ERROR nodes, however
well the grammar knows CUDA; reading such a file as one parse failure made every change
to it `file-not-understood`. A broken declaration only hides what it spells, so the file
keeps the facts of its clean declarations and names, per broken one, its lines and the
identifiers it holds: a check that would call something missing asks whether an unsure
region names it (and then says `changed`).

Maintainers: pure functions over a tree-sitter tree and its bytes. A region is the
outermost node below the file's containers (namespaces, `extern "C"` blocks, `#if`
groups) that holds an error; an error directly under a container is its own region.
`unsure_regions` returns None when a region holds binding syntax (`.def(`, a module
macro, `py::`): the bindings themselves cannot be read there; and when the file's
brackets do not balance outside comments, literals and preprocessor lines (a file cut
short, a bracket never closed: not code a compiler takes): the whole file fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

from impact.bindings.cpp_walk import DEF_CALL

# Nodes whose children are declarations of their own: an error inside one is local to
# the child that holds it.
_CONTAINERS = frozenset({
    "translation_unit", "declaration_list", "namespace_definition",
    "linkage_specification", "preproc_if", "preproc_ifdef", "preproc_else",
    "preproc_elif", "preproc_elifdef",
})
# What a region must not hold for the rest of the file to be read without it.
_BINDING_SYNTAX = re.compile(
    rb"\b(?:PYBIND11_MODULE|NB_MODULE|(?:STABLE_)?TORCH_LIBRARY\w*|TORCH_SELECTIVE_\w+)\b"
    rb"|\b(?:py|pybind11|nb|nanobind)\s*::")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class UnsureRegion:
    """Lines `start`..`end` (1-based, inclusive) that did not parse, and the identifiers
    they spell (anything declared there is hidden from the facts)."""

    start: int
    end: int
    names: frozenset[str]

    def holds(self, line: int) -> bool:
        return self.start <= line <= self.end

    def as_data(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "names": sorted(self.names)}


def unsure_regions(root: tree_sitter.Node, text: bytes) -> list[UnsureRegion] | None:
    """The unsure regions of a tree with errors (empty for a clean tree), or None when
    one of them holds binding syntax."""
    if not root.has_error:
        return []
    if not balanced(text):
        return None
    nodes: list[tree_sitter.Node] = []
    _collect(root, nodes)
    regions = []
    for node in nodes:
        spelled = text[node.start_byte:node.end_byte]
        if DEF_CALL.search(spelled) or _BINDING_SYNTAX.search(spelled):
            return None

        names = frozenset(m.group().decode() for m in _IDENTIFIER.finditer(spelled))
        regions.append(UnsureRegion(node.start_point.row + 1, node.end_point.row + 1, names))
    return regions


# What a bracket count skips: comments, string and character literals (raw strings too)
# and preprocessor lines (a macro body may open what its use site closes).
_SKIPPED = re.compile(
    rb'//[^\n]*|/\*.*?\*/|R"([^(\s]{0,16})\(.*?\)\1"|"(?:[^"\\\n]|\\.)*"'
    rb"|'(?:[^'\\\n]|\\.){1,8}'|^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.S | re.M)
_PAIRS = ((b"(", b")"), (b"[", b"]"), (b"{", b"}"))


_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b",
                        re.M)


def balanced(text: bytes) -> bool:
    """Whether every kind of bracket opens as often as it closes, outside what `_SKIPPED`
    matches, as a compiler reads the file with every `#if` true or with every one false
    (`#if X {` / `#else {` / `#endif` opens one brace either way; `#if 0` may hold dead
    code whose braces do not balance)."""
    return _balanced_as(text, True) or _balanced_as(text, False)


def _balanced_as(text: bytes, taken: bool) -> bool:
    kept: list[bytes] = []
    at = 0
    dropping: list[bool] = []  # one flag per open `#if`: inside a branch not taken
    for match in _DIRECTIVE.finditer(text):
        word = match.group(1)
        if not any(dropping):
            kept.append(text[at:match.start()])
        if word.startswith(b"if"):
            dropping.append(not taken)
        elif word == b"endif":
            if dropping:
                dropping.pop()
        elif dropping:
            # every condition true: only the first branch; every one false: `#else`
            dropping[-1] = taken or word != b"else"
        at = match.end()
    if not any(dropping):
        kept.append(text[at:])
    code = _SKIPPED.sub(b" ", b"\n".join(kept))
    return all(code.count(a) == code.count(b) for a, b in _PAIRS)


def _collect(node: tree_sitter.Node, out: list[tree_sitter.Node]) -> None:
    for child in node.children:
        if not (child.has_error or child.is_missing):
            continue
        if child.type in _CONTAINERS and child.type != "ERROR":
            _collect(child, out)
        elif child.is_missing:
            # A token the parser made up (a `;`, an `#endif`): what it closes is unsure.
            out.append(node if node.type not in ("translation_unit", "declaration_list")
                       else child)
        else:
            out.append(child)


__all__ = ["UnsureRegion", "balanced", "unsure_regions"]
