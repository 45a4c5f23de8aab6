"""What every reader refuses because the real consumer refuses it: the size limit per file,
JSON with a duplicate key, YAML with anchors, aliases, duplicate keys or too many nodes.

Maintainers: pure functions over bytes and text; nothing here touches git or the
filesystem, and nothing here builds Facts. A refusal is a `Refused` (a ValueError) whose
message names the problem, so each extractor turns it into its one parse-failure fact.
The limits are the constants below, and nowhere else.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from impact.kinds import Language

MB = 1 << 20
MAX_FILE_BYTES = 2 * MB
"""The most bytes any file may hold to be parsed; a larger one is not understood."""
# Tighter limits for the languages whose parser is slow (never above MAX_FILE_BYTES).
MAX_BYTES_BY_LANGUAGE: dict[str, int] = {
    # Both Python extractors (on `ast`) read about 250 kB per CPU second (libcst: 20 kB); a
    # file is read at each revision, so 1 MB stays the bound: seconds, not minutes.
    Language.PYTHON: 1 * MB,
}
YAML_NODE_BUDGET = 100_000
"""The most nodes one YAML document may compose into (a tool profile holds hundreds)."""


class Refused(ValueError):
    """A text a strict reader will not read; `line` is 1-based, 0 when not known."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def size_limit(language: str) -> int:
    """The most bytes a file of `language` may hold to be parsed."""
    return min(MAX_BYTES_BY_LANGUAGE.get(language, MAX_FILE_BYTES), MAX_FILE_BYTES)


def too_large(size: int, language: str) -> str | None:
    """Why a file of `size` bytes is not read ('too large to read: 2.5 MB ...'), or None."""
    limit = size_limit(language)
    if size <= limit:
        return None
    return f"too large to read: {size / MB:.1f} MB (the limit is {limit / MB:g} MB)"


# --- JSON

def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise Refused(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def _no_constant(name: str) -> Any:
    raise Refused(f"{name} is not JSON")


def load_json(text: str, *, constants: bool = True) -> Any:
    """The JSON value of `text`, refusing an object with a key written twice (Python keeps
    the last, a C++ reader may keep the first or refuse); with `constants` False, NaN and
    Infinity too. Raises `Refused` or json's own ValueError."""
    if constants:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_no_constant)


# --- YAML

class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing anchors and aliases (the files read never use them;
    a billion-laughs document is nothing but them), duplicate keys, and more nodes than
    the budget; every node is counted while it is composed, before anything is built."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.AliasEvent):
            raise Refused(f"YAML alias *{event.anchor}: this file is read without aliases",
                          line)
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise Refused(f"YAML anchor &{anchor}: this file is read without anchors", line)
        self.nodes += 1
        if self.nodes > YAML_NODE_BUDGET:
            raise Refused(f"more than {YAML_NODE_BUDGET} YAML nodes", line)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    repeated = key in seen
                    seen.add(key)
                except TypeError:  # an unhashable key: the constructor names it
                    continue
                if repeated:
                    raise Refused(f"duplicate key {key!r}", key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """The YAML value of `text` (one document), read strictly (see `_StrictLoader`).
    Raises `Refused` or PyYAML's own YAMLError."""
    loader = _StrictLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
