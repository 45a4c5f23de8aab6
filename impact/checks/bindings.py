"""Python op stubs and call sites <-> pybind / TORCH_LIBRARY bindings <-> C++ functions."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.facts import Fact
from impact.git import Snapshot, View
from impact.rows import Hop, Row, Side, Status

_KINDS = ("op-python", "op-cpp", "op-sources-map")
_VAR_KINDS = ("var-positional", "var-keyword")


@dataclass(frozen=True)
class _Site:
    path: str
    line: int
    data: dict[str, Any]


@dataclass
class _Copies:
    """Every restatement of every bound symbol in one snapshot."""

    stubs: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    calls: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    pybind: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    schemas: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    boxed: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    impls: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    cpp: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    modules: dict[str, _Site] = field(default_factory=dict)
    unreadable: list[_Site] = field(default_factory=list)
    has_sources_map: bool = False

    def add(self, path: str, fact: Fact) -> None:
        site = _Site(path, fact.line, dict(fact.data))
        table = {"op-stub": self.stubs, "op-call": self.calls, "pybind-def": self.pybind,
                 "schema-def": self.schemas, "boxed-read": self.boxed,
                 "torch-impl": self.impls, "cpp-function": self.cpp}.get(fact.kind)
        if fact.kind == "op-stub":
            self.stubs[str(fact.data.get("symbol") or fact.name)].append(site)
        elif table is not None:
            table[fact.name].append(site)
        elif fact.kind == "op-module":
            self.modules[fact.name] = site
            self.has_sources_map = True
        elif fact.kind == "binding-unreadable":
            self.unreadable.append(site)

    def symbols(self) -> set[str]:
        return set(self.stubs) | set(self.pybind) | set(self.schemas)


@dataclass(frozen=True)
class _Problem:
    """A disagreement between copies of one symbol: `key` identifies it across revisions."""

    key: str
    reason: str
    sites: tuple[_Site, ...]
    soft: bool = False  # `changed`, not `mismatch`: only a run can tell


def _copies(ctx: CheckContext, snapshot: Snapshot, paths: set[str]) -> _Copies:
    copies = _Copies()
    for path in sorted(paths):
        if path in snapshot:
            for fact in ctx.facts(snapshot, path):
                copies.add(path, fact)
    return copies


def _names(facts: Iterable[Fact]) -> set[str]:
    """Every symbol and C++ function a file's binding facts name."""
    found: set[str] = set()
    for fact in facts:
        if fact.kind in ("op-stub", "op-call", "pybind-def", "schema-def", "torch-impl",
                         "cpp-function"):
            found.add(fact.name)
            for key in ("symbol", "function"):
                value = fact.data.get(key)
                if isinstance(value, str):
                    found.add(value)
    return {name for name in found if name.isidentifier()}


def _relevant_paths(ctx: CheckContext, view: View, touched: set[str]) -> set[str]:
    """The touched files and every file that restates a name they bind: found by a text
    search of the blobs, so only those files are parsed, not the whole tree."""
    assert view.new is not None
    snapshots = (view.old, view.new)
    candidates = {p for snap in snapshots for p in snap
                  if ctx.surface.describe(p).kind in _KINDS}
    maps = {p for p in candidates if ctx.surface.describe(p).kind == "op-sources-map"}
    symbols = {n for snap in snapshots for p in touched if p in snap
               for n in _names(ctx.facts(snap, p))}
    paths = set(touched) | maps | _containing(candidates, snapshots, symbols)
    # Then the C++ functions those symbols are bound to, wherever they are declared.
    bound = {str(f.data["function"]) for snap in snapshots for p in paths if p in snap
             for f in ctx.facts(snap, p)
             if f.kind in ("pybind-def", "torch-impl") and f.name in symbols
             and isinstance(f.data.get("function"), str)} - symbols
    return paths | _containing(candidates - paths, snapshots, bound)


def _containing(candidates: set[str], snapshots: tuple[Snapshot, ...], names: set[str]
                ) -> set[str]:
    """The candidate files whose text mentions one of `names` as a whole word."""
    names = {n for n in names if n.isidentifier()}
    if not names:
        return set()
    pattern = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(names))
                         + rb")\b")
    found = set()
    for path in candidates:
        for snap in snapshots:
            if path not in snap:
                continue
            try:
                hit = pattern.search(snap.read(path)) is not None
            except Exception:  # a blob missing from a partial clone: compare it, unread
                hit = True
            if hit:
                found.add(path)
                break
    return found


