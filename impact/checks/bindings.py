"""Python op stubs and call sites <-> pybind / TORCH_LIBRARY bindings <-> C++ functions."""

# Maintainers: reads facts through the CheckContext; which files to parse comes from the
# tree index (`files_naming`, the one raw-text search), never from reading blobs here.
# Only what the change reaches is parsed: the facts that changed in the touched files
# name the ops to compare, and an op is a name some binding site really binds. A side is
# `changed` exactly when that copy (one stub, one call, one binding, one declaration)
# differs from the base; `charged` decides the rest.

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.checks.check import Check, Scope
from impact.facts import Fact
from impact.git import Snapshot
from impact.kinds import FactKind, SurfaceKind
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status

_KINDS = (SurfaceKind.OP_PYTHON, SurfaceKind.OP_CPP, SurfaceKind.OP_SOURCES_MAP)
_VAR_KINDS = ("var-positional", "var-keyword")
# What a C++ file that registers bindings always spells: only these files are parsed to
# learn which names are bound (a text search for every changed name would read the tree).
_BINDING_NEEDLES = ("PYBIND11_MODULE", "NB_MODULE", "TORCH_LIBRARY", "py::arg",
                    "TORCH_SELECTIVE", '.def("')
_BINDINGS = (FactKind.PYBIND_DEF, FactKind.SCHEMA_DEF, FactKind.TORCH_IMPL)
_STATED = (FactKind.OP_STUB, FactKind.OP_CALL, FactKind.PYBIND_DEF, FactKind.SCHEMA_DEF,
           FactKind.TORCH_IMPL, FactKind.BOXED_READ, FactKind.CPP_FUNCTION,
           FactKind.OP_MODULE, FactKind.PYBIND_MODULE, FactKind.BINDING_UNREADABLE)
_TORCH_OPS = "torch.ops"
# Every file that declares a Python op stub spells its decorator (impact/bindings reads
# `@...compile_ops(...)`): only those files can hold the stub a call reaches.
_STUB_DECORATOR = "compile_ops"


def _canonical(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_canonical(v)}" for k, v in sorted(value.items())
                              if k != "line") + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    return repr(value)


@dataclass(frozen=True, eq=False)
class _Site:
    """One copy: a fact at a path. Its `key` (lines left out) says whether it moved, and
    two sites are the same copy when their keys are equal."""

    path: str
    line: int
    data: dict[str, Any]
    kind: str = ""
    name: str = ""

    @cached_property  # (a site's data is never changed once read: computed once)
    def key(self) -> tuple[str, str, str, str]:
        return (self.path, self.kind, self.name, _canonical(self.data))

    @cached_property
    def shape(self) -> tuple[str, str, str, str]:
        """What a disagreement between copies turns on: the key, less a call's argument
        text. Whether a call fits a list depends on how many arguments it passes, by
        position and by keyword, and to what; a comment or another expression in one of
        its slots leaves a mismatch it already had where it was (the base's, not the
        change's)."""
        if self.kind != FactKind.OP_CALL:
            return self.key
        data = {k: v for k, v in self.data.items() if k != "arguments"}
        return (self.path, self.kind, self.name, _canonical(data))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Site) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _site(path: str, fact: Fact) -> _Site:
    return _Site(path, fact.line, dict(fact.data), str(fact.kind), fact.name)


@dataclass
class _Copies:
    """Every restatement of the compared ops in one snapshot."""

    stubs: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    stubs_by_name: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    calls: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    pybind: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    schemas: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    boxed: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    impls: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    cpp: dict[str, list[_Site]] = field(default_factory=lambda: defaultdict(list))
    modules: dict[str, _Site] = field(default_factory=dict)
    expands: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    unreadable: list[_Site] = field(default_factory=list)
    keys: set[tuple[str, str, str, str]] = field(default_factory=set)
    shapes: set[tuple[str, str, str, str]] = field(default_factory=set)
    has_sources_map: bool = False

    def add(self, path: str, fact: Fact) -> None:
        site = _site(path, fact)
        if fact.kind in _STATED:
            self.keys.add(site.key)
            self.shapes.add(site.shape)
        table = {FactKind.OP_CALL: self.calls, FactKind.PYBIND_DEF: self.pybind,
                 FactKind.SCHEMA_DEF: self.schemas, FactKind.BOXED_READ: self.boxed,
                 FactKind.TORCH_IMPL: self.impls, FactKind.CPP_FUNCTION: self.cpp}.get(fact.kind)
        if fact.kind == FactKind.OP_STUB:
            self.stubs[str(fact.data.get("symbol") or fact.name)].append(site)
            self.stubs_by_name[fact.name].append(site)
        elif table is not None:
            table[fact.name].append(site)
        elif fact.kind == FactKind.OP_MODULE:
            self.modules[fact.name] = site
            self.has_sources_map = True
        elif fact.kind == FactKind.PYBIND_MODULE:
            self.expands[path] |= set(fact.data.get("expands", []))
        elif fact.kind == FactKind.BINDING_UNREADABLE:
            self.unreadable.append(site)

    def symbols(self) -> set[str]:
        return set(self.stubs) | set(self.pybind) | set(self.schemas)


