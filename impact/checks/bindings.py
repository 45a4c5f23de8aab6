"""Python op stubs and call sites <-> pybind / TORCH_LIBRARY bindings <-> C++ functions."""

# Maintainers: reads facts through the CheckContext; which files to parse comes from the
# tree index (`files_naming`, the one raw-text search), never from reading blobs here. A
# side is `changed` when that copy's own facts for the symbol changed in the view.

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.facts import Fact
from impact.git import Snapshot, View
from impact.kinds import FactKind, SurfaceKind
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status

_KINDS = (SurfaceKind.OP_PYTHON, SurfaceKind.OP_CPP, SurfaceKind.OP_SOURCES_MAP)
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
        table = {FactKind.OP_STUB: self.stubs, FactKind.OP_CALL: self.calls,
                 FactKind.PYBIND_DEF: self.pybind, FactKind.SCHEMA_DEF: self.schemas,
                 FactKind.BOXED_READ: self.boxed, FactKind.TORCH_IMPL: self.impls,
                 FactKind.CPP_FUNCTION: self.cpp}.get(fact.kind)
        if fact.kind == FactKind.OP_STUB:
            self.stubs[str(fact.data.get("symbol") or fact.name)].append(site)
        elif table is not None:
            table[fact.name].append(site)
        elif fact.kind == FactKind.OP_MODULE:
            self.modules[fact.name] = site
            self.has_sources_map = True
        elif fact.kind == FactKind.BINDING_UNREADABLE:
            self.unreadable.append(site)

    def symbols(self) -> set[str]:
        return set(self.stubs) | set(self.pybind) | set(self.schemas)


@dataclass(frozen=True)
class _Problem:
    """A disagreement between copies of one symbol: `key` identifies it across revisions."""

    key: str
    reason: Reason
    details: dict[str, Any]
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
        if fact.kind in (FactKind.OP_STUB, FactKind.OP_CALL, FactKind.PYBIND_DEF,
                         FactKind.SCHEMA_DEF, FactKind.TORCH_IMPL, FactKind.CPP_FUNCTION):
            found.add(fact.name)
            for key in ("symbol", "function"):
                value = fact.data.get(key)
                if isinstance(value, str):
                    found.add(value)
    return {name for name in found if name.isidentifier()}


def _relevant_paths(ctx: CheckContext, view: View, touched: set[str]) -> set[str]:
    """The touched files and every file that restates a name they bind: picked by the tree
    index's name search, so only those files are parsed, not the whole tree."""
    assert view.new is not None
    snapshots = (view.old, view.new)
    maps = {p for snap in snapshots for p in ctx.paths(snap, SurfaceKind.OP_SOURCES_MAP)}
    symbols = {n for snap in snapshots for p in touched if p in snap
               for n in _names(ctx.facts(snap, p))}
    paths = set(touched) | maps | _naming(ctx, snapshots, symbols)
    # Then the C++ functions those symbols are bound to, wherever they are declared.
    bound = {str(f.data["function"]) for snap in snapshots for p in paths if p in snap
             for f in ctx.facts(snap, p)
             if f.kind in (FactKind.PYBIND_DEF, FactKind.TORCH_IMPL) and f.name in symbols
             and isinstance(f.data.get("function"), str)} - symbols
    return paths | _naming(ctx, snapshots, bound)


