"""Parse TORCH_LIBRARY schema strings such as `fwd(Tensor q, int x=0, *, float s=1.0) -> Tensor[]`.

Maintainers: a pure function over one string; nothing here touches git or the filesystem.
`parse_schema` raises `SchemaError` (and nothing else) on text it cannot read, so callers
can turn a bad schema into a `binding-unreadable` fact.
"""

from __future__ import annotations

import re
from typing import Any

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[jJ]?$")
_WORD = re.compile(r"-?[A-Za-z_][A-Za-z0-9_.:]*$")
_ALIAS = re.compile(r"[A-Za-z0-9_!*|>\- .]+$")
_OPEN = {"(": ")", "[": "]", "{": "}"}


class SchemaError(ValueError):
    """A schema string that cannot be read; the message says why."""


def parse_schema(text: str) -> dict[str, Any]:
    """`{name, args: [{name, type, default, kw_only}], returns}` of one schema string.

    `name` keeps any `ns::` prefix and `.overload` suffix as written; `type` keeps alias
    annotations (`Tensor(a!)`) and suffixes (`?`, `[]`, `[2]`); `default` is the default's
    source text (strings keep their quotes) or None; `returns` is the text after `->`.
    Raises SchemaError with a reason on anything else.
    """
    if not isinstance(text, str):
        raise SchemaError("schema is not a string")
    reader = _Reader(text.strip())
    name = reader.qualified_name()
    reader.expect("(")
    args = reader.arguments()
    reader.expect(")")
    reader.skip()
    if not reader.take("->"):
        raise SchemaError(f"expected '->' at offset {reader.pos}")
    returns = reader.text[reader.pos :].strip()
    if not returns:
        raise SchemaError("missing return type after '->'")
    _check_balanced(returns, "return type")
    return {"name": name, "args": args, "returns": returns}


def _check_balanced(text: str, what: str) -> None:
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for char in text:
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in _OPEN:
            stack.append(_OPEN[char])
        elif char in ")]}" and (not stack or stack.pop() != char):
            raise SchemaError(f"unbalanced {char!r} in {what}")
    if quote is not None:
        raise SchemaError(f"unterminated string in {what}")
    if stack:
        raise SchemaError(f"unclosed bracket in {what}")


def _check_default(value: str) -> None:
    if not value:
        raise SchemaError("empty default value")
    if value[0] in "\"'":
        if len(value) < 2 or value[-1] != value[0]:
            raise SchemaError(f"bad string default {value!r}")
        _check_balanced(value, "default")
        return
    if value[0] == "[":
        if value[-1] != "]":
            raise SchemaError(f"bad list default {value!r}")
        _check_balanced(value, "default")
        inner = value[1:-1].strip()
        if inner:
            for item in _split_top(inner):
                _check_default(item.strip())
        return
    if _NUMBER.match(value) or _WORD.match(value):
        return
    raise SchemaError(f"bad default value {value!r}")


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    for index, char in enumerate(text):
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, token: str) -> bool:
        self.skip()
        return self.text.startswith(token, self.pos)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.take(token):
            raise SchemaError(f"expected {token!r} at offset {self.pos}")

    def ident(self, what: str) -> str:
        self.skip()
        match = _IDENT.match(self.text, self.pos)
        if match is None:
            raise SchemaError(f"expected {what} at offset {self.pos}")
        self.pos = match.end()
        return match.group()

    def qualified_name(self) -> str:
        name = self.ident("operator name")
        if self.text.startswith("::", self.pos):
            self.pos += 2
            name += "::" + self.ident("operator name")
        if self.text.startswith(".", self.pos):
            self.pos += 1
            name += "." + self.ident("overload name")
        return name

    def arguments(self) -> list[dict[str, Any]]:
        args: list[dict[str, Any]] = []
        seen: set[str] = set()
        kw_only = False
        if self.peek(")"):
            return args
        while True:
            if self.take("*"):
                if kw_only:
                    raise SchemaError("a second '*' in the argument list")
                kw_only = True
            else:
                arg_type = self.type()
                name = self.ident("argument name")
                if name in seen:
                    raise SchemaError(f"argument {name!r} appears twice")
                seen.add(name)
                default = self.default() if self.take("=") else None
                args.append({"name": name, "type": arg_type, "default": default,
                             "kw_only": kw_only})
            if self.take(","):
                continue
            if self.peek(")"):
                return args
            raise SchemaError(f"expected ',' or ')' at offset {self.pos}")

    def type(self) -> str:
        base = self.ident("argument type")
        while self.text.startswith(".", self.pos):
            self.pos += 1
            base += "." + self.ident("argument type")
        if self.text.startswith("(", self.pos):
            end = self.text.find(")", self.pos)
            alias = self.text[self.pos + 1 : end] if end >= 0 else ""
            if end < 0 or not _ALIAS.match(alias):
                raise SchemaError(f"bad alias annotation at offset {self.pos}")
            base += "(" + " ".join(alias.split()) + ")"
            self.pos = end + 1
        while True:
            if self.text.startswith("?", self.pos):
                base += "?"
                self.pos += 1
            elif self.text.startswith("[", self.pos):
                end = self.text.find("]", self.pos)
                size = self.text[self.pos + 1 : end].strip() if end >= 0 else "x"
                if end < 0 or (size and not size.isdigit()):
                    raise SchemaError(f"bad list type at offset {self.pos}")
                base += f"[{size}]"
                self.pos = end + 1
            else:
                return base

    def default(self) -> str:
        self.skip()
        start = self.pos
        depth = 0
        quote: str | None = None
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if quote is not None:
                if char == "\\":
                    self.pos += 1
                elif char == quote:
                    quote = None
            elif char in "\"'":
                quote = char
            elif char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    break
                depth -= 1
            elif char == "," and depth == 0:
                break
            self.pos += 1
        value = self.text[start : self.pos].strip()
        _check_default(value)
        return value
