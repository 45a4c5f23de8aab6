"""`#if` blocks inside parentheses (a parameter guarded by a build flag), flattened to
their first branch before tree-sitter sees a C++ source.

Maintainers: pure work on the bytes handed in, offset-preserving (every byte offset and
line stays put); nothing here touches git, the filesystem or a parser. The walker of
`cpp_walk.py` reads the regions to mark a parameter `conditional` and to name the
branches a declaration dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Region:
    """A kept (first) branch of a conditional inside parentheses, or a dropped later one."""

    start: int
    end: int
    condition: str
    kept: bool


@dataclass
class _Frame:
    depth: int
    in_parens: bool
    condition: str
    branch: int = 0
    branch_start: int = 0
    dropped: bool = False  # inside a dropped branch of an enclosing in-parens frame


def _condition(directive: str, rest: str) -> str:
    rest = " ".join(rest.split())
    if directive == "ifdef":
        return f"defined({rest})"
    if directive == "ifndef":
        return f"!defined({rest})"
    return rest


def flatten_conditionals(source: bytes) -> tuple[bytes, list[Region]]:
    """The source with each `#if` block that sits inside parentheses reduced to its first
    branch (directive lines and later branches blanked, newlines kept, so every byte
    offset and line stays put), and the branches' regions."""
    out = bytearray(source)
    regions: list[Region] = []
    frames: list[_Frame] = []
    depth = 0
    i = 0
    n = len(source)
    at_line_start = True

    def blanking() -> bool:
        return any(f.in_parens and (f.branch > 0 or f.dropped) for f in frames)

    def blank(start: int, end: int) -> None:
        for k in range(start, end):
            if out[k] not in (10, 13):
                out[k] = 32

    while i < n:
        c = source[i]
        if at_line_start and c in b" \t":
            i += 1
            continue
        if at_line_start and c == 35:  # '#'
            end = i
            while end < n and source[end] != 10:
                if source[end] == 92 and end + 1 < n and source[end + 1] == 10:
                    end += 1
                end += 1
            text = source[i + 1 : end].decode("utf-8", "replace").replace("\\\n", " ")
            match = re.match(r"\s*(\w+)(.*)", text, re.S)
            word = match.group(1) if match else ""
            rest = match.group(2) if match else ""
            line_start = source.rfind(b"\n", 0, i) + 1
            if word in ("if", "ifdef", "ifndef"):
                in_parens = depth > 0 or blanking()
                frame = _Frame(depth, in_parens, _condition(word, rest), 0, end,
                               dropped=blanking())
                frames.append(frame)
                if in_parens:
                    blank(line_start, end)
            elif word in ("elif", "else", "endif") and frames:
                frame = frames[-1]
                if frame.in_parens:
                    if not frame.dropped:
                        regions.append(Region(frame.branch_start, line_start, frame.condition,
                                              frame.branch == 0))
                    blank(line_start, end)
                    frame.branch += 1
                    frame.branch_start = end
                if word == "endif":
                    frames.pop()
                else:
                    depth = frame.depth
            elif blanking():
                blank(line_start, end)
            i = end
            continue
        at_line_start = False
        if blanking():
            if c == 10:
                at_line_start = True
            else:
                out[i] = 32 if c != 13 else c
            i += 1
            continue
        if c == 10:
            at_line_start = True
            i += 1
        elif c == 47 and source[i + 1 : i + 2] == b"/":
            j = source.find(b"\n", i)
            i = n if j < 0 else j
        elif c == 47 and source[i + 1 : i + 2] == b"*":
            j = source.find(b"*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in (34, 39):  # string or char literal
            j = i + 1
            while j < n and source[j] != c and source[j] != 10:
                j += 2 if source[j] == 92 else 1
            i = j + 1
        elif c in b"([{":
            depth += 1
            i += 1
        elif c in b")]}":
            depth = max(0, depth - 1)
            i += 1
        else:
            i += 1
    return bytes(out), regions
