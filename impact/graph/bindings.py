"""The bindings domain of a snapshot's graph: the copies of each bound op of the aiter and
flash-attention family (Python stubs and calls, pybind and TORCH_LIBRARY bindings, boxed
wrappers, C++ declarations) as typed records, grouped by op, and how they link.

Maintainers: builds from binding facts (through a FactCache) of the files a question
names, never the whole tree: which files to parse comes from the tree index
(`files_naming`, the one raw-text search). Decides what a copy is (`_copy`), which copies
are one (`Copy.key`), which bindings a stub pairs with and which declarations a binding
binds (`Copies`); `impact/graph/binding_reach.py` decides which ops a change reaches.
Holds no networkx graph. impact/checks/bindings.py compares what this hands out.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from impact.extract import FactCache
from impact.facts import Fact
from impact.git import Snapshot
from impact.graph.binding_records import (
    Boxed,
    Call,
    Callee,
    CalleeParam,
    Copy,
    CppFunction,
    CppParam,
    Failure,
    ForwardedCall,
    Impl,
    Key,
    OpFile,
    OpModule,
    Passed,
    PyArg,
    PyBinding,
    PybindModule,
    Schema,
    SchemaArg,
    Stub,
    Unreadable,
    Wrapper,
)
from impact.graph.core import module_name_for, text_or_none
from impact.graph.records import FunctionParam
from impact.index import TreeIndex
from impact.kinds import FactKind, SurfaceKind, ValueKind
from impact.sourcetext import searchable_as_bytes

OP_KINDS = (SurfaceKind.OP_PYTHON, SurfaceKind.OP_CPP, SurfaceKind.OP_SOURCES_MAP)
BINDING_KINDS = (FactKind.PYBIND_DEF, FactKind.SCHEMA_DEF, FactKind.TORCH_IMPL)
# The module name torch's build (`CUDAExtension(name=...)`) gives a `PYBIND11_MODULE`.
_BUILD_NAMED = "TORCH_EXTENSION_NAME"
STATED = (FactKind.OP_STUB, FactKind.OP_WRAPPER, FactKind.OP_CALL, FactKind.PYBIND_DEF,
          FactKind.SCHEMA_DEF, FactKind.TORCH_IMPL, FactKind.BOXED_READ, FactKind.CPP_FUNCTION,
          FactKind.OP_MODULE, FactKind.PYBIND_MODULE, FactKind.BINDING_UNREADABLE,
          FactKind.OP_FORWARDED_CALL, FactKind.OP_CALLEE)
_CALL_KINDS = (FactKind.OP_CALL, FactKind.OP_FORWARDED_CALL)


def _canonical(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_canonical(v)}" for k, v in sorted(value.items())
                              if k != "line") + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    return repr(value)


def _identity(path: str, fact: Fact) -> tuple[Key, Key]:
    """A copy's key (what it states, lines left out) and its shape: whether a call fits
    a list depends on how many arguments it passes, by position and by keyword, and to
    what; a comment or another expression in one of its slots leaves a mismatch it
    already had where it was (the base's, not the change's)."""
    kind, data = str(fact.kind), dict(fact.data)
    key = (path, kind, fact.name, _canonical(data))
    if fact.kind not in _CALL_KINDS:
        return key, key
    return key, (path, kind, fact.name, _canonical(
        {k: v for k, v in data.items() if k not in ("arguments", "passed", "passed_keywords")}))


def _params(data: Mapping[str, Any]) -> tuple[FunctionParam, ...]:
    return tuple(FunctionParam(str(p["name"]), str(p.get("kind")), p.get("default") is not None)
                 for p in data.get("params", []))


def _passed(value: Any) -> Passed:
    value = value if isinstance(value, dict) else {}
    try:
        kind = ValueKind(value.get("kind"))
    except ValueError:
        kind = ValueKind.EXPR
    return Passed(str(value.get("text", "")), kind)


def _copy(path: str, fact: Fact, roots: list[str]) -> Copy:
    """The typed copy one stated fact is."""
    data = fact.data
    key, shape = _identity(path, fact)
    at = (FactKind(fact.kind), path, fact.line, fact.name, key, shape)
    if fact.kind == FactKind.OP_STUB:
        develop = data.get("develop")
        return Stub(*at, str(data.get("symbol") or fact.name), text_or_none(data.get("module")),
                    text_or_none(data.get("ffi_type")),
                    develop if isinstance(develop, bool) else None,
                    _params(data), module_name_for(path, roots),
                    tuple(str(t) for t in data.get("sources") or []))
    if fact.kind == FactKind.OP_WRAPPER:
        return Wrapper(*at, _params(data), module_name_for(path, roots),
                       tuple(str(n) for n in data.get("reaches") or []))
    if fact.kind == FactKind.OP_CALL:
        return Call(*at, data.get("receiver"),
                    tuple(str(r) for r in data.get("receivers") or [data.get("receiver", "")]),
                    text_or_none(data.get("function")), int(data.get("positional", 0)),
                    tuple(data.get("keywords", [])),
                    tuple(_passed(v) for v in data.get("passed", [])),
                    tuple((str(k), _passed(v))
                          for k, v in sorted((data.get("passed_keywords") or {}).items())))
    if fact.kind == FactKind.OP_FORWARDED_CALL:
        unresolved = data.get("unresolved")
        return ForwardedCall(
            *at, None, (), text_or_none(data.get("function")), int(data.get("positional", 0)),
            tuple(data.get("keywords", [])), tuple(_passed(v) for v in data.get("passed", [])),
            tuple((str(k), _passed(v))
                  for k, v in sorted((data.get("passed_keywords") or {}).items())),
            forwarder=fact.name, callee=str(data.get("callee") or ""),
            targets=tuple((str(t.get("class")), str(t.get("module")))
                          for t in data.get("targets") or [] if isinstance(t, dict)),
            unresolved=None if unresolved is None else str(unresolved))
    if fact.kind == FactKind.OP_CALLEE:
        return Callee(*at, tuple(CalleeParam(str(p["name"]), str(p.get("kind")),
                                             text_or_none(p.get("default")))
                                 for p in data.get("params", [])),
                      tuple(str(d) for d in data.get("decorators") or []),
                      bool(data.get("signature_known")), module_name_for(path, roots))
    if fact.kind == FactKind.PYBIND_DEF:
        args = data.get("args")
        return PyBinding(*at, text_or_none(data.get("function")),
                         text_or_none(data.get("qualified_function")),
                         None if args is None else tuple(
                             PyArg(str(a["name"]), bool(a.get("has_default")),
                                   text_or_none(a.get("default")), bool(a.get("kw_only")),
                                   bool(a.get("pos_only"))) for a in args),
                         text_or_none(data.get("macro")))
    if fact.kind == FactKind.SCHEMA_DEF:
        return Schema(*at, text_or_none(data.get("namespace")),
                      text_or_none(data.get("overload")),
                      tuple(SchemaArg(str(a["name"]), str(a.get("type")), a.get("default"),
                                      bool(a.get("kw_only")))
                            for a in (data.get("schema") or {}).get("args", [])),
                      text_or_none(data.get("function")))
    if fact.kind == FactKind.TORCH_IMPL:
        return Impl(*at, text_or_none(data.get("function")),
                    text_or_none(data.get("namespace")))
    if fact.kind == FactKind.BOXED_READ:
        return Boxed(*at, int(data.get("max_index", -1)))
    if fact.kind == FactKind.CPP_FUNCTION:
        return CppFunction(*at, str(data.get("qualified") or fact.name),
                           tuple(CppParam(str(p.get("type") or ""), bool(p.get("conditional")),
                                          text_or_none(p.get("name")))
                                 for p in data.get("params", [])),
                           bool(data.get("member")), bool(data.get("extern_c")),
                           bool(data.get("is_definition")))
    if fact.kind == FactKind.OP_MODULE:
        return OpModule(*at, tuple(str(t) for t in data.get("files", [])))
    if fact.kind == FactKind.PYBIND_MODULE:
        return PybindModule(*at, tuple(str(m) for m in data.get("expands", [])))
    return Unreadable(*at, str(data.get("reason")))


@dataclass(frozen=True)
class Copies:
    """Every copy the files of one snapshot hold, by op: stubs by the op they bind
    (`stubs`) and by their own name (`stubs_by_name`), calls by the name they call,
    bindings by op, C++ declarations and boxed wrappers by function name, module
    entries by module, expansions by file. Read-only."""

    stubs: Mapping[str, list[Stub]]
    stubs_by_name: Mapping[str, list[Stub]]
    wrappers: Mapping[str, list[Wrapper]]
    calls: Mapping[str, list[Call]]
    pybind: Mapping[str, list[PyBinding]]
    schemas: Mapping[str, list[Schema]]
    boxed: Mapping[str, list[Boxed]]
    impls: Mapping[str, list[Impl]]
    cpp: Mapping[str, list[CppFunction]]
    modules: Mapping[str, OpModule]
    expands: Mapping[str, set[str]]
    keys: frozenset[Key]
    shapes: frozenset[Key]
    has_sources_map: bool
    # The extension modules a file is compiled into (from the build, or a
    # `PYBIND11_MODULE` that names its module), for the files any source says.
    file_modules: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Whether the snapshot holds a path (a module beside a caller shadows any other).
    exists: Callable[[str], bool] = field(default=lambda path: False)
    # Forwarded calls (`cute.compile(obj, ...)`) by each class `obj` may be, and the
    # `__call__`s of classes by class name.
    forwarded: Mapping[str, list[ForwardedCall]] = field(default_factory=dict)
    callees: Mapping[str, list[Callee]] = field(default_factory=dict)

    @classmethod
    def of(cls, copies: Iterable[Copy],
           modules_of: Callable[[str], frozenset[str]] | None = None,
           exists: Callable[[str], bool] | None = None) -> Copies:
        tables: dict[type, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
        stubs: dict[str, list[Stub]] = defaultdict(list)
        modules: dict[str, OpModule] = {}
        expands: dict[str, set[str]] = defaultdict(set)
        named: dict[str, set[str]] = defaultdict(set)
        forwarded: dict[str, list[ForwardedCall]] = defaultdict(list)
        keys, shapes = set(), set()
        for copy in copies:
            keys.add(copy.key)
            shapes.add(copy.shape)
            if isinstance(copy, Stub):
                stubs[copy.symbol].append(copy)
                tables[Stub][copy.name].append(copy)
            elif isinstance(copy, OpModule):
                modules[copy.name] = copy
            elif isinstance(copy, ForwardedCall):
                for target, _ in copy.targets:
                    if copy not in forwarded[target]:
                        forwarded[target].append(copy)
            elif isinstance(copy, PybindModule):
                expands[copy.path] |= set(copy.expands)
                if copy.name.isidentifier() and copy.name != _BUILD_NAMED:
                    named[copy.path].add(copy.name)  # `PYBIND11_MODULE(flash_attn_2_cuda, m)`
            elif not isinstance(copy, Unreadable):
                tables[type(copy)][copy.name].append(copy)
        file_modules: dict[str, frozenset[str]] = {}
        for path in {s.path for sites in tables[PyBinding].values() for s in sites}:
            found = set(modules_of(path)) if modules_of is not None else set()
            found |= named.get(path, set())
            if found:
                file_modules[path] = frozenset(found)
        return cls(dict(stubs), dict(tables[Stub]), dict(tables[Wrapper]), dict(tables[Call]),
                   dict(tables[PyBinding]),
                   dict(tables[Schema]), dict(tables[Boxed]), dict(tables[Impl]),
                   dict(tables[CppFunction]), modules, dict(expands), frozenset(keys),
                   frozenset(shapes), bool(modules), file_modules,
                   exists or (lambda path: False), dict(forwarded), dict(tables[Callee]))

    def symbols(self) -> set[str]:
        """The ops a stub or a binding names (and the classes forwarded calls bind to)."""
        return set(self.stubs) | set(self.pybind) | set(self.schemas) | set(self.wrappers) \
            | set(self.forwarded)

    def callees_of(self, call: ForwardedCall, cls: str, module: str) -> list[Callee]:
        """The `__call__`s of class `cls` of `module` (as the call's file imports it;
        `.`: the call's own file) among the files read."""
        here = posixpath.dirname(call.path)
        if module == ".":
            return [c for c in self.callees.get(cls, []) if c.path == call.path]
        dots = len(module) - len(module.lstrip("."))
        if dots:
            folder = here
            for _ in range(dots - 1):
                folder = posixpath.dirname(folder)
            stem = posixpath.normpath(posixpath.join(folder, *module.lstrip(".").split(".")))
            files = {stem + ".py", posixpath.join(stem, "__init__.py")}
            return [c for c in self.callees.get(cls, []) if c.path in files]
        return [c for c in self.callees.get(cls, []) if c.file_module == module]

    @property
    def stub_style(self) -> bool:
        """Whether this tree declares its Python side as stubs (aiter), so a binding without
        one is a half-removed op; trees that only call their extensions (flash-attention)
        are not held to that."""
        return any(self.stubs.values())

    def op_copies(self, symbol: str) -> list[Copy]:
        """Every copy of one op: stubs, calls, bindings and the C++ functions they name.
        The calls of a stub whose `fc_name` binds it to `symbol` under another name
        (`layer_norm` for `layernorm2d_fwd`) are calls of the op too."""
        stubs = self.stubs.get(symbol, [])
        renamed = sorted({s.name for s in stubs if s.name != symbol})
        found: list[Copy] = [*stubs, *self.wrappers.get(symbol, []),
                             *self.pybind.get(symbol, []),
                             *self.schemas.get(symbol, []), *self.calls.get(symbol, []),
                             *(c for name in renamed for c in self.calls.get(name, [])),
                             *self.impls.get(symbol, [])]
        functions = {c.function for c in found if not isinstance(c, Stub | Wrapper)} | {symbol}
        found += [*self.forwarded.get(symbol, []), *self.callees.get(symbol, [])]
        return found + [f for name in functions if isinstance(name, str)
                        for f in self.cpp.get(name, [])]

    def signature(self, symbol: str) -> list[Key]:
        """Everything that states the op's argument list, for 'did it change at all'."""
        return sorted(c.key for c in self.op_copies(symbol))

    def bound_functions(self, bind: PyBinding) -> list[CppFunction]:
        """The C++ declarations a binding binds: `&ns::f` binds `ns::f` (or an `f` declared
        inside `ns`), never a class member of that name nor an `f` of another namespace;
        those beside the binding when there are any (each backend's own copy)."""
        function = bind.function
        if not function:
            return []
        return _near(self._spelled(bind), bind.path)

    def _spelled(self, bind: PyBinding) -> list[CppFunction]:
        """Every non-member function a binding's `&ns::f` names, anywhere."""
        function = bind.function
        if not function:
            return []
        spelled = bind.qualified_function or function
        return [site for site in self.cpp.get(function, []) if not site.member and (
            "::" not in spelled or site.qualified == spelled
            or site.qualified.endswith("::" + spelled))]

    def undefined(self, bind: PyBinding) -> list[tuple[CppFunction, CppFunction]]:
        """The bound declarations no definition of theirs matches, each with a definition
        of that name that takes another parameter count: the declaration the binding
        compiles against is then defined nowhere, and the module fails to load."""
        sites = self._spelled(bind)
        definitions = [f for f in sites if f.definition]
        found = []
        for declared in (f for f in _unguarded(sites) if not f.definition):
            same = [d for d in definitions if d.qualified == declared.qualified]
            if same and not any(len(d.params) == len(declared.params) for d in same):
                found.append((declared, same[0]))
        return found

    def functions_near(self, name: str, path: str) -> list[CppFunction]:
        """The non-member C++ functions named `name`, those beside `path` when any."""
        return _near([f for f in self.cpp.get(name, []) if not f.member], path)

    def scoped(self, stub: Stub, binds: list[PyBinding]) -> list[PyBinding]:
        """The bindings a stub pairs with: those its module is built from, when the sources
        map names them (an `x_gfx1250` module's binding is another extension's op)."""
        if stub.sources:
            files = self._built_from(stub.sources)
        else:
            files = self._module_files(stub.module) if stub.module else None
        if files is None:
            return binds
        return [b for b in binds if b.path in files] or binds

    def _module_files(self, module: str) -> set[str] | None:
        """The files that build `module` (its sources and the files whose bindings its
        PYBIND11_MODULE expands), or None when the sources map does not say."""
        entry = self.modules.get(module)
        if entry is None:
            return None
        return self._built_from(entry.files)

    def _built_from(self, tails: Iterable[str]) -> set[str]:
        """The files whose paths end in `tails`, and those whose bindings their
        PYBIND11_MODULEs expand."""
        tails = tuple(tails)
        own = {p for p in self._paths() if any(p == t or p.endswith("/" + t)
                                                for t in tails)}
        macros = {m for p in own for m in self.expands.get(p, set())}
        return own | {s.path for sites in self.pybind.values() for s in sites
                      if s.macro in macros}

    def _paths(self) -> set[str]:
        tables: tuple[Mapping[str, list[Any]], ...] = (
            self.stubs, self.calls, self.pybind, self.schemas, self.impls, self.cpp)
        return {s.path for table in tables for sites in table.values() for s in sites} | set(
            self.expands)

    def reached(self, call: Call, binds: list[PyBinding]) -> list[PyBinding]:
        """The bindings a call straight into an extension reaches: those compiled into a
        module the call's receiver imports. A binding whose module nothing says is
        paired by its name alone (fail closed: it is compared)."""
        receivers = {r.lstrip(".") for r in call.receivers}

        def imports(module: str) -> bool:
            return any(r == module or r.endswith("." + module) or module.endswith("." + r)
                       for r in receivers)

        return [b for b in binds if b.path not in self.file_modules
                or any(imports(m) for m in self.file_modules[b.path])]

    def callers(self, stub: Stub | Wrapper) -> list[Call]:
        """The Python calls that reach `stub`: the same file's bare call, or a call through
        the stub's module or a package above it that re-exports it."""
        rivals = [*self.stubs_by_name.get(stub.name, []), *self.wrappers.get(stub.name, [])]
        found = []
        for call in self.calls.get(stub.name, []):
            if call.through_torch_ops:
                continue
            strength = _calls_stub(call, stub, self.exists)
            # A module named only by its tail (`flash_attn_interface`) is the one Python
            # finds first when another of that name is found exactly (a sibling file).
            if strength == _EXACT or (strength == _LOOSE and not any(
                    _calls_stub(call, other, self.exists) == _EXACT for other in rivals)):
                found.append(call)
        return found


def _unguarded(sites: list[CppFunction]) -> list[CppFunction]:
    """Declarations whose parameters are all unconditional (an `#if`-guarded list is
    judged elsewhere)."""
    return [f for f in sites if not any(p.conditional for p in f.params)]


def _near(sites: list[CppFunction], path: str) -> list[CppFunction]:
    """Sites in the same folder as `path` when there are any (each backend's own copy)."""
    here = [s for s in sites if posixpath.dirname(s.path) == posixpath.dirname(path)]
    return here or sites


_NONE, _LOOSE, _EXACT = 0, 1, 2


def _calls_stub(call: Call, stub: Stub | Wrapper, exists: Callable[[str], bool]) -> int:
    """How surely `call` reaches `stub`: `_EXACT` for the same file's bare call, a
    receiver that is the stub's module or a package above it, or a module Python finds
    beside the caller (a script's own folder comes first on its path); `_LOOSE` for a
    receiver that is only the tail of the stub's module; else `_NONE`."""
    module = stub.file_module
    best = _NONE
    for receiver in call.receivers:
        if receiver == ".":
            if call.path == stub.path:
                return _EXACT
            continue
        plain = receiver.lstrip(".")
        if not module or not plain:
            continue
        beside = posixpath.join(posixpath.dirname(call.path), *plain.split(".")) + ".py"
        if module == plain or beside == stub.path:
            return _EXACT
        if module.startswith(plain + "."):
            # A package above the stub's module re-exports its ops (`aiter.silu_and_mul`);
            # a plain function of a submodule it need not.
            if isinstance(stub, Stub):
                return _EXACT
            best = _LOOSE
            continue
        if module.endswith("." + plain) and not exists(beside):
            best = _LOOSE  # (a module of that name beside the caller is the one it imports)
    return best


class BindingsGraph:
    """One snapshot's op copies, read file by file as questions name the files."""

    def __init__(self, snapshot: Snapshot, cache: FactCache) -> None:
        self.snapshot = snapshot
        self.cache = cache
        self.surface = cache.surface
        self._at: dict[str, list[Copy]] = {}
        self._copies: dict[frozenset[str], Copies] = {}
        self._renamed: dict[str, str | None] = {}
        # Which extension modules a file is compiled into, when the build says (the
        # builds domain sets it); a binding no source places pairs by name alone.
        self.modules_of: Callable[[str], frozenset[str]] | None = None

    def index(self) -> TreeIndex:
        return TreeIndex.of(self.snapshot, self.surface, self.cache.store)

    def _facts(self, path: str) -> list[Fact]:
        return self.cache.facts(self.snapshot, path) if path in self.snapshot else []

    def copies_at(self, path: str) -> list[Copy]:
        """Every copy `path` holds, in its facts' order, repeats kept."""
        if path not in self._at:
            self._at[path] = self._of_kinds(path, STATED)
        return self._at[path]

    def _of_kinds(self, path: str, kinds: tuple[FactKind, ...]) -> list[Copy]:
        if path in self._at:
            return [c for c in self._at[path] if c.kind in kinds]
        roots = list(self.surface.python_roots)
        return [_copy(path, f, roots) for f in self._facts(path) if f.kind in kinds]

    def stated(self, path: str) -> frozenset[Copy]:
        """The distinct copies `path` holds (of equal ones, the first)."""
        return frozenset(self.copies_at(path))

    def copies(self, paths: Iterable[str]) -> Copies:
        """Every copy the files `paths` hold, grouped by op."""
        key = frozenset(paths)
        if key not in self._copies:
            self._copies[key] = Copies.of((c for path in sorted(key)
                                           for c in self.copies_at(path)), self.modules_of,
                                          self.snapshot.__contains__)
        return self._copies[key]

    def failure(self, path: str) -> Failure | None:
        """Why `path` does not parse, or None (also for a path the snapshot lacks)."""
        fact = next((f for f in self._facts(path) if f.kind == FactKind.PARSE_FAILURE), None)
        return None if fact is None else Failure(path, fact.line, str(fact.data.get("reason")))

    def unsure(self, path: str) -> frozenset[str]:
        """The identifiers spelled in the declarations of `path` that did not parse (its
        facts leave them out, so any of them may be declared there unseen)."""
        content = next((f for f in self._facts(path) if f.kind == FactKind.CONTENT), None)
        regions = content.data.get("unsure", ()) if content is not None else ()
        return frozenset(name for region in regions for name in region["names"])

    def renames(self, path: str) -> Mapping[str, Any] | None:
        """What `path` says of its parameter names (impact/bindings/python_renames.py), or
        None: a file not read, not parsed, or read by another extractor."""
        if self.failure(path) is not None:
            return None
        content = next((f for f in self._facts(path) if f.kind == FactKind.CONTENT), None)
        found = content.data.get("renames") if content is not None else None
        return found if isinstance(found, dict) else None

    def renamed_digest(self, path: str) -> str | None:
        """`path`'s digest with parameters written by place (python_renames.renamed_digest),
        read from its blob when first asked; None when absent, unreadable or unparsed."""
        if path not in self._renamed:
            # Imported here: a report that asks no rename loads no parser (test_lazy_cli).
            from impact.bindings.python_renames import renamed_digest

            try:
                source = self.snapshot.read(path) if path in self.snapshot else None
            except Exception:  # a blob a partial clone lacks: no digest, so no rename
                source = None
            self._renamed[path] = renamed_digest(path, source) if source is not None else None
        return self._renamed[path]

    def file(self, path: str) -> OpFile:
        """What `path` states beyond its copies (`OpFile`)."""
        facts = self._facts(path)
        content = next((f for f in facts if f.kind == FactKind.CONTENT), None)
        beyond = content.data.get("beyond_bindings") if content is not None else None
        # Every fact but the whole-file digest, lines left out, repeats kept: the very test
        # by which the file-level check hands an op file over (`_stated` in
        # impact/checks/surface.py), so a file it hands over is never dropped as judged.
        stated = tuple(sorted(
            (str(f.kind), f.name, repr(sorted((k, repr(v)) for k, v in f.data.items()
                                              if k != "line")))
            for f in facts if f.kind != FactKind.CONTENT))
        return OpFile(self.failure(path),
                      str(content.data["digest"]) if content is not None else None,
                      str(beyond) if beyond is not None else None, stated)

    def naming(self, names: Iterable[str], kinds: Iterable[SurfaceKind] = OP_KINDS) -> set[str]:
        """The files of `kinds` that mention one of `names` (an unreadable file is always
        one: it is parsed, and reported unreadable)."""
        wanted = {n for n in names if n.isidentifier()}
        return self.index().files_naming(wanted, kinds) if wanted else set()

    def mentioning(self, needles: Iterable[str], kinds: Iterable[SurfaceKind]) -> set[str]:
        """The files of `kinds` whose text holds one of `needles` as written."""
        return self.index().files_naming(needles, kinds)

    def paths(self, kind: SurfaceKind) -> list[str]:
        return self.index().paths(kind)

    def holding(self, paths: Iterable[str], needles: Iterable[str]) -> set[str]:
        """Those of `paths` whose text holds one of `needles` as written (a few known
        files, read directly; one that cannot be read is kept, so it is parsed)."""
        wanted = [n.encode() for n in needles if n]
        found: set[str] = set()
        for path in paths:
            if path not in self.snapshot:
                continue
            try:
                text = self.snapshot.read(path)
            except Exception:  # a missing blob, a gitlink: let the parser say so
                found.add(path)
                continue
            if any(needle in text for needle in wanted) or not searchable_as_bytes(path, text):
                found.add(path)
        return found

    def bindings_at(self, path: str) -> Iterator[PyBinding | Schema | Impl]:
        """The bindings (`m.def`, schema, `m.impl`) `path` registers (read without making
        a record of every declaration beside them)."""
        return (c for c in self._of_kinds(path, BINDING_KINDS)
                if isinstance(c, PyBinding | Schema | Impl))

    def stubs_at(self, path: str) -> Iterator[Stub | Wrapper]:
        """The op stubs and wrappers `path` declares."""
        return (c for c in self._of_kinds(path, (FactKind.OP_STUB, FactKind.OP_WRAPPER))
                if isinstance(c, Stub | Wrapper))
