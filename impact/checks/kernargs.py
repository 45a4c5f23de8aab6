"""Kernel arguments: each `b.param` builder against every hand-kept copy of its list.

Maintainers: reads the symbol graph of each view's old and new snapshot only
(`cpplist:` and `launch:` nodes, `restates` edges, builder `params`); never
parses source or touches git. Wording stays short: renderers own the words.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.git import View
from impact.graph import SymbolGraph, symbol_node
from impact.python import module_name_for
from impact.rows import Hop, Row, Side, Status

ALWAYS = "always"
_POINTER = ("global_buffer", 8)
_SCALARS = {
    "F32": ("by_value", 4), "I32": ("by_value", 4), "U32": ("by_value", 4),
    "I64": ("by_value", 8), "U64": ("by_value", 8), "F64": ("by_value", 8),
    "F16": ("by_value", 2), "BF16": ("by_value", 2), "I16": ("by_value", 2),
    "I8": ("by_value", 1),
}
_PTR_CALL = re.compile(r"(^|\.)PtrType\(")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_GENERIC_WORDS = {"launcher", "launch", "signature", "kernel", "args", "arguments", "list"}
_MAX_GUARDS = 8


@dataclass(frozen=True)
class _Param:
    name: str
    kind: tuple[str, int] | None  # None: the type could not be resolved
    guard: str
    line: int
    type_text: str


@dataclass(frozen=True)
class _Builder:
    node: str
    path: str
    line: int
    params: tuple[_Param, ...]

    @property
    def name(self) -> str:
        return self.node.rsplit(":", 1)[-1]

    def candidates(self) -> list[tuple[frozenset[str], tuple[_Param, ...]]]:
        """The argument lists the builder emits, one per set of conditions switched on
        (none first, all last)."""
        guards = sorted({p.guard for p in self.params if p.guard != ALWAYS})
        if len(guards) > _MAX_GUARDS:
            subsets = [frozenset(), frozenset(guards)]
        else:
            subsets = [frozenset(c) for n in range(len(guards) + 1)
                       for c in combinations(guards, n)]
        return [(s, tuple(p for p in self.params if p.guard == ALWAYS or p.guard in s))
                for s in subsets]

    @property
    def always(self) -> tuple[_Param, ...]:
        return tuple(p for p in self.params if p.guard == ALWAYS)

    @property
    def conditional(self) -> bool:
        return any(p.guard != ALWAYS for p in self.params)


@dataclass(frozen=True)
class _Site:
    """One copy: a static list or a launch() call, with the builder it restates."""

    subject: str
    kind: str  # "list" or "launch"
    path: str
    line: int
    builder: _Builder | None
    how: str
    entries: tuple[tuple[str | None, int | None, str | None, int], ...] = ()
    arguments: tuple[str, ...] = ()
    dynamic: bool = False

    def raw(self) -> tuple[Any, ...]:
        """Everything the comparison reads; equal raw data means an equal verdict."""
        builder = None if self.builder is None else (
            self.builder.node,
            tuple((p.name, p.kind, p.guard, p.type_text) for p in self.builder.params))
        copy = tuple(e[:3] for e in self.entries) if self.kind != "launch" else self.arguments
        return (builder, copy, self.dynamic)

    def abi(self) -> tuple[Any, ...]:
        """The argument list itself: names, kinds, sizes, conditions; launch counts."""
        builder = None if self.builder is None else tuple(
            (p.name, p.kind, p.guard) for p in self.builder.params)
        copy = tuple(e[:3] for e in self.entries) if self.kind != "launch" else len(
            self.arguments)
        return (builder, copy)


@dataclass
class _Verdict:
    status: str  # "agree", "conditional", "unresolved", "mismatch"
    reason: str
    hops: list[Hop] = field(default_factory=list)


# ------------------------------------------------------------------- reading the graph


def _resolve_type(graph: SymbolGraph, module: str, text: str,
                  depth: int = 0) -> tuple[str, int] | None:
    """(kind, size) of a b.param type: PtrType(...) is a pointer whatever it points to;
    scalar names map by table; a name bound by a simple module-level assignment (or
    imported from one) is followed. None when it cannot be settled."""
    text = text.strip()
    if _PTR_CALL.search(text):
        return _POINTER
    if not _NAME.match(text) or depth > 5:
        return None
    last = text.rsplit(".", 1)[-1]
    if last in _SCALARS:
        return _SCALARS[last]
    target = graph.resolve(module, text)
    if target is None or target not in graph.graph:
        return None
    data = graph.graph.nodes[target]
    if data.get("kind") != "assignment" or len(data.get("sites", [])) != 1:
        return None
    value = data["sites"][0].get("value")
    if not isinstance(value, str):
        return None
    return _resolve_type(graph, str(data.get("module")), value, depth + 1)


def _builder(graph: SymbolGraph, node: str | None) -> _Builder | None:
    if node is None or node not in graph.graph:
        return None
    data = graph.graph.nodes[node]
    params = sorted(data.get("params") or [], key=lambda p: p["index"])
    if not params:
        return None
    module = node.split(":", 2)[1]
    path = str(data.get("path") or "")
    sites = data.get("sites") or []
    line = int(sites[0]["line"]) if sites else int(params[0]["line"])
    return _Builder(node, path, line, tuple(
        _Param(str(p["param"]), _resolve_type(graph, module, str(p.get("type") or "")),
               str(p.get("guard") or ALWAYS), int(p["line"]), str(p.get("type") or ""))
        for p in params))


def _param_builders(graph: SymbolGraph) -> list[_Builder]:
    return [b for b in (_builder(graph, n) for n in graph.builders()) if b is not None]


def _closest(names: list[str], builders: list[_Builder]) -> _Builder | None:
    """The b.param builder sharing the most names (at least two and half the list's)."""
    scored = []
    for builder in builders:
        own = [p.name for p in builder.params]
        common = len(set(names) & set(own))
        if common >= 2 and common * 2 >= len(names):
            scored.append((-common, abs(len(own) - len(names)), builder.node, builder))
    return min(scored, key=lambda s: s[:3])[3] if scored else None


def _list_pairing(graph: SymbolGraph, node: str, names: list[str], builders: list[_Builder],
                  sticky: str | None) -> tuple[_Builder | None, str]:
    """Declared or name-equal `restates` edge to a b.param builder first; else the builder
    the list restated at the old revision, if it is still there; else the closest one."""
    for _u, target, key, attrs in graph.graph.out_edges(node, keys=True, data=True):
        if key == "restates" and attrs.get("how") in ("declared", "names"):
            found = _builder(graph, target)
            if found is not None:
                return found, str(attrs["how"])
    if sticky is not None:
        found = _builder(graph, sticky)
        if found is not None:
            return found, "as at the base"
        module_path = graph.module_path(sticky.split(":")[1])
        if module_path is not None and module_path in graph.parse_failures:
            # Its builder's file no longer parses: pairing it with some other builder
            # would invent a disagreement. The surface row reports the file as changed.
            return None, "builder unreadable"
    found = _closest(names, builders)
    return found, "closest"


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORDS.findall(text)} - _GENERIC_WORDS


