"""The records the bindings domain hands out: each copy of a bound op, typed.

Maintainers: frozen data only, no behaviour beyond small derived properties; built by
`impact/graph/bindings.py` from binding facts, read by impact/checks/bindings.py, which
sees no fact. A copy's `key` is opaque: compare or hash it, never take it apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from impact.graph.records import FunctionParam
from impact.kinds import FactKind, ValueKind

Key = tuple[str, str, str, str]  # (path, kind, name, what the fact states, lines left out)
VAR_POSITIONAL, VAR_KEYWORD, KEYWORD_ONLY = "var-positional", "var-keyword", "keyword-only"
VAR_KINDS = (VAR_POSITIONAL, VAR_KEYWORD)  # parameters no caller fills by name
TORCH_OPS = "torch.ops"


@dataclass(frozen=True)
class Place:
    """A file and a line a row names (0: the whole file)."""

    path: str
    line: int


@dataclass(frozen=True)
class Failure:
    """A file that does not parse: where, and why."""

    path: str
    line: int
    reason: str


@dataclass(frozen=True, eq=False)
class Copy:
    """One fact of an op file that states part of an op: a copy of its argument list, or
    what links copies (a module entry, an expansion, an unreadable binding). Two copies
    are one when their keys are equal; a copy moved when the base holds none with its
    key. `shape` is what a disagreement between copies turns on: the key, less a
    call's argument text."""

    kind: FactKind
    path: str
    line: int
    name: str
    key: Key
    shape: Key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Copy) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


@dataclass(frozen=True, eq=False)
class Stub(Copy):
    """A Python op stub (`@compile_ops`): the op `symbol` it binds (its `fc_name`, else
    its own name), the extension `module` it names, and `file_module`, the dotted
    module of its own file."""

    symbol: str
    module: str | None
    ffi_type: str | None
    develop: bool | None  # None when not a literal
    params: tuple[FunctionParam, ...]
    file_module: str | None
    sources: tuple[str, ...] = ()  # the source tails its decorator builds it from (`srcs=`)

    @property
    def names(self) -> list[str]:
        """Its parameters a caller can fill by name (not `*args`, `**kwargs`)."""
        return [p.name for p in self.params if p.kind not in VAR_KINDS]


@dataclass(frozen=True, eq=False)
class Wrapper(Copy):
    """A module-level Python function that calls into an extension (flash-attention's
    `_flash_attn_forward`): its callers bind to its `params` as Python binds them;
    `file_module` is the dotted module of its file."""

    params: tuple[FunctionParam, ...]
    file_module: str | None
    reaches: tuple[str, ...] = ()  # the op names it calls into (an op only where bound)


@dataclass(frozen=True)
class Passed:
    """A value a call passes: its code as written (cut short) and its kind."""

    text: str
    kind: ValueKind


@dataclass(frozen=True, eq=False)
class Call(Copy):
    """A Python call of an op: through `receivers` (`.` for a stub of its own file), in
    the caller `function`, with `positional` arguments (-1: `*args`) and `keywords`
    (`**` for a spread); `passed` and `passed_keywords` are the values themselves (the
    spread ones left out)."""

    receiver: str | None
    receivers: tuple[str, ...]
    function: str | None
    positional: int
    keywords: tuple[str, ...]
    passed: tuple[Passed, ...] = ()
    passed_keywords: tuple[tuple[str, Passed], ...] = ()

    @property
    def through_torch_ops(self) -> bool:
        return any(r.startswith(TORCH_OPS) for r in self.receivers)

    def form(self) -> str:
        """What the call passes as a reviewer reads it: `(q, k, *..., scale=s, **...)`
        (a spread's values are not known)."""
        parts = [p.text for p in self.passed]
        parts += ["*..."] if self.positional < 0 else []
        parts += [f"{name}={p.text}" for name, p in self.passed_keywords]
        parts += ["**..."] if "**" in self.keywords else []
        return f"({', '.join(parts)})"


