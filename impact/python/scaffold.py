"""What every Python extractor starts from: bytes to an `ast` tree, and small node readers.

Maintainers: shared by the hipDNN extractor (impact/python/facts.py) and the bindings
extractor (impact/bindings/python_facts.py), so both refuse, decode and parse a file the
same way. Pure functions over bytes and `ast` nodes; nothing here touches git or the
filesystem, and nothing here knows a project's names.

Why the standard library's `ast` and not libcst (a measured decision, issues 12 and 16):
both are real parsers, but libcst cost 0.5 s to parse aiter's 4,129-line
`aiter/fused_moe.py`, 0.8 s more to deep-copy it for metadata and 0.9 s for positions.
Measured on that file (CPU seconds, 2 loaded cores): the bindings facts took 3.2 s with
libcst and take 0.3 s here, the hipDNN facts 4.2 s and 0.3 s; `ast.parse` is 0.03 s of
it. The facts only need what `ast` gives: node kinds, positions and the text of a node.
`Source` supplies that text from the node's positions, as libcst wrote it: with the
parentheses libcst counted as the node's own, and without the block's indentation on
continuation lines. `benchmarks/pyfacts_diff.py` compares the two extractors fact for
fact on real history (docs/architecture.md has its figures).
"""

from __future__ import annotations

import ast
import bisect
import io
import keyword
import re
import tokenize
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from impact.facts import Fact, never_raises, parse_failure
from impact.sourcetext import READABLE_CODECS, python_codec

LANGUAGE = "Python"
# Deeper bracket nesting than this is refused before parsing (Python's own tokenizer stops
# at 200 levels; the bound keeps the refusal independent of the running Python).
MAX_BRACKET_DEPTH = 500

_NEWLINE = re.compile(r"\r\n|\r|\n")
_BRACKETS = re.compile(r"[()\[\]{}]")
_OPENING = frozenset("([{")
_KEYWORDS = frozenset(keyword.kwlist) | {"case"}
# Children whose field order differs from the order they are written in.
_SOURCE_ORDER = (ast.Call, ast.Dict, ast.arguments)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_GAP = " \t\f"
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)  # Python 3.12 and later
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)


