"""Python op stubs and call sites <-> pybind / TORCH_LIBRARY bindings <-> C++ functions."""

# Maintainers: compares the records of the symbol graph's bindings domain (impact/graph/:
# each copy of an op typed, grouped by op, and which ops a change reaches) and reads no
# fact; which files are parsed is the graph's to decide, and it parses only what the
# change reaches. A side is `changed` exactly when that copy (one stub, one call, one
# binding, one declaration) differs from the base; `charged` decides the rest.

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from impact.checks.check import Check, Scope
from impact.git import View
from impact.graph import (
    OP_KINDS,
    Binding,
    BindingsGraph,
    Call,
    Copies,
    Copy,
    CppFunction,
    Key,
    LayerParam,
    Place,
    PyBinding,
    Reach,
    Route,
    Schema,
    Signature,
    Stub,
    forwarded_words,
    pybind_signature,
    reach_of_change,
    routes,
    takes,
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
    base_sites: tuple[Copy, ...] = ()  # the base's forms of copies the change rewrote


# -- comparing the copies of one op --------------------------------------------------------


def _compare_names(symbol: str, stub: Stub, bind: PyBinding, keyword_callers: set[str]
                   ) -> Iterator[_Problem]:
    """A parameter named one way in the stub and another in the `py::arg` list, at the
    same position, while no caller passes it by keyword: every call binds as before, a
    keyword caller would not (one that does is a call that fails to bind, said there)."""
    names = stub.names
    arg_names = [a.name for a in bind.args or ()]
    if len(names) != len(arg_names) or sorted(names) == sorted(arg_names):
        return
    for index, (mine, theirs) in enumerate(zip(names, arg_names, strict=True)):
        if mine != theirs and mine not in keyword_callers and theirs not in keyword_callers:
            yield _Problem(f"{symbol}@{stub.path}~{bind.path}:name:{index}",
                           Reason.PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER,
                           {"index": index, "stub_name": mine, "arg_name": theirs},
                           (stub, bind), soft=True)


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


def _route_problems(symbol: str, new: Copies, old: Copies | None) -> Iterator[_Problem]:
    """Every call of the op bound layer by layer at the head (`routes`): one that does not
    bind, or passes a literal the parameter it lands on does not take; against the same
    call at the base, a value that now lands on another parameter while the one it filled
    still exists, a call that binds now and did not, a default that fills differently."""
    after = routes(symbol, new)
    before = routes(symbol, old) if old is not None else {}
    valued: set[Key] = set()  # calls whose other values are said once, on one layer
    for ident in sorted(set(before) - set(after)) if old is not None else ():
        gone = before[ident]
        if not gone.synthetic and gone.binding.failure is None and gone.caller.key not in valued:
            # A call that ran is gone (or no longer reaches this op): what runs changed.
            valued.add(gone.caller.key)
            yield _Problem(f"{ident}:gone", Reason.CALL_GONE,
                           {"call": gone.what, "layer": gone.binding.signature.layer},
                           (gone.binding.signature.site,), soft=True, base_sites=(gone.caller,))
    for ident, route in sorted(after.items()):
        binding = route.binding
        sites = (route.caller, binding.signature.site, *binding.signature.declared)
        was = before.get(ident)
        if was is None and old is not None and not route.synthetic \
                and route.binding.failure is None and route.caller.key not in valued:
            # A call that binds and did not exist: a kernel runs where it did not.
            valued.add(route.caller.key)
            yield _Problem(f"{ident}:new", Reason.CALL_ADDED,
                           {"call": route.what, "layer": route.binding.signature.layer},
                           (route.caller, route.binding.signature.site), soft=True)
        words = {"call": route.what, "layer": binding.signature.layer,
                 # Both forms side by side, for the reader (not what the problem turns on).
                 "head_form": binding.signature.form(),
                 "base_form": was.binding.signature.form() if was is not None else ""}
        # The layer's copy as the base had it, when the change rewrote it: both forms shown.
        then = (was.binding.signature.site,) if was is not None and \
            was.binding.signature.site.key != binding.signature.site.key else ()
        if binding.failure is not None:
            yield _Problem(f"{ident}:binds", Reason.CALL_DOES_NOT_BIND,
                           {**words, **binding.refusal, **_then(route, was)}, sites,
                           base_sites=then)
            continue
        for landing in binding.landings:
            if takes(landing.param.type, landing.passed.kind) is False:
                yield _Problem(f"{ident}:kind:{landing.slot}", Reason.CALL_VALUE_KIND_DIFFERS,
                               {**words, "value": landing.passed.text,
                                "kind": str(landing.passed.kind), "param": landing.param.label,
                                "type": landing.param.type or ""}, sites)
        if was is None:
            continue
        if was.binding.failure is not None:
            yield _Problem(f"{ident}:now-binds", Reason.CALL_NOW_BINDS,
                           {**words, **{f"was_{k}": v for k, v in was.binding.refusal.items()}},
                           sites, soft=True)
            continue
        moves = [f"{ln.passed.text}: {prior.param.label} -> {ln.param.label}"
                 for ln in binding.landings
                 if (prior := was.binding.landing(ln.passed.text)) is not None
                 and binding.landing(ln.passed.text) is not None
                 and _moved(prior.param, ln.param, binding.signature)]
        if moves:
            yield _Problem(f"{ident}:moved", Reason.CALL_ARGUMENT_MOVED,
                           {**words, "moves": "; ".join(moves)}, sites, base_sites=then)
        elif not route.synthetic and route.caller.key not in valued:
            values = _values_changed(was.binding, binding)
            if values:
                # Every call binds, yet one passes other values: what runs changed.
                valued.add(route.caller.key)
                yield _Problem(f"{ident}:values", Reason.CALL_PASSES_OTHER_VALUES,
                               {**words, "values": values}, sites, soft=True)
        prior_defaults = {p.label: p for p in was.binding.defaulted}
        for param in binding.defaulted:
            prior_default = prior_defaults.get(param.label)
            if prior_default is not None and prior_default.default != param.default:
                yield _Problem(f"{ident}:default:{param.label}", Reason.DEFAULT_FILLS_DIFFERENTLY,
                               {**words, "param": param.label, "was": prior_default.default or "",
                                "now": param.default or ""}, sites, soft=True)


def _values_changed(was: Binding, now: Binding) -> str:
    """The parameters of both revisions that a call fills with other values than at the
    base (by the name, or the slot, each lands on), as `param: was -> now`; empty when
    every value is as it was. A parameter one revision lacks is left out: what its body
    does with it is the C++ code's, judged beyond the bindings."""
    def filled(binding: Binding) -> dict[str, str]:
        out = {ln.param.label: ln.passed.text for ln in binding.landings}
        out |= {p.label: f"default {p.default}" if p.default else "default"
                for p in binding.defaulted}
        return out

    before, after = filled(was), filled(now)
    both = {p.label for p in was.signature.params} & {p.label for p in now.signature.params}
    return "; ".join(f"{name}: {before.get(name, '-')} -> {after.get(name, '-')}"
                     for name in sorted(both) if before.get(name) != after.get(name))


def _moved(was: LayerParam, now: LayerParam, signature: Signature) -> bool:
    """A value lands on another parameter than it did, while the one it filled is still a
    parameter (a rename in place keeps its slot): by the binding's names, else by the
    C++ declaration's (a bare `m.def`). With no name on either side nothing says which
    parameter a slot is: a call unchanged keeps its slots, a rewritten one is trusted."""
    if was.name is not None and now.name is not None:
        return was.name != now.name and was.name in signature.names()
    if was.cpp_name is not None and now.cpp_name is not None:
        return was.cpp_name != now.cpp_name and was.cpp_name in {
            p.cpp_name for p in signature.params}
    return False


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
            problems.append(_Problem(f"{symbol}@{stub.path}:unbound", Reason.STUB_UNBOUND,
                                     _unbound_words(symbol, stub, copies), (stub,)))
        for bind in copies.scoped(stub, binds):
            if bind.args is not None:
                problems += _compare_names(symbol, stub, bind, keyword_callers)
            problems += _tensor_abi(symbol, stub, copies.bound_functions(bind))
    problems += _forwarded_problems(symbol, copies)
    problems += _route_problems(symbol, copies, old)
    if binds and not stubs and not copies.calls.get(symbol) and copies.stub_style:
        problems.append(_Problem(f"{symbol}:python-missing", Reason.PYTHON_SIDE_MISSING, {},
                                 tuple(binds)))
    for bind in binds:
        functions = copies.bound_functions(bind)
        ident = f"{symbol}@{bind.path}:{bind.line}"
        for declared, defined in copies.undefined(bind):
            problems.append(_Problem(
                f"{symbol}:undefined:{declared.qualified}@{declared.path}",
                Reason.DECLARATION_WITHOUT_DEFINITION,
                {"function": declared.qualified, "declared": len(declared.params),
                 "defined": len(defined.params)}, (declared, defined)))
        if bind.args is not None:
            problems += _compare_cpp(ident, len(bind.args), "the py::arg list", bind,
                                     functions)
            continue
        if pybind_signature(bind, functions) is not None:
            continue  # every call of it is bound as pybind binds it (`_route_problems`)
        # No py::arg and no one parameter list (#if-guarded parameters, an overload set of
        # several counts): a call's count must fit one, and pybind ignores C++ defaults.
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


def _forwarded_problems(symbol: str, copies: Copies) -> Iterator[_Problem]:
    """A forwarded call of class `symbol` whose `__call__` no file read defines, or whose
    decorators may change its signature: nothing binds it, so only a run can tell."""
    for call in copies.forwarded.get(symbol, []):
        for cls, module in call.targets:
            if cls != symbol:
                continue
            where = f"{symbol}|{call.path}:{call.function}:{call.callee}"
            # What the call passes on: a call rewritten is the change's problem, not the
            # base's in the same words.
            passes = {"positional": call.positional, "keywords": ", ".join(call.keywords)}
            found = copies.callees_of(call, cls, module)
            if not found:
                yield _Problem(f"{where}:callee-not-read", Reason.FORWARDED_CALLEE_NOT_READ,
                               {"call": forwarded_words(call), "cls": cls, "module": module,
                                **passes}, (call,), soft=True)
            for callee in found:
                if not callee.signature_known:
                    yield _Problem(f"{where}:signature@{callee.path}",
                                   Reason.FORWARDED_CALLEE_SIGNATURE_UNKNOWN,
                                   {"call": forwarded_words(call), "cls": cls,
                                    "decorators": ", ".join(callee.decorators) or "none",
                                    **passes},
                                   (call, callee), soft=True)


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


# The same disagreement seen from a caller when no py::arg list exists: pybind then
# ignores C++ default arguments, and the sentence says so.
_IGNORING_DEFAULTS = {
    Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS: Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS_NO_DEFAULTS,
    Reason.CPP_ARGUMENT_COUNT_DIFFERS: Reason.CPP_ARGUMENT_COUNT_DIFFERS_NO_DEFAULTS,
}


class BindingsCheck(Check):
    """What it checks:
        For each bound op — an op is its extension module, its name and its backend —
        every concrete call of it, bound layer by layer as Python, pybind11 and torch's
        dispatcher bind it, at the base and at the head: each Python call of a stub
        (`@compile_ops`) to the stub and to the binding its wrapper forwards the call to,
        the calls the stub accepts (every parameter; only those without a default), each
        call straight into an extension to the `m.def` of the module it imports, each
        `torch.ops` call to its schema, each call of a forwarder the map names
        (`cute.compile(obj, *args, **kw)`, `call_forwarders`) to the `__call__` of
        `obj`'s class. A layer is the `py::arg` list (names, defaults,
        `py::kw_only()`), a bare `m.def`'s C++ declaration (by position, every parameter
        required: pybind ignores C++ defaults), or the schema. Beside the calls: the
        `py::arg` list or schema against the C++ declarations it binds (`&ns::f` binds
        `ns::f`; an overload set is one function) of every backend, the boxed wrapper
        against its schema, aiter's `develop=` flag against the declarations' tensor type,
        and each stub's module against the module -> sources map. Only ops whose copies
        the change altered are compared.

    Why a break hurts at run time:
        The lists are written two to four times by hand. A call that no longer binds
        raises TypeError before any kernel runs; a value that lands on another parameter
        (an insertion before the ones a positional caller passes, two same-typed
        parameters swapped) silently computes something else.

    Example:
        Breaks: a stub drops a parameter its `py::arg` list keeps; a stub default the
        `py::arg` list lacks (the stub's call without it fails); a parameter inserted in
        the middle of every list while a caller still passes the old order; `None` passed
        to a parameter that became `at::Tensor&`; a definition that gains a parameter its
        bound declaration lacks (the module fails to load); a stub that turns
        `develop=True` on while C++ still takes `torch::Tensor&`. Does not break: the
        same change made on every side and every caller; a default only the `py::arg`
        list has (every call passes the value); a comment edit.

    When it says changed instead:
        A call that did not bind at the base and binds now, one that passes other
        values, a new call, a call gone, or a default that fills a parameter differently
        (what runs changed); a problem on a copy the base could not read; a parameter
        that exists only under `#if` in C++; a name that differs between the stub and
        `py::arg` while no caller passes it by keyword; a binding the parser cannot
        read; an op file whose code changed beyond the facts compared here; a
        forwarded call whose first argument's class is not known, whose `__call__` is
        not read (inherited, or in a file not read), or whose `__call__` carries a
        decorator the map's `signature_decorators` does not name. A list
        changed alike on every side is `inert`: every call binds as before.

    Evidence:
        The call and the layer's copy as file:line (the changed one first), the layer's
        base copy when the change rewrote it, the layer's base and head forms, and what
        fails or where each value lands.
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
        for call in reach.unresolved:
            yield self._row(scope, f"forwarded:{call.path}:{call.function}:{call.callee}",
                            Status.CHANGED, Reason.FORWARDED_CALLEE_UNRESOLVED,
                            {"call": forwarded_words(call), "why": call.unresolved or ""},
                            [(call, view.name, True)])
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
            # What the base already had, the same disagreement in the same words, is not
            # the change's: none of its copies counts as moved (`charged` lists it).
            at_base = {_said(p) for p in _problems(symbol, old, None)}
            # A declaration that did not parse may hold a C++ copy of the op unseen.
            hidden = _hidden(symbol, (old, new), (base, head), reach.related | touched)
            for problem in after:
                if problem.reason == Reason.CALL_GONE and any(
                        head.failure(site.path) is not None for site in problem.base_sites):
                    continue  # not read at the head, not gone: the file's row says changed
                # A problem on a copy whose file the base could not read may be the base's
                # own (nothing shows it was not): only a run can tell.
                unseen = any(base.failure(site.path) is not None for site in problem.sites)
                soft = problem.soft or unseen or (hidden and _on_cpp(problem)) or (
                    blind and problem.key.endswith((":unbound", ":python-missing")))
                status = Status.CHANGED if soft else Status.MISMATCH
                sides = _sides(problem, old, view, _said(problem) in at_base,
                               symbol_paths & touched)
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
            elif not after and old.signature(symbol) != new.signature(symbol) \
                    and not _bound_elsewhere(symbol, (old, new)):
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


def _bound_elsewhere(symbol: str, copies: tuple[Copies, Copies]) -> bool:
    """Whether `symbol` is only the name of stubs that bind another op (`layer_norm`, with
    `fc_name="layernorm2d_fwd"`): its calls are judged under that op, so this name says
    nothing of its own (never "changed alike" beside that op's own rows)."""
    named = [stub for side in copies for stub in side.stubs_by_name.get(symbol, [])]
    return bool(named) and all(stub.symbol != symbol for stub in named) and not any(
        side.stubs.get(symbol) or side.pybind.get(symbol) or side.schemas.get(symbol)
        or side.wrappers.get(symbol) for side in copies)


def _on_cpp(problem: _Problem) -> bool:
    """Whether a problem turns on a C++ parameter list (a declaration, a definition, the
    list a binding without `py::arg` takes): a broken declaration may be another one."""
    return any(isinstance(site, CppFunction) for site in (*problem.sites, *problem.base_sites))


def _hidden(symbol: str, copies: tuple[Copies, Copies],
            graphs: tuple[BindingsGraph, BindingsGraph], paths: set[str]) -> bool:
    """Whether a declaration that did not parse, in one of `paths` at either revision,
    spells the op or a name one of its copies has: what is missing may be there."""
    names = {symbol} | {c.name for side in copies for c in side.op_copies(symbol)}
    return any(names & graph.unsure(path) for graph in graphs for path in paths)


# Details a problem carries for its reader, not part of what it says: the base's and the
# head's forms of the list it is about, and of the call (`_then`).
_FORMS = ("head_form", "base_form", "base_call", "head_call", "base_layer",
          "closest_bound")


def _unbound_words(symbol: str, stub: Stub, copies: Copies) -> dict[str, str]:
    """What a finding on a stub no binding serves names: the op, the module the stub
    loads, and the bound names closest to the op's among the files read (a renamed
    binding is the usual cause)."""
    words = {"symbol": symbol}
    if stub.module:
        words["loads"] = stub.module
    closest = difflib.get_close_matches(symbol, sorted(set(copies.pybind) | set(copies.schemas)),
                                        n=3, cutoff=0.75)
    if closest:
        words["closest_bound"] = ", ".join(closest)
    return words


def _then(route: Route, was: Route | None) -> dict[str, str]:
    """For a call that does not bind now but bound at the base: what the call passed and
    the layer took then, beside what they are now (the forms that changed only)."""
    if was is None or was.binding.failure is not None:
        return {}
    then: dict[str, str] = {}
    if isinstance(route.caller, Call) and isinstance(was.caller, Call):
        then |= {"base_call": was.caller.form(), "head_call": route.caller.form()}
    if was.binding.signature.form() != route.binding.signature.form():
        then["base_layer"] = was.binding.signature.form()
    return then


def _said(problem: _Problem) -> tuple[str, Reason, str]:
    """What a problem says, for 'did the base say the same'."""
    return problem.key, problem.reason, repr(sorted(
        (k, v) for k, v in problem.details.items() if k not in _FORMS))


def _sides(problem: _Problem, old: Copies, view: View, preexisting: bool,
           touched: set[str]) -> list[tuple[Copy | Place, str, bool]]:
    """A problem's copies as sides, each with whether it moved: none when the base had
    the problem; else a copy moved when what the problem turns on moved (`Copy.shape`),
    or, when none did (a call unchanged while a copy it reaches changed), the problem's
    copies in the touched files, else the touched files of the op themselves."""
    then: list[tuple[Copy | Place, str, bool]] = [
        (site, ViewName.BASE, False) for site in problem.base_sites]
    if preexisting:
        return [(site, view.name, False) for site in problem.sites] + then
    sides: list[tuple[Copy | Place, str, bool]] = [
        (site, view.name, site.shape not in old.shapes) for site in problem.sites]
    if any(moved for _, _, moved in sides):
        return sides + then
    sides = [(site, revision, site.path in touched) for site, revision, _ in sides]
    if any(moved for _, _, moved in sides):
        return sides + then
    return sides + then + _files_moved(touched, view)


def _files_moved(paths: set[str], view: View) -> list[tuple[Copy | Place, str, bool]]:
    """Whole files as the sides of a row, each a copy that moved."""
    return [(Place(p, 0), view.name, True) for p in sorted(paths)]
