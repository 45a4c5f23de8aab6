"""KernelArgument lists read in every spelling C++ allows: an element with or without its
type name, as braces, a constructor call, designated initialisers or a helper that
returns one; the list as a returned init-list, a vector, `std::array` or C array, a
sequence of `push_back`/`emplace_back` calls, or a helper function returning a list.

Maintainers: pure functions over tree-sitter nodes (through impact/cpp/values.py);
impact/cpp/facts.py turns what this returns into facts. What cannot be read statically
(a list grown in a loop or under a condition, a value from a runtime parameter) is kept
as an `unread` note naming the line and the construct, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter

from impact.cpp.scaffold import declared_identifier, line_of
from impact.cpp.values import Env, Values, function_name

_ELEMENT = re.compile(r"\bKernelArgument\b")
_CONTAINER = re.compile(r"<[^<>]*\bKernelArgument\b|\b(vector|array|span|SmallVector|"
                        r"initializer_list)\b")
_APPENDS = {"push_back", "emplace_back"}
_GROWS = {"insert", "emplace", "resize", "assign", "append", "pop_back", "erase", "clear"}
_LOOPS = {"for_statement": "loop", "for_range_loop": "loop", "while_statement": "loop",
          "do_statement": "loop", "if_statement": "condition", "switch_statement": "condition",
          "conditional_expression": "condition"}
_FIELDS = ("kind", "size", "offset", "name")
_MAX_HELPER_DEPTH = 6


@dataclass
class ListRead:
    """One list as read: its entries in order and what could not be read."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    unread: list[dict[str, Any]] = field(default_factory=list)
    helpers: set[str] = field(default_factory=set)  # list helpers it was built from
    modified_copy: bool = False  # a copy of another list, then changed (a neighbour ABI)
    order: tuple[str, ...] = _FIELDS  # the element's fields in order (a local record's)

    def note(self, node: tree_sitter.Node, construct: str) -> None:
        self.unread.append({"line": line_of(node), "construct": construct})

    def extend(self, other: ListRead) -> None:
        self.entries.extend(other.entries)
        self.unread.extend(other.unread)
        self.helpers |= other.helpers
        self.modified_copy = self.modified_copy or other.modified_copy


def mentions_element(type_text: str) -> bool:
    return _ELEMENT.search(type_text) is not None


def record_of(type_text: str, records: dict[str, tuple[str, ...]]) -> str | None:
    """The file's KernelArgument-shaped struct a type names as its element, if any."""
    return next((name for name in records
                 if re.search(rf"(?<![\w:]){re.escape(name)}\b", type_text)), None)


def is_list_type(type_text: str, declarator: tree_sitter.Node | None = None,
                 records: dict[str, tuple[str, ...]] | None = None) -> bool:
    """A type (with its declarator) that holds several KernelArguments (or several of the
    file's own structs shaped like one, `records`)."""
    if not mentions_element(type_text) and record_of(type_text, records or {}) is None:
        return False
    if _CONTAINER.search(type_text):
        return True
    node = declarator
    while node is not None:
        if node.type == "array_declarator":
            return True
        node = node.child_by_field_name("declarator")
    return False


