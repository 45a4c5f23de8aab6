"""Python op stubs and call sites <-> pybind / TORCH_LIBRARY bindings <-> C++ functions."""

# Maintainers: compares the records of the symbol graph's bindings domain (impact/graph/:
# each copy of an op typed, grouped by op, and which ops a change reaches) and reads no
# fact; which files are parsed is the graph's to decide, and it parses only what the
# change reaches. A side is `changed` exactly when that copy (one stub, one call, one
# binding, one declaration) differs from the base; `charged` decides the rest.

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from impact.checks.check import Check, Scope
from impact.git import View
from impact.graph import (
    KEYWORD_ONLY,
    OP_KINDS,
    TORCH_OPS,
    VAR_KEYWORD,
    VAR_KINDS,
    VAR_POSITIONAL,
    Call,
    Copies,
    Copy,
    CppFunction,
    Place,
    PyBinding,
    Reach,
    Schema,
    Stub,
    reach_of_change,
)
from impact.kinds import SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status

_CTYPES = "ctypes"


@dataclass(frozen=True)
class _Problem:
    """A disagreement between copies of one op: `key` names the op and the copies."""

    key: str
    reason: Reason
    details: dict[str, Any]
    sites: tuple[Copy, ...]
    soft: bool = False  # `changed`, not `mismatch`: only a run can tell


# -- comparing the copies of one op --------------------------------------------------------


def _compare_lists(symbol: str, stub: Stub, bind: PyBinding, keyword_callers: set[str]
                   ) -> Iterator[_Problem]:
    names = stub.names
    args = bind.args or ()
    arg_names = [a.name for a in args]
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
    params = {p.name: p for p in stub.params}
    for arg in args:
        if arg.name in params and params[arg.name].has_default != arg.has_default:
            side = "stub" if params[arg.name].has_default else "py::arg list"
            yield _Problem(f"{ident}:default:{arg.name}", Reason.DEFAULT_ON_ONE_SIDE,
                           {"name": arg.name, "side": side}, pair)


def _fits(count: int, function: CppFunction) -> str | None:
    """'yes', 'guarded-on'/'guarded-off' (fits only with the #if parameters on or off),
    or None when `count` arguments fit neither list."""
    params = function.params
    always = [p for p in params if not p.conditional]
    if len(params) == len(always):
        return "yes" if count == len(params) else None
    if count == len(params):
        return "guarded-on"
    return "guarded-off" if count == len(always) else None


def _compare_cpp(ident: str, count: int, what: str, origin: Copy,
                 functions: list[CppFunction]) -> Iterator[_Problem]:
    """A binding's argument count against the C++ functions it binds. The declarations of
    one qualified name are one overload set: the count must fit one of them."""
    groups: dict[str, list[CppFunction]] = defaultdict(list)
    for function in functions:
        groups[function.qualified].append(function)
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
                           {"what": what, "count": count, "cpp_count": len(function.params)},
                           (origin, function))


_AITER_TENSOR = re.compile(r"\baiter_tensor_t\b")
_TORCH_TENSOR = re.compile(r"(?:\b(?:at|torch)::|(?<![\w:]))Tensor\b")


def _tensor_kinds(function: CppFunction) -> set[str]:
    """Which tensor type a C++ function's parameters take: 'aiter' (`aiter_tensor_t`),
    'torch' (`at::Tensor`, `torch::Tensor`, a bare `Tensor`), both, or neither."""
    found = set()
    for param in function.params:
        if _AITER_TENSOR.search(param.type):
            found.add("aiter")
        elif _TORCH_TENSOR.search(param.type):
            found.add("torch")
    return found


def _tensor_abi(symbol: str, stub: Stub, functions: list[CppFunction]) -> Iterator[_Problem]:
    """aiter's `develop` flag against the bound declarations' tensor type: with
    `develop=True` the wrapper converts every tensor argument to `aiter_tensor_t` before
    the call (aiter/jit/core.py), without it torch tensors are passed as they are; pybind
    converts neither into the other. A declaration taking only the other kind is a
    mismatch; one taking both, or no tensor, or a flag that is not a literal, says
    nothing."""
    develop = stub.develop
    if develop is None:
        return
    passes, other = ("aiter", "torch") if develop else ("torch", "aiter")
    names = {"aiter": "aiter_tensor_t", "torch": "torch tensors"}
    for function in functions:
        if _tensor_kinds(function) == {other}:
            yield _Problem(f"{symbol}@{stub.path}~{function.path}:{function.line}:abi",
                           Reason.TENSOR_ABI_DIFFERS,
                           {"develop": str(develop), "passes": names[passes],
                            "takes": names[other]}, (stub, function))