def _sites(ctx: CheckContext, graph: SymbolGraph,
           sticky: dict[str, str]) -> dict[str, _Site]:
    """Every list and launch() copy in `graph`, each with the builder it restates.
    `sticky` maps a list subject to the builder it restated at the old revision."""
    builders = _param_builders(graph)
    nodes = dict(graph.graph.nodes(data=True))
    sites: dict[str, _Site] = {}
    for node, data in sorted(nodes.items()):
        if data.get("kind") != "kernel-argument-list":
            continue
        entries = tuple((e.get("kind"), e.get("size"), e.get("name"), int(e.get("line") or 0))
                        for e in data.get("entries", []))
        names = [str(e[2]) for e in entries]
        subject = node.removeprefix("cpplist:")
        builder, how = _list_pairing(graph, node, names, builders, sticky.get(subject))
        if builder is None:
            continue
        sites[subject] = _Site(subject, "list", str(data["path"]), int(data.get("line") or 0),
                               builder, how, entries=entries, dynamic=bool(data.get("dynamic")))
    sites.update(_kpack_sites(graph, builders, sticky))
    sites.update(_aot_sites(graph))
    declared = _declared_launches(ctx, graph)
    lists_by_file: dict[str, list[_Site]] = {}
    for site in sites.values():
        lists_by_file.setdefault(site.path, []).append(site)
    launches = sorted(((n, d) for n, d in nodes.items() if d.get("kind") == "launch-call"),
                      key=lambda nd: (str(nd[1]["path"]), int(nd[1].get("line") or 0)))
    for node, data in launches:
        path = str(data["path"])
        symbols = {f"{data.get('class')}::{data.get('function')}", str(data.get("function"))}
        builder, how = None, ""
        for symbol in symbols:
            if (path, symbol) in declared:
                builder, how = _builder(graph, declared[(path, symbol)]), "declared"
                if builder is not None:
                    break
        if builder is None:
            peers = [n for n, d in launches if d["path"] == path]
            builder, how = _launch_by_list(str(data.get("receiver") or ""),
                                           peers.index(node), len(peers),
                                           sorted(lists_by_file.get(path, []),
                                                  key=lambda s: s.line))
        if builder is None:
            continue
        subject = node.removeprefix("launch:")
        sites[subject] = _Site(subject, "launch", path, int(data.get("line") or 0), builder,
                               how, arguments=tuple(str(a) for a in data.get("arguments", [])))
    return sites


