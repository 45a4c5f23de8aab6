"""Layout-blind digests of Python code: the syntax tree without positions or docstrings.

Two pieces of code get the same digest exactly when Python's own `ast` reads them as the
same tree, docstrings left out: comments, line breaks, indentation width, a trailing comma,
redundant parentheses and the spelling of a literal (`0x10` and `16`, `'a' 'b'` and `'ab'`)
do not count; an operator, an argument's position or a literal's value does.

Maintainers: pure functions over libcst nodes and strings; nothing here touches git or the
filesystem. libcst finds the nodes (impact/python/facts.py); `ast` decides what they mean.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Sequence

import libcst as cst

# Nodes whose body may open with a docstring.
_DOC_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# Marks a digest computed from the text itself (the code did not parse as `ast`): such a
# digest differs from every tree digest, and from any other text, so it never says "same".
_TEXT_PREFIX = b"text\x00"


def _drop_docstrings(tree: ast.AST) -> None:
    """Remove the first-statement string constant of every module, class and def body."""
    for node in ast.walk(tree):
        if not isinstance(node, _DOC_OWNERS) or not node.body:
            continue
        first = node.body[0]
        if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            node.body = node.body[1:] or [ast.Pass()]


def digest_code(code: str) -> str:
    """sha256 of `ast.dump` of the code without positions and without docstrings.

    Indentation is structure in `ast` (a statement moved into a block is another tree),
    while re-wrapping a long call or adding a trailing comma is not. Code that `ast` cannot
    parse (syntax newer than this Python) is digested as its text: any edit then counts.
    """
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _text_digest(code)
    _drop_docstrings(tree)
    return _tree_digest(tree)


def _tree_digest(tree: ast.AST) -> str:
    dumped = ast.dump(tree, annotate_fields=True, include_attributes=False)
    return hashlib.sha256(dumped.encode("utf-8", "surrogatepass")).hexdigest()


def _text_digest(code: str) -> str:
    return hashlib.sha256(_TEXT_PREFIX + code.encode("utf-8", "surrogatepass")).hexdigest()


def module_digest(module: cst.Module) -> str:
    """Digest of a whole module without any docstring, the module's own included."""
    return digest_code(module.code)


def _statements(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(body.body))]
    return list(body.body)


def body_digest(node: cst.FunctionDef | cst.ClassDef) -> str:
    """Digest of a def's or class's body without its docstrings (nested ones too).

    The body is digested as a module of its own (libcst writes it dedented), so its leading
    docstring is dropped like the module's; the def line (name, parameters, decorators) is
    not part of it."""
    return digest_code(cst.Module(body=_statements(node.body)).code)


def expression_digest(node: cst.BaseExpression) -> str:
    """Digest of one expression, parsed as an expression (in parentheses, so one that spans
    lines still parses); a lone string is a value here, never a docstring."""
    code = cst.Module(body=[cst.SimpleStatementLine(body=[cst.Expr(value=node)])]).code
    text = f"(\n{code.strip()}\n)"
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _text_digest(text)
    return _tree_digest(tree)
