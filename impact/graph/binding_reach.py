"""Which bound ops a change reaches, and which files restate them: the bindings domain's
one question over two snapshots.

Maintainers: reads the two snapshots' `BindingsGraph`s only, and through them parses
only what the change reaches: the copies that changed in the touched files name the ops
(an op is a name some binding site really binds), and the tree index's `files_naming`
finds the files that restate them. Decides no row (impact/checks/bindings.py does).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field

from impact.graph.binding_records import (
    Boxed,
    Call,
    Callee,
    Copy,
    CppFunction,
    ForwardedCall,
    Impl,
    OpModule,
    PyBinding,
    Schema,
    Stub,
    Unreadable,
    Wrapper,
)
from impact.graph.bindings import OP_KINDS, BindingsGraph
from impact.kinds import SurfaceKind

# What a C++ file that registers bindings always spells: only these files are parsed to
# learn which names are bound (a text search for every changed name would read the tree).
_BINDING_NEEDLES = ("PYBIND11_MODULE", "NB_MODULE", "TORCH_LIBRARY", "py::arg",
                    "TORCH_SELECTIVE", '.def("')
# Every file that declares a Python op stub spells its decorator (impact/bindings reads
# `@...compile_ops(...)`): only those files can hold the stub a call reaches.
_STUB_DECORATOR = "compile_ops"
# A changed copy that names an op only when a binding site binds its name.
_MAYBE_OPS = (Call, CppFunction, Boxed)


@dataclass
class Reach:
    """The ops a view's change reaches and the files that restate them."""

    ops: set[str] = field(default_factory=set)
    paths: set[str] = field(default_factory=set)
    related: set[str] = field(default_factory=set)  # files that name a reached op
    unjudged: set[str] = field(default_factory=set)  # touched files with changed copies
    # that no compared op accounts for
    unreadable: list[Unreadable] = field(default_factory=list)  # bindings the change made
    # that the parser cannot read
    # forwarded calls the change made or rewrote whose first argument's class is unknown
    unresolved: list[ForwardedCall] = field(default_factory=list)


def _changed(old: BindingsGraph, new: BindingsGraph, path: str) -> list[Copy]:
    """The copies of `path` that differ between the two snapshots: the new ones first."""
    before = {c.key: c for c in old.stated(path)}
    after = {c.key: c for c in new.stated(path)}
    return [after[k] for k in sorted(set(after) - set(before))] + [
        before[k] for k in sorted(set(before) - set(after))]


def _naming(sides: tuple[BindingsGraph, ...], names: set[str],
            kinds: tuple[SurfaceKind, ...] = OP_KINDS) -> set[str]:
    return {p for side in sides for p in side.naming(names, kinds)}


def _binders(sides: tuple[BindingsGraph, ...], names: set[str]) -> dict[str, set[str]]:
    """The names among `names` that a binding site binds (pybind `m.def`, TORCH_LIBRARY
    schema, `m.impl`), or whose C++ function one binds, with the functions it names: only
    the files that register bindings and mention one of `names` are parsed."""
    bound: dict[str, set[str]] = defaultdict(set)
    files = {p for side in sides for p in side.mentioning(_BINDING_NEEDLES,
                                                          (SurfaceKind.OP_CPP,))}
    files &= _naming(sides, names, (SurfaceKind.OP_CPP,))
    for side in sides:
        for path in sorted(files):
            for binding in side.bindings_at(path):
                bound[binding.name]
                if binding.function:
                    bound[binding.name].add(binding.function)
    return bound


def _stubs(sides: tuple[BindingsGraph, ...], paths: set[str]) -> list[Stub | Wrapper]:
    return [s for side in sides for path in sorted(paths) for s in side.stubs_at(path)]