@dataclass(frozen=True)
class _Problem:
    """A disagreement between copies of one op: `key` names the op and the copies."""

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


# -- what the change reaches ---------------------------------------------------------------


@dataclass
class _Reach:
    """The ops a view's change reaches and the files that restate them."""

    ops: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)
    related: set[str] = field(default_factory=set)  # files that name a reached op
    unjudged: set[str] = field(default_factory=set)  # touched files with changed facts
    # that no compared op accounts for
    unreadable: list[_Site] = field(default_factory=list)  # bindings the change made
    # that the parser cannot read


def _stated_sites(ctx: CheckContext, snapshot: Snapshot, path: str) -> set[_Site]:
    if path not in snapshot:
        return set()
    return {_site(path, f) for f in ctx.facts(snapshot, path) if f.kind in _STATED}


def _changed_sites(scope: Scope, path: str) -> list[_Site]:
    """The stated facts of `path` that differ between the view's two snapshots."""
    old = {s.key: s for s in _stated_sites(scope.ctx, scope.old, path)}
    new = {s.key: s for s in _stated_sites(scope.ctx, scope.new, path)}
    return [new[k] for k in sorted(set(new) - set(old))] + [
        old[k] for k in sorted(set(old) - set(new))]


def _naming(ctx: CheckContext, snapshots: tuple[Snapshot, ...], names: set[str],
            kinds: tuple[SurfaceKind, ...] = _KINDS) -> set[str]:
    """The files of `kinds` in either snapshot that mention one of `names` (an unreadable
    file is always one: it is parsed, and reported unreadable)."""
    names = {n for n in names if n.isidentifier()}
    if not names:
        return set()
    return {p for snap in snapshots for p in ctx.index(snap).files_naming(names, kinds)}


def _binders(ctx: CheckContext, snapshots: tuple[Snapshot, ...], names: set[str]
             ) -> dict[str, set[str]]:
    """The names among `names` that a binding site binds (pybind `m.def`, TORCH_LIBRARY
    schema, `m.impl`), or whose C++ function one binds, with the functions it names: only
    the files that register bindings and mention one of `names` are parsed."""
    bound: dict[str, set[str]] = defaultdict(set)
    files = {p for snap in snapshots
             for p in ctx.index(snap).files_naming(_BINDING_NEEDLES, (SurfaceKind.OP_CPP,))}
    files &= _naming(ctx, snapshots, names, (SurfaceKind.OP_CPP,))
    for snap in snapshots:
        for path in sorted(files):
            if path not in snap:
                continue
            for fact in ctx.facts(snap, path):
                if fact.kind in _BINDINGS:
                    bound[fact.name]
                    function = fact.data.get("function")
                    if isinstance(function, str) and function:
                        bound[fact.name].add(function)
    return bound