@dataclass(frozen=True, eq=False)
class ForwardedCall(Call):
    """A call of a forwarder (`cute.compile(obj, *args, **kw)`, the map's
    `call_forwarders`): what it passes after `obj` binds to `obj.__call__`. `targets`
    are the classes `obj` is an instance of, each (class, module as imported; `.` this
    file's), or `unresolved` says why they are not known (then nothing binds it)."""

    forwarder: str = ""
    callee: str = ""  # the first argument as written
    targets: tuple[tuple[str, str], ...] = ()
    unresolved: str | None = None


@dataclass(frozen=True)
class CalleeParam:
    """A parameter of a `__call__`: its name, kind and default's text (None: none)."""

    name: str
    kind: str
    default: str | None


@dataclass(frozen=True, eq=False)
class Callee(Copy):
    """A class's own `__call__` (its `name` is the class's): the parameters after `self`
    a forwarded call binds to, known only when every decorator keeps the signature (the
    map's `signature_decorators`); `file_module` is the dotted module of its file."""

    params: tuple[CalleeParam, ...]
    decorators: tuple[str, ...]
    signature_known: bool
    file_module: str | None


@dataclass(frozen=True)
class PyArg:
    name: str
    has_default: bool
    default: str | None = None  # the default's C++ text, as written
    kw_only: bool = False  # after `py::kw_only()`
    pos_only: bool = False  # before `py::pos_only()`


@dataclass(frozen=True, eq=False)
class PyBinding(Copy):
    """A pybind `m.def`: the C++ `function` it binds (as spelled, `qualified_function`),
    its `py::arg` list (None when it has none) and the `#define` it sits in."""

    function: str | None
    qualified_function: str | None
    args: tuple[PyArg, ...] | None
    macro: str | None


@dataclass(frozen=True)
class SchemaArg:
    name: str
    type: str
    default: str | None
    kw_only: bool


@dataclass(frozen=True, eq=False)
class Schema(Copy):
    """A TORCH_LIBRARY schema `def`, with the function it names (if any)."""

    namespace: str | None
    overload: str | None
    args: tuple[SchemaArg, ...]
    function: str | None


@dataclass(frozen=True, eq=False)
class Impl(Copy):
    """A TORCH_LIBRARY `m.impl`: the C++ function registered for an op."""

    function: str | None
    namespace: str | None


@dataclass(frozen=True, eq=False)
class Boxed(Copy):
    """A boxed wrapper: the highest `stack[i]` it reads."""

    max_index: int


@dataclass(frozen=True)
class CppParam:
    type: str
    conditional: bool  # declared under `#if` only
    name: str | None = None  # as the declaration spells it (None: unnamed)


@dataclass(frozen=True, eq=False)
class CppFunction(Copy):
    """A C++ function declaration or definition, and its parameters."""

    qualified: str
    params: tuple[CppParam, ...]
    member: bool
    extern_c: bool
    definition: bool = False  # a definition (with a body), not only a declaration


@dataclass(frozen=True, eq=False)
class OpModule(Copy):
    """A module -> sources map entry: the source file tails the extension builds from."""

    files: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class PybindModule(Copy):
    """A `PYBIND11_MODULE` body, with the bare binding macros it expands."""

    expands: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Unreadable(Copy):
    """A binding the parser could not read, and why."""

    reason: str


@dataclass(frozen=True)
class OpFile:
    """What an op file states beyond its copies, for 'did its code change beyond them':
    its parse failure, its whole-file digest, the digest of its code beyond the binding
    facts, and every fact it states but the digest (lines left out, repeats kept)."""

    failure: Failure | None
    content: str | None
    beyond: str | None
    stated: tuple[tuple[str, str, str], ...]


__all__ = [
    "KEYWORD_ONLY",
    "TORCH_OPS",
    "VAR_KEYWORD",
    "VAR_KINDS",
    "VAR_POSITIONAL",
    "Boxed",
    "Call",
    "Callee",
    "CalleeParam",
    "Copy",
    "CppFunction",
    "CppParam",
    "Failure",
    "ForwardedCall",
    "Impl",
    "Key",
    "OpFile",
    "OpModule",
    "Passed",
    "Place",
    "PyArg",
    "PyBinding",
    "PybindModule",
    "Schema",
    "SchemaArg",
    "Stub",
    "Unreadable",
    "Wrapper",
]