class ArgLists:
    """Reads KernelArgument lists of one file."""

    def __init__(self, values: Values) -> None:
        self.values = values
        self.helpers_used: set[str] = set()
        self.records = values.element_records()

    def is_list(self, type_text: str, declarator: tree_sitter.Node | None = None) -> bool:
        return is_list_type(type_text, declarator, self.records)

    def new_read(self, type_text: str) -> ListRead:
        """An empty read for a list of `type_text`: a local record's fields give the order
        of a positional element."""
        record = record_of(type_text, self.records) if not mentions_element(type_text) \
            else None
        return ListRead(order=self.records[record]) if record is not None else ListRead()

    def text(self, node: tree_sitter.Node) -> str:
        return self.values.text(node)

    # -- elements ----------------------------------------------------------------------

    def entry(self, node: tree_sitter.Node, env: Env | None, out: ListRead,
              depth: int = 0) -> None:
        """Append the element `node` spells to `out` (or a note saying why it cannot)."""
        if node.type == "compound_literal_expression":
            value = node.child_by_field_name("value")
            if value is not None:
                self.entry(value, env, out, depth)
                return
        if node.type == "initializer_list":
            self.fields([c for c in node.named_children if c.type != "comment"], node, env,
                        out)
            return
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            values = [a for a in args.named_children if a.type != "comment"] if args else []
            name = self.text(function).split("::")[-1] if function is not None else ""
            if name == "KernelArgument":
                self.fields(values, node, env, out)
                return
            if name in self.records:
                self.fields(values, node, env, out, self.records[name])
                return
            helper = self.values.functions.get(name)
            if helper is not None and env is not None and depth < _MAX_HELPER_DEPTH:
                self.helper_entry(helper, values, node, env, out, depth)
                return
            out.note(node, f"call to {name or 'a function'}()")
            return
        if node.type in ("identifier", "qualified_identifier") and env is not None:
            found = env.lookup(self.text(node))
            if found is not None and depth < _MAX_HELPER_DEPTH:
                self.entry(found[0], found[1], out, depth + 1)
                return
        out.note(node, f"element {self.text(node)[:40]}")

    def helper_entry(self, helper: tree_sitter.Node, args: list[tree_sitter.Node],
                     call: tree_sitter.Node, env: Env, out: ListRead, depth: int) -> None:
        name = function_name(helper, self.values.source) or ""
        bound = self.values.bind(helper, args, env)
        body = helper.child_by_field_name("body")
        returns = _returns(body) if body is not None else []
        if bound is None or len(returns) != 1:
            out.note(call, f"call to {name}() (not one plain return)")
            return
        value = next((c for c in returns[0].named_children if c.type != "comment"), None)
        if value is None:
            out.note(call, f"call to {name}()")
            return
        self.helpers_used.add(name.split("::")[-1])
        before = len(out.entries)
        self.entry(value, bound, out, depth + 1)
        for added in out.entries[before:]:
            added["line"] = line_of(call)

    def fields(self, values: list[tree_sitter.Node], node: tree_sitter.Node,
               env: Env | None, out: ListRead, order: tuple[str, ...] | None = None) -> None:
        """One entry from positional values (kind, size, offset, name, or the order of the
        local record the list holds) or designated `.kind = ...` initialisers."""
        named: dict[str, tree_sitter.Node] = {}
        order = order or out.order
        if values and all(v.type == "initializer_pair" for v in values):
            for pair in values:
                designator = pair.child_by_field_name("designator")
                value = pair.child_by_field_name("value")
                if designator is not None and value is not None:
                    named[self.text(designator).lstrip(".").strip()] = value
        elif len(values) == len(order):
            named = dict(zip(order, values, strict=True))
        else:
            out.note(node, f"element with {len(values)} values")
            return
        kind = self.values.kind(named["kind"], env) if "kind" in named else None
        size = self.values.integer(named["size"], env) if "size" in named else None
        offset = self.values.integer(named["offset"], env) if "offset" in named else None
        name = self.values.string(named["name"], env) if "name" in named else None
        entry = {"kind": kind, "size": size, "offset": offset, "name": name,
                 "line": line_of(node)}
        out.entries.append(entry)
        for key in ("kind", "size", "name"):
            if entry[key] is None:
                spelled = self.text(named[key])[:40] if key in named else "missing"
                out.note(node, f"{key} {spelled}")

    # -- lists -------------------------------------------------------------------------

    def sequence(self, node: tree_sitter.Node, env: Env | None, out: ListRead,
                 locals_: dict[str, ListRead] | None = None, depth: int = 0) -> None:
        """Append the elements of a list expression to `out`."""
        if node.type == "compound_literal_expression":
            value = node.child_by_field_name("value")
            if value is not None:
                self.sequence(value, env, out, locals_, depth)
                return
        if node.type in ("initializer_list", "argument_list"):
            items = [c for c in node.named_children if c.type != "comment"]
            if len(items) == 1 and items[0].type == "initializer_list" and all(
                    c.type in ("initializer_list", "compound_literal_expression",
                               "call_expression") for c in items[0].named_children
                    if c.type != "comment") and items[0].named_child_count:
                items = [c for c in items[0].named_children if c.type != "comment"]
            for item in items:
                self.entry(item, env, out, depth)
            return
        if node.type == "identifier" and locals_ is not None and self.text(node) in locals_:
            out.extend(locals_[self.text(node)])
            return
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            values = [a for a in args.named_children if a.type != "comment"] if args else []
            name = self.text(function).split("::")[-1] if function is not None else ""
            helper = self.values.functions.get(name)
            if helper is not None and env is not None and depth < _MAX_HELPER_DEPTH:
                bound = self.values.bind(helper, values, env)
                body = helper.child_by_field_name("body")
                if bound is not None and body is not None:
                    out.helpers.add(name)
                    out.extend(self.body(body, bound, depth + 1).result)
                    return
            if function is not None and name == "move" and values:
                self.sequence(values[0], env, out, locals_, depth)
                return
        if node.type in ("identifier", "qualified_identifier") and env is not None:
            found = env.lookup(self.text(node))
            if found is not None and depth < _MAX_HELPER_DEPTH:
                self.sequence(found[0], found[1], out, None, depth + 1)
                return
        out.note(node, f"list {self.text(node)[:40]}")

    def body(self, body: tree_sitter.Node, env: Env, depth: int = 0) -> _Body:
        """Read a function body in order: its local lists and what it returns."""
        state = _Body()
        self._statements(body, env, state, depth, None)
        return state

    def _statements(self, node: tree_sitter.Node, env: Env, state: _Body, depth: int,
                    inside: tuple[tree_sitter.Node, str] | None) -> None:
        for child in node.named_children:
            kind = child.type
            if kind in ("lambda_expression", "function_definition"):
                continue
            if kind == "declaration":
                self._declaration(child, env, state, depth, inside)
            elif kind == "return_statement":
                value = next((c for c in child.named_children if c.type != "comment"), None)
                if value is not None:
                    read = ListRead()
                    self.sequence(value, env, read, state.locals, depth)
                    if inside is not None:
                        read.note(inside[0], f"return under a {inside[1]}")
                    state.returns.append((child, value, read))
                continue
            elif kind == "call_expression":
                self._call(child, env, state, depth, inside)
            elif kind == "assignment_expression":
                left = child.child_by_field_name("left")
                right = child.child_by_field_name("right")
                base = _base_name(left, self.values) if left is not None else None
                if left is not None and base in state.locals and self.text(left) != base:
                    state.locals[base].note(child, f"element of {base} assigned")
                    state.locals[base].modified_copy = base in state.copies
                    continue
                if left is not None and right is not None and self.text(left) in state.locals:
                    read = ListRead()
                    self.sequence(right, env, read, state.locals, depth)
                    if inside is not None:
                        read.note(inside[0], f"assignment under a {inside[1]}")
                    state.locals[self.text(left)] = read
                continue
            inner = inside
            if kind in _LOOPS and inside is None:
                inner = (child, _LOOPS[kind])
            self._statements(child, env, state, depth, inner)

    def _declaration(self, node: tree_sitter.Node, env: Env, state: _Body, depth: int,
                     inside: tuple[tree_sitter.Node, str] | None) -> None:
        type_node = node.child_by_field_name("type")
        type_text = self.text(type_node) if type_node is not None else ""
        for declarator in node.children_by_field_name("declarator"):
            ident = declared_identifier(declarator)
            if ident is None or declarator.type == "function_declarator":
                continue
            value = declarator.child_by_field_name("value")
            if value is None and declarator.type == "init_declarator":
                value = next((c for c in declarator.named_children
                              if c.type in ("initializer_list", "argument_list")), None)
            listy = self.is_list(type_text, declarator) or (
                value is not None and value.type in ("compound_literal_expression",
                                                     "call_expression")
                and self.is_list(self.text(value).split("{")[0].split("(")[0])) or (
                value is not None and value.type == "call_expression"
                and self.values.returns_list(_callee(value, self.values)))
            if not listy:
                continue
            read = self.new_read(type_text)
            if value is not None and not (value.type == "argument_list"
                                          and not value.named_child_count):
                self.sequence(value, env, read, state.locals, depth)
            if inside is not None:
                read.note(inside[0], f"list declared under a {inside[1]}")
            name = self.text(ident)
            state.locals[name] = read
            state.declared.append((name, node))
            if value is not None and value.type in ("call_expression", "identifier"):
                state.copies.add(name)  # a copy of another list: changing it is a neighbour

    def _call(self, node: tree_sitter.Node, env: Env, state: _Body, depth: int,
              inside: tuple[tree_sitter.Node, str] | None) -> None:
        function = node.child_by_field_name("function")
        if function is None or function.type != "field_expression":
            return
        receiver = function.child_by_field_name("argument")
        method = function.child_by_field_name("field")
        if receiver is None or method is None:
            return
        target = state.locals.get(self.text(receiver))
        if target is None:
            return
        name = self.text(method)
        args = node.child_by_field_name("arguments")
        values = [a for a in args.named_children if a.type != "comment"] if args else []
        if inside is not None and (name in _APPENDS or name in _GROWS):
            target.note(node, f"{name} in a {inside[1]}")
            return
        if (name in _APPENDS or name in _GROWS) and self.text(receiver) in state.copies:
            target.modified_copy = True
            target.note(node, f"{name} on a copy of another list")
            return
        if name in _APPENDS:
            if name == "emplace_back" and len(values) != 1:
                self.fields(values, node, env, target)
            elif len(values) == 1:
                self.entry(values[0], env, target, depth)
            else:
                target.note(node, f"{name} with {len(values)} values")
        elif name in _GROWS:
            target.note(node, f"{name}()")