def _reach(scope: Scope, touched: set[str]) -> _Reach:
    """The ops whose stated facts the change altered, and the files restating them.

    A changed stub or binding is an op; a changed call, C++ function or boxed wrapper
    counts only when a binding site binds its name (an attribute call through `cute`
    or `fx` names no op); a changed module entry reaches the stubs built from it."""
    ctx, snapshots = scope.ctx, (scope.old, scope.new)
    reach = _Reach()
    changed = {path: _changed_sites(scope, path) for path in sorted(touched)}
    direct: set[str] = set()
    maybe: dict[str, set[str]] = defaultdict(set)  # candidate name -> touched paths
    modules: set[str] = set()
    for path, sites in changed.items():
        for site in sites:
            if site.kind == FactKind.OP_STUB:
                direct |= {site.name, str(site.data.get("symbol") or site.name)}
            elif site.kind in _BINDINGS:
                direct.add(site.name)
            elif site.kind == FactKind.OP_MODULE:
                modules.add(site.name)
            elif site.kind in (FactKind.OP_CALL, FactKind.CPP_FUNCTION, FactKind.BOXED_READ):
                maybe[site.name].add(path)
            elif site.kind == FactKind.BINDING_UNREADABLE and path in scope.new and any(
                    site.key == s.key for s in _stated_sites(ctx, scope.new, path)):
                reach.unreadable.append(site)
    if not direct and not maybe and not modules:
        return reach
    if modules:
        stub_files = _naming(ctx, snapshots, modules, (SurfaceKind.OP_PYTHON,))
        for snap in snapshots:
            for path in stub_files:
                if path in snap:
                    direct |= {f.name for f in ctx.facts(snap, path)
                               if f.kind == FactKind.OP_STUB and f.data.get("module") in modules}
    bound = _binders(ctx, snapshots, set(maybe)) if maybe else {}
    functions = defaultdict(set)
    for op, names in bound.items():
        for name in names:
            functions[name].add(op)
    ops = set(direct)
    for name in maybe:
        if name in bound:
            ops.add(name)
        ops |= functions.get(name, set())
    # A call to a Python stub of this package names an op too: its stub says so.
    calls = {n for n in maybe if n not in bound and n not in functions}
    if calls:
        stubs = _naming(ctx, snapshots, {_STUB_DECORATOR}, (SurfaceKind.OP_PYTHON,))
        defining = {p for snap in snapshots for p in ctx.index(snap).files_naming(
            {f"def {name}(" for name in calls if name.isidentifier()},
            (SurfaceKind.OP_PYTHON,))}
        for path in stubs & defining:
            for snap in snapshots:
                if path in snap:
                    ops |= {f.name for f in ctx.facts(snap, path)
                            if f.kind == FactKind.OP_STUB and f.name in calls}
    reach.ops = ops
    for path, sites in changed.items():
        if any(s.kind in (FactKind.OP_CALL, FactKind.CPP_FUNCTION, FactKind.BOXED_READ)
               and s.name not in ops and not functions.get(s.name, set()) & ops
               for s in sites):
            reach.unjudged.add(path)
    if not ops:
        return reach
    maps = {p for snap in snapshots for p in ctx.paths(snap, SurfaceKind.OP_SOURCES_MAP)}
    named = _naming(ctx, snapshots, ops)
    reach.paths = set(touched) | maps | named
    # Then the C++ functions those ops are bound to, and the modules that expand them.
    old, new = (_copies(ctx, s, reach.paths) for s in snapshots)
    bound_functions = {str(site.data["function"]) for copies in (old, new)
                       for table in (copies.pybind, copies.impls, copies.schemas)
                       for op in ops for site in table.get(op, [])
                       if isinstance(site.data.get("function"), str)} - ops
    extra = _naming(ctx, snapshots, bound_functions, (SurfaceKind.OP_CPP,))
    macros = {str(site.data["macro"]) for copies in (old, new) for op in ops
              for site in copies.pybind.get(op, []) if site.data.get("macro")}
    expanders = _naming(ctx, snapshots, macros, (SurfaceKind.OP_CPP,))
    reach.paths |= extra | expanders
    reach.related = set(touched) | named | extra
    return reach


# -- comparing the copies of one op --------------------------------------------------------


def _param_names(stub: _Site) -> list[str]:
    return [p["name"] for p in stub.data.get("params", []) if p.get("kind") not in _VAR_KINDS]


def _near(sites: list[_Site], path: str) -> list[_Site]:
    """Sites in the same folder as `path` when there are any (each backend's own copy)."""
    here = [s for s in sites if posixpath.dirname(s.path) == posixpath.dirname(path)]
    return here or sites


def _bound_functions(bind: _Site, copies: _Copies) -> list[_Site]:
    """The C++ declarations a binding binds: `&ns::f` binds `ns::f` (or an `f` declared
    inside `ns`), never a class member of that name nor an `f` of another namespace."""
    function = bind.data.get("function")
    if not isinstance(function, str) or not function:
        return []
    spelled = str(bind.data.get("qualified_function") or function)
    found = []
    for site in copies.cpp.get(function, []):
        if site.data.get("member"):
            continue
        qualified = str(site.data.get("qualified") or site.name)
        if "::" in spelled and not (qualified == spelled or qualified.endswith("::" + spelled)):
            continue
        found.append(site)
    return _near(found, bind.path)


def _module_files(module: str, copies: _Copies) -> set[str] | None:
    """The files that build `module` (its sources and the files whose bindings its
    PYBIND11_MODULE expands), or None when the sources map does not say."""
    entry = copies.modules.get(module)
    if entry is None:
        return None
    tails = [str(t) for t in entry.data.get("files", [])]
    own = {p for p in _all_paths(copies) if any(p == t or p.endswith("/" + t) for t in tails)}
    macros = {m for p in own for m in copies.expands.get(p, set())}
    return own | {s.path for sites in copies.pybind.values() for s in sites
                  if s.data.get("macro") in macros}


def _all_paths(copies: _Copies) -> set[str]:
    tables = (copies.stubs, copies.calls, copies.pybind, copies.schemas, copies.impls, copies.cpp)
    return {s.path for table in tables for sites in table.values() for s in sites} | set(
        copies.expands)


def _scoped(stub: _Site, binds: list[_Site], copies: _Copies) -> list[_Site]:
    """The bindings a stub pairs with: those its module is built from, when the sources
    map names them (an `x_gfx1250` module's binding is another extension's op)."""
    module = stub.data.get("module")
    files = _module_files(str(module), copies) if module else None
    if files is None:
        return binds
    mine = [b for b in binds if b.path in files]
    return mine or binds


