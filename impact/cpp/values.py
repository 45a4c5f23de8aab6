"""Constant values of C++ expressions: integers, kind names and strings, through the
named constants, casts, `sizeof` and small helper functions a file defines.

Maintainers: pure functions over tree-sitter nodes and the bytes they came from; used
by impact/cpp/arglists.py (KernelArgument lists) and impact/cpp/launches.py (launch()
arguments). Nothing here touches git, the filesystem or the facts a file yields; a value
it cannot settle is None, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter

from impact.cpp.literals import string_value
from impact.cpp.scaffold import declared_identifier, function_declarator, node_text

# Argument kinds as the hipDNN ingestor spells them, by their normalised spelling
# (`ArgKind::global_buffer`, `KernelArgKind::GlobalBuffer`, `kGlobalBuffer`, ...).
KINDS = {"globalbuffer": "global_buffer", "byvalue": "by_value"}
POINTER = ("global_buffer", 8)
# Sizes of the scalar types a kernel argument is written with (pointers are 8).
TYPE_SIZES = {
    "bool": 1, "char": 1, "int8_t": 1, "uint8_t": 1, "signed char": 1, "unsigned char": 1,
    "int16_t": 2, "uint16_t": 2, "short": 2, "half": 2, "__half": 2, "_Float16": 2,
    "hip_bfloat16": 2, "bfloat16": 2, "bf16": 2, "__hip_bfloat16": 2, "float16_t": 2,
    "int32_t": 4, "uint32_t": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4,
    "int64_t": 8, "uint64_t": 8, "double": 8, "size_t": 8, "long": 8, "long long": 8,
    "unsigned long": 8, "unsigned long long": 8, "ptrdiff_t": 8, "intptr_t": 8,
    "uintptr_t": 8, "hipDeviceptr_t": 8,
}
_INT_SUFFIX = re.compile(r"[uUlLzZ]+$")
_QUALIFIERS = re.compile(r"\b(const|volatile|constexpr|static|inline|std::|struct)\b\s*")
_CASTS = {"static_cast", "reinterpret_cast", "const_cast", "bit_cast", "std::bit_cast"}
_MAX_DEPTH = 12


def int_literal(text: str) -> int | None:
    """The value of an integer literal (digit separators, suffixes, octal, hex)."""
    cleaned = _INT_SUFFIX.sub("", text.replace("'", ""))
    try:
        if len(cleaned) > 1 and cleaned[0] == "0" and cleaned[1].isdigit():
            return int(cleaned, 8)
        return int(cleaned, 0)
    except ValueError:
        return None


def normalised_kind(text: str) -> str | None:
    """The argument kind an enumerator or string names, or None: the last `::` part,
    a leading `k` before a capital dropped, underscores and case ignored."""
    last = text.split("::")[-1].strip()
    if len(last) > 1 and last[0] == "k" and last[1].isupper():
        last = last[1:]
    return KINDS.get(last.replace("_", "").lower())


def type_kind(type_text: str) -> tuple[str, int] | None:
    """(kind, size) of a C++ type as a kernel argument: a pointer is global_buffer/8,
    a known scalar by_value/its size; None when it is neither."""
    text = " ".join(_QUALIFIERS.sub("", type_text).replace("&", " ").split())
    if "*" in text or text.endswith("_ptr_t") or text in ("hipDeviceptr_t", "void*"):
        return POINTER
    size = TYPE_SIZES.get(text)
    return ("by_value", size) if size is not None else None


@dataclass
class Env:
    """Names visible where an expression is evaluated: constants of the function (or
    the parameters a helper was called with), then the file's."""

    values: dict[str, tuple[tree_sitter.Node, Env | None]] = field(default_factory=dict)
    parent: Env | None = None

    def lookup(self, name: str) -> tuple[tree_sitter.Node, Env | None] | None:
        env: Env | None = self
        short = name.split("::")[-1].strip()
        while env is not None:
            for key in (name, short):
                if key in env.values:
                    return env.values[key]
            env = env.parent
        return None