def _caller_fit(call: Call, stub: Stub) -> str | None:
    """Why `call` does not fit the stub's parameter list, or None when it does."""
    params = stub.params
    positional = call.positional
    if positional < 0:
        return None  # `*args`: nothing to count
    keywords = [k for k in call.keywords if k != "**"]
    spread = "**" in call.keywords
    ordered = [p for p in params if p.kind not in (*VAR_KINDS, KEYWORD_ONLY)]
    names = {p.name for p in params if p.kind not in VAR_KINDS}
    var_pos = any(p.kind == VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == VAR_KEYWORD for p in params)
    if positional > len(ordered) and not var_pos:
        return "too many positional arguments"
    unknown = [k for k in keywords if k not in names]
    if unknown and not var_kw:
        return f"unknown keywords {unknown}"
    given = {p.name for p in ordered[:positional]} | set(keywords)
    if set(keywords) & {p.name for p in ordered[:positional]}:
        return "a parameter passed twice"
    missing = [p.name for p in params if p.kind not in VAR_KINDS
               and not p.has_default and p.name not in given]
    if missing and not spread:
        return f"missing {missing}"
    return None


def _callers(symbol: str, stubs: list[Stub], copies: Copies, old: Copies | None
             ) -> Iterator[_Problem]:
    """Every Python call of a stub against the stub's list at head, by position and by
    keyword; an unchanged positional call whose slots a parameter insertion shifted."""
    for stub in stubs:
        before = [s for s in (old.stubs_by_name.get(stub.name, []) if old else [])
                  if s.path == stub.path]
        for call in copies.callers(stub):
            ident = f"{symbol}@{stub.path}~call@{call.path}:{call.function}"
            problem = _caller_fit(call, stub)
            if problem is not None:
                yield _Problem(f"{ident}:fit", Reason.CALLER_DOES_NOT_FIT_STUB, {
                    "given": call.positional, "keywords": repr(sorted(call.keywords)),
                    "required": sum(1 for p in stub.params
                                    if p.kind not in VAR_KINDS and not p.has_default),
                    "most": len(stub.names), "problem": problem}, (call, stub))
                continue
            if not before or old is None or call.key not in old.keys:
                continue  # a caller the change rewrote says what it means now
            given = call.positional
            was, now = before[0].names, stub.names
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


def _problems(symbol: str, copies: Copies, old: Copies | None = None) -> list[_Problem]:
    problems: list[_Problem] = []
    stubs = copies.stubs.get(symbol, [])
    binds = copies.pybind.get(symbol, [])
    schemas = copies.schemas.get(symbol, [])
    # Calls straight into the extension (no stub between): flash-attention's style.
    calls = [c for c in copies.calls.get(symbol, []) if not c.through_torch_ops
             and not copies.stubs_by_name.get(symbol) and c.receiver != "."]
    keyword_callers = {k for c in copies.calls.get(symbol, []) for k in c.keywords}
    for stub in stubs:
        if copies.has_sources_map and stub.module and stub.module not in copies.modules:
            problems.append(_Problem(f"{symbol}@{stub.path}:module",
                                     Reason.MODULE_MISSING_FROM_SOURCES_MAP,
                                     {"module": stub.module}, (stub,)))
        if stub.ffi_type == _CTYPES:
            entries = [f for f in copies.cpp.get(symbol, []) if f.extern_c]
            if not entries:
                problems.append(_Problem(f"{symbol}@{stub.path}:unbound",
                                         Reason.CTYPES_STUB_UNBOUND, {}, (stub,)))
            problems += _compare_cpp(f"{symbol}@{stub.path}", len(stub.names),
                                     "the ctypes stub", stub, entries)
            continue
        if not binds and not schemas:
            problems.append(_Problem(f"{symbol}@{stub.path}:unbound", Reason.STUB_UNBOUND, {},
                                     (stub,)))
        for bind in copies.scoped(stub, binds):
            if bind.args is not None:
                problems += _compare_lists(symbol, stub, bind, keyword_callers)
            problems += _tensor_abi(symbol, stub, copies.bound_functions(bind))
    problems += _callers(symbol, [s for s in stubs if s.ffi_type != _CTYPES], copies, old)
    if binds and not stubs and not copies.calls.get(symbol) and copies.stub_style:
        problems.append(_Problem(f"{symbol}:python-missing", Reason.PYTHON_SIDE_MISSING, {},
                                 tuple(binds)))
    for bind in binds:
        functions = copies.bound_functions(bind)
        ident = f"{symbol}@{bind.path}:{bind.line}"
        if bind.args is not None:
            problems += _compare_cpp(ident, len(bind.args), "the py::arg list", bind,
                                     functions)
            continue
        # No py::arg: calls are positional and pybind ignores C++ default arguments.
        mine = [s for s in stubs if bind in copies.scoped(s, binds)]
        callers: list[tuple[Copy, int]] = [(s, len(s.names)) for s in mine] + [
            (c, c.positional + len(c.keywords)) for c in calls if c.positional >= 0]
        for caller, count in callers:
            for problem in _compare_cpp(f"{ident}~{caller.path}:{caller.line}", count,
                                        "the Python caller", caller, functions):
                problems.append(_Problem(problem.key, _IGNORING_DEFAULTS[problem.reason],
                                         problem.details, problem.sites, problem.soft))
    problems += _schema_problems(symbol, schemas, copies)
    return problems


