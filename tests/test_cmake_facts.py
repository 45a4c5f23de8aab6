"""Tests of the CMake extractor (tree-sitter-cmake): commands, arguments, comments, digest."""

from __future__ import annotations

import pytest

from impact.cpp import extract_cmake_facts
from impact.facts import CONTENT, PARSE_FAILURE, Fact
from impact.kinds import FactKind


def facts_of(text: str) -> list[Fact]:
    return extract_cmake_facts("CMakeLists.txt", text.encode())


def sources(text: str) -> list[str]:
    return [f.name for f in facts_of(text) if f.kind == FactKind.TARGET_SOURCES]


def calls(text: str) -> list[tuple[str, int, list[str]]]:
    return [(f.name, f.line, f.data["arguments"]) for f in facts_of(text)
            if f.kind == FactKind.CMAKE_CALL]


def digest(text: str) -> str:
    (found,) = [f.data["digest"] for f in facts_of(text) if f.kind == CONTENT]
    return found


def test_target_sources_inside_a_bracket_comment_does_not_count() -> None:
    text = "#[[\ntarget_sources(t PRIVATE old.cpp)\n]]\ntarget_sources(t PRIVATE a.cpp)\n"
    assert sources(text) == ["a.cpp"]
    assert [name for name, _, _ in calls(text)] == ["target_sources"]


def test_target_sources_inside_a_bracket_comment_with_equals_does_not_count() -> None:
    text = "#[==[ ]] target_sources(t PRIVATE old.cpp) ]==]\ntarget_sources(t PRIVATE a.cpp)\n"
    assert sources(text) == ["a.cpp"]


def test_every_command_is_a_call_with_its_arguments() -> None:
    text = """cmake_minimum_required(VERSION 3.21)
IF(WIN32 AND (A OR B)) # why
  Set(X "a b" [=[raw ] text]=] "q\\"x" ${Y}/c.cpp)
endif()
foreach(s IN LISTS X)
endforeach()
"""
    assert calls(text) == [
        ("cmake_minimum_required", 1, ["VERSION", "3.21"]),
        ("if", 2, ["WIN32", "AND", "A", "OR", "B"]),
        ("set", 3, ["X", "a b", "raw ] text", 'q"x', "${Y}/c.cpp"]),
        ("endif", 4, []),
        ("foreach", 5, ["s", "IN", "LISTS", "X"]),
        ("endforeach", 6, []),
    ]


def test_hash_inside_quotes_is_not_a_comment() -> None:
    text = 'target_sources(t PRIVATE "a#b.cpp" c.cpp)\n'
    assert sources(text) == ["a#b.cpp", "c.cpp"]


def test_a_bracket_argument_drops_its_first_newline() -> None:
    assert calls("set(X [[\nline]])\n") == [("set", 1, ["X", "line"])]


@pytest.mark.parametrize("text", [
    "target_sources(t PRIVATE a.cpp\n",
    "target_sources(t PRIVATE \"a.cpp)\n",
    "set(X [[never closed)\n",
])
def test_a_file_that_does_not_parse_is_one_parse_failure(text: str) -> None:
    facts = facts_of(text)
    assert [f.kind for f in facts] == [PARSE_FAILURE]
    assert facts[0].line >= 1


BASE = "# build\ntarget_sources(t PRIVATE a.cpp b.cpp)\n"


@pytest.mark.parametrize(("new", "equal"), [
    ("#[[ a whole\nblock ]]\ntarget_sources(t\n    PRIVATE a.cpp   b.cpp) # tail\n", True),
    ("TARGET_SOURCES(t PRIVATE a.cpp b.cpp)\n", True),
    ('target_sources(t PRIVATE "a.cpp" b.cpp)\n', False),
    ('target_sources(t PRIVATE "a#b.cpp")\n', False),
    ("target_sources(t PRIVATE a.cpp)\n", False),
])
def test_content_digest_is_blind_to_comments_and_layout_only(new: str, equal: bool) -> None:
    assert (digest(BASE) == digest(new)) is equal


def test_the_digest_sees_an_edit_inside_quotes_after_a_hash() -> None:
    old = 'set(X "a # b")\n'
    assert digest(old) != digest(old.replace("# b", "# c"))


def test_a_semicolon_separates_list_items_and_is_kept() -> None:
    """tree-sitter-cmake names a bare `;` an escape sequence: it is CMake's list separator,
    so it stays in the argument (`"80;90a"` is two archs, not `8090a`); `\\;` stays as
    written, as CMake keeps it to mean a literal semicolon."""
    assert calls('set(ARCHS "80;90a" a;b "x\\;y")\n') == [
        ("set", 1, ["ARCHS", "80;90a", "a;b", "x\\;y"])]
