"""Anchors: each changed copy a row names sits on a line the change changed.

Why: a check names a copy where it is defined (a builder's `def`, a binding's `m.def`,
a profile's entry), but a reviewer reads the diff, and GitHub shows an annotation inline
only on a line of the diff. So after the checks (and the fold) have decided every row,
each side whose role is `changed` is moved onto the first changed line of what it names:
the definition's own extent (its statement in Python, its node in C/C++, its indented
block elsewhere), else the extent of an evidence hop in the same file (the `b.param`
added, the helper reached), else, for a side naming the whole file, the file's first
changed line; where the change only removed lines there, the line after the removal
(a diff shows it beside the removed lines). A side none of these places keeps its
line, and the row says why in `details["unanchored"]` (one entry per file, its reason
an `Unanchored`), so a renderer can say it. This decides nothing: statuses, charging
and verdicts are made; only lines move. The changed lines are a line diff of the view's
two blobs (difflib without its junk heuristic, so the lines are those a minimal diff
like git's marks), computed only for the files the rows name.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import enum
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from impact.git import Snapshot, View, Views
from impact.rows import Role, Row, Side
from impact.sourcetext import READABLE_CODECS, python_codec

_NEWLINE = re.compile(rb"\r\n|\r|\n")
_CPP_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl", ".cu",
                 ".cuh", ".hip", ".ipp", ".tpp")
_BIG = 4 * 1024 * 1024  # bytes: a larger file keeps the check's line (no diff is worth it)


class Unanchored(enum.StrEnum):
    """Why a changed copy keeps the line its check gave it."""

    REMOVED = "removed"                # the file is gone in the view: no line of it is left
    ONLY_REMOVALS = "only-removals"    # the change only removed lines; none is left to mark
    ELSEWHERE = "elsewhere"            # no changed line lies in what the copy names
    UNREAD = "unread"                  # the file is too large, or binary, to diff


class _File:
    """One file of one view: its lines changed at the new revision, and its extents."""

    def __init__(self, path: str, old: bytes | None, new: bytes | None) -> None:
        self.path = path
        self.new = new
        self.changed: list[int] = []
        self.removed_at: list[int] = []  # the line after each run of removed lines
        self.removals_only = False
        self.unread = new is not None and (len(new) > _BIG or (old is not None and len(old) > _BIG)
                                           or b"\0" in new[:8192])
        if new is not None and not self.unread:
            self.changed, self.removed_at = _changed_lines(old or b"", new)
            self.removals_only = bool(self.removed_at) and not self.changed
        self._spans: dict[int, int] | None = None

    def first_changed(self, start: int, end: int, lines: list[int] | None = None) -> int | None:
        """The first changed line (or of `lines`) in [start, end], or None."""
        lines = self.changed if lines is None else lines
        at = bisect.bisect_left(lines, start)
        if at < len(lines) and lines[at] <= end:
            return lines[at]
        return None

    def extent(self, line: int) -> int:
        """The last line of what starts on `line`: its statement, node or indented block."""
        if self._spans is None:
            self._spans = _spans(self.path, self.new or b"")
        return self._spans.get(line) or _indented_end(self.new or b"", line)


def _lines(text: bytes) -> list[bytes]:
    return _NEWLINE.split(text)[:-1] if text.endswith((b"\n", b"\r")) else _NEWLINE.split(text)


def _changed_lines(old: bytes, new: bytes) -> tuple[list[int], list[int]]:
    """The 1-based lines of `new` a minimal line diff marks as added or replaced, and the
    line of `new` that follows each run of lines it only removed (a diff shows it beside
    the removal: an annotation there is seen)."""
    a, b = _lines(old), _lines(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    changed: list[int] = []
    removed: list[int] = []
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag == "insert":
            j1, j2 = _unslid(b, j1, j2)
        if tag in ("replace", "insert"):
            changed.extend(range(j1 + 1, j2 + 1))
        elif tag == "delete" and b:
            removed.append(min(j1 + 1, len(b)))
    return changed, removed


def _unslid(lines: Sequence[bytes], start: int, end: int) -> tuple[int, int]:
    """The part of an inserted block [start, end) that every equally minimal diff marks.
    A block whose first line equals the line after it can slide down (and one whose last
    line equals the line before it, up) and still be a minimal diff: git's heuristics may
    pick another slide than difflib, so only the lines added in every slide are kept
    (all of them when the slides share none)."""
    down = 0
    while end + down < len(lines) and lines[start + down] == lines[end + down] \
            and down < end - start:
        down += 1
    up = 0
    while start - up > 0 and lines[start - up - 1] == lines[end - up - 1] and up < end - start:
        up += 1
    first, last = start + down, end - up
    return (first, last) if first < last else (start, end)


def _spans(path: str, text: bytes) -> dict[int, int]:
    """line → the last line of the largest node that starts on it, for Python and C/C++
    (a decorator's line starts its definition); empty when the file is of another kind
    or does not parse (the indented block stands in then)."""
    spans: dict[int, int] = {}
    if path.endswith((".py", ".pyi")):
        try:
            codec = python_codec(text)
            if codec not in READABLE_CODECS:
                return spans
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text.decode(codec))
        except (SyntaxError, ValueError, LookupError, RecursionError, MemoryError):
            return spans
        for node in ast.walk(tree):
            start = getattr(node, "lineno", None)
            end = getattr(node, "end_lineno", None)
            if start is None or end is None:
                continue
            for first in (start, *(d.lineno for d in getattr(node, "decorator_list", ()))):
                spans[first] = max(spans.get(first, 0), end)
    elif path.endswith(_CPP_SUFFIXES):
        from impact.cpp.scaffold import grammar_for  # tree-sitter loads only when needed
        from impact.cpp.scaffold import parse as parse_cpp

        root = parse_cpp(text, grammar_for(path, text)).root_node
        stack = list(root.children)  # the translation unit itself spans every line
        while stack:
            node = stack.pop()
            first, last = node.start_point[0] + 1, node.end_point[0] + 1
            spans[first] = max(spans.get(first, 0), last)
            stack.extend(node.children)
    return spans


def _indented_end(text: bytes, line: int) -> int:
    """The last line of the block `line` opens: every following line indented deeper (or
    blank), and a closing bracket at the opening line's own indentation."""
    lines = _lines(text)
    if not 0 < line <= len(lines):
        return line
    def indent(raw: bytes) -> int:
        return len(raw) - len(raw.lstrip(b" \t"))
    own = indent(lines[line - 1])
    end = line
    for number in range(line + 1, len(lines) + 1):
        raw = lines[number - 1]
        if not raw.strip():
            continue
        if indent(raw) > own:
            end = number
            continue
        if indent(raw) == own and raw.strip()[:1] in (b"}", b"]", b")"):
            end = number
        break
    return end


def _place(side: Side, row: Row, file: _File) -> tuple[int, Unanchored | None]:
    """The line `side` moves to, or its own line and why it stays."""
    if file.new is None:
        return side.line, Unanchored.REMOVED
    if file.unread:
        return side.line, Unanchored.UNREAD
    if side.line and file.first_changed(side.line, side.line) is not None:
        return side.line, None
    starts = [side.line] if side.line else []
    starts += [hop.line for hop in row.evidence if hop.file == side.file and hop.line]
    for lines in (file.changed, file.removed_at):
        for start in starts:
            found = file.first_changed(start, file.extent(start), lines)
            if found is not None:
                return found, None
    if not side.line and (file.changed or file.removed_at):
        return (file.changed or file.removed_at)[0], None
    if file.removals_only:
        return side.line, Unanchored.ONLY_REMOVALS
    return side.line, Unanchored.ELSEWHERE


def _snapshot(view: View, revision: str) -> tuple[Snapshot | None, Snapshot | None]:
    """The (old, new) snapshots a side read at `revision` is diffed between in `view`."""
    if revision == view.name:
        return view.old, view.new
    return None, None


def _blob(snapshot: Snapshot | None, path: str) -> bytes | None:
    if snapshot is None or path not in snapshot:
        return None
    try:
        return snapshot.read(path)
    except (KeyError, OSError, ValueError):
        return None


def anchored(rows: Sequence[Row], views: Views) -> list[Row]:
    """`rows`, each changed side moved onto a changed line of its view (see the module)."""
    files: dict[tuple[str, str, str], _File | None] = {}

    def file_of(view: View, side: Side) -> _File | None:
        key = (view.name, side.revision, side.file)
        if key not in files:
            old, new = _snapshot(view, side.revision)
            files[key] = None if (old is None and new is None) or side.file not in view.diff.paths \
                else _File(side.file, _blob(old, side.file), _blob(new, side.file))
        return files[key]

    out = []
    for row in rows:
        view = views.view(row.view)
        if view is None or view.new is None:
            out.append(row)
            continue
        sides: list[Side] = []
        why: dict[str, str] = {}
        for side in row.sides:
            file = file_of(view, side) if side.role == Role.CHANGED else None
            if file is None:
                sides.append(side)
                continue
            line, unanchored = _place(side, row, file)
            sides.append(replace(side, line=line))
            if unanchored is not None:
                why[side.file] = str(unanchored)
        out.append(_with(row, sides, why))
    return out


def _with(row: Row, sides: Iterable[Side], why: dict[str, str]) -> Row:
    details: dict[str, Any] = row.details
    if why:
        details = {**row.details, "unanchored": dict(sorted(why.items()))}
    return replace(row, sides=tuple(sides), details=details)