def _schema_problems(symbol: str, schemas: list[Schema], copies: Copies) -> Iterator[_Problem]:
    for schema in schemas:
        args = schema.args
        for other in schemas:
            if (other.path, other.line) > (schema.path, schema.line) and other.args != args \
                    and other.namespace == schema.namespace \
                    and other.overload == schema.overload:
                yield _Problem(f"{symbol}@{schema.path}~{other.path}:schema",
                               Reason.SCHEMA_DIFFERS, {}, (schema, other))
        impls = [i for i in copies.impls.get(symbol, [])
                 if i.namespace in (None, schema.namespace)]
        wrappers = {str(schema.function)} | {str(i.function) for i in impls
                                             if i.path == schema.path}
        for boxed in (b for name in sorted(wrappers) for b in copies.boxed.get(name, [])
                      if b.path == schema.path):
            if boxed.max_index + 1 != len(args):
                yield _Problem(f"{symbol}@{schema.path}~{boxed.name}:boxed",
                               Reason.BOXED_SLOTS_DIFFER,
                               {"slots": boxed.max_index + 1, "schema_count": len(args)},
                               (schema, boxed))
        for impl in impls:
            if impl.function in {b.name for found in copies.boxed.values() for b in found}:
                continue  # a boxed wrapper reads the stack: compared above
            yield from _compare_cpp(f"{symbol}@{schema.path}~{impl.path}", len(args),
                                    "the schema", schema,
                                    copies.functions_near(str(impl.function), impl.path))
        required = sum(1 for a in args if a.default is None)
        names = {a.name for a in args}
        for call in copies.calls.get(symbol, []):
            if schema.namespace and f"{TORCH_OPS}.{schema.namespace}" not in call.receivers:
                continue
            if not schema.namespace and not call.through_torch_ops:
                continue
            given = call.positional + len(call.keywords)
            unknown = set(call.keywords) - names - {"**"}
            if unknown or not required <= given <= len(args):
                yield _Problem(f"{symbol}@{schema.path}~call@{call.path}:{call.function}",
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
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(OP_KINDS)
    # An op file whose stated facts changed is judged here, not by its file-level row.
    settles: ClassVar[frozenset[SurfaceKind]] = surfaces

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx, view = scope.ctx, scope.view
        touched = {p for p in scope.own_paths if ctx.surface.describe(p).kind in OP_KINDS}
        if not touched:
            return
        base, head = ctx.graph(scope.old).bindings, ctx.graph(scope.new).bindings
        reach = reach_of_change(base, head, touched)
        yield from self._beyond(scope, touched, reach)
        for site in reach.unreadable:
            yield self._row(scope, f"unreadable:{site.path}:{site.line}",
                            Status.CHANGED, Reason.BINDING_NOT_UNDERSTOOD,
                            {"failure": site.reason}, [(site, view.name, True)])
        if not reach.ops:
            return
        old, new = base.copies(reach.paths), head.copies(reach.paths)
        # A copy we could not read may hold the binding (or the stub) we call missing.
        blind = any(side.failure(path) is not None for path in touched for side in (base, head))
        # The files whose copies moved: what an unread related file's row is charged to.
        moved = {p for p in touched if base.stated(p) != head.stated(p)} or touched
        for path in sorted(reach.related):
            for side in (base, head):
                failure = side.failure(path)
                blind = blind or failure is not None
                if failure is not None and path not in touched:
                    # Unread, so it cannot be shown unchanged: the row reads changed (fail
                    # closed), yet the change did not touch it: it is the counterpart of
                    # the touched files that reached its op.
                    yield self._row(scope, f"unreadable-copy:{path}", Status.CHANGED,
                                    Reason.COPY_UNREADABLE, {"failure": failure.reason},
                                    [(Place(path, failure.line), view.name, False),
                                     *_files_moved(moved, view)])
                    break
        for symbol in sorted(reach.ops & (old.symbols() | new.symbols()
                                          | set(new.stubs_by_name))):
            symbol_paths = {c.path for c in new.op_copies(symbol) + old.op_copies(symbol)}
            after = _problems(symbol, new, old)
            for problem in after:
                soft = problem.soft or (blind and problem.key.endswith(
                    (":unbound", ":python-missing")))
                status = Status.CHANGED if soft else Status.MISMATCH
                # A copy moved when what the problem turns on moved (`Copy.shape`).
                sides: list[tuple[Copy | Place, str, bool]] = [
                    (site, view.name, site.shape not in old.shapes) for site in problem.sites]
                if problem.key.endswith(":python-missing"):
                    # The stub the change removed is the copy that moved: shown at the base.
                    sides += [(stub, ViewName.BASE, True) for stub in old.stubs.get(symbol, [])
                              if not new.stubs.get(symbol)]
                yield self._row(scope, problem.key, status, problem.reason,
                                problem.details, sides)
            fixed = not after and any(not p.soft for p in _problems(symbol, old, None))
            if fixed:
                # A break the base had is gone: what the calls do changed (a run shows it).
                yield self._row(scope, f"{symbol}:resolved", Status.CHANGED,
                                Reason.MISMATCH_RESOLVED, {"symbol": symbol},
                                _files_moved(symbol_paths & touched, view))
            elif not after and old.signature(symbol) != new.signature(symbol):
                yield self._row(scope, f"{symbol}:consistent", Status.INERT,
                                Reason.CHANGED_ALIKE_ON_EVERY_SIDE, {"symbol": symbol},
                                _files_moved(symbol_paths & touched, view))

    def _beyond(self, scope: Scope, touched: set[str], reach: Reach) -> Iterator[Row]:
        """Content, then facts: a touched op file whose stated facts changed (so the
        file-level check leaves it here) and whose code changed beyond them — or whose
        changed facts no compared op accounts for — is `changed`: a run settles it."""
        base, head = scope.ctx.graph(scope.old).bindings, scope.ctx.graph(scope.new).bindings
        for path in sorted(touched):
            if path not in scope.old or path not in scope.new:
                continue
            before, after = base.file(path), head.file(path)
            if before.failure or after.failure:
                continue  # the file-level check names it not understood
            if before.content == after.content:
                continue
            if before.stated == after.stated:
                continue  # the file-level check says `changed` for it already
            if base.stated(path) == head.stated(path):
                # Handed over, yet no copy compared here moved: a call repeated or
                # dropped beside an identical one, or a fact no op comparison reads (a
                # fake twin). Nothing below would speak for the file: it reads changed.
                pass
            elif before.beyond == after.beyond is not None and path not in reach.unjudged:
                continue
            yield self._row(scope, f"beyond:{path}", Status.CHANGED,
                            Reason.CODE_BEYOND_BINDINGS_CHANGED, {},
                            [(Place(path, 0), scope.view.name, True)])

    def _row(self, scope: Scope, subject: str, status: Status, reason: Reason,
             details: dict[str, Any], sites: list[tuple[Copy | Place, str, bool]]) -> Row:
        """A row whose sides are `sites` as (site, revision, whether that copy moved)."""
        ordered = sorted(sites, key=lambda s: (not s[2], s[0].path, s[0].line, s[1]))
        sides = tuple(Side(s.path, s.line, revision, Role.CHANGED if moved else Role.COUNTERPART)
                      for s, revision, moved in ordered)
        archs = tuple(sorted({a for s, _, _ in ordered
                              for a in scope.archs_for(s.path, scope.new)}))
        return scope.row(subject, status, reason, archs=archs, sides=sides, details=details,
                         evidence=tuple(Hop.of(s.path, s.line, Step.RESTATES_ARGUMENT_LIST)
                                        for s, _, _ in ordered))


def _files_moved(paths: set[str], view: View) -> list[tuple[Copy | Place, str, bool]]:
    """Whole files as the sides of a row, each a copy that moved."""
    return [(Place(p, 0), view.name, True) for p in sorted(paths)]
