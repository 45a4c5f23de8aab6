"""Layout-blind digests of Python code: the syntax tree without positions or docstrings.

Two pieces of code get the same digest exactly when Python's own `ast` reads them as the
same tree, docstrings left out: comments, line breaks, indentation width, a trailing comma,
redundant parentheses and the spelling of a literal (`0x10` and `16`, `'a' 'b'` and `'ab'`)
do not count; an operator, an argument's position or a literal's value does.

Unless the code reads them (issue 25): a module that names `__doc__`, `getdoc` or `pydoc`
(`f.__doc__`, `inspect.getdoc(cls)`, `getattr(f, "__doc__")`) keeps every docstring in
its digests, since a builder that reads its own docstring makes an edit of one matter; a
module that names a reader of its own source (`inspect.getsource`, `getsourcelines`,
`getcomments`, `findsource`, `linecache`) digests its text too, so any edit of it counts,
a comment's included (`reads_own_text`).

Maintainers: pure functions over `ast` nodes and strings; nothing here touches git or the
filesystem, and nothing here changes a tree it is handed (the extractors digest nested
bodies of one shared tree, so a docstring is left out of a dump, never cut from the tree).
"""

from __future__ import annotations

import ast
import hashlib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

# Nodes whose body may open with a docstring.
_DOC_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# Marks a digest computed from the text itself (the code did not parse as `ast`): such a
# digest differs from every tree digest, and from any other text, so it never says "same".
_TEXT_PREFIX = b"text\x00"


# Names whose use lets code see a docstring, and names whose use lets it see its source text.
DOC_READERS = frozenset({"__doc__", "getdoc", "pydoc"})
SOURCE_READERS = frozenset({"getsource", "getsourcelines", "getcomments", "findsource",
                            "linecache"})
DOCSTRINGS, SOURCE = "docstrings", "source"