class Values:
    """A file's helper functions and namespace-scope constants, and the evaluation of
    expressions against them."""

    def __init__(self, source: bytes, root: tree_sitter.Node) -> None:
        self.source = source
        self.functions: dict[str, tree_sitter.Node] = {}
        self.file = Env()
        self.structs: dict[str, list[tuple[str, str]]] = {}
        self._scan(root)

    def text(self, node: tree_sitter.Node) -> str:
        return node_text(node, self.source)

    # -- the file's own names -----------------------------------------------------------

    def _scan(self, node: tree_sitter.Node) -> None:
        for child in node.named_children:
            if child.type == "function_definition":
                name = function_name(child, self.source)
                if name is not None:
                    self.functions.setdefault(name.split("::")[-1], child)
                continue
            if child.type in ("declaration", "field_declaration") and is_constant(child,
                                                                                  self.source):
                for name, value in declared_values(child, self.source):
                    self.file.values.setdefault(name, (value, self.file))
            if child.type in ("struct_specifier", "class_specifier"):
                self._struct(child)
            if child.type not in ("compound_statement",):
                self._scan(child)

    def _struct(self, node: tree_sitter.Node) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None:
            return
        fields: list[tuple[str, str]] = []
        for member in body.named_children:
            if member.type != "field_declaration" or any(
                    self.text(c) in ("static", "constexpr") for c in member.children
                    if c.type in ("storage_class_specifier", "type_qualifier")):
                continue
            type_node = member.child_by_field_name("type")
            for declarator in member.children_by_field_name("declarator"):
                if declarator.type == "function_declarator":
                    continue
                ident = declared_identifier(declarator)
                if ident is not None and type_node is not None:
                    pointer = "*" if _pointer_declarator(declarator) else ""
                    fields.append((self.text(ident), self.text(type_node) + pointer))
        self.structs[self.text(name)] = fields

    def element_records(self) -> dict[str, tuple[str, ...]]:
        """The file's own structs shaped like a KernelArgument (fields named kind, size and
        name, maybe offset), each with its field names in declaration order: a pin may
        spell its entries as such a local record."""
        out: dict[str, tuple[str, ...]] = {}
        for name, fields in self.structs.items():
            names = tuple(f for f, _type in fields)
            if {"kind", "size", "name"} <= set(names):
                out[name] = names
        return out

    def returns_list(self, name: str) -> bool:
        """Whether the file's function `name` returns a container of KernelArguments."""
        function = self.functions.get(name.split("::")[-1])
        type_node = function.child_by_field_name("type") if function is not None else None
        if type_node is None:
            return False
        text = self.text(type_node)
        return "KernelArgument" in text and ("<" in text or "[" in text)

    def function_env(self, body: tree_sitter.Node, parent: Env | None = None) -> Env:
        """The constants a function body declares (any depth, first declaration wins)."""
        env = Env(parent=parent or self.file)
        stack = [body]
        while stack:
            node = stack.pop()
            for child in reversed(node.named_children):
                if child.type in ("declaration",) and is_constant(child, self.source):
                    for name, value in declared_values(child, self.source):
                        env.values.setdefault(name, (value, env))
                elif child.type not in ("lambda_expression", "function_definition"):
                    stack.append(child)
        return env

    def bind(self, function: tree_sitter.Node, arguments: list[tree_sitter.Node],
             caller: Env) -> Env | None:
        """The environment of a helper called with `arguments` (defaults fill the rest);
        None when the call does not fit its parameters."""
        declarator = function_declarator(function.child_by_field_name("declarator"))
        params = declarator.child_by_field_name("parameters") if declarator else None
        if params is None:
            return None
        env = Env(parent=self.file)
        named = [p for p in params.named_children if p.type != "comment"]
        if len(arguments) > len(named):
            return None
        for i, param in enumerate(named):
            ident = declared_identifier(param.child_by_field_name("declarator"))
            if ident is None:
                continue
            if i < len(arguments):
                env.values[self.text(ident)] = (arguments[i], caller)
            else:
                default = param.child_by_field_name("default_value")
                if default is None:
                    return None
                env.values[self.text(ident)] = (default, self.file)
        body = function.child_by_field_name("body")
        return self.function_env(body, env) if body is not None else env

    # -- evaluation ---------------------------------------------------------------------

    def integer(self, node: tree_sitter.Node, env: Env | None, depth: int = 0) -> int | None:
        """An integer constant: literals, sizeof, casts, named constants, arithmetic."""
        if depth > _MAX_DEPTH or node.has_error:
            return None
        kind = node.type
        if kind == "number_literal":
            return int_literal(self.text(node))
        if kind == "parenthesized_expression":
            inner = _first(node)
            return self.integer(inner, env, depth + 1) if inner is not None else None
        if kind == "sizeof_expression":
            return self.size_of(node, env)
        if kind in ("cast_expression", "call_expression"):
            inner = self.cast_operand(node)
            return self.integer(inner, env, depth + 1) if inner is not None else None
        if kind in ("identifier", "qualified_identifier") and env is not None:
            found = env.lookup(self.text(node))
            return self.integer(found[0], found[1], depth + 1) if found else None
        if kind == "unary_expression":
            operand = node.child_by_field_name("argument")
            op = node.child_by_field_name("operator")
            value = self.integer(operand, env, depth + 1) if operand is not None else None
            if value is None or op is None:
                return None
            return {"-": -value, "+": value}.get(self.text(op))
        if kind == "binary_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            if left is None or right is None or op is None:
                return None
            a, b = self.integer(left, env, depth + 1), self.integer(right, env, depth + 1)
            if a is None or b is None:
                return None
            return _arith(self.text(op), a, b)
        return None

    def size_of(self, node: tree_sitter.Node, env: Env | None) -> int | None:
        """`sizeof(T)` of a pointer or a known scalar type; `sizeof x` of a constant."""
        operand = node.child_by_field_name("type") or node.child_by_field_name("value")
        if operand is None:
            operand = _first(node)
        if operand is None:
            return None
        if operand.type == "parenthesized_expression":
            operand = _first(operand) or operand
        if operand.type == "type_descriptor":
            found = type_kind(self.text(operand))
            return found[1] if found else None
        if operand.type == "identifier" and env is not None:
            found = type_kind(self.text(operand))  # `sizeof(float)` may parse as a name
            return found[1] if found else None
        return None

    def cast_operand(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """The operand of a cast that keeps a value (`static_cast<T>(x)`, `(T)x`, `T(x)`),
        or None when `node` is no such cast."""
        if node.type == "cast_expression":
            return node.child_by_field_name("value")
        if node.type != "call_expression":
            return None
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if function is None or args is None:
            return None
        values = [a for a in args.named_children if a.type != "comment"]
        if len(values) != 1:
            return None
        if function.type == "template_function":
            name = function.child_by_field_name("name")
            if name is not None and self.text(name) in _CASTS:
                return values[0]
            return None
        if function.type in ("primitive_type", "sized_type_specifier"):
            return values[0]
        if function.type in ("identifier", "qualified_identifier") and self.text(
                function).split("::")[-1] in TYPE_SIZES:
            return values[0]
        return None

    def cast_type(self, node: tree_sitter.Node) -> str | None:
        """The type a cast converts to, or None when `node` is no cast."""
        if node.type == "cast_expression":
            type_node = node.child_by_field_name("type")
            return self.text(type_node) if type_node is not None else None
        if self.cast_operand(node) is None:
            return None
        function = node.child_by_field_name("function")
        assert function is not None
        if function.type == "template_function":
            args = function.child_by_field_name("arguments")
            return self.text(args)[1:-1].strip() if args is not None else None
        return self.text(function)

    def kind(self, node: tree_sitter.Node, env: Env | None, depth: int = 0) -> str | None:
        """An argument kind: a string, an enumerator (qualified, aliased or brought in by
        `using enum`) or a constant holding one."""
        if depth > _MAX_DEPTH or node.has_error:
            return None
        literal = string_value(node, self.source)
        if literal is not None:
            return literal
        if node.type in ("identifier", "qualified_identifier"):
            direct = normalised_kind(self.text(node))
            if direct is not None:
                return direct
            found = env.lookup(self.text(node)) if env is not None else None
            return self.kind(found[0], found[1], depth + 1) if found else None
        inner = self.cast_operand(node) if node.type in ("cast_expression",
                                                          "call_expression") else None
        if inner is None and node.type == "parenthesized_expression":
            inner = _first(node)
        return self.kind(inner, env, depth + 1) if inner is not None else None

    def string(self, node: tree_sitter.Node, env: Env | None, depth: int = 0) -> str | None:
        """A string: a literal, a named constant, or `std::string(...)` of one."""
        if depth > _MAX_DEPTH or node.has_error:
            return None
        literal = string_value(node, self.source)
        if literal is not None:
            return literal
        if node.type in ("identifier", "qualified_identifier") and env is not None:
            found = env.lookup(self.text(node))
            return self.string(found[0], found[1], depth + 1) if found else None
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            values = [a for a in args.named_children if a.type != "comment"] if args else []
            if function is not None and len(values) == 1 and self.text(function).split(
                    "::")[-1] in ("string", "string_view"):
                return self.string(values[0], env, depth + 1)
        return None


def function_name(node: tree_sitter.Node, source: bytes) -> str | None:
    """The (possibly qualified) name a function definition declares."""
    declarator = function_declarator(node.child_by_field_name("declarator"))
    name = declarator.child_by_field_name("declarator") if declarator else None
    return node_text(name, source) if name is not None else None


def is_constant(node: tree_sitter.Node, source: bytes) -> bool:
    """A declaration marked `constexpr` or `const` (a value nothing can change)."""
    return any(node_text(c, source) in ("constexpr", "const", "constinit")
               for c in node.children if c.type in ("type_qualifier", "storage_class_specifier"))


def declared_values(node: tree_sitter.Node, source: bytes
                    ) -> list[tuple[str, tree_sitter.Node]]:
    """(name, initialiser) of every declarator of a declaration that has one."""
    found = []
    for declarator in node.children_by_field_name("declarator"):
        value = declarator.child_by_field_name("value")
        if value is None and declarator.type == "init_declarator":
            value = next((c for c in declarator.named_children
                          if c.type in ("initializer_list", "argument_list")), None)
        if value is None:
            value = node.child_by_field_name("default_value")
        ident = declared_identifier(declarator)
        if ident is None or value is None:
            continue
        if value.type in ("initializer_list", "argument_list"):
            inner = [c for c in value.named_children if c.type != "comment"]
            if len(inner) == 1 and inner[0].type not in ("initializer_list",):
                value = inner[0]  # `constexpr uint32_t PTR{8};`
        found.append((node_text(ident, source), value))
    return found


def _pointer_declarator(node: tree_sitter.Node | None) -> bool:
    while node is not None:
        if node.type == "pointer_declarator":
            return True
        node = node.child_by_field_name("declarator")
    return False


def _first(node: tree_sitter.Node) -> tree_sitter.Node | None:
    return next((c for c in node.named_children if c.type != "comment"), None)


def _arith(op: str, a: int, b: int) -> int | None:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/" and b:
        return a // b
    if op == "<<" and 0 <= b < 64:
        return a << b
    return None
