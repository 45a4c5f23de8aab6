"""What every Python extractor starts from: bytes to a libcst module, and small node readers.

Maintainers: shared by the hipDNN extractor (impact/python/facts.py) and the bindings
extractor (impact/bindings/python_facts.py), so both refuse, decode and parse a file the
same way. Pure functions over bytes and libcst nodes; nothing here touches git or the
filesystem, and nothing here knows a project's names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper

from impact.facts import Fact, never_raises, parse_failure

LANGUAGE = "Python"
# libcst's native parser overflows the C stack (a crash, not an exception) on very deep
# bracket nesting, so such files are refused before parsing.
MAX_BRACKET_DEPTH = 500


def parse_python(path: str, source: bytes) -> MetadataWrapper | Fact:
    """The parsed module with its metadata, or the one parse-failure fact of a file that is
    not UTF-8, nests brackets too deeply, does not compile, or is not Python libcst can
    read."""
    try:
        text = source.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return parse_failure(path, f"not UTF-8: {exc.reason}")
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        return parse_failure(path, f"brackets nested deeper than {MAX_BRACKET_DEPTH}")
    refusal = compile_refusal(path, source)
    if refusal is not None:
        return refusal
    try:
        return MetadataWrapper(cst.parse_module(text))
    except cst.ParserSyntaxError as exc:
        return parse_failure(path, f"syntax error: {exc.message}", exc.raw_line)
    except Exception as exc:  # libcst may raise other errors on hostile input
        return parse_failure(path, f"cannot parse: {type(exc).__name__}")


def compile_refusal(path: str, source: bytes) -> Fact | None:
    """The parse-failure fact of a file Python itself will not compile (so nothing of it
    can be imported or built), else None. libcst tolerates some of these: a NUL byte, an
    unknown encoding declaration, `return` or `nonlocal` outside a function. Compiled by
    the running Python, so syntax newer than it is refused too (fail closed). Compiling
    runs none of the file's code."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning and the like are not refusals
            compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return parse_failure(path, f"Python will not compile it: {exc.msg}", exc.lineno or 0)
    except RecursionError:
        return parse_failure(path, f"{LANGUAGE} source nested too deeply")
    except Exception as exc:  # ValueError (a NUL byte, before 3.12), MemoryError, ...
        return parse_failure(path, f"Python will not compile it: {type(exc).__name__}: {exc}")
    return None


def extract_python(path: str, source: bytes,
                   extract: Callable[[MetadataWrapper], list[Fact]]) -> list[Fact]:
    """`extract(wrapper)` of the parsed file; never raises: a file that does not parse, or
    an extractor that raises, yields exactly one parse-failure fact."""
    parsed = parse_python(path, source)
    if isinstance(parsed, Fact):
        return [parsed]
    return never_raises(path, LANGUAGE, lambda: extract(parsed))


def bracket_depth(text: str) -> int:
    """Deepest bracket nesting, counting brackets inside strings too (errs on the safe side)."""
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}" and depth:
            depth -= 1
    return deepest


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` of a Name or an Attribute chain of Names; None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a (possibly implicitly concatenated) str literal; None for anything else,
    bytes, f-strings, and escapes libcst accepts but Python does not."""
    if not isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return None
    try:
        value = node.evaluated_value
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None


def parameters(params: cst.Parameters,
               text: Callable[[cst.CSTNode], str]) -> list[dict[str, Any]]:
    """`{name, kind, default, annotation}` per parameter, in order; `text` writes a node."""
    out: list[dict[str, Any]] = []

    def add(param: cst.Param, kind: str) -> None:
        annotation = None if param.annotation is None else param.annotation.annotation
        out.append({
            "name": param.name.value,
            "kind": kind,
            "default": None if param.default is None else text(param.default),
            "annotation": None if annotation is None else text(annotation),
        })

    for param in (*params.posonly_params, *params.params):
        add(param, "positional")
    if isinstance(params.star_arg, cst.Param):
        add(params.star_arg, "var-positional")
    for param in params.kwonly_params:
        add(param, "keyword-only")
    if isinstance(params.star_kwarg, cst.Param):
        add(params.star_kwarg, "var-keyword")
    return out