def _param_names(stub: _Site) -> list[str]:
    return [p["name"] for p in stub.data.get("params", []) if p.get("kind") not in _VAR_KINDS]


def _near(sites: list[_Site], path: str) -> list[_Site]:
    """Sites in the same folder as `path` when there are any (each backend's own copy)."""
    here = [s for s in sites if posixpath.dirname(s.path) == posixpath.dirname(path)]
    return here or sites


def _compare_lists(symbol: str, stub: _Site, bind: _Site, keyword_callers: set[str]
                   ) -> Iterator[_Problem]:
    names = _param_names(stub)
    args = bind.data["args"]
    arg_names = [a["name"] for a in args]
    pair = (stub, bind)
    if len(names) != len(arg_names):
        yield _Problem(f"{symbol}:count:stub", f"the stub declares {len(names)} parameters, "
                       f"the py::arg list {len(arg_names)}", pair)
        return
    if names != arg_names and sorted(names) == sorted(arg_names):
        yield _Problem(f"{symbol}:order:stub", "same names in another order: arguments swap "
                       "silently", pair)
        return
    for index, (mine, theirs) in enumerate(zip(names, arg_names, strict=True)):
        if mine != theirs:
            broken = mine in keyword_callers or theirs in keyword_callers
            yield _Problem(f"{symbol}:name:{index}", f"parameter {index} is '{mine}' in the "
                           f"stub and '{theirs}' in py::arg"
                           + ("" if broken else " (no caller passes it by keyword yet)"),
                           pair, soft=not broken)
    params = {p["name"]: p for p in stub.data.get("params", [])}
    for arg in args:
        stub_default = params.get(arg["name"], {}).get("default") is not None
        if arg["name"] in params and stub_default != bool(arg.get("has_default")):
            side = "stub" if stub_default else "py::arg list"
            yield _Problem(f"{symbol}:default:{arg['name']}", f"'{arg['name']}' has a default "
                           f"in the {side} only", pair)


def _compare_cpp(symbol: str, count: int, what: str, origin: _Site, functions: list[_Site]
                 ) -> Iterator[_Problem]:
    """A binding's argument count against every C++ declaration and definition it binds."""
    for function in functions:
        params = function.data.get("params", [])
        always = [p for p in params if not p.get("conditional")]
        if count in (len(params), len(always)) and len(params) != len(always):
            yield _Problem(f"{symbol}:conditional:{function.path}", f"{what} fits the C++ "
                           f"parameter list only with its #if-guarded parameters "
                           f"{'on' if count == len(params) else 'off'}", (origin, function),
                           soft=True)
        elif count not in (len(params), len(always)):
            yield _Problem(f"{symbol}:cpp:{function.path}", f"{what} has {count} arguments, "
                           f"the C++ function {len(params)}", (origin, function))


