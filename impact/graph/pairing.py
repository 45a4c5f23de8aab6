"""The rules that pair a copy of an argument list with the builder it restates.

Maintainers: pure functions over records; `impact/graph/symbols.py` applies them while
it builds its lists and launch calls, and nothing outside `impact/graph/` pairs anything.
"""

from __future__ import annotations

import re

from impact.graph.records import ArgList, Builder, PairedBy, Pairing

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_GENERIC_WORDS = {"launcher", "launch", "signature", "kernel", "args", "arguments", "list"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# `gfx950`, `gfx90a`, and `Gfx950` in a C++ file name, but not `Gfx950C` of `Gfx950ConvFwd`.
PATH_ARCH = re.compile(r"[Gg]fx[0-9]+(?:[a-z](?![a-z]))?")


def path_archs(path: str) -> frozenset[str]:
    """The GPU architectures a path names (`kernels/gfx942/...`, `Gfx950...Native.cpp`)."""
    return frozenset(m.group(0).lower() for m in PATH_ARCH.finditer(path))


def same_arch(copy_path: str, builder_path: str) -> bool:
    """Whether a copy may restate a builder as far as their paths go: unless both name
    architectures and none in common (a gfx950 pack never restates a gfx942 builder)."""
    mine, theirs = path_archs(copy_path), path_archs(builder_path)
    return not mine or not theirs or bool(mine & theirs)


def of_arch(copy_path: str, builders: list[Builder]) -> list[Builder]:
    """The builders a copy at `copy_path` may be paired with by names (`same_arch`)."""
    return [b for b in builders if same_arch(copy_path, b.path)]


def name_forms(name: str | None) -> frozenset[str]:
    """The spellings one argument name may take in another copy, normalised: case,
    underscores, a `m_`/`_` member prefix, a trailing `_ptr`/`Ptr`, and a `k` constant
    prefix (tried both with and without it: `kCache` may be `k_cache`) set aside.
    `seqlenQ`, `seqlen_q`, `m_seqlenQ` and `seqlen_q_` are one name."""
    if not name:
        return frozenset()
    text = name.strip()
    for prefix in ("m_", "_"):
        if text.startswith(prefix) and len(text) > len(prefix):
            text = text[len(prefix):]
    forms = {text}
    if len(text) > 1 and text[0] == "k" and text[1].isupper():
        forms.add(text[1:])
    out = set()
    for form in forms:
        flat = _CAMEL.sub("_", form).lower().strip("_")
        for suffix in ("_ptr", "_pointer"):
            if flat.endswith(suffix) and len(flat) > len(suffix):
                flat = flat[: -len(suffix)]
        out.add(flat.replace("_", ""))
    return frozenset(out)


def _word_list(name: str) -> list[str]:
    """The words of a name (`seqlen_q`, `seqlenQ` and `m_seqlenQ`: seqlen, q), lower case,
    a member prefix and a trailing `ptr` set aside."""
    text = name.strip()
    for prefix in ("m_", "_"):
        if text.startswith(prefix) and len(text) > len(prefix):
            text = text[len(prefix):]
    words = [w for w in _CAMEL.sub("_", text).lower().split("_") if w]
    if len(words) > 1 and words[-1] in ("ptr", "pointer"):
        words = words[:-1]
    return words


def _prefixes(short: str, words: list[str]) -> bool:
    """Whether `short` is a prefix of each word in turn, every word used once."""
    if not words:
        return not short
    head = words[0]
    return any(short[:n] == head[:n] and _prefixes(short[n:], words[1:])
               for n in range(1, min(len(short), len(head)) + 1))


def abbreviates(short: str | None, name: str | None) -> bool:
    """Whether `short` spells `name` by the starts of its words, every word in order
    (`b` for `batch`, `sq` for `seqlen_q`, `skv` for `seqlen_kv`; not `s` for
    `seqlen_q`; `seqQ` for `seqlen_q`, word by word). Never `name` itself."""
    if not short or not name or not short.isidentifier():
        return False
    mine, words = _word_list(short), _word_list(name)
    if not mine or mine == words:
        return False
    if len(mine) > 1:
        return len(mine) == len(words) and all(
            w.startswith(m) for m, w in zip(mine, words, strict=True))
    return _prefixes(mine[0], words)


def same_name(a: str | None, b: str | None) -> bool:
    """Whether two argument names are one name under `name_forms`."""
    return bool(name_forms(a) & name_forms(b))


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


def launch_by_names(names: list[str | None], builders: list[Builder]) -> Builder | None:
    """The builder a launch() with no list beside it passes: the one whose arguments (all
    of them, or those it always declares) are the launch's names under `name_forms`;
    b.param builders before signature factories, then by id."""
    if not names or any(n is None for n in names):
        return None
    found = []
    for builder in builders:
        for wanted in (builder.names, builder.always_names):
            if len(wanted) == len(names) and all(
                    same_name(a, b) for a, b in zip(names, wanted, strict=True)):
                found.append((not builder.uses_param, builder.id, builder))
                break
    return min(found, key=lambda f: f[:2])[2] if found else None


def launch_closest(names: list[str | None], builders: list[Builder]) -> Builder | None:
    """The b.param builder sharing the most launch names (at least two and half the
    launch's own), then the nearest in length, then by id."""
    scored = []
    for builder in builders:
        if not builder.uses_param:
            continue
        common = sum(1 for n in names if any(same_name(n, b) for b in builder.names))
        if common >= 2 and common * 2 >= len(names):
            scored.append((-common, abs(len(builder.names) - len(names)), builder.id, builder))
    return min(scored, key=lambda s: s[:3])[3] if scored else None


def launch_by_list(receiver: str, position: int, launches: int, lists: list[ArgList],
                   names: list[str | None] | None = None) -> Pairing:
    """The builder of the list in the same pack that a launch() passes: the only list;
    else the one whose builder's names the launch passes; else the one whose name
    shares words with the launcher (segment with segment); else the one sharing most
    names with the launch; else the list in the same position in the file."""
    if len(lists) == 1:
        return Pairing(lists[0].pairing.builder, PairedBy.SAME_PACK)
    if not lists:
        return Pairing(None)
    builders = [a.pairing.builder for a in lists if a.pairing.builder is not None]
    exact = launch_by_names(list(names or []), builders)
    if exact is not None:
        return Pairing(exact, PairedBy.NAMES)
    words = _words(receiver)
    scored = sorted(((len(words & _words(a.name)), -i) for i, a in enumerate(lists)),
                    reverse=True)
    if scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return Pairing(lists[-scored[0][1]].pairing.builder, PairedBy.LAUNCHER_NAME)
    near = launch_closest(list(names or []), builders)
    if near is not None:
        return Pairing(near, PairedBy.CLOSEST)
    if launches == len(lists):
        return Pairing(lists[position].pairing.builder, PairedBy.PACK_ORDER)
    return Pairing(None)


def list_for_launch(receiver: str, position: int, launches: int, lists: list[ArgList],
                    names: list[str | None]) -> ArgList | None:
    """The list of its own pack a launch() passes when no builder pairs with either:
    the only list; else the one whose names it passes (under `name_forms`, in order);
    else the one its launcher is named for (segment with segment); else the list in the
    same position when there are as many launches as lists; else none."""
    if len(lists) <= 1:
        return lists[0] if lists else None
    for arglist in lists:
        wanted = [e.name for e in arglist.entries]
        if len(wanted) == len(names) and all(
                n is not None and same_name(n, w) for n, w in zip(names, wanted, strict=True)):
            return arglist
    words = _words(receiver)
    scored = sorted(((len(words & _words(a.name)), -i) for i, a in enumerate(lists)),
                    reverse=True)
    if scored[0][0] > 0 and scored[1][0] < scored[0][0]:
        return lists[-scored[0][1]]
    return lists[position] if launches == len(lists) else None
