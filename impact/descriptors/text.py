"""Where a value sits in a JSON or YAML text: approximate 1-based lines found by text search."""

# Maintainers: pure string work on text already in memory; no git, no filesystem, never raises.

from __future__ import annotations

import bisect
import json
import re

_JSON_SPACE = " \t\r\n"  # what `\s` matched between a key, its colon and its value


class LineFinder:
    """Finds `"key": "value"` (JSON) or `key: value` (YAML) spellings, scanning forward.

    Each hit moves a cursor, so repeated searches for successive entries of a list find
    successive occurrences. A value not found gives line 1 and leaves the cursor alone.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.cursor = 0

    def line_at(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def json_pair(self, key: str, value: object, *, advance: bool = True) -> int:
        """The line of `"key": value` (any whitespace around the colon). Searched as text,
        not with a pattern per pair: a 900-variant KDP asks for a thousand pairs, and
        compiling each as a regex cost more than reading the file."""
        try:
            literal = json.dumps(value, ensure_ascii=False)
            quoted = json.dumps(key)
        except (TypeError, ValueError):
            return 1
        for start in (self.cursor, 0):
            at = self.text.find(literal, start)
            while at >= 0:
                begin = self._pair_start(quoted, at)
                if begin is not None and begin >= start:
                    if advance:
                        self.cursor = at + len(literal)
                    return self.line_at(begin)
                at = self.text.find(literal, at + 1)
        return 1

    def _pair_start(self, quoted: str, at: int) -> int | None:
        """Where `quoted`, a colon and whitespace end just before offset `at`, or None."""
        text = self.text
        end = at
        while end > 0 and text[end - 1] in _JSON_SPACE:
            end -= 1
        if end == 0 or text[end - 1] != ":":
            return None
        end -= 1
        while end > 0 and text[end - 1] in _JSON_SPACE:
            end -= 1
        begin = end - len(quoted)
        return begin if begin >= 0 and text.startswith(quoted, begin) else None

    def json_value(self, value: str, *, advance: bool = False) -> int:
        literal = json.dumps(value, ensure_ascii=False)
        for start in (self.cursor, 0):
            at = self.text.find(literal, start)
            if at >= 0:
                if advance:
                    self.cursor = at + len(literal)
                return self.line_at(at)
        return 1

    def yaml_pair(self, key: str, value: str, *, advance: bool = True) -> int:
        pattern = (r"(?m)^[ \t]*(?:-[ \t]+)?" + re.escape(key) + r"[ \t]*:[ \t]*['\"]?"
                   + re.escape(value) + r"['\"]?[ \t]*(?:#.*)?$")
        return self._find(re.compile(pattern), advance)

    def _find(self, pattern: re.Pattern[str], advance: bool) -> int:
        match = pattern.search(self.text, self.cursor) or pattern.search(self.text)
        if match is None:
            return 1
        if advance:
            self.cursor = match.end()
        return self.line_at(match.start())