class Source:
    """One parsed Python file: its text, its `ast` module and the text each node is written
    with. Offsets are indices into `text` (code points, not the UTF-8 bytes `ast` counts)."""

    def __init__(self, text: str, tree: ast.Module) -> None:
        self.text = text
        self.tree = tree
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        self._ascii: dict[int, bool] = {}
        self._comments: dict[int, int] | None = None
        self._strings: tuple[list[int], list[int]] | None = None
        self._statements: tuple[list[int], list[tuple[int, int]]] | None = None
        self._nodes: list[ast.AST] | None = None

    def nodes(self) -> list[ast.AST]:
        """Every node of the tree, in `ast.walk`'s order, listed once: the readers that
        each need a pass over the whole tree share it."""
        if self._nodes is None:
            self._nodes = all_nodes(self.tree)
        return self._nodes

    # -- positions ----------------------------------------------------------------------

    def offset(self, lineno: int, col: int) -> int:
        """The offset of `ast`'s (line, UTF-8 byte column)."""
        start = self.starts[lineno - 1] if lineno - 1 < len(self.starts) else len(self.text)
        ascii_line = self._ascii.get(lineno)
        if ascii_line is None:
            end = self.starts[lineno] if lineno < len(self.starts) else len(self.text)
            ascii_line = self._ascii[lineno] = self.text[start:end].isascii()
        if ascii_line:
            return start + col
        return start + len(self.text[start:start + col].encode("utf-8")[:col]
                           .decode("utf-8", "ignore"))

    def line_of(self, offset: int) -> int:
        """The 1-based line an offset lies on."""
        return bisect.bisect_right(self.starts, offset)

    def start(self, node: Any) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: Any) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    # -- the text between tokens ----------------------------------------------------------

    def forward(self, at: int) -> int:
        """The first offset at or after `at` that is not whitespace, a line continuation
        or a comment."""
        text, n = self.text, len(self.text)
        while at < n:
            char = text[at]
            if char in _GAP or char in "\r\n":
                at += 1
            elif char == "\\" and at + 1 < n and text[at + 1] in "\r\n":
                at += 2
            elif char == "#":
                newline = _NEWLINE.search(text, at)
                at = n if newline is None else newline.start()
            else:
                break
        return at

    def backward(self, at: int) -> int:
        """The offset just after the last token that ends at or before `at`."""
        text = self.text
        while at > 0:
            char = text[at - 1]
            if char in _GAP:
                at -= 1
            elif char in "\r\n":
                at -= 1
                if char == "\n" and at > 0 and text[at - 1] == "\r":
                    at -= 1
                comment = self.comments().get(self.line_of(at))
                if comment is not None:
                    at = comment
                elif at > 0 and text[at - 1] == "\\":
                    at -= 1
            else:
                break
        return at

    def strings(self) -> tuple[list[int], list[int]]:
        """Where the string literals are written: sorted starts and their ends, merged. A
        literal `ast` joined from several on more lines is split back into its pieces, so
        a comment or line break between two of them is not inside a string."""
        if self._strings is None:
            found: list[tuple[int, int]] = []
            for node in self.nodes():
                if isinstance(node, ast.JoinedStr) or (
                        isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
                    begin, end = self.start(node), self.end(node)
                    if node.lineno == node.end_lineno:
                        found.append((begin, end))
                    else:
                        found.extend(self._pieces(begin, end))
            merged: list[list[int]] = []
            for begin, end in sorted(found):
                if merged and begin < merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], end)
                else:
                    merged.append([begin, end])
            self._strings = ([b for b, _ in merged], [e for _, e in merged])
        return self._strings

    def _pieces(self, begin: int, end: int) -> list[tuple[int, int]]:
        """The string tokens written between `begin` and `end` (one literal of `ast`)."""
        pieces = string_tokens(self.text[begin:end])
        if pieces is None:
            return [(begin, end)]
        return [(begin + a, begin + b) for a, b in pieces]

    def in_string(self, at: int) -> bool:
        begins, ends = self.strings()
        index = bisect.bisect_right(begins, at) - 1
        return index >= 0 and at < ends[index]

    def comments(self) -> dict[int, int]:
        """Line -> offset of the comment that ends it. A `#` outside every string literal
        starts a comment (the strings are the tree's)."""
        if self._comments is None:
            self._comments = {}
            for match in re.finditer("#", self.text):
                if not self.in_string(match.start()):
                    self._comments.setdefault(self.line_of(match.start()), match.start())
        return self._comments

    def block_indent(self, at: int) -> str:
        """The indentation of the block whose statement holds offset `at`: the leading
        whitespace of the line the innermost statement around `at` starts on (a def's or
        class's decorators are part of it)."""
        if self._statements is None:
            rows = []
            for node in self.nodes():
                if isinstance(node, ast.stmt):
                    begin = self.start(node)
                    for decorator in getattr(node, "decorator_list", ()):
                        begin = min(begin, self.start(decorator))
                    rows.append((begin, self.end(node)))
            rows.sort()
            self._statements = ([begin for begin, _ in rows], rows)
        begins, rows = self._statements
        index = bisect.bisect_right(begins, at) - 1
        while index >= 0 and rows[index][1] < at:
            index -= 1
        if index < 0:
            return ""
        line = self.starts[self.line_of(rows[index][0]) - 1]
        end = line
        while end < len(self.text) and self.text[end] in _GAP:
            end += 1
        return self.text[line:end]

    def written(self, begin: int, end: int) -> str:
        """The text from `begin` to `end` as libcst wrote a node on its own: each line
        that continues it (not one inside a string or after a backslash) loses the
        indentation of the block the node is in."""
        segment = self.text[begin:end]
        if "\n" not in segment and "\r" not in segment:
            return segment
        indent = self.block_indent(begin)
        if not indent:
            return segment
        pieces, at = [], begin
        first = bisect.bisect_right(self.starts, begin)
        for line_start in self.starts[first:]:
            if line_start >= end:
                break
            newline = line_start - 1
            if self.text[newline] == "\n" and newline > 0 and self.text[newline - 1] == "\r":
                newline -= 1
            if (newline > 0 and self.text[newline - 1] == "\\") or self.in_string(newline):
                continue
            if self.text.startswith(indent, line_start) and line_start + len(indent) <= end:
                pieces.append(self.text[at:line_start])
                at = line_start + len(indent)
        pieces.append(self.text[at:end])
        return "".join(pieces)

    def _word_before(self, at: int) -> tuple[str, int]:
        """The identifier that ends at `at`, and where it starts."""
        begin = at
        while begin > 0 and (self.text[begin - 1].isalnum() or self.text[begin - 1] == "_"):
            begin -= 1
        return self.text[begin:at], begin

    def syntactic_paren(self, paren: int, close: int) -> bool:
        """Whether the `(` at `paren` (closed at `close`) belongs to the statement or call
        around what it wraps rather than to the wrapped node: a call's or a class's
        argument list, or a `with (...):` item list."""
        before = self.backward(paren)
        if before == 0:
            return False
        char = self.text[before - 1]
        if char in ")]'\"":
            return True  # `f(x)(y)`, `a[0](y)`, `"{}".format(y)`
        if not (char.isalnum() or char == "_"):
            return False
        word, begin = self._word_before(before)
        dotted = begin > 0 and self.text[self.backward(begin) - 1: self.backward(begin)] == "."
        after = self.forward(close + 1)
        if word == "with" and not dotted:
            return self.text[after:after + 1] == ":"
        if word == "match" and not dotted:
            return self.text[after:after + 1] != ":"
        return dotted or word not in _KEYWORDS

    def span(self, node: Any) -> tuple[int, int]:
        """Where `node` is written, with the parentheses that wrap it (as libcst counts a
        node's own parentheses); a generator that is a call's only argument is written
        without the call's."""
        begin, end = self.start(node), self.end(node)
        text = self.text
        if isinstance(node, ast.GeneratorExp) and text[begin] == "(" \
                and self.syntactic_paren(begin, end - 1):
            return self.forward(begin + 1), self.backward(end - 1)
        while True:
            before, after = self.backward(begin), self.forward(end)
            if before == 0 or after >= len(text) or text[before - 1] != "(" \
                    or text[after] != ")" or self.syntactic_paren(before - 1, after):
                return begin, end
            begin, end = before - 1, after + 1

    def code(self, node: Any) -> str:
        """The text of `node` with its own parentheses, stripped."""
        return self.written(*self.span(node)).strip()

    def bare(self, node: Any) -> str:
        """The text of `node` without parentheses around it, stripped."""
        return self.text[self.start(node):self.end(node)].strip()