def _compare_lists(symbol: str, stub: _Site, bind: _Site, keyword_callers: set[str]
                   ) -> Iterator[_Problem]:
    names = _param_names(stub)
    args = bind.data["args"]
    arg_names = [a["name"] for a in args]
    pair = (stub, bind)
    ident = f"{symbol}@{stub.path}~{bind.path}"
    if len(names) != len(arg_names):
        yield _Problem(f"{ident}:count", Reason.STUB_AND_PYARG_COUNTS_DIFFER,
                       {"stub_count": len(names), "arg_count": len(arg_names)}, pair)
        return
    if names != arg_names and sorted(names) == sorted(arg_names):
        yield _Problem(f"{ident}:order", Reason.ARGUMENTS_SWAPPED, {}, pair)
        return
    for index, (mine, theirs) in enumerate(zip(names, arg_names, strict=True)):
        if mine != theirs:
            broken = mine in keyword_callers or theirs in keyword_callers
            yield _Problem(f"{ident}:name:{index}", Reason.PARAMETER_NAME_DIFFERS if broken
                           else Reason.PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER,
                           {"index": index, "stub_name": mine, "arg_name": theirs},
                           pair, soft=not broken)
    params = {p["name"]: p for p in stub.data.get("params", [])}
    for arg in args:
        stub_default = params.get(arg["name"], {}).get("default") is not None
        if arg["name"] in params and stub_default != bool(arg.get("has_default")):
            side = "stub" if stub_default else "py::arg list"
            yield _Problem(f"{ident}:default:{arg['name']}", Reason.DEFAULT_ON_ONE_SIDE,
                           {"name": arg["name"], "side": side}, pair)


def _fits(count: int, function: _Site) -> str | None:
    """'yes', 'guarded-on'/'guarded-off' (fits only with the #if parameters on or off),
    or None when `count` arguments fit neither list."""
    params = function.data.get("params", [])
    always = [p for p in params if not p.get("conditional")]
    if len(params) == len(always):
        return "yes" if count == len(params) else None
    if count == len(params):
        return "guarded-on"
    return "guarded-off" if count == len(always) else None


def _compare_cpp(ident: str, count: int, what: str, origin: _Site, functions: list[_Site]
                 ) -> Iterator[_Problem]:
    """A binding's argument count against the C++ functions it binds. The declarations of
    one qualified name are one overload set: the count must fit one of them."""
    groups: dict[str, list[_Site]] = defaultdict(list)
    for function in functions:
        groups[str(function.data.get("qualified") or function.name)].append(function)
    for qualified, group in sorted(groups.items()):
        fits = [_fits(count, f) for f in group]
        if "yes" in fits:
            continue
        guarded = next((f for f, fit in zip(group, fits, strict=True) if fit), None)
        if guarded is not None:
            yield _Problem(f"{ident}:conditional:{qualified}@{guarded.path}",
                           Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS,
                           {"what": what, "state": "on" if _fits(count, guarded) == "guarded-on"
                            else "off"}, (origin, guarded), soft=True)
            continue
        for function in group:
            yield _Problem(f"{ident}:cpp:{qualified}@{function.path}:{function.line}",
                           Reason.CPP_ARGUMENT_COUNT_DIFFERS,
                           {"what": what, "count": count,
                            "cpp_count": len(function.data.get("params", []))},
                           (origin, function))


_AITER_TENSOR = re.compile(r"\baiter_tensor_t\b")
_TORCH_TENSOR = re.compile(r"(?:\b(?:at|torch)::|(?<![\w:]))Tensor\b")


def _tensor_kinds(function: _Site) -> set[str]:
    """Which tensor type a C++ function's parameters take: 'aiter' (`aiter_tensor_t`),
    'torch' (`at::Tensor`, `torch::Tensor`, a bare `Tensor`), both, or neither."""
    found = set()
    for param in function.data.get("params", []):
        text = str(param.get("type") or "")
        if _AITER_TENSOR.search(text):
            found.add("aiter")
        elif _TORCH_TENSOR.search(text):
            found.add("torch")
    return found


def _tensor_abi(symbol: str, stub: _Site, functions: list[_Site]) -> Iterator[_Problem]:
    """aiter's `develop` flag against the bound declarations' tensor type: with
    `develop=True` the wrapper converts every tensor argument to `aiter_tensor_t` before
    the call (aiter/jit/core.py), without it torch tensors are passed as they are; pybind
    converts neither into the other. A declaration taking only the other kind is a
    mismatch; one taking both, or no tensor, or a flag that is not a literal, says
    nothing."""
    develop = stub.data.get("develop")
    if not isinstance(develop, bool):
        return
    passes, other = ("aiter", "torch") if develop else ("torch", "aiter")
    names = {"aiter": "aiter_tensor_t", "torch": "torch tensors"}
    for function in functions:
        if _tensor_kinds(function) == {other}:
            yield _Problem(f"{symbol}@{stub.path}~{function.path}:{function.line}:abi",
                           Reason.TENSOR_ABI_DIFFERS,
                           {"develop": str(develop), "passes": names[passes],
                            "takes": names[other]}, (stub, function))


