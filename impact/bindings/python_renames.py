"""What a Python file says about its functions' parameter names, so that a parameter
renamed at its definition and at every call can be told from a change of behaviour.

Maintainers: reads the parsed module it is handed and nothing else. It writes, into the
file's `content` fact (so no stated fact changes): the digest of the module with every
function's parameters written by their place (`#0`, `#1`) in its signature, in its body
and at the keyword calls of it in this file (`renamed_digest`: equal at two revisions
when only parameter names changed, each alike at its definition and at its calls here);
each function's parameter names; and, for the callers of other files, the keywords each
called name is passed, the names called with a `**` spread, and the functions named other
than by a call. Whether a rename is inert is the graph's (impact/graph/binding_renames.py).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Any

from impact.python.digest import tree_digest
from impact.python.scaffold import children

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def rename_facts(tree: ast.Module) -> dict[str, Any]:
    """The `content` fact's rename fields of one module (see the module docstring)."""
    defs = _defs(tree)
    params = {qualified: _names(node.args) for qualified, node, _ in defs}
    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = defaultdict(list)
    for _, node, _ in defs:
        by_name[node.name].append(node)
    local = set(by_name) | _imported(tree)
    keyword_calls: dict[str, set[str]] = defaultdict(set)
    spread: set[str] = set()
    references: set[str] = set()
    callees: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _callee(node.func)
            if name is None:
                continue
            callees.add(id(node.func))
            for keyword in node.keywords:
                if keyword.arg is None:
                    spread.add(name)
                else:
                    keyword_calls[name].add(keyword.arg)
    for node in ast.walk(tree):
        if id(node) in callees:
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in local:
            references.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            references.add(node.attr)
    # A name spelled as a string may be looked up (`getattr(core, "f")`): a dynamic use.
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
               and isinstance(n.value, str) and n.value.isidentifier()}
    return {
        "renamed_digest": _renamed_digest(tree, defs, by_name),
        "params": params,
        # Functions under a decorator (it may read parameters by name: a custom op's
        # schema, a Triton kernel's constexprs): no rename of theirs is shown inert.
        "decorated": sorted(q for q, node, _ in defs if node.decorator_list),
        "strings": sorted(strings),
        "keyword_calls": {k: sorted(v) for k, v in sorted(keyword_calls.items())},
        "spread_calls": sorted(spread),
        "references": sorted(references),
    }


def _defs(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int]]:
    """Every def with its qualified name (`Class.method`, `outer.inner`) and depth."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int]] = []
    stack: list[tuple[ast.AST, str, int]] = [(tree, "", 0)]
    while stack:
        node, prefix, depth = stack.pop()
        for child in children(node):
            if isinstance(child, (*_DEFS, ast.ClassDef)):
                qualified = f"{prefix}{child.name}"
                if isinstance(child, _DEFS):
                    found.append((qualified, child, depth))
                stack.append((child, qualified + ".", depth + 1))
            else:
                stack.append((child, prefix, depth))
    return found


def _args(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
            *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]


def _names(args: ast.arguments) -> list[str]:
    return [a.arg for a in _args(args)]


def _imported(tree: ast.Module) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return found


def _callee(func: ast.expr) -> str | None:
    """The name a call calls: `f(...)`, `m.f(...)`, and `f[grid](...)` (a launcher)."""
    if isinstance(func, ast.Subscript):
        func = func.value
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _renamed_digest(tree: ast.Module,
                    defs: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int]],
                    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]) -> str:
    """The module's digest with parameters written by place. Innermost defs first, so a
    nested def's own parameter shadows the outer one's name in its body. The tree is
    changed in place and put back."""
    undo: list[tuple[ast.AST, str, str]] = []

    def rename(node: ast.AST, field: str, value: str) -> None:
        undo.append((node, field, getattr(node, field)))
        setattr(node, field, value)

    try:
        # Keywords first, by the parameter lists as written: a call of a name this file
        # defines once binds its keywords to that def's parameters.
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = _callee(node.func)
                targets = by_name.get(name or "", [])
                if len(targets) != 1:
                    continue
                names = _names(targets[0].args)
                for keyword in node.keywords:
                    if keyword.arg is not None and keyword.arg in names:
                        rename(keyword, "arg", f"#{names.index(keyword.arg)}")
        for _, func, _ in sorted(defs, key=lambda d: -d[2]):
            places = {a.arg: f"#{i}" for i, a in enumerate(_args(func.args))}
            for statement in func.body:
                for node in ast.walk(statement):
                    if isinstance(node, ast.Name) and node.id in places:
                        rename(node, "id", places[node.id])
            for arg in _args(func.args):
                rename(arg, "arg", places[arg.arg])
        return tree_digest(tree)
    finally:
        for node, field, value in reversed(undo):
            setattr(node, field, value)


__all__ = ["rename_facts"]
