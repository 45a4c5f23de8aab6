"""The rules that pair a copy of an argument list with the builder it restates.

Maintainers: pure functions over records; `impact/graph/symbols.py` applies them while
it builds its lists and launch calls, and nothing outside `impact/graph/` pairs anything.
"""

from __future__ import annotations

import re

from impact.graph.records import ArgList, Builder, PairedBy, Pairing

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_GENERIC_WORDS = {"launcher", "launch", "signature", "kernel", "args", "arguments", "list"}


def equal_names(names: list[str], builders: list[Builder]) -> Builder | None:
    """The builder whose arguments (all of them, or those it always declares) are the
    list's names; b.param builders before signature factories, then by id."""
    if not names:
        return None
    wanted = tuple(names)
    exact = sorted((not b.uses_param, b.id, b) for b in builders
                   if wanted in (b.names, b.always_names))
    return exact[0][2] if exact else None


def closest(names: list[str], builders: list[Builder]) -> Builder | None:
    """The builder sharing the most names with the list (at least two and half the
    list's own), then the nearest in length, then by id."""
    scored = []
    for builder in builders:
        own = builder.names
        common = len(set(names) & set(own))
        if common >= 2 and common * 2 >= len(names):
            scored.append((-common, abs(len(own) - len(names)), builder.id, builder))
    return min(scored, key=lambda s: s[:3])[3] if scored else None


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORDS.findall(text)} - _GENERIC_WORDS


def launch_by_list(receiver: str, position: int, launches: int,
                    lists: list[ArgList]) -> Pairing:
    """The builder of the list in the same pack that a launch() passes: the only list;
    else the one whose name shares words with the launcher (segment with segment);
    else the list in the same position in the file."""
    if len(lists) == 1:
        return Pairing(lists[0].pairing.builder, PairedBy.SAME_PACK)
    if not lists:
        return Pairing(None)
    words = _words(receiver)
    scored = sorted(((len(words & _words(a.name)), -i) for i, a in enumerate(lists)),
                    reverse=True)
    if scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return Pairing(lists[-scored[0][1]].pairing.builder, PairedBy.LAUNCHER_NAME)
    if launches == len(lists):
        return Pairing(lists[position].pairing.builder, PairedBy.PACK_ORDER)
    return Pairing(None)