def _is_torch_ops(call: _Site) -> bool:
    receivers = call.data.get("receivers") or [call.data.get("receiver", "")]
    return any(str(r).startswith(_TORCH_OPS) for r in receivers)


def _calls_stub(call: _Site, stub: _Site, module: str | None) -> bool:
    """Whether `call` reaches this stub: the same file's bare call, or a call through the
    stub's module or a package above it that re-exports it."""
    receivers = [str(r) for r in call.data.get("receivers") or [call.data.get("receiver", "")]]
    for receiver in receivers:
        if receiver == ".":
            if call.path == stub.path:
                return True
            continue
        plain = receiver.lstrip(".")
        if module and plain and (module == plain or module.startswith(plain + ".")
                                 or module.endswith("." + plain)):
            return True
    return False


def _caller_fit(call: _Site, stub: _Site) -> str | None:
    """Why `call` does not fit the stub's parameter list, or None when it does."""
    params = stub.data.get("params", [])
    positional = int(call.data.get("positional", 0))
    if positional < 0:
        return None  # `*args`: nothing to count
    keywords = [k for k in call.data.get("keywords", []) if k != "**"]
    spread = "**" in call.data.get("keywords", [])
    ordered = [p for p in params if p.get("kind") not in (*_VAR_KINDS, "keyword-only")]
    names = {p["name"] for p in params if p.get("kind") not in _VAR_KINDS}
    var_pos = any(p.get("kind") == "var-positional" for p in params)
    var_kw = any(p.get("kind") == "var-keyword" for p in params)
    if positional > len(ordered) and not var_pos:
        return "too many positional arguments"
    unknown = [k for k in keywords if k not in names]
    if unknown and not var_kw:
        return f"unknown keywords {unknown}"
    given = {p["name"] for p in ordered[:positional]} | set(keywords)
    if set(keywords) & {p["name"] for p in ordered[:positional]}:
        return "a parameter passed twice"
    missing = [p["name"] for p in params if p.get("kind") not in _VAR_KINDS
               and p.get("default") is None and p["name"] not in given]
    if missing and not spread:
        return f"missing {missing}"
    return None


def _callers(symbol: str, stubs: list[_Site], copies: _Copies, old: _Copies | None,
             module_of: Any) -> Iterator[_Problem]:
    """Every Python call of a stub against the stub's list at head, by position and by
    keyword; an unchanged positional call whose slots a parameter insertion shifted."""
    for stub in stubs:
        module = module_of(stub.path)
        calls = [c for c in copies.calls.get(stub.name, [])
                 if not _is_torch_ops(c) and _calls_stub(c, stub, module)]
        before = [s for s in (old.stubs_by_name.get(stub.name, []) if old else [])
                  if s.path == stub.path]
        for call in calls:
            ident = f"{symbol}@{stub.path}~call@{call.path}:{call.data.get('function')}"
            problem = _caller_fit(call, stub)
            if problem is not None:
                yield _Problem(f"{ident}:fit", Reason.CALLER_DOES_NOT_FIT_STUB, {
                    "given": int(call.data.get("positional", 0)),
                    "keywords": repr(sorted(call.data.get("keywords", []))),
                    "required": sum(1 for p in stub.data.get("params", [])
                                    if p.get("kind") not in _VAR_KINDS
                                    and p.get("default") is None),
                    "most": len(_param_names(stub)), "problem": problem}, (call, stub))
                continue
            if not before or old is None or call.key not in old.keys:
                continue  # a caller the change rewrote says what it means now
            given = int(call.data.get("positional", 0))
            was, now = _param_names(before[0]), _param_names(stub)
            # A parameter that still exists but now sits elsewhere among the slots the call
            # fills by position: the call's values land one slot off (a rename in place
            # keeps every slot).
            shifted = [i for i, name in enumerate(was[:given])
                       if name in now and now.index(name) != i]
            if shifted:
                index = shifted[0]
                yield _Problem(f"{ident}:shifted", Reason.CALLER_SHIFTED_BY_INSERTION,
                               {"given": given, "index": index,
                                "inserted": now[index] if index < len(now) else "",
                                "shifted": was[index]}, (call, stub))


