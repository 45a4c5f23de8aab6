"""How one call of a bound op binds, as Python, pybind11 and torch's dispatcher bind it:
which parameter each passed value lands on, which parameters a default fills, or why the
call raises `TypeError` before any kernel runs.

Maintainers: pure functions over the bindings domain's records (impact/graph/
binding_records.py); reads no fact, no git. A signature is one layer a call passes
through (a stub, a `py::arg` list, a bare `m.def`'s C++ declaration, a schema). What is
unknown stays unknown: a `*args`/`**kwargs` spread makes a binding `opaque` (only what
it surely breaks is said), a value that is not a literal has no kind, a C++ type we
cannot read accepts anything. impact/checks/bindings.py compares bindings at two
revisions; nothing here decides a row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from impact.graph.binding_records import (
    KEYWORD_ONLY,
    VAR_KEYWORD,
    VAR_POSITIONAL,
    Call,
    Callee,
    Copy,
    CppFunction,
    Passed,
    PyBinding,
    Schema,
    Stub,
    Wrapper,
)
from impact.kinds import ValueKind
from impact.reasons import Refusal

POSITIONAL = "positional"
POSITIONAL_ONLY = "positional-only"
_BY_POSITION = (POSITIONAL, POSITIONAL_ONLY)
_BY_NAME = (POSITIONAL, KEYWORD_ONLY)


@dataclass(frozen=True)
class LayerParam:
    """One parameter of a layer: its slot `index`, its `name` (None: a bare `m.def`
    binds by position only), how it is filled, whether a default fills it (and the
    default's text), and its C++ or schema type when known."""

    index: int
    name: str | None
    kind: str
    has_default: bool
    default: str | None = None
    type: str | None = None
    cpp_name: str | None = None  # a bare `m.def`'s C++ parameter name: no call can use
    # it, but it says which parameter a slot is when the list changes

    @property
    def label(self) -> str:
        """How a finding names it: its name, else the C++ declaration's, else its slot."""
        return self.name or self.cpp_name or f"#{self.index}"


@dataclass(frozen=True)
class Signature:
    """The parameters of one layer a call passes through, and the copy that states it."""

    layer: str  # what the findings call it: "stub", "py::arg list", "schema", ...
    site: Copy
    params: tuple[LayerParam, ...]
    # The C++ declaration the parameters are read from when the site states none itself
    # (a bare `m.def`): a copy of the list too, the one a change of it edits.
    declared: tuple[Copy, ...] = ()

    def names(self) -> set[str]:
        return {p.name for p in self.params if p.name is not None}

    def form(self) -> str:
        """The parameter list as a reviewer reads it: `(out, input=None, *, scale)`, or
        the C++ types of a bare `m.def`."""
        parts: list[str] = []
        starred = False
        for param in self.params:
            if param.kind == KEYWORD_ONLY and not starred:
                parts.append("*")
                starred = True
            text = param.name if param.name is not None else " ".join(
                t for t in (param.type or "?", param.cpp_name) if t)
            if param.kind == VAR_POSITIONAL:
                text, starred = "*" + text, True
            elif param.kind == VAR_KEYWORD:
                text = "**" + text
            if param.has_default:
                text += "=" + (param.default if param.default is not None else "…")
            parts.append(text)
        return "(" + ", ".join(parts) + ")"

    def named(self, name: str) -> LayerParam | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class Shape:
    """A call as binding sees it: the values passed by position, by keyword, and
    whether it spreads `*args` or `**kwargs` (whose contents no static reading knows)."""

    positional: tuple[Passed, ...]
    keywords: tuple[tuple[str, Passed], ...]
    star: bool = False
    spread: bool = False

    @classmethod
    def of(cls, call: Call) -> Shape:
        return cls(call.passed, call.passed_keywords, call.positional < 0, "**" in call.keywords)


@dataclass(frozen=True)
class Landing:
    """Where one passed value lands: the slot it was passed in (`#2`, `name=`)."""

    slot: str
    passed: Passed
    param: LayerParam


@dataclass(frozen=True)
class Binding:
    """One call bound to one signature: where each value lands and which parameters a
    default fills, or the `failure` (`TypeError`) that stops it. `opaque`: a spread
    hides what more it passes, so a missing parameter is not concluded."""

    signature: Signature
    landings: tuple[Landing, ...]
    defaulted: tuple[LayerParam, ...]
    failure: Refusal | None
    opaque: bool
    why: tuple[tuple[str, object], ...] = ()  # the refusal's values, for its sentence

    @property
    def refusal(self) -> dict[str, object]:
        """The refusal and its values, as a row's details carry them (empty: it binds)."""
        if self.failure is None:
            return {}
        return {"refusal": str(self.failure), **dict(self.why)}

    def landing(self, text: str) -> Landing | None:
        """Where the value written `text` lands, when the call passes it once."""
        found = [ln for ln in self.landings if ln.passed.text == text]
        return found[0] if len(found) == 1 else None


def bind(shape: Shape, signature: Signature) -> Binding:
    """Bind `shape` to `signature` as CPython's argument parsing (and pybind11's, and the
    dispatcher's, which follow the same rules) would."""
    params = signature.params
    ordered = [p for p in params if p.kind in _BY_POSITION]
    var_pos = next((p for p in params if p.kind == VAR_POSITIONAL), None)
    var_kw = next((p for p in params if p.kind == VAR_KEYWORD), None)
    landings: list[Landing] = []
    opaque = shape.star or shape.spread

    def failed(refusal: Refusal, **why: object) -> Binding:
        return Binding(signature, tuple(landings), (), refusal, opaque,
                       tuple(sorted(why.items())))

    for index, value in enumerate(shape.positional):
        if index < len(ordered):
            landings.append(Landing(f"#{index}", value, ordered[index]))
        elif var_pos is not None:
            landings.append(Landing(f"#{index}", value, var_pos))
        else:
            return failed(Refusal.TOO_MANY, given=len(shape.positional), most=len(ordered))
    filled = {ln.param.index for ln in landings}
    for name, value in shape.keywords:
        param = next((p for p in params if p.name == name and p.kind in _BY_NAME), None)
        if param is None:
            if var_kw is not None:
                landings.append(Landing(f"{name}=", value, var_kw))
                continue
            if not signature.names():
                return failed(Refusal.NO_NAMES, name=name)
            return failed(Refusal.UNKNOWN_KEYWORD, name=name)
        if param.index in filled:
            return failed(Refusal.GIVEN_TWICE, name=name)
        filled.add(param.index)
        landings.append(Landing(f"{name}=", value, param))
    unfilled = [p for p in params if p.index not in filled
                and p.kind not in (VAR_POSITIONAL, VAR_KEYWORD)]
    missing = [p for p in unfilled if not p.has_default]
    if missing and not opaque:
        return failed(Refusal.MISSING, missing=tuple(p.label for p in missing))
    return Binding(signature, tuple(landings), tuple(p for p in unfilled if p.has_default),
                   None, opaque)


# -- the signatures of each layer ----------------------------------------------------------


def stub_signature(stub: Stub) -> Signature:
    """A Python stub's own parameters, as Python binds a call to it."""
    return Signature("stub", stub, tuple(
        LayerParam(i, p.name, p.kind, p.has_default) for i, p in enumerate(stub.params)))


def wrapper_signature(wrapper: Wrapper) -> Signature:
    """A Python function that calls into an extension, as Python binds a call to it."""
    return Signature("Python function", wrapper, tuple(
        LayerParam(i, p.name, p.kind, p.has_default) for i, p in enumerate(wrapper.params)))


def callee_signature(callee: Callee) -> Signature:
    """A class's `__call__` after `self`, as Python binds the arguments a forwarder
    (`cute.compile(obj, *args, **kw)`) passes on to it."""
    return Signature(f"{callee.name}.__call__", callee, tuple(
        LayerParam(i, p.name, p.kind, p.default is not None, p.default)
        for i, p in enumerate(callee.params)))


def pybind_signature(bind_site: PyBinding, functions: Sequence[CppFunction]
                     ) -> Signature | None:
    """What pybind11 binds a call to: the `py::arg` list (names, defaults, `kw_only`,
    `pos_only`) with the C++ types of the declaration of that many parameters; with no
    `py::arg` list, the C++ declaration's parameters by position, every one required
    (pybind ignores C++ default arguments). None when that declaration is not one
    parameter count (an overload set of several counts, or none found)."""
    counts = {len(f.params) for f in functions}
    if bind_site.args is not None:
        sized = [f for f in functions if len(f.params) == len(bind_site.args)]
        types = [p.type for p in sized[0].params] if sized else [None] * len(bind_site.args)
        return Signature("py::arg list", bind_site, tuple(
            LayerParam(i, a.name, KEYWORD_ONLY if a.kw_only else
                  POSITIONAL_ONLY if a.pos_only else POSITIONAL,
                  a.has_default, a.default, types[i])
            for i, a in enumerate(bind_site.args)))
    if len(counts) != 1:
        return None
    declaration = functions[0]
    return Signature("m.def without py::arg", bind_site, tuple(
        LayerParam(i, None, POSITIONAL_ONLY, False, None, p.type, p.name)
        for i, p in enumerate(declaration.params)), (declaration,))


def schema_signature(schema: Schema) -> Signature:
    """A TORCH_LIBRARY schema, as the dispatcher binds a `torch.ops` call to it."""
    return Signature("schema", schema, tuple(
        LayerParam(i, a.name, KEYWORD_ONLY if a.kw_only else POSITIONAL, a.default is not None,
              a.default, a.type)
        for i, a in enumerate(schema.args)))


def stub_calls(stub: Stub) -> list[tuple[str, Shape]]:
    """The calls a stub accepts, as its wrapper forwards them to the binding: every
    parameter by position (keyword-only ones by name), and only those without a
    default. Each value is written as the parameter's own name."""
    def value(name: str) -> Passed:
        return Passed(name, ValueKind.EXPR)

    fixed = [p for p in stub.params if p.kind == POSITIONAL]
    named = [p for p in stub.params if p.kind == KEYWORD_ONLY]
    full = Shape(tuple(value(p.name) for p in fixed),
                 tuple((p.name, value(p.name)) for p in named))
    required = Shape(tuple(value(p.name) for p in fixed if not p.has_default),
                     tuple((p.name, value(p.name)) for p in named if not p.has_default))
    shapes = [("every parameter", full)]
    if required != full:
        # A caller may leave out what the stub defaults only when positions stay put:
        # the defaults must be the trailing positional ones (Python insists they are).
        shapes.append(("only the parameters without a default", required))
    return shapes


# -- the kinds a C++ or schema type takes --------------------------------------------------

_OPTIONAL = re.compile(r"\boptional\s*<|\?\s*$|\bOptional\[|^\s*(?:py::)?(?:object|handle)\b")
_POINTER = re.compile(r"\*\s*$")
_TENSOR = re.compile(r"\b(?:Tensor|aiter_tensor_t)\b")
_STRING = re.compile(r"\b(?:string|string_view|str|char\s*\*)")
_FLOATING = re.compile(r"\b(?:float|double|half|float32_t|float64_t)\b")
_INTEGRAL = re.compile(r"\b(?:int|long|short|unsigned|size_t|int\d+_t|uint\d+_t|SymInt|"
                       r"int64_t)\b")
_BOOLEAN = re.compile(r"\bbool\b")


def takes(type_text: str | None, kind: ValueKind) -> bool | None:
    """Whether a parameter of `type_text` takes a literal of `kind`: True, False, or None
    when the type or the value says nothing we can judge (an expression, a struct, a
    container). pybind11 converts an int to a float and anything to a bool, never a
    float to an int; None binds only to an optional, a pointer or an object."""
    if type_text is None or kind == ValueKind.EXPR:
        return None
    text = " ".join(type_text.replace("const", " ").replace("&", " ").split())
    if not text:
        return None
    if kind == ValueKind.NONE:
        return True if _OPTIONAL.search(text) or _POINTER.search(text) else (
            False if _judged(text) else None)
    if _OPTIONAL.search(text):
        text = re.sub(r"\boptional\s*<|>|\?|Optional\[|\]", " ", text)
    if _TENSOR.search(text):
        return False
    if _STRING.search(text):
        return kind == ValueKind.STR
    if _BOOLEAN.search(text):
        return kind != ValueKind.STR
    if _FLOATING.search(text):
        return kind in (ValueKind.INT, ValueKind.FLOAT, ValueKind.BOOL)
    if _INTEGRAL.search(text):
        return kind in (ValueKind.INT, ValueKind.BOOL)
    return None


def _judged(text: str) -> bool:
    """A type whose values a None never is: a tensor, a string, a number, a bool."""
    return any(p.search(text) for p in (_TENSOR, _STRING, _FLOATING, _INTEGRAL, _BOOLEAN))
