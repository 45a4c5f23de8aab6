"""Every concrete call of one bound op, bound layer by layer: each Python call site of a
stub (to the stub, then to the binding its wrapper forwards the call to), the calls a
stub itself accepts (to the binding), each call straight into an extension (to the
`m.def` of the module it imports) and each `torch.ops` call (to the schema).

Maintainers: builds `Route`s from one snapshot's `Copies` (impact/graph/bindings.py)
and binds them with impact/graph/call_binding.py; decides no row. A route's `ident`
names the same call at both revisions (its file, its function, its place among the
calls there of that op, the layer and the file of the layer's copy), never a line, so
impact/checks/bindings.py can compare a call's binding at the base with the head's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from impact.graph.binding_records import Call, Copy, ForwardedCall, PyBinding
from impact.graph.bindings import Copies
from impact.graph.call_binding import (
    Binding,
    Shape,
    Signature,
    bind,
    callee_signature,
    pybind_signature,
    schema_signature,
    stub_calls,
    stub_signature,
    wrapper_signature,
)

CTYPES = "ctypes"


@dataclass(frozen=True)
class Route:
    """One call bound to one layer: `caller` is the Call (or, for the calls a stub
    accepts, the Stub), `what` says which call in words, `binding` how it binds."""

    ident: str
    caller: Copy
    what: str
    binding: Binding
    synthetic: bool = False  # a call the stub accepts, not one written in the tree


def _ordinals(calls: Sequence[Call]) -> dict[int, str]:
    """Each call's place among the calls of its op in its function: `f#0`, `f#1`."""
    seen: dict[tuple[str, str | None], int] = defaultdict(int)
    out: dict[int, str] = {}
    for call in sorted(calls, key=lambda c: (c.path, c.line)):
        where = (call.path, call.function)
        out[id(call)] = f"{call.path}:{call.function}#{seen[where]}"
        seen[where] += 1
    return out


def _call_words(call: Call) -> str:
    return f"the call in {call.function}()" if call.function else "the module-level call"


def forwarded_words(call: ForwardedCall) -> str:
    """How a finding names a forwarded call."""
    where = f" in {call.function}()" if call.function else " at module level"
    return f"the {call.forwarder}({call.callee}, ...) call{where}"


def _pybind(copies: Copies, bind_site: PyBinding) -> Signature | None:
    return pybind_signature(bind_site, copies.bound_functions(bind_site))


def routes(symbol: str, copies: Copies) -> dict[str, Route]:
    """Every route of `symbol`'s calls in one snapshot, by ident."""
    found: dict[str, Route] = {}
    for route in _all(symbol, copies):
        found.setdefault(route.ident, route)
    return found


def _all(symbol: str, copies: Copies) -> Iterator[Route]:
    stubs = [s for s in copies.stubs.get(symbol, []) if s.ffi_type != CTYPES]
    binds = copies.pybind.get(symbol, [])
    schemas = copies.schemas.get(symbol, [])
    for stub in stubs:
        scoped = copies.scoped(stub, binds)
        layers = [sig for b in scoped if (sig := _pybind(copies, b)) is not None]
        for label, shape in stub_calls(stub):
            for layer in layers:
                yield Route(f"{symbol}|stub:{stub.path}:{stub.name}|{label}|binding@"
                            f"{layer.site.path}", stub, f"the stub's call with {label}",
                            bind(shape, layer), synthetic=True)
        callers = copies.callers(stub)
        ordinals = _ordinals(callers)
        for call in callers:
            shape = Shape.of(call)
            own = f"{symbol}|{ordinals[id(call)]}"
            yield Route(f"{own}|stub@{stub.path}", call, _call_words(call),
                        bind(shape, stub_signature(stub)))
            for layer in layers:
                # The stub's wrapper forwards the call as written (`op(*args, **kwargs)`).
                yield Route(f"{own}|binding@{layer.site.path}", call, _call_words(call),
                            bind(shape, layer))
    for wrapper in copies.wrappers.get(symbol, []):
        callers = copies.callers(wrapper)
        ordinals = _ordinals(callers)
        for call in callers:
            yield Route(f"{symbol}|{ordinals[id(call)]}|wrapper@{wrapper.path}", call,
                        _call_words(call), bind(Shape.of(call), wrapper_signature(wrapper)))
    if not copies.stubs_by_name.get(symbol) and not copies.wrappers.get(symbol):
        direct = [c for c in copies.calls.get(symbol, [])
                  if not c.through_torch_ops and c.receiver != "."]
        ordinals = _ordinals(direct)
        for call in direct:
            for bind_site in copies.reached(call, binds):
                layer = _pybind(copies, bind_site)
                if layer is not None:
                    yield Route(f"{symbol}|{ordinals[id(call)]}|binding@{bind_site.path}",
                                call, _call_words(call), bind(Shape.of(call), layer))
    # A forwarder's call binds what it passes on to the `__call__` of the class its first
    # argument is (the `callee_signature` route); one whose `__call__` is not read or
    # whose signature a decorator may change has no route (the check says changed).
    forwarded = copies.forwarded.get(symbol, [])
    ordinals = _ordinals(forwarded)
    for call in forwarded:
        for cls, module in call.targets:
            if cls != symbol:
                continue
            for callee in copies.callees_of(call, cls, module):
                if callee.signature_known:
                    yield Route(f"{symbol}|{ordinals[id(call)]}|callee@{callee.path}", call,
                                forwarded_words(call),
                                bind(Shape.of(call), callee_signature(callee)))
    through = [c for c in copies.calls.get(symbol, []) if c.through_torch_ops]
    ordinals = _ordinals(through)
    for schema in schemas:
        for call in through:
            if schema.namespace and f"torch.ops.{schema.namespace}" not in call.receivers:
                continue
            yield Route(f"{symbol}|{ordinals[id(call)]}|schema@{schema.path}:"
                        f"{schema.namespace}.{schema.overload}", call, _call_words(call),
                        bind(Shape.of(call), schema_signature(schema)))