def _problems(symbol: str, copies: _Copies, old: _Copies | None = None,
              module_of: Any = lambda _p: None) -> list[_Problem]:
    problems: list[_Problem] = []
    stubs = copies.stubs.get(symbol, [])
    binds = copies.pybind.get(symbol, [])
    schemas = copies.schemas.get(symbol, [])
    # Calls straight into the extension (no stub between): flash-attention's style.
    calls = [c for c in copies.calls.get(symbol, []) if not _is_torch_ops(c)
             and not copies.stubs_by_name.get(symbol) and c.data.get("receiver") != "."]
    keyword_callers = {k for c in copies.calls.get(symbol, []) for k in c.data.get("keywords", [])}
    for stub in stubs:
        module = stub.data.get("module")
        if copies.has_sources_map and module and module not in copies.modules:
            problems.append(_Problem(f"{symbol}@{stub.path}:module",
                                     Reason.MODULE_MISSING_FROM_SOURCES_MAP,
                                     {"module": module}, (stub,)))
        if stub.data.get("ffi_type") == "ctypes":
            entries = [f for f in copies.cpp.get(symbol, []) if f.data.get("extern_c")]
            if not entries:
                problems.append(_Problem(f"{symbol}@{stub.path}:unbound",
                                         Reason.CTYPES_STUB_UNBOUND, {}, (stub,)))
            problems += _compare_cpp(f"{symbol}@{stub.path}", len(_param_names(stub)),
                                     "the ctypes stub", stub, entries)
            continue
        if not binds and not schemas:
            problems.append(_Problem(f"{symbol}@{stub.path}:unbound", Reason.STUB_UNBOUND, {},
                                     (stub,)))
        for bind in _scoped(stub, binds, copies):
            if bind.data.get("args") is not None:
                problems += _compare_lists(symbol, stub, bind, keyword_callers)
            problems += _tensor_abi(symbol, stub, _bound_functions(bind, copies))
    problems += _callers(symbol, [s for s in stubs if s.data.get("ffi_type") != "ctypes"],
                         copies, old, module_of)
    if binds and not stubs and not copies.calls.get(symbol) and _stub_style(copies):
        problems.append(_Problem(f"{symbol}:python-missing", Reason.PYTHON_SIDE_MISSING, {},
                                 tuple(binds)))
    for bind in binds:
        functions = _bound_functions(bind, copies)
        ident = f"{symbol}@{bind.path}:{bind.line}"
        if bind.data.get("args") is not None:
            problems += _compare_cpp(ident, len(bind.data["args"]), "the py::arg list", bind,
                                     functions)
            continue
        # No py::arg: calls are positional and pybind ignores C++ default arguments.
        mine = [s for s in stubs if bind in _scoped(s, binds, copies)]
        callers = [(s, len(_param_names(s))) for s in mine] + [
            (c, int(c.data.get("positional", 0)) + len(c.data.get("keywords", [])))
            for c in calls if int(c.data.get("positional", 0)) >= 0]
        for caller, count in callers:
            for problem in _compare_cpp(f"{ident}~{caller.path}:{caller.line}", count,
                                        "the Python caller", caller, functions):
                problems.append(_Problem(problem.key, _IGNORING_DEFAULTS[problem.reason],
                                         problem.details, problem.sites, problem.soft))
    problems += _schema_problems(symbol, schemas, copies)
    return problems


def _schema_problems(symbol: str, schemas: list[_Site], copies: _Copies) -> Iterator[_Problem]:
    for schema in schemas:
        args = (schema.data.get("schema") or {}).get("args", [])
        namespace = schema.data.get("namespace")
        for other in schemas:
            other_args = (other.data.get("schema") or {}).get("args", [])
            if (other.path, other.line) > (schema.path, schema.line) and other_args != args \
                    and other.data.get("namespace") == namespace \
                    and other.data.get("overload") == schema.data.get("overload"):
                yield _Problem(f"{symbol}@{schema.path}~{other.path}:schema",
                               Reason.SCHEMA_DIFFERS, {}, (schema, other))
        impls = [i for i in copies.impls.get(symbol, [])
                 if i.data.get("namespace") in (None, namespace)]
        wrappers = {str(schema.data.get("function"))} | {
            str(i.data.get("function")) for i in impls if i.path == schema.path}
        for boxed in (b for name in sorted(wrappers) for b in copies.boxed.get(name, [])
                      if b.path == schema.path):
            if int(boxed.data.get("max_index", -1)) + 1 != len(args):
                yield _Problem(f"{symbol}@{schema.path}~{boxed.name}:boxed",
                               Reason.BOXED_SLOTS_DIFFER,
                               {"slots": int(boxed.data["max_index"]) + 1,
                                "schema_count": len(args)}, (schema, boxed))
        for impl in impls:
            name = impl.data.get("function")
            if name in {b.name for found in copies.boxed.values() for b in found}:
                continue  # a boxed wrapper reads the stack: compared above
            functions = _near([f for f in copies.cpp.get(str(name), [])
                               if not f.data.get("member")], impl.path)
            yield from _compare_cpp(f"{symbol}@{schema.path}~{impl.path}", len(args),
                                    "the schema", schema, functions)
        required = sum(1 for a in args if a.get("default") is None)
        names = {a["name"] for a in args}
        for call in copies.calls.get(symbol, []):
            receivers = call.data.get("receivers") or [call.data.get("receiver", "")]
            if namespace and f"{_TORCH_OPS}.{namespace}" not in receivers:
                continue
            if not namespace and not _is_torch_ops(call):
                continue
            given = int(call.data.get("positional", 0)) + len(call.data.get("keywords", []))
            unknown = set(call.data.get("keywords", [])) - names - {"**"}
            if unknown or not required <= given <= len(args):
                yield _Problem(f"{symbol}@{schema.path}~call@{call.path}:"
                               f"{call.data.get('function')}",
                               Reason.CALL_UNKNOWN_KEYWORDS if unknown
                               else Reason.CALL_ARGUMENTS_OUTSIDE_SCHEMA,
                               {"given": given, "unknown": repr(sorted(unknown)),
                                "required": required, "most": len(args)},
                               (call, schema))


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


