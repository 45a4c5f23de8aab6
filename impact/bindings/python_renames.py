"""What a Python file says about its functions' parameter names, so that a parameter
renamed at its definition and at every call can be told from a change of behaviour.

Maintainers: reads the module it is handed and nothing else. It writes, into the file's
`content` fact (so no stated fact changes): each function's parameter names; and, for the
callers of other files, the keywords each called name is passed, the names called with a
`**` spread, and the functions named other than by a call. On demand only (the graph asks
for the files a rename may be all of), `renamed_digest`: the digest of the module with
every function's parameters written by their place (`#0`, `#1`) in its signature, in its
body and at the keyword calls of it in this file, equal at two revisions when only
parameter names changed, each alike at its definition and at its calls here. Whether a
rename is inert is the graph's (impact/graph/binding_renames.py).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from typing import Any

from impact.facts import Fact
from impact.python.digest import module_digests
from impact.python.scaffold import parse_python

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Where a def can stand: statements and the parts of a statement that hold a body.
_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def rename_facts(tree: ast.Module, nodes: list[ast.AST]) -> dict[str, Any]:
    """The `content` fact's rename fields of one module (see the module docstring);
    `nodes` is every node of `tree` (the readers' shared walk, `Source.nodes`)."""
    defs = _defs(tree)
    params = {qualified: _names(node.args) for qualified, node, _ in defs}
    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = defaultdict(list)
    for _, node, _ in defs:
        by_name[node.name].append(node)
    # One pass sorts the nodes this needs by type (exact types: `ast` has no subclasses).
    calls: list[ast.Call] = []
    names: list[ast.Name] = []
    attributes: list[ast.Attribute] = []
    local = set(by_name)
    # A name spelled as a string may be looked up (`getattr(core, "f")`): a dynamic use.
    strings: set[str] = set()
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            names.append(node)  # type: ignore[arg-type]
        elif kind is ast.Call:
            calls.append(node)  # type: ignore[arg-type]
        elif kind is ast.Attribute:
            attributes.append(node)  # type: ignore[arg-type]
        elif kind is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if isinstance(value, str) and value.isidentifier():
                strings.add(value)
        elif kind is ast.Import or kind is ast.ImportFrom:
            local |= {(a.asname or a.name).split(".")[0] for a in node.names}  # type: ignore[attr-defined]
    keyword_calls: dict[str, set[str]] = defaultdict(set)
    spread: set[str] = set()
    callees: set[int] = set()
    for call in calls:
        name = _callee(call.func)
        if name is None:
            continue
        callees.add(id(call.func))
        for keyword in call.keywords:
            if keyword.arg is None:
                spread.add(name)
            else:
                keyword_calls[name].add(keyword.arg)
    references = {n.id for n in names if n.id in local and type(n.ctx) is ast.Load
                  and id(n) not in callees}
    references |= {a.attr for a in attributes if type(a.ctx) is ast.Load
                   and id(a) not in callees}
    return {
        "params": params,
        # Functions under a decorator (it may read parameters by name: a custom op's
        # schema, a Triton kernel's constexprs): no rename of theirs is shown inert.
        "decorated": sorted(q for q, node, _ in defs if node.decorator_list),
        "strings": sorted(strings),
        "keyword_calls": {k: sorted(v) for k, v in sorted(keyword_calls.items())},
        "spread_calls": sorted(spread),
        "references": sorted(references),
    }


def renamed_digest(path: str, source: bytes) -> str | None:
    """The digest of the module at `path` with every function's parameters written by
    their place (`_renamed_digest`): equal at two revisions when only parameter names
    changed, alike at each definition and at its keyword calls in the file. Asked only of
    a file whose other rename facts already allow a rename (a second digest of every op
    file would cost each report a parse's worth); None when it does not parse."""
    parsed = parse_python(path, source)
    if isinstance(parsed, Fact):
        return None
    tree, nodes = parsed.tree, parsed.nodes()
    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = defaultdict(list)
    for _, node, _ in _defs(tree):
        by_name[node.name].append(node)
    calls = [node for node in nodes if isinstance(node, ast.Call)]
    return _renamed_digest(tree, calls, by_name, parsed.text, nodes)


def _defs(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int]]:
    """Every def with its qualified name (`Class.method`, `outer.inner`) and depth."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, int]] = []
    stack: list[tuple[ast.AST, str, int]] = [(tree, "", 0)]
    while stack:
        node, prefix, depth = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (*_DEFS, ast.ClassDef)):
                qualified = f"{prefix}{child.name}"
                if isinstance(child, _DEFS):
                    found.append((qualified, child, depth))
                stack.append((child, qualified + ".", depth + 1))
            elif isinstance(child, _HOLDS_STATEMENTS):
                stack.append((child, prefix, depth))
    return found


def _args(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
            *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]


def _names(args: ast.arguments) -> list[str]:
    return [a.arg for a in _args(args)]


def _callee(func: ast.expr) -> str | None:
    """The name a call calls: `f(...)`, `m.f(...)`, and `f[grid](...)` (a launcher)."""
    if isinstance(func, ast.Subscript):
        func = func.value
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _renamed_digest(tree: ast.Module, calls: list[ast.Call],
                    by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]],
                    text: str | None, nodes: list[ast.AST]) -> str:
    """The module's digest with parameters written by place: in a def's body a name is
    written by the place it has in the innermost enclosing def that takes it, so a nested
    def's own parameter shadows the outer one's. The tree is changed in place and put
    back."""
    undo: list[tuple[ast.AST, str, str]] = []

    def rename(node: ast.AST, field: str, value: str) -> None:
        undo.append((node, field, getattr(node, field)))
        setattr(node, field, value)

    try:
        # Keywords first, by the parameter lists as written: a call of a name this file
        # defines once binds its keywords to that def's parameters.
        for node in calls:
            name = _callee(node.func)
            targets = by_name.get(name or "", [])
            if len(targets) != 1:
                continue
            names = _names(targets[0].args)
            for keyword in node.keywords:
                if keyword.arg is not None and keyword.arg in names:
                    rename(keyword, "arg", f"#{names.index(keyword.arg)}")
        # One walk with the places of the defs a node lies in the body of, innermost
        # last: a name is written by the place of the innermost def it is a parameter of.
        stack: list[tuple[ast.AST, tuple[dict[str, str], ...]]] = [(tree, ())]
        while stack:
            node, scopes = stack.pop()
            if isinstance(node, ast.Name):
                place = next((p[node.id] for p in reversed(scopes) if node.id in p), None)
                if place is not None:
                    rename(node, "id", place)
                continue
            if isinstance(node, _DEFS):
                args = _args(node.args)
                inner = (*scopes, {a.arg: f"#{i}" for i, a in enumerate(args)})
                stack += [(statement, inner) for statement in node.body]
                body = {id(statement) for statement in node.body}
                stack += [(child, scopes) for child in ast.iter_child_nodes(node)
                          if id(child) not in body]
                for i, arg in enumerate(args):
                    rename(arg, "arg", f"#{i}")
                continue
            stack += [(child, scopes) for child in ast.iter_child_nodes(node)]
        return module_digests(tree, {}, text, nodes)[0]
    finally:
        for node, field, value in reversed(undo):
            setattr(node, field, value)


__all__ = ["rename_facts", "renamed_digest"]
