"""CMake facts: every command a CMakeLists.txt runs, and the sources and compile
definitions it gives its targets, read with tree-sitter-cmake.

Maintainers: parses the bytes it is handed and must not touch git or the filesystem;
`extract_cmake_facts` never raises. Comments (`#` lines and `#[[ ... ]]` blocks) are
nodes of their own in the tree, so nothing inside one is ever read as a command.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import tree_sitter

from impact.cpp.scaffold import CMAKE, extract_tree, line_of, node_text, parse, syntax_failure
from impact.facts import Fact, content_fact, sorted_facts
from impact.kinds import FactKind

LANGUAGE = "CMake"
_VISIBILITY = {"PRIVATE", "PUBLIC", "INTERFACE"}
_TARGET_COMMANDS = {
    "target_sources": FactKind.TARGET_SOURCES,
    "target_compile_definitions": FactKind.COMPILE_DEFINITION,
}
_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", ";": "\\;"}


@dataclass(frozen=True)
class _Argument:
    """One argument as CMake reads it: its value, its form (quoted, unquoted, bracket),
    and where it stands."""

    value: str
    form: str
    line: int


@dataclass(frozen=True)
class _Call:
    name: str
    line: int
    arguments: list[_Argument]
    # The argument list with its parentheses, for the digest: `if((A OR B) AND C)`.
    shape: list[str]


def extract_cmake_facts(path: str, source: bytes) -> list[Fact]:
    """A `cmake-call` fact per command invocation, `target-sources` and `compile-definition`
    facts per source or definition given to a target, and the `content` fact; sorted.

    Never raises; a file that is not UTF-8 or does not parse as CMake yields one
    parse-failure fact naming its first broken line.
    """

    def extract(text: bytes) -> list[Fact]:
        root = parse(text, CMAKE).root_node
        failure = syntax_failure(path, root, LANGUAGE)
        if failure is not None:
            return [failure]
        calls = list(_calls(root, text))
        facts: list[Fact] = []
        for call in calls:
            facts.append(Fact(FactKind.CMAKE_CALL, call.name, call.line,
                              {"arguments": [a.value for a in call.arguments]}))
            kind = _TARGET_COMMANDS.get(call.name)
            if kind is not None:
                facts.extend(_target_facts(kind, call.arguments))
        facts.append(content_fact(path, _digest(calls)))
        return sorted_facts(facts)

    return extract_tree(path, source, LANGUAGE, extract)


def _target_facts(kind: FactKind, arguments: list[_Argument]) -> Iterator[Fact]:
    """`target_sources(t PRIVATE a.cpp PUBLIC b.hpp)`: one fact per item after the target,
    each under the visibility keyword last seen before it."""
    if not arguments:
        return
    target = arguments[0].value
    visibility: str | None = None
    for argument in arguments[1:]:
        if argument.form == "unquoted" and argument.value.upper() in _VISIBILITY:
            visibility = argument.value.upper()
            continue
        yield Fact(kind, argument.value, argument.line,
                   {"target": target, "visibility": visibility})


def _calls(root: tree_sitter.Node, source: bytes) -> Iterator[_Call]:
    """Every command invocation in source order, control commands (`if`, `foreach`,
    `function`, ...) included, nested bodies walked."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type.endswith("_command"):
            yield _call(node, source)
            continue
        stack.extend(reversed(node.named_children))


def _call(node: tree_sitter.Node, source: bytes) -> _Call:
    name = node_text(node.children[0], source).lower()
    arguments: list[_Argument] = []
    shape: list[str] = []
    listing = next((c for c in node.children if c.type == "argument_list"), None)
    for child in listing.children if listing is not None else ():
        if child.type == "argument":
            argument = _argument(child, source)
            arguments.append(argument)
            shape.append(f"{argument.form}:{node_text(child, source)}")
        elif child.type in ("(", ")"):
            shape.append(child.type)
    return _Call(name, line_of(node), arguments, shape)


def _argument(node: tree_sitter.Node, source: bytes) -> _Argument:
    inner = node.named_children[0]
    if inner.type == "quoted_argument":
        element = next((c for c in inner.named_children if c.type == "quoted_element"), None)
        value = _unescaped(element, source) if element is not None else ""
        return _Argument(value.replace("\\\n", ""), "quoted", line_of(node))
    if inner.type == "bracket_argument":
        content = next((c for c in inner.named_children
                        if c.type == "bracket_argument_content"), None)
        value = node_text(content, source) if content is not None else ""
        if value.startswith("\r\n"):
            value = value[2:]
        elif value.startswith("\n"):
            value = value[1:]
        return _Argument(value, "bracket", line_of(node))
    return _Argument(_unescaped(inner, source), "unquoted", line_of(node))


def _unescaped(node: tree_sitter.Node, source: bytes) -> str:
    """The node's text with its escape sequences read (`\\"` is `"`); `${VAR}` stays text,
    and `\\;` stays `\\;` as in CMake, which keeps it to mean a literal semicolon."""
    pieces: list[str] = []
    at = node.start_byte
    for escape in _escapes(node):
        pieces.append(source[at : escape.start_byte].decode("utf-8", "replace"))
        raw = node_text(escape, source)
        # The grammar names a bare `;` (a list separator, not an escape) an escape too.
        pieces.append(raw if not raw.startswith("\\") else _ESCAPES.get(raw[1:], raw[1:]))
        at = escape.end_byte
    pieces.append(source[at : node.end_byte].decode("utf-8", "replace"))
    return "".join(pieces)


def _escapes(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    for child in node.named_children:
        if child.type == "escape_sequence":
            yield child
        elif child.type != "variable_ref":
            yield from _escapes(child)


def _digest(calls: list[_Call]) -> str:
    """sha256 of the commands (names lower-cased, as CMake reads them) and their arguments
    as written: blind to comments and layout, not to quoting or parentheses."""
    canonical = json.dumps([[call.name, call.shape] for call in calls])
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
