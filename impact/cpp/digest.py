"""The layout-blind digest of a tree-sitter syntax tree (C++, and any grammar like it).

Two sources get the same digest exactly when they parse to the same tree once comments,
whitespace and layout, a trailing comma before a closing brace, and parentheses that
cannot change meaning are left out; the tree's nesting counts, so an operator, an
argument's position or a literal's text still does.

Maintainers: a pure function over tree-sitter nodes; nothing here parses, decodes, touches
git or the filesystem (impact/cpp/scaffold.py parses and decides when a tree has errors).

Parentheses kept, because in C++ they can mean something:
* under `decltype` (`decltype((x))` is a reference type, `decltype(x)` is not);
* around the callee of a call (`(f)(x)` turns off argument-dependent lookup);
* around a returned value (`return (x);` differs in a `decltype(auto)` function);
* around a whole call argument: the call may be a macro, whose body pastes the argument's
  text (`M((a + b))` is not `M(a + b)`) or even spells it (`#x` makes `M((a))` "(a)").
Elsewhere the tree already carries precedence, so `(a * b) + c` and `a * b + c` are the
same tree and `a * (b + c)` is another.
"""

from __future__ import annotations

import hashlib

import tree_sitter

COMMENTS = frozenset({"comment"})
_KEEP_PARENS_UNDER = frozenset({"decltype", "return_statement", "co_return_statement"})
# Leaves whose text tree-sitter does not split into tokens (a macro body): whitespace in
# them is folded, so re-spacing a `#define` does not count.
_FOLDED = frozenset({"preproc_arg"})
_OPEN, _CLOSE, _LEAF = b"\x01", b"\x02", b"\x00"


def _meaningful(node: tree_sitter.Node, comments: frozenset[str]) -> list[tree_sitter.Node]:
    """A node's children without comments and without a trailing comma before `}`."""
    kids = [child for child in node.children if child.type not in comments]
    return [child for i, child in enumerate(kids)
            if not (child.type == "," and not child.is_named and i + 1 < len(kids)
                    and kids[i + 1].type == "}" and not kids[i + 1].is_named)]


def _inner(node: tree_sitter.Node, comments: frozenset[str]) -> tree_sitter.Node | None:
    """The one expression a parenthesized_expression holds, or None."""
    named = [child for child in node.named_children if child.type not in comments]
    return named[0] if len(named) == 1 else None


def _redundant(node: tree_sitter.Node, parent: tree_sitter.Node | None, first: bool,
               comments: frozenset[str]) -> tree_sitter.Node | None:
    """What a parenthesized_expression holds when its parentheses change nothing, else None."""
    inner = _inner(node, comments)
    if inner is None or parent is None or parent.type in _KEEP_PARENS_UNDER:
        return None
    if parent.type == "call_expression" and first:
        return None
    if parent.type == "argument_list":
        return None
    return inner


def tree_digest(root: tree_sitter.Node, comments: frozenset[str] = COMMENTS) -> str:
    """sha256 of the tree under `root`: each inner node's type around its children, each
    leaf's type and text; `comments` node types, layout, a trailing comma before `}` and
    redundant parentheses (see the module docstring) left out."""
    digest = hashlib.sha256()
    # (node, parent, is the parent's first meaningful child) or a closing marker (None).
    stack: list[tuple[tree_sitter.Node, tree_sitter.Node | None, bool] | None] = [
        (root, None, False)]
    while stack:
        item = stack.pop()
        if item is None:
            digest.update(_CLOSE)
            continue
        node, parent, first = item
        while node.type == "parenthesized_expression":
            inner = _redundant(node, parent, first, comments)
            if inner is None:
                break
            node = inner
        if node.child_count == 0:
            text = node.text or b""
            if node.type in _FOLDED:
                text = b" ".join(text.split())
            digest.update(node.type.encode() + _LEAF + text + _LEAF)
            continue
        digest.update(_OPEN + node.type.encode() + _LEAF)
        stack.append(None)
        kids = _meaningful(node, comments)
        stack.extend((kid, node, i == 0) for i, kid in reversed(list(enumerate(kids))))
    return digest.hexdigest()