def _kpack_sites(graph: SymbolGraph, builders: list[_Builder],
                 sticky: dict[str, str]) -> dict[str, _Site]:
    """Packed descriptors' recorded signatures (`kind: kpack`), one copy per distinct
    signature in each descriptor file, paired with the builder their names match."""
    seen: dict[tuple[Any, ...], _Site] = {}
    for variant in graph.variants():
        data = graph.graph.nodes[variant]
        for launch in data.get("launches", []):
            signature = launch.get("signature")
            if launch.get("kind") != "kpack" or not isinstance(signature, list):
                continue
            line = int(data.get("line") or 0)
            entries = tuple((e.get("kind"), e.get("size"), e.get("name"), line)
                            for e in signature if isinstance(e, dict))
            key = (str(data["path"]), tuple(e[:3] for e in entries))
            if key in seen:
                continue
            subject = f"{data['path']}:kpack-signature:{variant.rsplit(':', 1)[-1]}"
            names = [str(e[2]) for e in entries]
            builder = next((b for b in builders if b.node == sticky.get(subject)), None)
            how = "base pairing" if builder is not None else "closest names"
            builder = builder or _closest(names, builders)
            if builder is None:
                continue
            seen[key] = _Site(subject, "list", str(data["path"]), line, builder, how,
                              entries=entries)
    return {site.subject: site for site in seen.values()}


# family.json type names -> (kind, size); anything else cannot be compared.
_AOT_TYPES = {"ptr": _POINTER, "pointer": _POINTER, "f32": ("by_value", 4),
              "i32": ("by_value", 4), "u32": ("by_value", 4), "i64": ("by_value", 8),
              "u64": ("by_value", 8), "f64": ("by_value", 8), "f16": ("by_value", 2),
              "bf16": ("by_value", 2)}


def _aot_sites(graph: SymbolGraph) -> dict[str, _Site]:
    """AOT catalog `args_signature` lists, paired with the b.param builder their family's
    producer script reaches (names differ by design there: compared by position)."""
    nodes = dict(graph.graph.nodes(data=True))
    sites = {}
    for node, data in sorted(nodes.items()):
        if data.get("kind") != "aot-kernel":
            continue
        folder = posixpath.dirname(str(data["path"]))
        producers = [n for n, d in nodes.items() if d.get("kind") == "function"
                     and posixpath.dirname(str(d.get("path"))) == folder]
        # The builder a producer calls itself, before any it reaches through others.
        reached = sorted({t for n in producers for t in graph.edges_of(n, {"reads"})
                          if nodes.get(t, {}).get("params")}) or sorted(
            {t for n in producers for t in graph.reach(n) if nodes.get(t, {}).get("params")})
        builder = _builder(graph, reached[0]) if reached else None
        if builder is None:
            continue
        line = int(data.get("line") or 0)
        entries = tuple((*_AOT_TYPES.get(str(a["type"]).lower(), (None, None)), a["name"], line)
                        for a in data.get("args", []))
        subject = node.removeprefix("aot:")
        sites[subject] = _Site(subject, "positional", str(data["path"]), line, builder,
                               "producer", entries=entries)
    return sites