def _op_sites(symbol: str, copies: _Copies) -> list[_Site]:
    """Every copy of one op in a snapshot: stubs, calls, bindings and the C++ functions
    they bind."""
    sites = [*copies.stubs.get(symbol, []), *copies.pybind.get(symbol, []),
             *copies.schemas.get(symbol, []), *copies.calls.get(symbol, []),
             *copies.impls.get(symbol, [])]
    functions = {s.data.get("function") for s in sites} | {symbol}
    sites += [f for name in functions if isinstance(name, str) for f in copies.cpp.get(name, [])]
    return sites


def _signature(symbol: str, copies: _Copies) -> list[tuple[str, str, str, str]]:
    """Everything that states the op's argument list, for 'did it change at all'."""
    return sorted(s.key for s in _op_sites(symbol, copies))


class BindingsCheck(Check):
    """What it checks:
        For each bound op — an op is its extension module, its name and its backend —
        every copy of its argument list against every other: the Python stub
        (`@compile_ops`) and every Python call of it (by position and by keyword), the
        `py::arg` list or the TORCH_LIBRARY schema, the boxed wrapper registered for that
        schema, and the C++ declarations the binding names (`&ns::f` binds `ns::f`, never
        a member or another namespace's `f`; an overload set is one function), of every
        backend (CUDA and ROCm CK each bind the same call); aiter's `develop=` flag on
        a stub against the tensor type of the declarations it binds (`develop=True`
        hands C++ `aiter_tensor_t`s, otherwise torch tensors); and each stub's module
        against the module -> sources map. Only ops whose copies the change altered are
        compared; a name is an op only where a binding site binds it.

    Why a break hurts at run time:
        The lists are written two to four times by hand. A count mismatch is a TypeError
        at the first call; two same-typed arguments swapped, a parameter inserted before
        the ones a positional caller passes, or a C++ default that pybind ignores,
        silently passes the wrong values.

    Example:
        Breaks: a stub drops a parameter its `py::arg` list keeps; a stub turns
        `develop=True` on while its C++ function still takes `torch::Tensor&`; a fix to
        the CUDA `mha_fwd` that adds a parameter the CK copy does not; a parameter
        inserted in the middle of every list while a caller still passes the old order.
        Does not break: the same change made on every side and every caller, or a
        comment edit.

    When it says changed instead:
        A parameter that exists only under `#if` in C++; a name that differs between the
        stub and `py::arg` while no caller passes it by keyword; a binding the parser
        cannot read (a macro it cannot expand, a schema it cannot parse); an op file
        whose code changed beyond the facts compared here (a body, a launch setting).
        A list changed alike on every side is `inert`: every copy agrees.

    Evidence:
        Both copies as file:line, the changed side first, and what disagrees.
    """

    name: ClassVar[str] = "bindings"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(_KINDS)
    # An op file whose stated facts changed is judged here, not by its file-level row.
    settles: ClassVar[frozenset[SurfaceKind]] = surfaces

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx, view = scope.ctx, scope.view
        touched = {p for p in scope.own_paths if ctx.surface.describe(p).kind in _KINDS}
        if not touched:
            return
        reach = _reach(scope, touched)
        yield from self._beyond(scope, touched, reach)
        for site in reach.unreadable:
            yield self._row(scope, f"unreadable:{site.path}:{site.line}",
                            Status.CHANGED, Reason.BINDING_NOT_UNDERSTOOD,
                            {"failure": str(site.data.get("reason"))},
                            [(site, view.name, True)])
        if not reach.ops:
            return
        paths = reach.paths
        old, new = _copies(ctx, scope.old, paths), _copies(ctx, scope.new, paths)
        # A copy we could not read may hold the binding (or the stub) we call missing.
        blind = any(ctx.parse_failure(ctx.facts(snap, path)) is not None
                    for path in touched for snap in (scope.old, scope.new) if path in snap)
        for path in sorted(reach.related):
            for snap in (scope.old, scope.new):
                failure = ctx.parse_failure(ctx.facts(snap, path)) if path in snap else None
                blind = blind or failure is not None
                if failure is not None and path not in touched:
                    # Unread, so it cannot be shown unchanged: its side reads changed.
                    yield self._row(scope, f"unreadable-copy:{path}", Status.CHANGED,
                                    Reason.COPY_UNREADABLE,
                                    {"failure": str(failure.data.get("reason"))},
                                    [(_Site(path, failure.line, {}), view.name, True)])
                    break
        for symbol in sorted(reach.ops & (old.symbols() | new.symbols()
                                          | set(new.stubs_by_name))):
            symbol_paths = {s.path for s in _op_sites(symbol, new) + _op_sites(symbol, old)}
            after = _problems(symbol, new, old, ctx.module_of)
            for problem in after:
                soft = problem.soft or (blind and problem.key.endswith(
                    (":unbound", ":python-missing")))
                status = Status.CHANGED if soft else Status.MISMATCH
                # A copy moved when what the problem turns on moved (`_Site.shape`).
                sides = [(site, view.name, site.shape not in old.shapes)
                         for site in problem.sites]
                if problem.key.endswith(":python-missing"):
                    # The stub the change removed is the copy that moved: shown at the base.
                    sides += [(stub, "base", True) for stub in old.stubs.get(symbol, [])
                              if not new.stubs.get(symbol)]
                yield self._row(scope, problem.key, status, problem.reason,
                                problem.details, sides)
            fixed = not after and any(not p.soft for p in _problems(
                symbol, old, None, ctx.module_of))
            if fixed:
                # A break the base had is gone: what the calls do changed (a run shows it).
                sites = [(_Site(p, 0, {}), view.name, True)
                         for p in sorted(symbol_paths & touched)]
                yield self._row(scope, f"{symbol}:resolved", Status.CHANGED,
                                Reason.MISMATCH_RESOLVED, {"symbol": symbol}, sites)
            elif not after and _signature(symbol, old) != _signature(symbol, new):
                sites = [(_Site(p, 0, {}), view.name, True)
                         for p in sorted(symbol_paths & touched)]
                yield self._row(scope, f"{symbol}:consistent", Status.INERT,
                                Reason.CHANGED_ALIKE_ON_EVERY_SIDE, {"symbol": symbol}, sites)

    def _beyond(self, scope: Scope, touched: set[str], reach: _Reach) -> Iterator[Row]:
        """Content, then facts: a touched op file whose stated facts changed (so the
        file-level check leaves it here) and whose code changed beyond them — or whose
        changed facts no compared op accounts for — is `changed`: a run settles it."""
        ctx, old, new = scope.ctx, scope.old, scope.new
        for path in sorted(touched):
            if path not in old or path not in new:
                continue
            old_facts, new_facts = ctx.facts(old, path), ctx.facts(new, path)
            if ctx.parse_failure(old_facts) or ctx.parse_failure(new_facts):
                continue  # the file-level check names it not understood
            if ctx.content(old_facts) == ctx.content(new_facts):
                continue
            if _everything_stated(old_facts) == _everything_stated(new_facts):
                continue  # the file-level check says `changed` for it already
            if _stated_sites(ctx, old, path) == _stated_sites(ctx, new, path):
                # Handed over, yet no copy compared here moved: a call repeated or
                # dropped beside an identical one, or a fact no op comparison reads (a
                # fake twin). Nothing below would speak for the file: it reads changed.
                pass
            elif _beyond_digest(old_facts) == _beyond_digest(new_facts) is not None \
                    and path not in reach.unjudged:
                continue
            yield self._row(scope, f"beyond:{path}", Status.CHANGED,
                            Reason.CODE_BEYOND_BINDINGS_CHANGED, {},
                            [(_Site(path, 0, {}), scope.view.name, True)])

    def _row(self, scope: Scope, subject: str, status: Status, reason: Reason,
             details: dict[str, Any], sites: list[tuple[_Site, str, bool]]) -> Row:
        """A row whose sides are `sites` as (site, revision, whether that copy moved)."""
        ordered = sorted(sites, key=lambda s: (not s[2], s[0].path, s[0].line, s[1]))
        sides = tuple(Side(s.path, s.line, revision, Role.CHANGED if moved else Role.COUNTERPART)
                      for s, revision, moved in ordered)
        archs = tuple(sorted({a for s, _, _ in ordered
                              for a in scope.archs_for(s.path, scope.new)}))
        return scope.row(subject, status, reason, archs=archs, sides=sides, details=details,
                         evidence=tuple(Hop.of(s.path, s.line, Step.RESTATES_ARGUMENT_LIST)
                                        for s, _, _ in ordered))


def _everything_stated(facts: list[Fact]) -> list[tuple[str, str, str]]:
    """Every fact of a file but its whole-file digest, lines left out, repeats kept: the
    very test by which the file-level check hands an op file to this check
    (`_stated` in impact/checks/surface.py), so a file it hands over is never dropped
    here as 'judged by the file-level check'."""
    return sorted((str(f.kind), f.name, repr(sorted((k, repr(v)) for k, v in f.data.items()
                                                    if k != "line")))
                  for f in facts if f.kind != FactKind.CONTENT)


def _beyond_digest(facts: list[Fact]) -> str | None:
    """The digest of a file's code beyond its binding facts (None when not recorded)."""
    for fact in facts:
        if fact.kind == FactKind.CONTENT:
            value = fact.data.get("beyond_bindings")
            return str(value) if value is not None else None
    return None