def _naming(ctx: CheckContext, snapshots: tuple[Snapshot, ...], names: set[str]) -> set[str]:
    """The op files of either snapshot that mention one of `names` (an unreadable file is
    always one: it is parsed, and reported unreadable)."""
    names = {n for n in names if n.isidentifier()}
    if not names:
        return set()
    return {p for snap in snapshots for p in ctx.index(snap).files_naming(names, _KINDS)}


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
        yield _Problem(f"{symbol}:count:stub", Reason.STUB_AND_PYARG_COUNTS_DIFFER,
                       {"stub_count": len(names), "arg_count": len(arg_names)}, pair)
        return
    if names != arg_names and sorted(names) == sorted(arg_names):
        yield _Problem(f"{symbol}:order:stub", Reason.ARGUMENTS_SWAPPED, {}, pair)
        return
    for index, (mine, theirs) in enumerate(zip(names, arg_names, strict=True)):
        if mine != theirs:
            broken = mine in keyword_callers or theirs in keyword_callers
            yield _Problem(f"{symbol}:name:{index}", Reason.PARAMETER_NAME_DIFFERS if broken
                           else Reason.PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER,
                           {"index": index, "stub_name": mine, "arg_name": theirs},
                           pair, soft=not broken)
    params = {p["name"]: p for p in stub.data.get("params", [])}
    for arg in args:
        stub_default = params.get(arg["name"], {}).get("default") is not None
        if arg["name"] in params and stub_default != bool(arg.get("has_default")):
            side = "stub" if stub_default else "py::arg list"
            yield _Problem(f"{symbol}:default:{arg['name']}", Reason.DEFAULT_ON_ONE_SIDE,
                           {"name": arg["name"], "side": side}, pair)


def _compare_cpp(symbol: str, count: int, what: str, origin: _Site, functions: list[_Site]
                 ) -> Iterator[_Problem]:
    """A binding's argument count against every C++ declaration and definition it binds."""
    for function in functions:
        params = function.data.get("params", [])
        always = [p for p in params if not p.get("conditional")]
        if count in (len(params), len(always)) and len(params) != len(always):
            yield _Problem(f"{symbol}:conditional:{function.path}",
                           Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS,
                           {"what": what, "state": "on" if count == len(params) else "off"},
                           (origin, function), soft=True)
        elif count not in (len(params), len(always)):
            yield _Problem(f"{symbol}:cpp:{function.path}", Reason.CPP_ARGUMENT_COUNT_DIFFERS,
                           {"what": what, "count": count, "cpp_count": len(params)},
                           (origin, function))


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
            problems.append(_Problem(f"{symbol}:module", Reason.MODULE_MISSING_FROM_SOURCES_MAP,
                                     {"module": module}, (stub,)))
        if stub.data.get("ffi_type") == "ctypes":
            entries = [f for f in copies.cpp.get(symbol, []) if f.data.get("extern_c")]
            if not entries:
                problems.append(_Problem(f"{symbol}:unbound", Reason.CTYPES_STUB_UNBOUND, {},
                                         (stub,)))
            problems += _compare_cpp(symbol, len(_param_names(stub)), "the ctypes stub", stub,
                                     entries)
            continue
        if not binds and not schemas:
            problems.append(_Problem(f"{symbol}:unbound", Reason.STUB_UNBOUND, {}, (stub,)))
        for bind in binds:
            if bind.data.get("args") is not None:
                problems += _compare_lists(symbol, stub, bind, keyword_callers)
    if binds and not stubs and not copies.calls.get(symbol) and _stub_style(copies):
        problems.append(_Problem(f"{symbol}:python-missing", Reason.PYTHON_SIDE_MISSING, {},
                                 tuple(binds)))
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
                                         _IGNORING_DEFAULTS[problem.reason], problem.details,
                                         problem.sites, problem.soft))
    for schema in schemas:
        args = (schema.data.get("schema") or {}).get("args", [])
        for other in schemas:
            other_args = (other.data.get("schema") or {}).get("args", [])
            if other.path > schema.path and other_args != args:
                problems.append(_Problem(f"{symbol}:schema:{other.path}",
                                         Reason.SCHEMA_DIFFERS, {}, (schema, other)))
        for boxed in (b for sites in copies.boxed.values() for b in sites
                      if b.path == schema.path):
            if int(boxed.data.get("max_index", -1)) + 1 != len(args):
                problems.append(_Problem(f"{symbol}:boxed:{boxed.path}", Reason.BOXED_SLOTS_DIFFER,
                                         {"slots": int(boxed.data["max_index"]) + 1,
                                          "schema_count": len(args)}, (schema, boxed)))
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
                                         Reason.CALL_UNKNOWN_KEYWORDS if unknown
                                         else Reason.CALL_ARGUMENTS_OUTSIDE_SCHEMA,
                                         {"given": given, "unknown": repr(sorted(unknown)),
                                          "required": required, "most": len(args)},
                                         (call, schema)))
    return problems