def reads_own_text(tree: ast.AST, nodes: Iterable[ast.AST] | None = None) -> str | None:
    """`SOURCE` when the code names a reader of source text (`SOURCE_READERS`), else
    `DOCSTRINGS` when it names a reader of docstrings (`DOC_READERS`), else None. A name
    counts however it is spelled: a name, an attribute, an imported name or module, or a
    string constant (`getattr(f, "__doc__")`); naming one is enough (fail closed).
    `nodes`, every node of `tree` when the caller has them listed, saves a walk."""
    found: str | None = None
    for node in nodes if nodes is not None else ast.walk(tree):
        if isinstance(node, ast.Name):
            names: tuple[str, ...] = (node.id,)
        elif isinstance(node, ast.Attribute):
            names = (node.attr,)
        elif isinstance(node, ast.alias):
            names = tuple(node.name.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and len(node.value) < 32:
            names = (node.value,)
        else:
            continue
        if any(name in SOURCE_READERS for name in names):
            return SOURCE
        if any(name in DOC_READERS for name in names):
            found = DOCSTRINGS
    return found


def _names_no_reader(text: str) -> bool:
    """Whether source text cannot name a docstring or source reader: none of their names
    occurs in it at all, read as Python reads identifiers (NFKC: a non-ASCII spelling
    that normalises to `__doc__` counts)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return not any(name in text for name in DOC_READERS | SOURCE_READERS)


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


@contextmanager
def _without_docstrings(tree: ast.AST) -> Iterator[None]:
    """The first-statement string constant of every module, class and def body left out
    while the block runs, then put back."""
    cut: list[tuple[ast.AST, list[ast.stmt]]] = []
    try:
        for node in ast.walk(tree):
            if isinstance(node, _DOC_OWNERS) and node.body and _is_docstring(node.body[0]):
                cut.append((node, node.body))
                node.body = node.body[1:] or [ast.Pass()]
        yield
    finally:
        for node, body in reversed(cut):
            node.body = body


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
    return tree_digest(tree)


def _tree_digest(tree: ast.AST) -> str:
    dumped = ast.dump(tree, annotate_fields=True, include_attributes=False)
    return hashlib.sha256(dumped.encode("utf-8", "surrogatepass")).hexdigest()


def _text_digest(code: str) -> str:
    return hashlib.sha256(_TEXT_PREFIX + code.encode("utf-8", "surrogatepass")).hexdigest()


def tree_digest(tree: ast.AST) -> str:
    """`digest_code` of the code `tree` was parsed from, without writing it out again;
    its docstrings kept when the tree reads docstrings or source (`reads_own_text`)."""
    if reads_own_text(tree) is not None:
        return _tree_digest(tree)
    with _without_docstrings(tree):
        return _tree_digest(tree)


class TreeDigests:
    """The digests of one module and of its defs' and classes' bodies, for an extractor
    that takes many: its docstrings are found once, not once per body. A module that reads
    its docstrings keeps them in every digest; one that reads its source text (`text`,
    when given) has that text in every digest too (`reads_own_text`)."""

    def __init__(self, tree: ast.Module, text: str | None = None) -> None:
        self.tree = tree
        reads = reads_own_text(tree)
        self.owners = [] if reads is not None else [
            node for node in ast.walk(tree) if isinstance(node, _DOC_OWNERS)
            and node.body and _is_docstring(node.body[0])]
        self.text = _text_digest(text) if reads == SOURCE and text is not None else ""

    @contextmanager
    def _cut(self) -> Iterator[None]:
        saved = [(node, node.body) for node in self.owners]
        try:
            for node, body in saved:
                node.body = body[1:] or [ast.Pass()]
            yield
        finally:
            for node, body in saved:
                node.body = body

    def module(self) -> str:
        """`module_digest` of the tree."""
        with self._cut():
            return self._with_text(_tree_digest(self.tree))

    def body(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
        """`body_digest` of a def or class of the tree: its own docstring is cut with the
        others, so the body's module is not cut again."""
        with self._cut():
            return self._with_text(_tree_digest(ast.Module(body=node.body, type_ignores=[])))

    def _with_text(self, digest: str) -> str:
        return _sha(self.text + digest) if self.text else digest


def arguments_digest(call: ast.Call) -> str:
    """Digest of what a call passes, from its parsed arguments (nothing is parsed again):
    each positional argument, `*x` included, in order, then each keyword as `name=` (`**`
    for `**x`) with its value, in the order written. Layout-blind as `digest_code` is; an
    expression holds no docstring to leave out."""
    digest = hashlib.sha256(b"arguments\x00")
    for arg in call.args:
        digest.update(_dump(arg).encode("utf-8", "surrogatepass") + b"\x00")
    for keyword in call.keywords:
        name = "**" if keyword.arg is None else keyword.arg
        digest.update(f"{name}={_dump(keyword.value)}".encode("utf-8", "surrogatepass")
                      + b"\x00")
    return digest.hexdigest()


def _dump(node: ast.AST) -> str:
    return ast.dump(node, annotate_fields=True, include_attributes=False)


class _Field(str):
    """A field's name on the walk's stack (a string value is never one)."""


_CLOSE = object()  # on the walk's stack: close the node or list opened before it
_CUT = object()  # on the walk's stack: a blanked field's tokens end here


def module_digests(module: ast.Module, blank: Mapping[int, frozenset[str]],
                   text: str | None = None, nodes: Iterable[ast.AST] | None = None
                   ) -> tuple[str, str]:
    """Two layout-blind digests of a module from one walk, docstrings left out of both:
    the whole module's, and the module's with the fields `blank` names left out (by node
    id: a call's `args` and `keywords`, a def's `args`), so a file whose code changed only
    where its facts already say (an argument list) digests the same the second way.

    Both are of the tree's structure without positions: node types, field names and
    values (`repr`, so `1`, `1.0` and `True` differ), as `digest_code` compares them.
    One token list is written; the second digest leaves out the spans of blanked fields.
    A tree too deep to walk recursively is walked with a stack of its own, to the same
    tokens. Docstrings stay in both when the module reads them, and the source `text`
    (when given) is in both when it reads its source (`reads_own_text`, over `nodes`
    when the caller has the module's nodes listed)."""
    reads = None if text is not None and _names_no_reader(text) else reads_own_text(
        module, nodes)
    docs = reads is None
    try:
        tokens, cut = _tokens(module, blank, docs)
    except RecursionError:
        tokens, cut = _tokens_by_stack(module, blank, docs)
    pieces, last = [], 0
    for begin, end in cut:
        pieces.append("".join(tokens[last:begin]))
        last = end
    pieces.append("".join(tokens[last:]))
    mixed = _text_digest(text) if reads == SOURCE and text is not None else ""
    return _sha(mixed + "".join(tokens)), _sha(mixed + "".join(pieces))


def _tokens(module: ast.Module, blank: Mapping[int, frozenset[str]], docs: bool = True
            ) -> tuple[list[str], list[tuple[int, int]]]:
    """The module's tokens, and the (begin, end) spans of the blanked fields (outermost)."""
    tokens: list[str] = []
    cut: list[tuple[int, int]] = []
    append = tokens.append

    def visit(node: ast.AST, shown: bool) -> None:
        append(f"{type(node).__name__}(")
        skipped = blank.get(id(node)) if shown else None
        owner = docs and isinstance(node, _DOC_OWNERS)
        for name in node._fields:
            value = getattr(node, name, None)
            if owner and name == "body" and value and _is_docstring(value[0]):
                value = value[1:]
            blanked = skipped is not None and name in skipped
            at = len(tokens)
            append(f"{name}=")
            inner = shown and not blanked
            if isinstance(value, ast.AST):
                visit(value, inner)
            elif isinstance(value, list):
                append("[")
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item, inner)
                    else:
                        append(repr(item))
                append(")")
            else:
                append(repr(value))
            if blanked:
                cut.append((at, len(tokens)))
        append(")")

    visit(module, True)
    return tokens, cut


