"""The walk over one parsed C++ source that states its binding facts: pybind `m.def`,
TORCH_LIBRARY schemas, `m.impl`, boxed `stack[i]` reads, `PYBIND11_MODULE` expansions
and every function's parameter list.

Maintainers: reads the tree-sitter tree and the (flattened) bytes it is handed, never
git or the filesystem. A binding whose arguments cannot be read (macro token pasting, a
non-literal name, a bad schema) becomes a `binding-unreadable` fact naming the site.
`#define` bodies that call `.def(`/`.impl(` are re-parsed on their own, wrapped in a
dummy function, after `#x` and `a##b` are turned into marker identifiers so that the
rest of the body still parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter

from impact.bindings.cpp_conditionals import Region
from impact.bindings.schema import SchemaError, parse_schema
from impact.cpp.literals import string_value
from impact.cpp.scaffold import (
    CLASS_TYPES,
    CPP,
    declared_identifier,
    function_declarator,
    line_of,
    node_text,
    parse,
)
from impact.facts import Fact
from impact.kinds import FactKind

# Declarators whose inner declarator is a plain child: `T& x`, `Args... args`.
_UNNAMED = ("reference_declarator", "variadic_declarator")

_LIBRARY_MACROS = {
    "TORCH_LIBRARY": "def",
    "STABLE_TORCH_LIBRARY": "def",
    "TORCH_LIBRARY_FRAGMENT": "def",
    "STABLE_TORCH_LIBRARY_FRAGMENT": "def",
    "TORCH_LIBRARY_IMPL": "impl",
    "STABLE_TORCH_LIBRARY_IMPL": "impl",
}
_MODULE_MACROS = {"PYBIND11_MODULE", "NB_MODULE"} | set(_LIBRARY_MACROS)
_SELECTIVE = {"TORCH_SELECTIVE_SCHEMA", "TORCH_SELECTIVE_NAME"}
_MACRO_WRAPPER = b"void __impact_macro() { "
_PASTE = b"__IMPACT_PASTE__"
_STRINGIFY = b"__IMPACT_STR__"
DEF_CALL = re.compile(rb"\b[A-Za-z_]\w*\s*\.\s*(?:def|impl)\s*\(")


@dataclass(frozen=True)
class Scope:
    """Where the walk stands: the enclosing namespaces and classes, the function it is
    in (`name@line`), `extern "C"`, the TORCH_LIBRARY block it is in and the `#define`
    it re-parses."""

    names: tuple[str, ...] = ()
    function: str | None = None
    extern_c: bool = False
    library: tuple[str, str, str | None] | None = None  # (kind, namespace, dispatch key)
    macro: str | None = None
    in_class: bool = False

    def inner(self, **changes: Any) -> Scope:
        values = {
            "names": self.names, "function": self.function, "extern_c": self.extern_c,
            "library": self.library, "macro": self.macro, "in_class": self.in_class,
        }
        values.update(changes)
        return Scope(**values)


@dataclass
class _Boxed:
    """A boxed wrapper's `stack[i]` reads so far."""

    line: int
    max_index: int = -1
    count: int = 0