def _problems(symbol: str, copies: _Copies) -> list[_Problem]:
    problems: list[_Problem] = []
    stubs = copies.stubs.get(symbol, [])
    binds = copies.pybind.get(symbol, [])
    schemas = copies.schemas.get(symbol, [])
    calls = [c for c in copies.calls.get(symbol, [])
             if not str(c.data.get("receiver", "")).startswith("torch.ops")]
    keyword_callers = {k for c in copies.calls.get(symbol, []) for k in c.data.get("keywords", [])}
    for stub in stubs:
        module = stub.data.get("module")
        if copies.has_sources_map and module and module not in copies.modules:
            problems.append(_Problem(f"{symbol}:module", f"module '{module}' is missing from "
                                     "the sources map", (stub,)))
        if stub.data.get("ffi_type") == "ctypes":
            entries = [f for f in copies.cpp.get(symbol, []) if f.data.get("extern_c")]
            if not entries:
                problems.append(_Problem(f"{symbol}:unbound", "ctypes stub with no extern \"C\" "
                                         "entry point", (stub,)))
            problems += _compare_cpp(symbol, len(_param_names(stub)), "the ctypes stub", stub,
                                     entries)
            continue
        if not binds and not schemas:
            problems.append(_Problem(f"{symbol}:unbound", "stub with no binding of that name",
                                     (stub,)))
        for bind in binds:
            if bind.data.get("args") is not None:
                problems += _compare_lists(symbol, stub, bind, keyword_callers)
    if binds and not stubs and not copies.calls.get(symbol) and _stub_style(copies):
        problems.append(_Problem(f"{symbol}:python-missing", "bound in C++ with no Python "
                                 "stub or caller of that name", tuple(binds)))
    for bind in binds:
        function = bind.data.get("function")
        functions = _near(copies.cpp.get(function, []), bind.path) if function else []
        if bind.data.get("args") is not None:
            problems += _compare_cpp(symbol, len(bind.data["args"]), "the py::arg list", bind,
                                     functions)
            continue
        # No py::arg: calls are positional and pybind ignores C++ default arguments.
        callers = [(s, len(_param_names(s))) for s in stubs] + [
            (c, int(c.data.get("positional", 0)) + len(c.data.get("keywords", [])))
            for c in calls if int(c.data.get("positional", 0)) >= 0]
        for caller, count in callers:
            for problem in _compare_cpp(symbol, count, "the Python caller", caller, functions):
                problems.append(_Problem(f"{problem.key}:{caller.path}",
                                         problem.reason + " (pybind ignores C++ defaults)",
                                         problem.sites, problem.soft))
    for schema in schemas:
        args = (schema.data.get("schema") or {}).get("args", [])
        for other in schemas:
            other_args = (other.data.get("schema") or {}).get("args", [])
            if other.path > schema.path and other_args != args:
                problems.append(_Problem(f"{symbol}:schema:{other.path}", "the schema differs "
                                         "between registrations", (schema, other)))
        for boxed in (b for sites in copies.boxed.values() for b in sites
                      if b.path == schema.path):
            if int(boxed.data.get("max_index", -1)) + 1 != len(args):
                problems.append(_Problem(f"{symbol}:boxed:{boxed.path}", f"the boxed wrapper "
                                         f"reads {int(boxed.data['max_index']) + 1} stack slots, "
                                         f"the schema has {len(args)}", (schema, boxed)))
        for impl in copies.impls.get(symbol, []):
            functions = _near(copies.cpp.get(str(impl.data.get("function")), []), impl.path)
            problems += _compare_cpp(symbol, len(args), "the schema", schema, functions)
        required = sum(1 for a in args if a.get("default") is None)
        names = {a["name"] for a in args}
        for call in copies.calls.get(symbol, []):
            if not str(call.data.get("receiver", "")).startswith("torch.ops"):
                continue
            given = int(call.data.get("positional", 0)) + len(call.data.get("keywords", []))
            unknown = set(call.data.get("keywords", [])) - names - {"**"}
            if unknown or not required <= given <= len(args):
                problems.append(_Problem(f"{symbol}:call:{call.path}:{call.data.get('function')}",
                                         f"the call passes {given} arguments"
                                         + (f" and unknown keywords {sorted(unknown)}"
                                            if unknown else "")
                                         + f"; the schema takes {required} to {len(args)}",
                                         (call, schema)))
    return problems


def _stub_style(copies: _Copies) -> bool:
    """Whether this tree declares its Python side as stubs (aiter), so a binding without
    one is a half-removed op; trees that only call their extensions (flash-attention) are
    not held to that."""
    return any(copies.stubs.values())


def _signature(symbol: str, copies: _Copies) -> str:
    """Everything that states the symbol's argument list, for 'did it change at all'."""
    parts = [repr(sorted(str(s.data.get("params")) for s in copies.stubs.get(symbol, [])))]
    parts.append(repr(sorted(str(b.data.get("args")) for b in copies.pybind.get(symbol, []))))
    parts.append(repr(sorted(str(s.data.get("schema")) for s in copies.schemas.get(symbol, []))))
    functions = {b.data.get("function") for b in copies.pybind.get(symbol, [])} | {
        i.data.get("function") for i in copies.impls.get(symbol, [])} | {symbol}
    parts.append(repr(sorted(str(f.data.get("params")) for name in functions if name
                             for f in copies.cpp.get(name, []))))
    parts.append(repr(sorted((c.data.get("positional"), tuple(c.data.get("keywords", [])))
                             for c in copies.calls.get(symbol, []))))
    return "\x00".join(parts)


def _files(symbol: str, copies: _Copies) -> set[str]:
    sites = [*copies.stubs.get(symbol, []), *copies.pybind.get(symbol, []),
             *copies.schemas.get(symbol, []), *copies.calls.get(symbol, []),
             *copies.impls.get(symbol, [])]
    functions = {s.data.get("function") for s in sites} | {symbol}
    sites += [f for name in functions if name for f in copies.cpp.get(name, [])]
    if copies.has_sources_map:
        sites += list(copies.modules.values())
    return {s.path for s in sites}


