"""Where a descriptor value sits (impact/descriptors/text.py): the text search finds the
line a `"key"\\s*:\\s*value` pattern finds, pair after pair, on every descriptor of the
fixture trees and on spellings with other whitespace."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from impact.descriptors.text import LineFinder
from impact.fixtures.tree import rocke_tree_files


class _Reference(LineFinder):
    """The pattern-per-pair search the text search replaced."""

    def json_pair(self, key: str, value: object, *, advance: bool = True) -> int:
        literal = json.dumps(value, ensure_ascii=False)
        pattern = re.compile(re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(literal))
        match = pattern.search(self.text, self.cursor) or pattern.search(self.text)
        if match is None:
            return 1
        if advance:
            self.cursor = match.end()
        return self.line_at(match.start())


def _pairs(value: Any):
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(item, (dict, list)):
                yield key, item
            yield from _pairs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _pairs(item)


DESCRIPTORS = sorted(p for p in rocke_tree_files() if p.endswith(".json"))


@pytest.mark.parametrize("path", DESCRIPTORS)
def test_every_pair_of_every_fixture_descriptor_is_found_where_the_pattern_finds_it(
        path: str) -> None:
    text = rocke_tree_files()[path].decode("utf-8")
    pairs = list(_pairs(json.loads(text)))
    assert pairs
    mine, reference = LineFinder(text), _Reference(text)
    for key, value in pairs:
        assert mine.json_pair(key, value) == reference.json_pair(key, value), (key, value)
        assert mine.cursor == reference.cursor


@pytest.mark.parametrize("text", [
    '{"a": 1, "b": 2}',
    '{\n  "a"\t:\n   1,\n  "b" :2\n}',
    '{"x": {"a": 1}, "y": {"a": 1}, "z": {"a": 2}}',
    '{"name": "a", "other": "name", "name2": "a"}',
])
def test_other_whitespace_and_repeats(text: str) -> None:
    mine, reference = LineFinder(text), _Reference(text)
    for key, value in [("a", 1), ("a", 1), ("a", 2), ("b", 2), ("name", "a"),
                       ("missing", 3), ("a", 1)]:
        assert mine.json_pair(key, value) == reference.json_pair(key, value)
        assert mine.cursor == reference.cursor
