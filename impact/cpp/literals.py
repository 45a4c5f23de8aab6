"""The value of a C++ string literal read from a tree-sitter node.

Maintainers: a pure function over a node and the source bytes it came from; shared by
the ingestor and the bindings extractors so both read literals the same way.
"""

from __future__ import annotations

import tree_sitter

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'", "?": "?"}


def string_value(node: tree_sitter.Node, source: bytes) -> str | None:
    """A plain, prefixed, raw or concatenated string literal's value; None otherwise."""

    def text(child: tree_sitter.Node) -> str:
        return source[child.start_byte : child.end_byte].decode("utf-8", "replace")

    if node.has_error:
        return None
    if node.type == "raw_string_literal":
        content = next((c for c in node.children if c.type == "raw_string_content"), None)
        return text(content) if content is not None else ""
    if node.type == "string_literal":
        pieces: list[str] = []
        for child in node.children:
            if child.type == "string_content":
                pieces.append(text(child))
            elif child.type == "escape_sequence":
                raw = text(child)
                pieces.append(_ESCAPES.get(raw[1:], raw))
        return "".join(pieces)
    if node.type == "concatenated_string":
        parts = [string_value(c, source) for c in node.named_children if c.type != "comment"]
        if any(p is None for p in parts):
            return None
        return "".join(p for p in parts if p is not None)
    return None