def _module_files(call: Call, roots: list[str]) -> set[str]:
    """The files a call's receivers may name, as Python would find them: the caller's
    own file (`.`), a module beside it, a relative import from its package, or the
    module under a Python root (`a.b` is `a/b.py` or `a/b/__init__.py`)."""
    here = posixpath.dirname(call.path)
    found: set[str] = set()
    for receiver in call.receivers:
        if receiver == ".":
            found.add(call.path)
            continue
        dots = len(receiver) - len(receiver.lstrip("."))
        parts = [p for p in receiver.lstrip(".").split(".") if p]
        if dots:
            folder = here
            for _ in range(dots - 1):
                folder = posixpath.dirname(folder)
            bases = [folder]
        else:
            bases = [here, *roots]
        for base in bases:
            stem = posixpath.normpath(posixpath.join(base, *parts)) if parts else base
            stem = stem.removeprefix("./")
            found |= {stem + ".py", posixpath.join(stem, "__init__.py")}
    return found


def _params_changed(old: BindingsGraph, new: BindingsGraph, path: str, wrapper: Wrapper
                    ) -> bool:
    """Whether the wrapper `path` defines under that name has another parameter list at
    one revision than at the other (or exists at one only)."""
    def params(side: BindingsGraph) -> set[tuple[object, ...]]:
        return {c.params for c in side.stated(path)
                if isinstance(c, Wrapper) and c.name == wrapper.name}

    return params(old) != params(new)


def _wrappers_called(sides: tuple[BindingsGraph, ...], calls: list[Call]
                     ) -> list[Wrapper]:
    """The wrappers changed calls reach, read from the files their receivers name (never
    a search of the tree: a common name such as `load` is defined everywhere)."""
    found: list[Wrapper] = []
    for side in sides:
        roots = list(side.surface.python_roots)
        for call in calls:
            # Only a file that defines the name is parsed (its text says so first).
            for path in sorted(side.holding(_module_files(call, roots), {f"def {call.name}("})):
                found += [s for s in side.stubs_at(path)
                          if isinstance(s, Wrapper) and s.name == call.name]
    return found


def _stubs_named(sides: tuple[BindingsGraph, ...], names: set[str]) -> dict[str, set[str]]:
    """The names among `names` that a stub of this package declares, each with the op
    symbols its stubs bind (the stub's `fc_name`, else its own name): parsed only from the
    files that spell the stub decorator and define one of the names."""
    wanted = {n for n in names if n.isidentifier()}
    if not wanted:
        return {}
    stub_files = _naming(sides, {_STUB_DECORATOR}, (SurfaceKind.OP_PYTHON,))
    needles = {f"def {n}(" for n in wanted}
    files = {p for side in sides for p in side.holding(stub_files, needles)}
    found: dict[str, set[str]] = defaultdict(set)
    for stub in _stubs(sides, files):
        if isinstance(stub, Stub) and stub.name in wanted:
            found[stub.name].add(stub.symbol)
    return found