def string_tokens(code: str) -> list[tuple[int, int]] | None:
    """Where each string literal of `code` (string literals and what lies between them) is
    written, as offsets into it; an f-string is one literal on every Python (3.12 splits it
    into several tokens). None when it does not tokenize."""
    segment = "(" + code + ")"  # inside brackets, line breaks and indentation are layout
    lines = [0] + [m.end() for m in _NEWLINE.finditer(segment)]
    out: list[tuple[int, int]] = []
    depth = opened = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(segment, newline="").readline):
            if token.type not in (tokenize.STRING, _FSTRING_START, _FSTRING_END):
                continue
            at = lines[token.start[0] - 1] + token.start[1] - 1
            upto = lines[token.end[0] - 1] + token.end[1] - 1
            if token.type == tokenize.STRING and not depth:
                out.append((at, upto))
            elif token.type == _FSTRING_START:
                opened = at if not depth else opened
                depth += 1
            elif token.type == _FSTRING_END:
                depth -= 1
                if not depth:
                    out.append((opened, upto))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out


def decode_python(path: str, source: bytes) -> str | Fact:
    """The text `compile()` reads from a Python file's bytes: decoded by its byte-order
    mark or coding declaration (PEP 263, found as `tokenize.detect_encoding` finds it),
    UTF-8 when it has neither. The one parse-failure fact of a file whose declaration is
    unknown, names a codec outside `READABLE_CODECS`, or whose bytes do not decode."""
    try:
        codec = python_codec(source)
    except (SyntaxError, LookupError) as exc:
        return parse_failure(path, f"unknown or conflicting coding declaration: {exc}")
    if codec not in READABLE_CODECS:
        return parse_failure(path, f"declared coding {codec} can make a comment or a string "
                             "into code, so it is not read")
    try:
        return source.decode(codec)
    except UnicodeDecodeError as exc:
        return parse_failure(path, f"not {'UTF-8' if codec.startswith('utf') else codec}: "
                             f"{exc.reason}")


def parse_python(path: str, source: bytes) -> Source | Fact:
    """The parsed module, or the one parse-failure fact of a file that does not decode as
    `compile()` decodes it (`decode_python`), nests brackets too deeply, does not compile,
    or is not Python `ast` can read."""
    text = decode_python(path, source)
    if isinstance(text, Fact):
        return text
    if bracket_depth(text) > MAX_BRACKET_DEPTH:
        return parse_failure(path, f"brackets nested deeper than {MAX_BRACKET_DEPTH}")
    refusal = compile_refusal(path, source)
    if refusal is not None:
        return refusal
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text, path)
    except SyntaxError as exc:
        return parse_failure(path, f"syntax error: {exc.msg}", exc.lineno or 0)
    except RecursionError:
        return parse_failure(path, f"{LANGUAGE} source nested too deeply")
    except Exception as exc:  # ValueError, MemoryError on hostile input
        return parse_failure(path, f"cannot parse: {type(exc).__name__}")
    return Source(text, tree)


