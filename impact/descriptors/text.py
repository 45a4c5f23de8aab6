"""Where a value sits in a JSON or YAML text: approximate 1-based lines found by text search."""

# Maintainers: pure string work on text already in memory; no git, no filesystem, never raises.

from __future__ import annotations

import bisect
import json
import re


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
        try:
            literal = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            return 1
        pattern = re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(literal)
        return self._find(re.compile(pattern), advance)

    def json_value(self, value: str, *, advance: bool = False) -> int:
        return self._find(re.compile(re.escape(json.dumps(value, ensure_ascii=False))), advance)

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
