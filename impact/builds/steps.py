"""Facts of a build script's statements: one `build-step` fact per statement, whatever the
statement does, for the checks that ask which statements an edit touched.

Maintainers: map-independent facts over the parsed `ast` only (no evaluation, nothing
run). A statement is a step at every depth: a simple statement whole, a compound one
(if/elif, for, while, with, try and its handlers, def, class) by its header alone, its
bodies' statements being steps of their own. Each step records its lines, a key
(layout- and comment-blind: the header's or statement's `ast` dump, chained with the
keys of the headers it lies under, so a statement moved into another block is another
step), its parent step, the dotted callees it calls, the names it binds and reads, the
names whose methods it calls as a statement (`mutates`: `x.append(v)` may change x),
and the path-like string literals it holds (an f-string's literal pieces too:
`f"{here}/3rdparty/ck"` holds `3rdparty/ck`). Docstrings are no steps. What the facts
mean for a build is the graph's (impact/graph/builds.py).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from typing import Any

from impact.facts import Fact, never_raises
from impact.kinds import FactKind
from impact.python.scaffold import LANGUAGE, dotted_name, parse_python

# A string that may name a repository path: no spaces, no quotes, not too long.
_PATH_LIKE = re.compile(r"[A-Za-z0-9_.+@\-/]{1,256}")
# The fields of a compound statement that hold statements, in the order written.
_BODIES = ("body", "handlers", "orelse", "finalbody")
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)
if hasattr(ast, "TryStar"):
    _COMPOUND = (*_COMPOUND, ast.TryStar)


def script_steps(path: str, source: bytes) -> list[Fact]:
    """The `build-step` facts of the build script `path` (its bytes), or its one
    parse-failure fact. Read on demand, for a changed script the map's prebuild rules
    ask about: a report on any other change never pays for them."""
    parsed = parse_python(path, source)
    if isinstance(parsed, Fact):
        return [parsed]
    return never_raises(path, LANGUAGE, lambda: step_facts(parsed.tree))


def step_facts(tree: ast.Module) -> list[Fact]:
    """One `build-step` fact per statement of `tree`, numbered in source order
    (`name`: the step's index, `line`: its first line)."""
    facts: list[Fact] = []
    for index, (node, parent, key) in enumerate(_steps(tree.body, -1, "", [0])):
        own = _header(node)
        lines = [n.lineno for n in own if hasattr(n, "lineno")]
        ends = [getattr(n, "end_lineno", None) or n.lineno for n in own
                if hasattr(n, "lineno")]
        line = min([node.lineno, *lines]) if hasattr(node, "lineno") else 0
        end = node.end_lineno if not isinstance(node, _COMPOUND) else max([line, *ends])
        defines = getattr(node, "name", None) if isinstance(node, (
            ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None
        facts.append(Fact(FactKind.BUILD_STEP, f"{index:05d}", line, {
            "end": int(end or line), "key": key, "parent": parent,
            "statement": type(node).__name__, "defines": defines or "",
            **_names(node, own)}))
    return facts


def _steps(body: list[ast.stmt], parent: int, chain: str, counter: list[int],
           documented: bool = True) -> Iterator[tuple[ast.AST, int, str]]:
    """(statement, index of its parent step or -1, key) in source order; `counter` holds
    the next index. A `documented` body (a module's, a def's, a class's) may open with a
    docstring, which is no step."""
    for at, node in enumerate(body):
        if documented and at == 0 and _is_docstring(node):
            continue
        key = _sha(chain + "\x00" + _dump_own(node))
        index = counter[0]
        counter[0] += 1
        yield node, parent, key
        if isinstance(node, _COMPOUND):
            owner = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for field in _BODIES:
                yield from _steps(getattr(node, field, None) or [], index,
                                  key + "/" + field, counter, owner and field == "body")


def _header(node: ast.AST) -> list[ast.AST]:
    """The nodes of a statement's own part: a simple statement whole, a compound one's
    header (its test, target and iterable, items, decorators and signature, handler)."""
    if isinstance(node, (ast.If, ast.While)):
        return [node.test]
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target, node.iter]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return list(node.items)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [*node.decorator_list, node.args, *([node.returns] if node.returns else [])]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    if isinstance(node, ast.ExceptHandler):
        return [node.type] if node.type is not None else []
    if isinstance(node, _COMPOUND):  # try: the header holds nothing
        return []
    return [node]


def _dump_own(node: ast.AST) -> str:
    """The layout-blind text of a statement's own part, with its kind and, for a def, a
    class or a handler, the name it binds."""
    name = getattr(node, "name", None) if isinstance(node, _COMPOUND) else None
    parts = [type(node).__name__, str(name or "")]
    parts += [ast.dump(n, include_attributes=False) for n in _header(node)
              if n is not node] if isinstance(node, _COMPOUND) else [
        ast.dump(node, include_attributes=False)]
    return "\x00".join(parts)


def _names(node: ast.AST, own: list[ast.AST]) -> dict[str, Any]:
    """What the statement's own part calls, binds, reads and names as paths."""
    callees: set[str] = set()
    binds: set[str] = set()
    reads: set[str] = set()
    paths: set[str] = set()
    mutates: set[str] = set()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        binds.add(node.name)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        binds |= {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        binds |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    if isinstance(node, ast.ExceptHandler) and node.name:
        binds.add(node.name)
    pieces = {id(v) for part in own for sub in ast.walk(part)
              if isinstance(sub, ast.JoinedStr) for v in sub.values}
    for part in own:
        for sub in ast.walk(part):
            if id(sub) in pieces:
                continue
            elif isinstance(sub, ast.Call):
                callee = dotted_name(sub.func)
                if callee:
                    callees.add(callee)
                if (isinstance(node, ast.Expr) and sub is node.value
                        and isinstance(sub.func, ast.Attribute)):
                    base = sub.func.value  # `x.append(v)` as a statement may change x
                    while isinstance(base, (ast.Attribute, ast.Subscript)):
                        base = base.value
                    if isinstance(base, ast.Name):
                        mutates.add(base.id)
            elif isinstance(sub, ast.Name):
                (binds if isinstance(sub.ctx, (ast.Store, ast.Del)) else reads).add(sub.id)
            elif isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(
                    sub.ctx, (ast.Store, ast.Del)):
                base = sub
                while isinstance(base, (ast.Attribute, ast.Subscript)):
                    base = base.value
                if isinstance(base, ast.Name):
                    binds.add(base.id)  # `x.y = v`, `x[k] = v` change x
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                binds |= {(a.asname or a.name).split(".")[0] for a in sub.names}
            elif isinstance(sub, ast.JoinedStr):
                paths |= set(_fstring_pieces(sub))
            elif (isinstance(sub, ast.Constant) and isinstance(sub.value, str)
                  and _PATH_LIKE.fullmatch(sub.value)):
                paths.add(sub.value)
    return {"callees": sorted(callees), "binds": sorted(binds), "reads": sorted(reads),
            "mutates": sorted(mutates), "paths": sorted(paths)}


def _fstring_pieces(node: ast.JoinedStr) -> Iterator[str]:
    """The path-like literal pieces of an f-string, a piece after a placeholder without
    its leading slash (`f"{root}/csrc/x"` holds `csrc/x`)."""
    after = False
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            text = value.value.lstrip("/") if after else value.value
            text = text.rstrip("/")
            if text and _PATH_LIKE.fullmatch(text):
                yield text
            after = False
        else:
            after = True


def _is_docstring(node: ast.stmt) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


__all__ = ["step_facts"]