@dataclass
class _Body:
    """A function body as read: its local lists (in order) and its returns."""

    locals: dict[str, ListRead] = field(default_factory=dict)
    declared: list[tuple[str, tree_sitter.Node]] = field(default_factory=list)
    copies: set[str] = field(default_factory=set)
    returns: list[tuple[tree_sitter.Node, tree_sitter.Node, ListRead]] = field(
        default_factory=list)

    @property
    def result(self) -> ListRead:
        """What the function returns, when it has one return."""
        if len(self.returns) == 1:
            return self.returns[0][2]
        out = ListRead()
        for node, _value, _read in self.returns[1:]:
            out.note(node, "one of several returns")
        if not self.returns:
            out.unread.append({"line": 0, "construct": "no return"})
        return out


def _base_name(node: tree_sitter.Node, values: Values) -> str | None:
    """The variable an lvalue such as `v[i]`, `v.at(i)` or `v.back()` belongs to."""
    for _ in range(4):
        if node.type == "identifier":
            return values.text(node)
        inner = (node.child_by_field_name("argument") if node.type in (
            "subscript_expression", "field_expression") else
            node.child_by_field_name("function") if node.type == "call_expression" else None)
        if inner is None:
            return None
        node = inner
    return None


def _callee(call: tree_sitter.Node, values: Values) -> str:
    function = call.child_by_field_name("function")
    return values.text(function).split("::")[-1] if function is not None else ""


def _returns(body: tree_sitter.Node) -> list[tree_sitter.Node]:
    found = []
    stack = [body]
    while stack:
        node = stack.pop()
        for child in node.named_children:
            if child.type == "return_statement":
                found.append(child)
            elif child.type not in ("lambda_expression", "function_definition"):
                stack.append(child)
    return found
