"""Forwarded calls of one Python file: `cute.compile(obj, *args, **kw)` runs
`obj.__call__(*args, **kw)`, so its remaining arguments bind to that `__call__`.

Maintainers: reads the parsed module it is handed, nothing else (no git, no files, no
map: the forwarders and the decorators that keep a signature come as arguments, from the
surface map's `[conventions]`). Two facts: `op-forwarded-call` (a call of a forwarder:
the classes its first argument is an instance of, resolved in the module and its imports,
or why not, and what it passes on) and `op-callee` (a class's own `__call__`: its
parameters, `self` left out, and whether every decorator on it keeps the signature).
Binding them is the graph's (impact/graph/binding_routes.py); nothing here decides.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from impact.facts import Fact
from impact.kinds import FactKind
from impact.python.digest import arguments_digest
from impact.python.scaffold import all_nodes, children, dotted_name, parameters

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_DEFS, ast.Lambda, ast.ClassDef)

Passed = Callable[[ast.expr], dict[str, str]]


def forward_facts(tree: ast.Module, modules: dict[str, list[str]], code: Callable[[ast.AST], str],
                  passed: Passed, forwarders: tuple[str, ...],
                  keeps_signature: tuple[str, ...], own_keywords: tuple[str, ...] = (),
                  nodes: list[ast.AST] | None = None) -> list[Fact]:
    """The `op-forwarded-call` and `op-callee` facts of a module. `modules` maps each
    name the module binds by import to the dotted names it may be (`from m import X`
    binds `X` to `m.X`); `code` writes a node, `passed` a passed value; `own_keywords`
    are the keywords a forwarder takes itself (not passed on); `nodes`, every node of the
    tree when the caller has them, tells a module that calls no forwarder at once."""
    facts = list(_callees(tree, code, keeps_signature))
    if not forwarders:
        return facts
    wanted = set(forwarders)
    every = nodes if nodes is not None else all_nodes(tree)
    calls = [n for n in every if isinstance(n, ast.Call) and _spelled(n.func, modules) & wanted]
    if calls:
        classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        defs = [n for n in every if isinstance(n, _DEFS)]
        facts += _calls(tree, calls, defs, modules, classes, passed, set(own_keywords))
    return facts


def _callees(tree: ast.Module, code: Callable[[ast.AST], str],
             keeps_signature: tuple[str, ...]) -> Iterator[Fact]:
    """Each module-level class's own `__call__` (an inherited one is not read: a call of
    such a class finds no callee, and reads changed)."""
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for method in (n for n in cls.body if isinstance(n, _DEFS) and n.name == "__call__"):
            decorators = [_decorator_name(d) for d in method.decorator_list]
            params = parameters(method.args, code)
            bound = params[1:] if params and params[0]["kind"] == "positional" else None
            kept = bound is not None and all(d in keeps_signature for d in decorators)
            yield Fact(FactKind.OP_CALLEE, cls.name, method.lineno, {
                "method": "__call__",
                "params": bound if bound is not None else params,
                "decorators": decorators,
                # Whether the parameters above are what a call binds to: every decorator
                # keeps the signature, and the first parameter is the instance.
                "signature_known": kept,
                "line": method.lineno,
            })


def _decorator_name(node: ast.expr) -> str:
    """A decorator as written: its dotted name (called or not), else its code's head."""
    target = node.func if isinstance(node, ast.Call) else node
    return dotted_name(target) or "?"


def _calls(tree: ast.Module, calls: list[ast.Call], defs: list[ast.AST],
           modules: dict[str, list[str]], classes: set[str], passed: Passed, own: set[str]
           ) -> Iterator[Fact]:
    """Each call of a forwarder, in source order, with its enclosing function (the scope
    its first argument's name is looked up in): the innermost def whose span holds it."""
    tables: Tables = {}
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        scope: ast.AST = tree
        for node in defs:
            if _holds(node, call) and (scope is tree or _holds(scope, node)):
                scope = node
        function = getattr(scope, "name", None) if scope is not tree else None
        yield _forwarded(call, scope, function, modules, classes, passed, own, tables)


def _holds(outer: ast.AST, inner: ast.AST) -> bool:
    """Whether `inner`'s source span lies within `outer`'s (a def from its `def` line:
    its decorators belong to the scope around it)."""
    start = (outer.lineno, outer.col_offset)  # type: ignore[attr-defined]
    end = (outer.end_lineno, outer.end_col_offset)  # type: ignore[attr-defined]
    at = (inner.lineno, inner.col_offset)  # type: ignore[attr-defined]
    return start <= at and (inner.end_lineno, inner.end_col_offset) <= end  # type: ignore[attr-defined]


def _spelled(func: ast.expr, modules: dict[str, list[str]]) -> set[str]:
    """A callee as written (`cute.compile`) and as its imports expand it
    (`cutlass.cute.compile`)."""
    written = dotted_name(func)
    if written is None:
        return set()
    head, _, rest = written.partition(".")
    expanded = {f"{m}.{rest}" if rest else m for m in modules.get(head, [])}
    return {written} | expanded


