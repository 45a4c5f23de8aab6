"""Parameter lists and calls in a sentence: only the part a reviewer needs to see.

Why: a finding that prints two 22-parameter C++ lists in full (issue 27) runs past a
screen and hides the one parameter that changed. The report keeps every form whole in
its details (JSON, `--verbose` rows); a sentence writes a long form elided to the
parameters it is about, and a base and head form as what changed between them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A form with more parameters than this is elided in a sentence.
SHORT = 6
_OPEN, _CLOSE = "([{<", ")]}>"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parameters(form: str) -> list[str] | None:
    """The top-level items of `(a, b<c, d>, e)`, or None when `form` is not one list."""
    text = form.strip()
    if len(text) < 2 or text[0] != "(" or text[-1] != ")":
        return None
    items, depth, start = [], 0, 1
    for at, char in enumerate(text[1:-1], 1):
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif char == "," and depth == 0:
            items.append(text[start:at].strip())
            start = at + 1
    last = text[start:-1].strip()
    if last or items:
        items.append(last)
    return items if depth == 0 else None


def _names(item: str) -> set[str]:
    return set(_WORD.findall(item))


def elided(form: str, about: Iterable[str] = ()) -> str:
    """`form` itself when short; else its first two parameters, every parameter that
    names one of `about`, and its last, with `…` for each run left out."""
    items = parameters(form)
    if items is None or len(items) <= SHORT:
        return form
    wanted = set(about)
    keep = {0, 1, len(items) - 1} | {i for i, item in enumerate(items) if _names(item) & wanted}
    return "(" + _joined(items, keep) + ")"


def _joined(items: list[str], keep: set[int]) -> str:
    out: list[str] = []
    for i, item in enumerate(items):
        if i in keep:
            out.append(item)
        elif not out or out[-1] != "…":
            out.append("…")
    return ", ".join(out)


def delta(base: str, head: str) -> str:
    """What changed from `base` to `head`, as `a, b → a, b, c` around the first and last
    parameter that differ (one of context kept each side); the two forms whole when
    either is not a list or both are short."""
    old, new = parameters(base), parameters(head)
    if old is None or new is None or max(len(old), len(new)) <= SHORT:
        return f"{base} → {head}"
    lead = 0
    while lead < min(len(old), len(new)) and old[lead] == new[lead]:
        lead += 1
    tail = 0
    while tail < min(len(old), len(new)) - lead and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    if lead == len(old) == len(new):
        return f"{base} (unchanged)"
    first = max(lead - 1, 0)

    def part(items: list[str]) -> str:
        last = len(items) - max(tail - 1, 0)
        body = ", ".join(items[first:last])
        return ("(…, " if first else "(") + body + (", …)" if last < len(items) else ")")

    return f"{part(old)} → {part(new)}"