def parse_statements(text: str) -> Source | None:
    """What can be read of a file that does not parse: each module-level statement
    (decorators with their definition) parsed on its own, those that parse kept at
    their own lines, so a typo in one function leaves the others readable. None when
    the statements cannot be told apart (the tokenizer fails) or none parses."""
    starts: list[int] = []  # 1-based lines where a module-level statement begins
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        fresh, depth, decorating = True, 0, False
        for token in tokens:
            if token.type in (tokenize.NL, tokenize.COMMENT, tokenize.ENCODING):
                continue
            if token.type == tokenize.NEWLINE:
                fresh = True
                continue
            if token.type == tokenize.INDENT:
                depth += 1
                continue
            if token.type == tokenize.DEDENT:
                depth -= 1
                continue
            if fresh and depth == 0 and token.start[1] == 0 and token.type != tokenize.ENDMARKER:
                if decorating:  # another decorator, or the definition they decorate
                    decorating = token.string == "@"
                else:
                    starts.append(token.start[0])
                    decorating = token.string == "@"
            fresh = False
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    lines = text.splitlines(keepends=True)
    body: list[ast.stmt] = []
    for index, start in enumerate(starts):
        end = starts[index + 1] - 1 if index + 1 < len(starts) else len(lines)
        chunk = "".join(lines[start - 1:end])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                part = ast.parse(chunk)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        ast.increment_lineno(part, start - 1)
        body.extend(part.body)
    if not body:
        return None
    return Source(text, ast.Module(body=body, type_ignores=[]))


def compile_refusal(path: str, source: bytes) -> Fact | None:
    """The parse-failure fact of a file Python itself will not compile (so nothing of it
    can be imported or built), else None: a NUL byte, an unknown encoding declaration,
    `return` or `nonlocal` outside a function are refused here, though `ast.parse` reads
    some of them. Compiled by the running Python, so syntax newer than it is refused too
    (fail closed). Compiling runs none of the file's code."""
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
                   extract: Callable[[Source], list[Fact]]) -> list[Fact]:
    """`extract(parsed)` of the parsed file; never raises: a file that does not parse, or
    an extractor that raises, yields exactly one parse-failure fact."""
    parsed = parse_python(path, source)
    if isinstance(parsed, Fact):
        return [parsed]
    return never_raises(path, LANGUAGE, lambda: extract(parsed))


def bracket_depth(text: str) -> int:
    """Deepest bracket nesting, counting brackets inside strings too (errs on the safe side)."""
    depth = deepest = 0
    for char in _BRACKETS.findall(text):
        if char in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def all_nodes(tree: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(tree))`, breadth first as it is, without its generators."""
    found = [tree]
    at = 0
    while at < len(found):
        node = found[at]
        at += 1
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                found.append(value)
            elif isinstance(value, list):
                found.extend(item for item in value if isinstance(item, ast.AST))
    return found


def children(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` in the order they are written (decorators first, a call's
    positional and keyword arguments interleaved, a dict's keys with their values)."""
    if isinstance(node, (*_DEFS, ast.ClassDef)):
        head: list[ast.AST] = list(node.decorator_list)
        if isinstance(node, ast.ClassDef):
            head += sorted([*node.bases, *node.keywords], key=_position)
        else:
            head.append(node.args)
            if node.returns is not None:
                head.append(node.returns)
        return head + list(node.body)
    if isinstance(node, ast.IfExp):
        return [node.body, node.test, node.orelse]
    kids = list(ast.iter_child_nodes(node))
    if isinstance(node, _SOURCE_ORDER):
        kids.sort(key=_position)
    return kids


def _position(node: ast.AST) -> tuple[int, int]:
    if isinstance(node, ast.expr_context | ast.operator | ast.unaryop | ast.cmpop | ast.boolop):
        return (0, 0)
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, itself first, depth first in the order they are written."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def dotted_name(node: ast.AST | None) -> str | None:
    """`a.b.c` of a Name or an Attribute chain of Names; None for anything else."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def string_value(node: ast.AST | None) -> str | None:
    """The value of a (possibly implicitly concatenated) str literal; None for anything else,
    bytes and f-strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def parameters(args: ast.arguments, text: Callable[[ast.AST], str]) -> list[dict[str, Any]]:
    """`{name, kind, default, annotation}` per parameter, in order; `text` writes a node."""
    out: list[dict[str, Any]] = []

    def add(param: ast.arg, kind: str, default: ast.AST | None) -> None:
        out.append({
            "name": param.arg,
            "kind": kind,
            "default": None if default is None else text(default),
            "annotation": None if param.annotation is None else text(param.annotation),
        })

    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.AST | None] = [None] * (len(positional) - len(args.defaults))
    defaults += args.defaults
    for param, default in zip(positional, defaults, strict=True):
        add(param, "positional", default)
    if args.vararg is not None:
        add(args.vararg, "var-positional", None)
    for param, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        add(param, "keyword-only", default)
    if args.kwarg is not None:
        add(args.kwarg, "var-keyword", None)
    return out


def positional_defaults(args: ast.arguments) -> list[ast.AST]:
    """The defaults of the parameters after any `/` and before any `*` (libcst's `params`)."""
    start = len(args.posonlyargs) + len(args.args) - len(args.defaults)
    return [default for index, default in enumerate(args.defaults, start)
            if index >= len(args.posonlyargs)]
