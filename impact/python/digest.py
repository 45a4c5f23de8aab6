"""Layout-blind digests of Python code: comments, docstrings and whitespace do not count."""

# Maintainers: pure functions over libcst nodes and strings; nothing here touches git or the
# filesystem.

from __future__ import annotations

import hashlib
import io
import tokenize
from collections.abc import Sequence

import libcst as cst

_SKIPPED_TOKENS = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


def _is_docstring(stmt: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        stmt = stmt.body[0]
    return isinstance(stmt, cst.Expr) and isinstance(
        stmt.value, (cst.SimpleString, cst.ConcatenatedString)
    )


def _without_docstring(body: cst.BaseSuite) -> cst.BaseSuite:
    stmts = list(body.body)
    if not stmts or not _is_docstring(stmts[0]):
        return body
    rest = stmts[1:]
    if isinstance(body, cst.SimpleStatementSuite):
        return body.with_changes(body=rest or [cst.Pass()])
    return body.with_changes(body=rest or [cst.SimpleStatementLine([cst.Pass()])])


class _DropDocstrings(cst.CSTTransformer):
    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        return updated_node.with_changes(body=_without_docstring(updated_node.body))

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef:
        return updated_node.with_changes(body=_without_docstring(updated_node.body))


def _statements(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(body.body))]
    return list(body.body)


def digest_code(code: str) -> str:
    """sha256 of the code's tokens, leaving out comments and non-logical line breaks.

    Indentation still counts as INDENT/DEDENT markers, so moving a statement in or out of a
    block changes the digest while re-wrapping a long call does not.
    """
    parts: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in _SKIPPED_TOKENS:
                continue
            if tok.type == tokenize.NEWLINE:
                parts.append("<nl>")
            elif tok.type == tokenize.INDENT:
                parts.append("<indent>")
            elif tok.type == tokenize.DEDENT:
                parts.append("<dedent>")
            else:
                parts.append(tok.string)
        text = "\x00".join(parts)
    except (tokenize.TokenError, SyntaxError, ValueError):
        text = code
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def module_digest(module: cst.Module) -> str:
    """Digest of a whole module without any docstring, the module's own included."""
    stripped = module.visit(_DropDocstrings())
    assert isinstance(stripped, cst.Module)
    body = list(stripped.body)
    if body and _is_docstring(body[0]):
        body = body[1:]
    return digest_code(stripped.with_changes(body=body, header=[], footer=[]).code)


def body_digest(node: cst.FunctionDef | cst.ClassDef) -> str:
    """Digest of a def's or class's body without its docstrings (nested ones too)."""
    stripped = node.visit(_DropDocstrings())
    assert isinstance(stripped, (cst.FunctionDef, cst.ClassDef))
    return digest_code(cst.Module(body=_statements(stripped.body)).code)


def expression_digest(node: cst.BaseExpression) -> str:
    """Digest of one expression, written as a statement of its own."""
    line = cst.SimpleStatementLine(body=[cst.Expr(value=node)])
    return digest_code(cst.Module(body=[line]).code)