def _compare_positional(site: _Site) -> _Verdict:
    """A list whose names are its own (family.json): count, then kind and size by position."""
    assert site.builder is not None
    for switched, params in site.builder.candidates():
        if len(params) != len(site.entries):
            continue
        for param, entry in zip(params, site.entries, strict=True):
            if entry[0] is None:
                return _Verdict("unresolved", f"type of {entry[2]!r} is not one impact knows: "
                                "kind and size not compared")
            if param.kind is None:
                return _Verdict("unresolved", f"type of {param.name!r} could not be resolved")
            if (entry[0], entry[1]) != param.kind:
                return _Verdict("mismatch", f"argument {entry[2]!r} is {entry[0]}/{entry[1]}, "
                                f"the builder's {param.name!r} is {param.kind[0]}/"
                                f"{param.kind[1]}")
        if switched == site.builder.candidates()[-1][0]:
            return _Verdict("agree", "argument list agrees with the builder by position")
        return _Verdict("conditional", "list agrees with the builder when its conditional "
                        "arguments are off")
    counts = sorted({len(params) for _s, params in site.builder.candidates()})
    return _Verdict("mismatch", f"args_signature has {len(site.entries)} arguments, the "
                    f"builder declares {' or '.join(map(str, counts))}")


def _declared_launches(ctx: CheckContext, graph: SymbolGraph) -> dict[tuple[str, str], str]:
    """(cpp file, mirror symbol) -> builder node, from profile launch_surface entries."""
    out = {}
    roots = list(ctx.surface.python_roots)
    for _node, data in graph.graph.nodes(data=True):
        mirror, source = data.get("cpp_mirror"), data.get("python_source")
        if data.get("kind") != "launch-surface" or not isinstance(mirror, dict) \
                or not isinstance(source, dict) or not source.get("symbol"):
            continue
        module = module_name_for(str(source.get("file")), roots)
        if module and mirror.get("file") and mirror.get("symbol"):
            out[(str(mirror["file"]), str(mirror["symbol"]))] = symbol_node(
                module, str(source["symbol"]))
    return out


def _launch_by_list(receiver: str, position: int, launches: int,
                    lists: list[_Site]) -> tuple[_Builder | None, str]:
    """The builder of the list in the same pack that this launch passes: the only list;
    else the one whose name shares words with the launcher (segment with segment);
    else the list in the same position in the file."""
    statics = [s for s in lists if s.builder is not None]
    if len(statics) == 1:
        return statics[0].builder, "same pack"
    if not statics:
        return None, ""
    words = _words(receiver)
    scored = sorted(((len(words & _words(s.subject.rsplit(":", 1)[-1])), -i)
                     for i, s in enumerate(statics)), reverse=True)
    if scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
        return statics[-scored[0][1]].builder, "launcher name"
    if launches == len(statics):
        return statics[position].builder, "order in the pack"
    return None, ""


# ------------------------------------------------------------------------ comparing


def _describe_names(want: list[str], have: list[str], python_changed: bool,
                    cpp_changed: bool) -> str:
    """A reviewer's phrase for two name lists that differ."""
    extra_py = [n for n in want if n not in have]
    extra_cpp = [n for n in have if n not in want]
    if not extra_py and not extra_cpp:
        return "argument order differs"
    if extra_py and not extra_cpp:
        names = ", ".join(repr(n) for n in extra_py)
        if cpp_changed and not python_changed:
            return f"argument removed on the C++ side only: {names}"
        return f"argument added on the Python side only: {names}"
    if extra_cpp and not extra_py:
        names = ", ".join(repr(n) for n in extra_cpp)
        if python_changed and not cpp_changed:
            return f"argument removed on the Python side only: {names}"
        return f"argument added on the C++ side only: {names}"
    return f"argument names differ: {extra_cpp[0]!r} where the builder has {extra_py[0]!r}"


def _compare_list(site: _Site, python_changed: bool, cpp_changed: bool) -> _Verdict:
    assert site.builder is not None
    have = [str(e[2]) for e in site.entries]
    candidates = site.builder.candidates()
    all_guards = candidates[-1][0]
    for switched, params in candidates:
        if [p.name for p in params] != have:
            continue
        for param, entry in zip(params, site.entries, strict=True):
            if param.kind is None:
                return _Verdict("unresolved", f"type of {param.name!r} could not be resolved "
                                f"({param.type_text}): kind and size not compared",
                                [Hop(site.builder.path, param.line,
                                     f"b.param {param.name!r} has type {param.type_text}")])
            if (entry[0], entry[1]) != param.kind:
                return _Verdict("mismatch", f"kind or size differs for {param.name!r}", [
                    Hop(site.builder.path, param.line,
                        f"b.param {param.name!r} is {param.kind[0]}/{param.kind[1]}"),
                    Hop(site.path, entry[3], f"KernelArgument {param.name!r} is "
                        f"{entry[0]}/{entry[1]}")])
        if switched == all_guards:
            return _Verdict("agree", "argument list agrees with the builder")
        return _Verdict("conditional", "list agrees with the builder when its conditional "
                        "arguments are off", [Hop(site.builder.path, p.line,
                                                  f"b.param {p.name!r} only if {p.guard}")
                                              for p in site.builder.params
                                              if p.guard != ALWAYS and p.guard not in switched])
    best = min(candidates, key=lambda c: (len({p.name for p in c[1]} ^ set(have)),
                                          abs(len(c[1]) - len(have)), len(c[1])))[1]
    want = [p.name for p in best]
    return _Verdict("mismatch", _describe_names(want, have, python_changed, cpp_changed))