# The same disagreement seen from a caller when no py::arg list exists: pybind then
# ignores C++ default arguments, and the sentence says so.
_IGNORING_DEFAULTS = {
    Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS: Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS_NO_DEFAULTS,
    Reason.CPP_ARGUMENT_COUNT_DIFFERS: Reason.CPP_ARGUMENT_COUNT_DIFFERS_NO_DEFAULTS,
}


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
    surfaces: ClassVar[frozenset[str]] = frozenset(_KINDS)

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
                    # Unread, so it cannot be shown unchanged: its side reads changed.
                    yield self._row(ctx, view, f"unreadable-copy:{path}", Status.CHANGED,
                                    Reason.COPY_UNREADABLE,
                                    {"failure": str(failure.data.get("reason"))},
                                    [(_Site(path, failure.line, {}), view.name, True)])
                    break
        for site in new.unreadable:
            if site.path in touched:
                yield self._row(ctx, view, f"unreadable:{site.path}:{site.line}",
                                Status.CHANGED, Reason.BINDING_NOT_UNDERSTOOD,
                                {"failure": str(site.data.get("reason"))},
                                [(site, view.name, True)])
        for symbol in sorted(old.symbols() | new.symbols()):
            files = _files(symbol, new) | _files(symbol, old)
            if not files & touched:
                continue
            after = _problems(symbol, new)
            for problem in after:
                soft = problem.soft or (blind and problem.key.endswith(":unbound"))
                status = Status.CHANGED if soft else Status.MISMATCH
                sides = [(site, view.name, _moved(symbol, old, new, site.path))
                         for site in problem.sites]
                if problem.key.endswith(":python-missing"):
                    # The stub the change removed is the copy that moved: shown at the base.
                    sides += [(stub, "base", True) for stub in old.stubs.get(symbol, [])
                              if not new.stubs.get(symbol)]
                yield self._row(ctx, view, problem.key, status, problem.reason,
                                problem.details, sides)
            if not after and _signature(symbol, old) != _signature(symbol, new):
                sites = [(_Site(p, 0, {}), view.name, True) for p in sorted(files & touched)]
                yield self._row(ctx, view, f"{symbol}:consistent", Status.INERT,
                                Reason.CHANGED_ALIKE_ON_EVERY_SIDE, {"symbol": symbol}, sites)

    def _row(self, ctx: CheckContext, view: View, subject: str, status: Status, reason: Reason,
             details: dict[str, Any], sites: list[tuple[_Site, str, bool]]) -> Row:
        """A row whose sides are `sites` as (site, revision, whether that copy moved)."""
        assert view.new is not None
        ordered = sorted(sites, key=lambda s: (not s[2], s[0].path, s[0].line, s[1]))
        sides = tuple(Side(s.path, s.line, revision, Role.CHANGED if moved else Role.COUNTERPART)
                      for s, revision, moved in ordered)
        archs = tuple(sorted({a for s, _, _ in ordered for a in ctx.archs_for(s.path, view.new)}))
        return Row(contract=self.name, view=view.name, subject=subject, status=status,
                   reason=reason, archs=archs, sides=sides, details=details,
                   evidence=tuple(Hop.of(s.path, s.line, Step.RESTATES_ARGUMENT_LIST)
                                  for s, _, _ in ordered))


def _stated(symbol: str, copies: _Copies, path: str) -> list[str]:
    """What the copy in `path` states of `symbol` (every site of it there, lines left out)."""
    tables = (copies.stubs, copies.calls, copies.pybind, copies.schemas, copies.impls)
    sites = [s for table in tables for s in table.get(symbol, [])]
    functions = {s.data.get("function") for s in sites} | {symbol}
    sites += [f for name in functions if isinstance(name, str) for f in copies.cpp.get(name, [])]
    sites += [b for found in copies.boxed.values() for b in found]
    sites += list(copies.modules.values())
    return sorted(repr(sorted((k, repr(v)) for k, v in s.data.items() if k != "line"))
                  for s in sites if s.path == path)


def _moved(symbol: str, old: _Copies, new: _Copies, path: str) -> bool:
    """Whether the copy in `path` changed what it states of `symbol` in the view."""
    return _stated(symbol, old, path) != _stated(symbol, new, path)