def _tokens_by_stack(module: ast.Module, blank: Mapping[int, frozenset[str]],
                     docs: bool = True) -> tuple[list[str], list[tuple[int, int]]]:
    """`_tokens` without recursion."""
    tokens: list[str] = []
    cut: list[tuple[int, int]] = []
    opened: list[int] = []
    stack: list[tuple[object, bool, bool]] = [(module, False, False)]
    while stack:
        item, hidden, starts = stack.pop()
        if item is _CLOSE:
            tokens.append(")")
        elif item is _CUT:
            cut.append((opened.pop(), len(tokens)))
            continue
        elif isinstance(item, ast.AST):
            tokens.append(f"{type(item).__name__}(")
            skipped = blank.get(id(item), frozenset()) if not hidden else frozenset()
            stack.append((_CLOSE, hidden, False))
            for name in reversed(item._fields):
                value = getattr(item, name, None)
                if docs and name == "body" and isinstance(item, _DOC_OWNERS) and value \
                        and _is_docstring(value[0]):
                    value = value[1:]
                blanked = name in skipped
                if blanked:
                    stack.append((_CUT, True, False))
                stack.append((value, hidden or blanked, False))
                stack.append((_Field(name), hidden or blanked, blanked))
        elif isinstance(item, list):
            tokens.append("[")
            stack.append((_CLOSE, hidden, False))
            stack.extend((value, hidden, False) for value in reversed(item))
        elif type(item) is _Field:
            if starts:
                opened.append(len(tokens))
            tokens.append(f"{item}=")
        else:
            tokens.append(repr(item))
    return tokens, cut


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def module_digest(module: ast.Module) -> str:
    """Digest of a whole module without any docstring, the module's own included."""
    return tree_digest(module)


def body_digest(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """Digest of a def's or class's body without its docstrings (nested ones too).

    The body is digested as a module of its own, so its leading docstring is dropped like
    the module's; the def line (name, parameters, decorators) is not part of it."""
    return tree_digest(ast.Module(body=node.body, type_ignores=[]))


def expression_digest(node: ast.expr) -> str:
    """Digest of one expression as an expression: a lone string is a value here, never a
    docstring, and its parentheses or line breaks do not count."""
    return _tree_digest(ast.Expression(body=node))