def _compare_launch(site: _Site) -> _Verdict:
    assert site.builder is not None
    count = len(site.arguments)
    counts = {len(params): switched for switched, params in site.builder.candidates()}
    always = len(site.builder.always)
    if count in counts:
        if counts[count] == site.builder.candidates()[-1][0]:
            return _Verdict("agree", "launch() passes as many arguments as the builder declares")
        return _Verdict("conditional", "launch() passes the builder's arguments with its "
                        "conditional ones off")
    return _Verdict("mismatch", f"launch() passes {count} arguments, the builder declares "
                    f"{always}")


# -------------------------------------------------------------------------- the check


class KernargsCheck:
    """What it checks:
        Each `b.param` builder against every hand-kept copy of its argument list: the
        static `KernelArgument` lists of the native packs, literal lists in C++ test pins,
        the signatures packed descriptors record (`kind: kpack`, one copy per distinct
        signature in a descriptor file), and the positional `launch()` call. Lists are
        compared by count, order, name, kind and size (a `PtrType(...)` is
        global_buffer/8; F32, I32 by_value/4; I64 by_value/8; F16, BF16 by_value/2); a
        launch() call by its argument count. A list is paired with
        the builder its graph `restates` edge names (declared in a profile, else equal
        names), else the builder it restated at the base, else the closest b.param
        builder; a launch() with the profile's declared builder, else the list of its own
        pack (by launcher name, then by order, in packs with several launches).

    Why a break hurts at run time:
        The kernel reads its arguments by position from one packed buffer. A copy with an
        extra, missing, reordered or resized entry makes the kernel read garbage pointers
        or scalars: a fault or silently wrong output on the GPU, never a build error.

    Example:
        Breaks: head adds `dropout_seed = b.param("dropout_seed", I32)` to
        build_attention_dense() but not to attentionDenseKernelSignature(), the test pin or
        launch() (`mismatch`). Does not break: head adds it to all three (`changed`: the
        ABI changed consistently and needs a device run); an argument added under
        `if spec.use_sinks:` that the lists leave out (`changed`).

    When it says changed instead:
        A copy that agrees with the builder only when its conditional arguments are off; a
        builder parameter whose type cannot be resolved; a list built by helper calls
        (`push_back`, a non-literal initializer), which is not compared; a builder the list
        restated at the base that is gone. A mismatch the base already had, on sides whose
        arguments the change did not touch, is listed as pre-existing.

    Evidence:
        Both sides as file:line (the side in the change `changed`, the other
        `counterpart`); hops from the b.param lines added or removed to the copy (its entry
        count or launch argument count), the entry that differs, how the pair was made, and
        the shipped variants that build the builder.
    """

    name: ClassVar[str] = "kernargs"
    surfaces: ClassVar[frozenset[str]] = frozenset({"rocke-library", "ingestor-pack", "test-pin"})

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            yield from self._view(ctx, view)

    def _view(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        old_graph, new_graph = ctx.graph(view.old), ctx.graph(view.new)
        old_sites = _sites(ctx, old_graph, {})
        sticky = {s: site.builder.node for s, site in old_sites.items()
                  if site.kind == "list" and site.builder is not None}
        new_sites = _sites(ctx, new_graph, sticky)
        touched = set(view.diff.paths)
        for subject in sorted(new_sites):
            row = self._row(ctx, view, new_graph, old_sites.get(subject), new_sites[subject],
                            touched)
            if row is not None:
                yield row
        for subject in sorted(set(old_sites) - set(new_sites)):
            old = old_sites[subject]
            if old.kind != "list" or old.builder is None:
                continue
            still = any(n.endswith(f":{subject}") for n in new_graph.graph.nodes)
            if still and (old.path in touched or old.builder.path in touched):
                yield self._make(ctx, view, old, Status.CHANGED,
                                 f"the builder this list restated ({old.builder.name}) is "
                                 "gone", [], touched, compared=False)

    def _row(self, ctx: CheckContext, view: View, graph: SymbolGraph, old: _Site | None,
             new: _Site, touched: set[str]) -> Row | None:
        assert new.builder is not None
        python_changed = new.builder.path in touched
        cpp_changed = new.path in touched
        side_touched = python_changed or cpp_changed
        raw_changed = old is None or old.raw() != new.raw()
        if new.dynamic:
            if not (side_touched and raw_changed):
                return None
            return self._make(ctx, view, new, Status.CHANGED,
                              "list built by helper calls: not compared",
                              self._hops(graph, old, new), touched, compared=False)
        compare = {"list": lambda s: _compare_list(s, python_changed, cpp_changed),
                   "positional": _compare_positional}.get(new.kind, _compare_launch)
        verdict = compare(new)
        hops = self._hops(graph, old, new) + verdict.hops
        if verdict.status == "mismatch":
            reason = verdict.reason
            if new.how == "closest":
                reason = f"{reason} (paired by closest names with {new.builder.name})"
            charged = side_touched and raw_changed
            return self._make(ctx, view, new, Status.MISMATCH, reason, hops, touched,
                              preexisting=not charged)
        if not (side_touched and raw_changed):
            return None  # untouched, or a body edit the surface check already reports
        if verdict.status == "unresolved":
            return self._make(ctx, view, new, Status.CHANGED, verdict.reason, hops, touched)
        if old is not None and old.abi() == new.abi():
            return self._make(ctx, view, new, Status.INERT,
                              "argument list unchanged and still agrees", hops, touched)
        reason = verdict.reason
        if old is not None and old.abi()[1] != new.abi()[1]:
            reason = "argument list changed on both sides consistently"
            if verdict.status == "conditional":
                reason += " (conditional arguments left out)"
        return self._make(ctx, view, new, Status.CHANGED, reason, hops, touched)

    def _hops(self, graph: SymbolGraph, old: _Site | None, new: _Site) -> list[Hop]:
        assert new.builder is not None
        builder = new.builder
        hops: list[Hop] = []
        before = {p.name: p for p in (old.builder.params if old and old.builder else ())}
        after = {p.name: p for p in builder.params}
        if old is not None and old.builder is not None:
            for param in builder.params:
                if param.name not in before:
                    hops.append(Hop(builder.path, param.line, f"b.param {param.name!r} added"))
                elif before[param.name].guard != param.guard:
                    hops.append(Hop(builder.path, param.line,
                                    f"b.param {param.name!r} now under {param.guard}"))
            for name in before:
                if name not in after:
                    hops.append(Hop(builder.path, builder.line, f"b.param {name!r} removed"))
        if new.how not in ("declared", "names"):
            hops.append(Hop(new.path, new.line, f"paired with {builder.name} ({new.how})"))
        if new.kind == "list":
            hops.append(Hop(new.path, new.line,
                            f"KernelArgument list has {len(new.entries)} entries"))
        else:
            hops.append(Hop(new.path, new.line,
                            f"launch() passes {len(new.arguments)} arguments"))
        hops.append(Hop(builder.path, builder.line,
                        f"{builder.name} declares {len(builder.always)} arguments always, "
                        f"{len(builder.params)} in all"))
        for variant in sorted(graph.edges_of(builder.node, {"builds"}, reverse=True))[:3]:
            data = graph.graph.nodes[variant]
            hops.append(Hop(str(data.get("path") or ""), int(data.get("line") or 0),
                            f"variant {variant.rsplit(':', 1)[-1]} builds it"))
        return hops

    def _make(self, ctx: CheckContext, view: View, site: _Site, status: Status, reason: str,
              hops: list[Hop], touched: set[str], *, preexisting: bool = False,
              compared: bool = True) -> Row:
        assert site.builder is not None and view.new is not None
        builder = site.builder
        sides = (
            Side(site.path, site.line, view.name,
                 "changed" if site.path in touched else "counterpart",
                 site.subject.rsplit(":", 1)[-1]),
            Side(builder.path, builder.line, view.name,
                 "changed" if builder.path in touched else "counterpart", builder.name),
        )
        snapshot = view.new if builder.path in view.new else view.old
        return Row(contract=self.name, view=view.name, subject=site.subject, status=status,
                   reason=reason, archs=ctx.archs_for(builder.path, snapshot), sides=sides,
                   evidence=tuple(hops), preexisting=preexisting,
                   details={"site": site.kind, "builder": builder.node, "paired": site.how,
                            "compared": compared})