def _forwarded(call: ast.Call, scope: ast.AST, function: str | None,
               modules: dict[str, list[str]], classes: set[str], passed: Passed,
               own: set[str], tables: Tables) -> Fact:
    args = list(call.args)
    keywords = [k for k in call.keywords if k.arg is None or k.arg not in own]
    first = args[0] if args and not isinstance(args[0], ast.Starred) else None
    targets: list[dict[str, str]] = []
    unresolved: str | None = None
    if first is None:
        unresolved = "its first argument is not passed by position"
    else:
        found = _instances(first, scope, tables)
        if isinstance(found, str):
            unresolved = found
        else:
            for spelled in found:
                target = _class(spelled, modules, classes)
                if target is None:
                    unresolved = f"'{spelled}' is not a class this module defines or imports"
                    break
                if target not in targets:
                    targets.append(target)
    rest = args[1:]
    return Fact(FactKind.OP_FORWARDED_CALL, dotted_name(call.func) or "?", call.lineno, {
        "callee": ast.unparse(first) if first is not None else "",
        "targets": [] if unresolved else sorted(targets, key=lambda t: (t["class"], t["module"])),
        "unresolved": unresolved,
        "function": function,
        "positional": -1 if any(isinstance(a, ast.Starred) for a in rest) else len(rest),
        "keywords": sorted("**" if k.arg is None else k.arg for k in keywords),
        # the forwarder's own keywords, not passed on (`options=`)
        "own_keywords": sorted(k.arg for k in call.keywords if k.arg is not None and k.arg in own),
        "arguments": arguments_digest(call),
        "passed": [passed(a) for a in rest if not isinstance(a, ast.Starred)],
        "passed_keywords": {k.arg: passed(k.value) for k in keywords if k.arg is not None},
    })


def _instances(node: ast.expr, scope: ast.AST, tables: Tables) -> list[str] | str:
    """The dotted class names `node` is an instance of (`Cls(...)`, or a name every
    binding of which in its scope is `name = Cls(...)`), or why that cannot be said."""
    if isinstance(node, ast.Call):
        spelled = dotted_name(node.func)
        return [spelled] if spelled else "its first argument is not a constructor call"
    if not isinstance(node, ast.Name):
        return f"its first argument '{ast.unparse(node)}' is not a name or a constructor call"
    found: list[str] = []
    for binding in _bindings(node.id, scope, tables):
        if binding is None:
            return f"'{node.id}' is bound otherwise than by a constructor call"
        spelled = dotted_name(binding.func)
        if spelled is None:
            return f"'{node.id}' is bound otherwise than by a constructor call"
        if spelled not in found:
            found.append(spelled)
    return found or f"'{node.id}' is not assigned in the function that calls"


# Every name's bindings in a scope (`_scope_bindings`), by the scope's id, for one
# module's forwarded calls: each scope is walked once however many calls it holds.
Tables = dict[int, dict[str, list[ast.Call | None]]]


def _bindings(name: str, scope: ast.AST, tables: Tables) -> list[ast.Call | None]:
    """Each place `name` is bound in `scope` (nested scopes aside): the call assigned to
    it, or None for any binding that is not `name = Call(...)` (a parameter, a loop, a
    tuple target, an augmented assignment, `global`)."""
    if id(scope) not in tables:
        tables[id(scope)] = _scope_bindings(scope)
    return tables[id(scope)].get(name, [])


def _scope_bindings(scope: ast.AST) -> dict[str, list[ast.Call | None]]:
    """`_bindings` of every name of `scope`, in the order the walk meets them."""
    found: dict[str, list[ast.Call | None]] = {}

    def bind(name: str, value: ast.Call | None) -> None:
        found.setdefault(name, []).append(value)

    if isinstance(scope, _DEFS):
        every = [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs,
                 scope.args.vararg, scope.args.kwarg]
        for arg in every:
            if arg is not None:
                bind(arg.arg, None)
    # The names that are the whole target of an assignment (judged at the assignment):
    # a statement is popped before its children, so its targets are known in time.
    plain_targets: set[int] = set()
    stack = list(children(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            if isinstance(node, (*_DEFS, ast.ClassDef)):
                bind(node.name, None)
            continue
        if isinstance(node, ast.Assign):
            plain_targets.update(id(t) for t in node.targets)
            plain = all(isinstance(t, ast.Name) for t in node.targets)
            value = node.value if plain and isinstance(node.value, ast.Call) else None
            for name in dict.fromkeys(n.id for t in node.targets for n in ast.walk(t)
                                      if isinstance(n, ast.Name)):
                bind(name, value)
        elif isinstance(node, ast.AnnAssign):
            plain_targets.add(id(node.target))
            value = node.value if isinstance(node.target, ast.Name) and isinstance(
                node.value, ast.Call) else None
            for name in dict.fromkeys(n.id for n in ast.walk(node.target)
                                      if isinstance(n, ast.Name)):
                bind(name, value)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                bind(name, None)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del) \
                and id(node) not in plain_targets:
            bind(node.id, None)  # a for/with/except/walrus target, a tuple, a `del`
        stack.extend(children(node))
    return found


def _names(target: ast.expr, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def _class(spelled: str, modules: dict[str, list[str]], classes: set[str]
           ) -> dict[str, str] | None:
    """The class a dotted name names: one of this module's (`module` "."), or one its
    imports bind (`from m import X`: module `m`; `import m` then `m.X`: module `m`)."""
    head, _, rest = spelled.partition(".")
    if not rest:
        if head in classes:
            return {"class": head, "module": "."}
        for module in modules.get(head, []):
            parent, _, last = module.rpartition(".")
            if last == head and parent.strip("."):
                return {"class": head, "module": parent}
        return None
    for module in modules.get(head, []):
        prefix, _, last = f"{module}.{rest}".rpartition(".")
        return {"class": last, "module": prefix}
    return None


__all__ = ["forward_facts"]