@dataclass
class Walker:
    """One walk over a source's tree: `facts` grows as it goes; `finish` adds the boxed
    reads and hands them all over."""

    source: bytes
    regions: list[Region]
    line_offset: int = 0
    # The grammar the source was parsed with; a `#define` body is re-parsed with it too.
    grammar: tree_sitter.Language = CPP
    facts: list[Fact] = field(default_factory=list)
    boxed: dict[tuple[str, int], _Boxed] = field(default_factory=dict)
    seen_calls: set[int] = field(default_factory=set)

    def text(self, node: tree_sitter.Node) -> str:
        return node_text(node, self.source)

    def line(self, node: tree_sitter.Node) -> int:
        return line_of(node) + self.line_offset

    def finish(self) -> list[Fact]:
        for (name, _), boxed in self.boxed.items():
            self.facts.append(Fact(FactKind.BOXED_READ, name, boxed.line,
                                   {"max_index": boxed.max_index, "count": boxed.count}))
        return self.facts

    def visit(self, node: tree_sitter.Node, scope: Scope) -> None:
        node_type = node.type
        if node_type == "ERROR":
            return
        if node_type in ("preproc_function_def", "preproc_def"):
            self.macro(node, scope)
            return
        if node_type == "namespace_definition":
            name = node.child_by_field_name("name")
            self.children(node, scope.inner(names=(*scope.names, self.text(name) if name else "")))
            return
        if node_type in CLASS_TYPES and node.child_by_field_name("body"):
            name = node.child_by_field_name("name")
            self.children(node, scope.inner(names=(*scope.names, self.text(name) if name else ""),
                                            in_class=True))
            return
        if node_type == "linkage_specification":
            value = node.child_by_field_name("value")
            extern_c = value is not None and self.text(value).strip('"') == "C"
            self.children(node, scope.inner(extern_c=extern_c or scope.extern_c))
            return
        if node_type == "function_definition":
            self.function_definition(node, scope)
            return
        if node_type in ("declaration", "field_declaration") and scope.function is None:
            self.declaration(node, scope)
        elif node_type == "call_expression":
            self.call(node, scope)
        elif node_type == "subscript_expression" and scope.function is not None:
            self.subscript(node, scope)
        self.children(node, scope)

    def children(self, node: tree_sitter.Node, scope: Scope) -> None:
        for child in node.named_children:
            self.visit(child, scope)

    # -- functions ---------------------------------------------------------------------

    def function_definition(self, node: tree_sitter.Node, scope: Scope) -> None:
        declarator = function_declarator(node.child_by_field_name("declarator"))
        body = node.child_by_field_name("body")
        if declarator is None:
            if body is not None:
                self.visit(body, scope.inner(function=f"?@{self.line(node)}"))
            return
        name_node = declarator.child_by_field_name("declarator")
        name = self.text(name_node) if name_node is not None else ""
        if name in _MODULE_MACROS:
            inner = scope.inner(function=None)
            if name in _LIBRARY_MACROS:
                params = [self.text(p).strip() for p in _parameters(declarator)]
                is_impl = _LIBRARY_MACROS[name] == "impl"
                dispatch = params[1] if is_impl and len(params) > 2 else None
                inner = scope.inner(function=None,
                                    library=(_LIBRARY_MACROS[name], params[0] if params else "",
                                             dispatch))
            if body is not None:
                if name not in _LIBRARY_MACROS:
                    self.module_body(node, name, params_of(declarator, self), body)
                self.children(body, inner)
            return
        self.function(node, declarator, name, scope, definition=True)
        qualified = self.qualified(name, scope)
        if body is not None:
            self.visit(body, scope.inner(function=f"{qualified}@{self.line(node)}"))

    def module_body(self, node: tree_sitter.Node, macro: str, params: list[str],
                    body: tree_sitter.Node) -> None:
        """A `PYBIND11_MODULE(name, m)` body: the bare macro names it expands (`FOO_PYBIND;`),
        which say which `#define`d bindings this extension holds."""
        expands = sorted({self.text(child.named_children[0]) for child in body.named_children
                          if child.type == "expression_statement" and child.named_children
                          and child.named_children[0].type == "identifier"})
        self.facts.append(Fact(FactKind.PYBIND_MODULE, params[0] if params else macro,
                               self.line(node), {"expands": expands}))

    def declaration(self, node: tree_sitter.Node, scope: Scope) -> None:
        for child in node.children_by_field_name("declarator"):
            declarator = function_declarator(child)
            if declarator is None or child.type == "init_declarator":
                continue
            name_node = declarator.child_by_field_name("declarator")
            if name_node is None or name_node.type not in (
                "identifier", "field_identifier", "qualified_identifier", "operator_name",
                "destructor_name", "template_function",
            ):
                continue
            self.function(node, declarator, self.text(name_node), scope, definition=False)

    def qualified(self, name: str, scope: Scope) -> str:
        return "::".join([n for n in scope.names if n] + [name])

    def function(self, node: tree_sitter.Node, declarator: tree_sitter.Node, name: str,
                 scope: Scope, *, definition: bool) -> None:
        qualified = self.qualified(name, scope)
        params_node = declarator.child_by_field_name("parameters")
        params = []
        for param in _parameters(declarator):
            if param.type not in ("parameter_declaration", "optional_parameter_declaration",
                                  "variadic_parameter_declaration"):
                continue
            params.append(self.parameter(param))
        if len(params) == 1 and params[0]["name"] is None and params[0]["type"] == "void":
            params = []
        data: dict[str, Any] = {
            "qualified": qualified,
            "params": params,
            "is_definition": definition,
            "extern_c": scope.extern_c,
        }
        if scope.in_class:
            data["member"] = True
        if params_node is not None:
            if params_node.has_error:
                data["complete"] = False
            dropped = sorted({r.condition for r in self.regions if not r.kept
                              and params_node.start_byte <= r.start < params_node.end_byte})
            if dropped:
                data["dropped_branches"] = dropped
        self.facts.append(Fact(FactKind.CPP_FUNCTION, name.split("::")[-1], self.line(node), data))

    def parameter(self, param: tree_sitter.Node) -> dict[str, Any]:
        default_node = param.child_by_field_name("default_value")
        declarator = param.child_by_field_name("declarator")
        name_node = declared_identifier(declarator, _UNNAMED)
        end = param.end_byte
        if default_node is not None:
            cut = self.source.rfind(b"=", param.start_byte, default_node.start_byte)
            end = cut if cut >= 0 else default_node.start_byte
        pieces = [self.source[param.start_byte : end]]
        if name_node is not None:
            pieces = [self.source[param.start_byte : name_node.start_byte],
                      self.source[name_node.end_byte : end]]
        type_text = _normalise_type(b" ".join(pieces).decode("utf-8", "replace"))
        conditions = [r.condition for r in self.regions
                      if r.kept and r.start <= param.start_byte < r.end]
        return {
            "type": type_text,
            "name": self.text(name_node) if name_node is not None else None,
            "default": " ".join(self.text(default_node).split()) if default_node else None,
            "conditional": " && ".join(conditions) if conditions else None,
        }

    # -- boxed reads ---------------------------------------------------------------------

    def subscript(self, node: tree_sitter.Node, scope: Scope) -> None:
        argument = node.child_by_field_name("argument")
        indices = node.child_by_field_name("indices")
        if argument is None or indices is None or scope.function is None:
            return
        if re.sub(r"[\s()*]", "", self.text(argument)) != "stack":
            return
        parent = node.parent
        if (parent is not None and parent.type == "assignment_expression"
                and parent.child_by_field_name("left") == node):
            return  # `stack[0] = from(out)` writes a result
        values = [c for c in indices.named_children if c.type != "comment"]
        if len(values) != 1 or values[0].type != "number_literal":
            return
        try:
            index = int(self.text(values[0]).rstrip("uUlL"), 0)
        except ValueError:
            return
        name, _, line = scope.function.rpartition("@")
        key = (name.split("::")[-1], int(line))
        boxed = self.boxed.setdefault(key, _Boxed(int(line)))
        boxed.max_index = max(boxed.max_index, index)
        boxed.count += 1

    # -- m.def / m.impl / TORCH_SELECTIVE_SCHEMA -----------------------------------------

    def call(self, node: tree_sitter.Node, scope: Scope) -> None:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None:
            return
        args = [a for a in arguments.named_children if a.type != "comment"]
        if function.type == "identifier" and self.text(function) in _SELECTIVE:
            if self.text(function) == "TORCH_SELECTIVE_SCHEMA":
                self.schema(node, args[0] if args else None, [], scope)
            return
        if function.type != "field_expression":
            return
        method = function.child_by_field_name("field")
        receiver = function.child_by_field_name("argument")
        if method is None or receiver is None or receiver.type != "identifier":
            return
        self.seen_calls.add(function.start_byte)
        method_name = self.text(method)
        if method_name == "def":
            if scope.library is not None:
                first = args[0] if args else None
                if (first is not None and first.type == "call_expression"
                        and self.callee(first) in _SELECTIVE):
                    return  # the TORCH_SELECTIVE_SCHEMA call is visited on its own
                self.schema(node, first, args[1:], scope)
            else:
                self.pybind(node, args, scope)
        elif method_name == "impl":
            self.impl(node, args, scope)

    def callee(self, call: tree_sitter.Node) -> str:
        function = call.child_by_field_name("function")
        return self.text(function).split("::")[-1] if function is not None else ""

    def unreadable(self, node: tree_sitter.Node, name: str, reason: str, scope: Scope) -> None:
        self.facts.append(Fact(FactKind.BINDING_UNREADABLE, _display(name), self.line(node), {
            "reason": reason,
            "macro": scope.macro,
            "text": _display(_short(self.text(node))),
        }))

    def pybind(self, node: tree_sitter.Node, args: list[tree_sitter.Node], scope: Scope) -> None:
        name = self.string_value(args[0]) if args else None
        label = name if name is not None else (_short(self.text(args[0])) if args else "")
        text = self.text(node)
        if _PASTE.decode() in text or _STRINGIFY.decode() in text:
            self.unreadable(node, label, "binding uses macro token pasting or #stringify", scope)
            return
        if name is None:
            self.unreadable(node, label, "binding name is not a string literal", scope)
            return
        if node.has_error:
            self.unreadable(node, label, "binding arguments do not parse", scope)
            return
        bound: str | None = None
        qualified: str | None = None
        if len(args) > 1:
            bound = self.function_name(args[1])
            qualified = self.function_name(args[1], qualified=True)
        py_args: list[dict[str, Any]] = []
        any_arg = False
        keyword_only = False
        for arg in args[2:]:
            parsed = self.py_arg(arg)
            if parsed is None:
                continue
            any_arg = True
            marker = parsed.pop("marker", None)
            if marker == "kw_only":
                keyword_only = True  # every py::arg after `py::kw_only()` is keyword-only
            elif marker == "pos_only":
                for before in py_args:  # every py::arg before `py::pos_only()`
                    before["pos_only"] = True
            elif parsed["name"] is not None:
                if keyword_only:
                    parsed["kw_only"] = True
                py_args.append(parsed)
        line = self.line(node)
        data: dict[str, Any] = {
            "function": bound,
            "qualified_function": qualified,
            "args": py_args if any_arg else None,
            "line": line,
        }
        if scope.macro is not None:
            data["macro"] = scope.macro
        self.facts.append(Fact(FactKind.PYBIND_DEF, name, line, data))

    def py_arg(self, arg: tree_sitter.Node) -> dict[str, Any] | None:
        """`{name, has_default, default}` of `py::arg("x")` or `py::arg("x") = v` (also
        `"x"_a`); `{name: None}` for markers such as `py::kw_only()`; None otherwise."""
        default: str | None = None
        target = arg
        if arg.type == "assignment_expression":
            left = arg.child_by_field_name("left")
            right = arg.child_by_field_name("right")
            if left is None or right is None:
                return None
            target, default = left, " ".join(self.text(right).split())
        if target.type == "user_defined_literal":
            literal = target.named_children[0] if target.named_children else None
            if self.text(target).endswith("_a") and literal is not None:
                return {"name": self.string_value(literal), "has_default": default is not None,
                        "default": default}
            return None
        while target.type == "call_expression":
            function = target.child_by_field_name("function")
            field_node = function.child_by_field_name("field") if function else None
            if field_node is None or self.text(field_node) not in ("noconvert", "none"):
                break
            inner_target = function.child_by_field_name("argument") if function else None
            if inner_target is None:
                return None
            target = inner_target
        if target.type != "call_expression":
            return None
        callee = self.callee(target)
        if callee in ("kw_only", "pos_only"):
            return {"name": None, "marker": callee}
        if callee not in ("arg", "arg_v"):
            return None
        inner = target.child_by_field_name("arguments")
        values = [c for c in inner.named_children if c.type != "comment"] if inner else []
        arg_name = self.string_value(values[0]) if values else None
        if callee == "arg_v" and len(values) > 1:
            default = " ".join(self.text(values[1]).split())
        return {"name": arg_name, "has_default": default is not None, "default": default}

    def function_name(self, node: tree_sitter.Node, *, qualified: bool = False) -> str | None:
        """The C++ function a binding names: last identifier of `&ns::fn` (all of `ns::fn`
        when `qualified`), looking through `TORCH_BOX(...)`, `TORCH_FN(...)`,
        `py::overload_cast<...>(...)`; None for a lambda."""
        while True:
            if node.type in ("pointer_expression", "parenthesized_expression"):
                inner = node.child_by_field_name("argument") or (
                    node.named_children[0] if node.named_children else None)
                if inner is None:
                    return None
                node = inner
            elif node.type == "call_expression":
                inner_args = node.child_by_field_name("arguments")
                values = [c for c in inner_args.named_children if c.type != "comment"] \
                    if inner_args else []
                if not values:
                    return None
                node = values[-1]
            elif node.type in ("identifier", "qualified_identifier", "template_function"):
                text = re.sub(r"\s+", "", self.text(node).split("<")[0]).lstrip(":")
                return (text if qualified else text.split("::")[-1]) or None
            else:
                return None

    def schema(self, node: tree_sitter.Node, first: tree_sitter.Node | None,
               rest: list[tree_sitter.Node], scope: Scope) -> None:
        raw = self.string_value(first) if first is not None else None
        block_ns = scope.library[1] if scope.library is not None else None
        if raw is None:
            self.unreadable(node, _short(self.text(first)) if first is not None else "",
                            "schema is not a string literal", scope)
            return
        parsed: dict[str, Any] | None = None
        qualified = raw.strip()
        if "(" in raw:
            try:
                parsed = parse_schema(raw)
            except SchemaError as err:
                self.unreadable(node, qualified.split("(")[0], f"bad schema: {err}", scope)
                return
            qualified = parsed["name"]
        elif not re.fullmatch(r"[A-Za-z_]\w*(::[A-Za-z_]\w*)?(\.[A-Za-z_]\w*)?", qualified):
            self.unreadable(node, qualified, "bad schema: not an operator name", scope)
            return
        namespace, _, op = qualified.rpartition("::")
        op, _, overload = op.partition(".")
        data: dict[str, Any] = {
            "namespace": namespace or block_ns,
            "overload": overload or None,
            "schema": (
                {"args": parsed["args"], "returns": parsed["returns"]} if parsed else None
            ),
            "raw": raw,
        }
        if rest:
            data["function"] = self.function_name(rest[0])
        if scope.macro is not None:
            data["macro"] = scope.macro
        self.facts.append(Fact(FactKind.SCHEMA_DEF, op, self.line(node), data))

    def impl(self, node: tree_sitter.Node, args: list[tree_sitter.Node], scope: Scope) -> None:
        first = args[0] if args else None
        if (first is not None and first.type == "call_expression"
                and self.callee(first) in _SELECTIVE):
            inner = first.child_by_field_name("arguments")
            values = [c for c in inner.named_children if c.type != "comment"] if inner else []
            first = values[0] if len(values) == 1 else first
        name = self.string_value(first) if first is not None else None
        if name is None:
            self.unreadable(node, _short(self.text(args[0])) if args else "",
                            "impl name is not a string literal", scope)
            return
        namespace, _, op = name.rpartition("::")
        library = scope.library
        self.facts.append(Fact(FactKind.TORCH_IMPL, op, self.line(node), {
            "function": self.function_name(args[1]) if len(args) > 1 else None,
            "namespace": namespace or (library[1] if library else None),
            "dispatch": library[2] if library else None,
        }))

    # -- macros --------------------------------------------------------------------------

    def macro(self, node: tree_sitter.Node, scope: Scope) -> None:
        name_node = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name_node is None or value is None:
            return
        body = self.source[value.start_byte : value.end_byte]
        if not DEF_CALL.search(body):
            return
        body = re.sub(rb"\\\r?\n", lambda m: b" " * (len(m.group()) - 1) + b"\n", body)
        body = body.replace(b"##", _PASTE)
        body = re.sub(rb"#\s*(?=[A-Za-z_])", _STRINGIFY, body)
        wrapped = _MACRO_WRAPPER + body + b"\n}\n"
        sub = Walker(wrapped, [], self.line_offset + value.start_point.row, grammar=self.grammar)
        macro_scope = scope.inner(function=None, macro=self.text(name_node))
        sub.visit(parse(wrapped, self.grammar).root_node, macro_scope)
        self.facts.extend(f for f in sub.facts if f.kind != FactKind.CPP_FUNCTION)
        for match in DEF_CALL.finditer(wrapped):
            if match.start() not in sub.seen_calls:
                row = wrapped.count(b"\n", 0, match.start())
                self.facts.append(Fact(
                    FactKind.BINDING_UNREADABLE,
                    match.group().decode("utf-8", "replace").rstrip("( "),
                    value.start_point.row + 1 + row + self.line_offset,
                    {"reason": "macro body does not parse here", "macro": macro_scope.macro,
                     "text": _display(_short(wrapped[match.start():].split(b";")[0]
                                    .decode("utf-8", "replace")))}))

    # -- literals ------------------------------------------------------------------------

    def string_value(self, node: tree_sitter.Node) -> str | None:
        return string_value(node, self.source)


def _display(text: str) -> str:
    """Text of a re-parsed macro body with its marker identifiers turned back into `#`."""
    return text.replace(_PASTE.decode(), "##").replace(_STRINGIFY.decode(), "#")


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _normalise_type(text: str) -> str:
    text = " ".join(text.split())
    text = re.sub(r"\s*([*&<>,]|::)\s*", r"\1", text)
    return text.replace(",", ", ")


def params_of(declarator: tree_sitter.Node, walker: Walker) -> list[str]:
    """The texts of a declarator's parameters (a module macro's arguments)."""
    return [walker.text(p).strip() for p in _parameters(declarator)]


def _parameters(declarator: tree_sitter.Node) -> list[tree_sitter.Node]:
    params = declarator.child_by_field_name("parameters")
    if params is None:
        return []
    return [p for p in params.named_children if p.type != "comment"]
