"""CMake facts: the sources and compile definitions a CMakeLists.txt gives its targets.

Maintainers: plain-text parsing of bytes handed in (no CMake grammar is installed);
must not touch git or the filesystem, and never raises on bad input.
"""

from __future__ import annotations

import re

from impact.facts import Fact, parse_failure, sorted_facts
from impact.kinds import FactKind

CMAKE_CALL = FactKind.CMAKE_CALL

_VISIBILITY = {"PRIVATE", "PUBLIC", "INTERFACE"}
_COMMANDS = {"target_sources": "target-sources", "target_compile_definitions": "compile-definition"}
_CALL = re.compile(r"\b(target_sources|target_compile_definitions)\s*\(", re.IGNORECASE)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s()"]+')


def _strip_comments(text: str) -> str:
    """Blank out `#` comments (outside quoted arguments), keeping offsets and lines."""
    out: list[str] = []
    in_quote = False
    in_comment = False
    for ch in text:
        if in_comment:
            if ch == "\n":
                in_comment = False
                out.append(ch)
            else:
                out.append(" ")
            continue
        if ch == '"':
            in_quote = not in_quote
        elif ch == "#" and not in_quote:
            in_comment = True
            out.append(" ")
            continue
        out.append(ch)
    return "".join(out)


def extract_cmake_facts(path: str, source: bytes) -> list[Fact]:
    """`target-sources` and `compile-definition` facts of one CMakeLists.txt; never raises."""
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as err:
        return [parse_failure(path, f"not UTF-8: {err.reason}")]
    try:
        return sorted_facts(_extract(path, _strip_comments(text)))
    except Exception as err:  # an extractor reports, never raises
        return [parse_failure(path, f"cmake extractor error: {type(err).__name__}")]


_COMMAND = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)


def _commands(text: str) -> list[Fact]:
    """A `cmake-call` fact per command invocation: its lower-cased name and arguments
    (quotes removed), so a check can ask which file names a target."""
    facts: list[Fact] = []
    for match in _COMMAND.finditer(text):
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        body = text[match.end():end - 1]
        arguments = [t.group(0)[1:-1] if t.group(0).startswith('"') else t.group(0)
                     for t in _TOKEN.finditer(body)]
        line = text.count("\n", 0, match.start()) + 1
        facts.append(Fact(CMAKE_CALL, match.group(1).lower(), line, {"arguments": arguments}))
    return facts


def _extract(path: str, text: str) -> list[Fact]:
    facts: list[Fact] = _commands(text)
    for match in _CALL.finditer(text):
        start = match.end()
        close = text.find(")", start)
        if close < 0:
            line = text.count("\n", 0, match.start()) + 1
            facts.append(parse_failure(path, f"unclosed {match.group(1)}(", line))
            continue
        kind = _COMMANDS[match.group(1).lower()]
        tokens = [(t.group(0), t.start() + start) for t in _TOKEN.finditer(text[start:close])]
        if not tokens:
            continue
        target = tokens[0][0]
        visibility: str | None = None
        for token, offset in tokens[1:]:
            if token.upper() in _VISIBILITY:
                visibility = token.upper()
                continue
            value = token[1:-1] if token.startswith('"') else token
            line = text.count("\n", 0, offset) + 1
            facts.append(Fact(kind, value, line, {"target": target, "visibility": visibility}))
    return facts