def reach_of_change(old: BindingsGraph, new: BindingsGraph, touched: set[str]) -> Reach:
    """The ops whose copies the change altered, and the files restating them.

    A changed stub or binding is an op; a changed call, C++ function or boxed wrapper
    counts only when a binding site binds its name (an attribute call through `cute`
    or `fx` names no op); a changed module entry reaches the stubs built from it."""
    sides = (old, new)
    found = Reach()
    changed = {path: _changed(old, new, path) for path in sorted(touched)}
    direct: set[str] = set()
    maybe: dict[str, set[str]] = defaultdict(set)  # candidate name -> touched paths
    wrappers: dict[str, set[str]] = defaultdict(set)  # a changed wrapper -> what it calls
    maybe_calls: list[Call] = []
    modules: set[str] = set()
    classes: set[str] = set()  # the classes whose `__call__` a forwarded call binds to
    for path, copies in changed.items():
        for copy in copies:
            if isinstance(copy, ForwardedCall):
                classes |= {cls for cls, _ in copy.targets}
                if copy.unresolved is not None and copy in new.stated(path):
                    found.unresolved.append(copy)
            elif isinstance(copy, Callee):
                classes.add(copy.name)
            elif isinstance(copy, Stub):
                direct |= {copy.name, copy.symbol}
            elif isinstance(copy, PyBinding | Schema | Impl):
                direct.add(copy.name)
            elif isinstance(copy, Wrapper):
                # Its callers bind to its parameters: only a new parameter list can change
                # how they bind (a new body is the code beyond the bindings').
                if _params_changed(old, new, path, copy):
                    wrappers[copy.name] |= set(copy.reaches)  # an op if what it calls is
            elif isinstance(copy, OpModule):
                modules.add(copy.name)
            elif isinstance(copy, _MAYBE_OPS):
                maybe[copy.name].add(path)
                if isinstance(copy, Call):
                    maybe_calls.append(copy)
            elif isinstance(copy, Unreadable) and copy in new.stated(path):
                found.unreadable.append(copy)
    if not direct and not maybe and not modules and not wrappers and not classes:
        return found
    if modules:
        naming_modules = _naming(sides, modules, (SurfaceKind.OP_PYTHON,))
        direct |= {s.name for s in _stubs(sides, naming_modules)
                   if isinstance(s, Stub) and s.module in modules}
    # A changed call may name a wrapper of this package (read from the module its
    # receiver names) or a stub (from the files that spell the stub decorator).
    for wrapper in _wrappers_called(sides, maybe_calls):
        wrappers[wrapper.name] |= set(wrapper.reaches)
    callees = {n for names in wrappers.values() for n in names}
    bound = _binders(sides, set(maybe) | callees) if maybe or callees else {}
    functions = defaultdict(set)
    for op, names in bound.items():
        for name in names:
            functions[name].add(op)
    ops = set(direct)
    for name in maybe:
        if name in bound:
            ops.add(name)
        ops |= functions.get(name, set())
    # A call of a stub of this package names an op too (its stub says so), and a wrapper
    # is one when a name it calls into is bound, or is a stub's.
    unbound = {n for n in maybe if n not in bound and n not in functions}
    stubs = _stubs_named(sides, unbound | (callees - set(bound) - direct))
    stubbed = set(stubs)
    ops |= unbound & stubbed
    # A stub whose `fc_name` is another name binds its calls to that op: a changed call
    # of `layer_norm` (`fc_name="layernorm2d_fwd"`) reaches `layernorm2d_fwd`'s routes.
    ops |= {symbol for name in unbound & stubbed for symbol in stubs[name]}
    ops |= {w for w, names in wrappers.items() if names & (set(bound) | direct | stubbed)}
    ops |= classes
    found.ops = ops
    for path, copies in changed.items():
        if any(isinstance(c, _MAYBE_OPS) and not isinstance(c, ForwardedCall)
               and c.name not in ops
               and not functions.get(c.name, set()) & ops for c in copies):
            found.unjudged.add(path)
    if not ops:
        return found
    maps = {p for side in sides for p in side.paths(SurfaceKind.OP_SOURCES_MAP)}
    # A Python wrapper's copies are Python (its callers); every other op's are anywhere.
    python_only = ({w for w in wrappers if w in ops} | classes) - direct - set(bound) \
        - set(functions)
    named = _naming(sides, ops - python_only) | (
        _naming(sides, python_only, (SurfaceKind.OP_PYTHON,)) if python_only else set())
    found.paths = set(touched) | maps | named
    # Then the C++ functions those ops are bound to, and the modules that expand them.
    before, after = (side.copies(found.paths) for side in sides)
    bound_functions = {site.function for copies in (before, after)
                       for table in (copies.pybind, copies.impls, copies.schemas)
                       for op in ops for site in table.get(op, [])
                       if isinstance(site.function, str)} - ops
    extra = _naming(sides, bound_functions, (SurfaceKind.OP_CPP,))
    macros = {site.macro for copies in (before, after) for op in ops
              for site in copies.pybind.get(op, []) if site.macro}
    expanders = _naming(sides, macros, (SurfaceKind.OP_CPP,))
    found.paths |= extra | expanders
    found.related = set(touched) | named | extra
    return found