class BindingsCheck:
    """What it checks:
        For each bound symbol, every copy of its argument list against every other: the
        Python stub (`@compile_ops`) and its callers, the `py::arg` list or the
        TORCH_LIBRARY schema, the boxed wrapper's stack reads, and the C++ declarations
        and definitions of every backend (CUDA and ROCm CK each bind the same call); and
        each stub's module against the module -> sources map.

    Why a break hurts at run time:
        The lists are written two to four times by hand. A count mismatch is a TypeError
        at the first call; two same-typed arguments swapped, or a C++ default that pybind
        ignores, silently passes the wrong values.

    Example:
        Breaks: a stub drops a parameter its `py::arg` list keeps; a fix to the CUDA
        `mha_fwd` that adds a parameter the CK copy does not. Does not break: the same
        change made on every side, or a comment edit.

    When it says changed instead:
        A parameter that exists only under `#if` in C++; a name that differs between the
        stub and `py::arg` while no caller passes it by keyword; a binding the parser
        cannot read (a macro it cannot expand, a schema it cannot parse). A list changed
        alike on every side is `inert`: every copy agrees.

    Evidence:
        Both copies as file:line, the changed side first, and what disagrees.
    """

    name: ClassVar[str] = "bindings"
    surfaces: ClassVar[frozenset[str]] = frozenset({"op-python", "op-cpp", "op-sources-map"})

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            yield from self._view(ctx, view)

    def _view(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        touched = {p for p in view.diff.paths if ctx.surface.describe(p).kind in _KINDS}
        if not touched:
            return
        paths = _relevant_paths(ctx, view, touched)
        old, new = _copies(ctx, view.old, paths), _copies(ctx, view.new, paths)
        blind = False  # a copy we could not read may hold the binding we call missing
        for path in sorted(paths):
            for snap in (view.old, view.new):
                failure = ctx.parse_failure(ctx.facts(snap, path)) if path in snap else None
                blind = blind or failure is not None
                if failure is not None and path not in touched:
                    yield self._row(ctx, view, f"unreadable-copy:{path}", Status.CHANGED,
                                    f"a copy could not be read: {failure.data.get('reason')}",
                                    (_Site(path, failure.line, {}),), touched)
                    break
        for site in new.unreadable:
            if site.path in touched:
                yield self._row(ctx, view, f"unreadable:{site.path}:{site.line}",
                                Status.CHANGED, f"binding not understood: "
                                f"{site.data.get('reason')}", (site,), touched)
        for symbol in sorted(old.symbols() | new.symbols()):
            files = _files(symbol, new) | _files(symbol, old)
            if not files & touched:
                continue
            before = {p.key: p for p in _problems(symbol, old)}
            after = _problems(symbol, new)
            for problem in after:
                soft = problem.soft or (blind and problem.key.endswith(":unbound"))
                status = Status.CHANGED if soft else Status.MISMATCH
                # The base had it too, on copies the change may merely sit beside: listed,
                # not charged.
                preexisting = problem.key in before and before[problem.key].reason == \
                    problem.reason
                yield self._row(ctx, view, problem.key, status, problem.reason, problem.sites,
                                touched, preexisting=preexisting)
            if not after and _signature(symbol, old) != _signature(symbol, new):
                sites = tuple(_Site(p, 0, {}) for p in sorted(files & touched))
                yield self._row(ctx, view, f"{symbol}:consistent", Status.INERT,
                                f"'{symbol}' changed on every side alike: all copies agree",
                                sites, touched)

    def _row(self, ctx: CheckContext, view: View, subject: str, status: Status, reason: str,
             sites: tuple[_Site, ...], touched: set[str], *, preexisting: bool = False) -> Row:
        assert view.new is not None
        ordered = sorted(sites, key=lambda s: (s.path not in touched, s.path, s.line))
        sides = tuple(Side(s.path, s.line, view.name,
                           "changed" if s.path in touched else "counterpart")
                      for s in ordered)
        archs = tuple(sorted({a for s in ordered for a in ctx.archs_for(s.path, view.new)}))
        return Row(contract=self.name, view=view.name, subject=subject, status=status,
                   reason=reason, archs=archs, sides=sides, preexisting=preexisting,
                   evidence=tuple(Hop(s.path, s.line, "restates the argument list")
                                  for s in ordered))
