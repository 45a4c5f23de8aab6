"""C++ facts: argument lists, launch calls, metadata reads and the rest, from one source.

Maintainers: this module parses the bytes it is handed with tree-sitter-cpp and must not
touch git or the filesystem. `extract_cpp_facts` never raises: a file it cannot read
fully yields one `parse-failure` fact beside whatever its clean parts showed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter

from impact.cpp.literals import string_value
from impact.cpp.scaffold import (
    CLASS_TYPES,
    closing_fact,
    declared_identifier,
    extract_tree,
    function_declarator,
    line_of,
    node_text,
    parse,
)
from impact.facts import Fact, sorted_facts
from impact.kinds import FactKind

LANGUAGE = "C++"
STRING_LITERAL = FactKind.STRING_LITERAL
KERNEL_ARGUMENT_LIST = FactKind.KERNEL_ARGUMENT_LIST
LAUNCH_CALL = FactKind.LAUNCH_CALL
CONSTEXPR_STRING = FactKind.CONSTEXPR_STRING
METADATA_READ = FactKind.METADATA_READ
GEOMETRY_CALL = FactKind.GEOMETRY_CALL
INCLUDE = FactKind.INCLUDE
PACK_ROW = FactKind.PACK_ROW
FUNCTION_DEFINITION = FactKind.FUNCTION_DEFINITION

_METADATA_METHODS = {"getIntMetadata", "getStringMetadata"}
_GEOMETRY_METHODS = {"setGridSize", "setBlockSize"}
_GROWING_METHODS = {"push_back", "emplace_back", "insert", "emplace", "resize", "assign"}
_ENTRY_FIELDS = ("kind", "size", "offset", "name")
_INT_SUFFIX = re.compile(r"[uUlLzZ]+$")


def extract_cpp_facts(path: str, source: bytes) -> list[Fact]:
    """Every fact one C++ source states, sorted; never raises.

    Parse errors do not hide the clean parts: their facts come back with one
    `parse-failure` fact naming the first broken line.
    """

    def extract(text: bytes) -> list[Fact]:
        tree = parse(text)
        walker = _Walker(text)
        walker.visit(tree.root_node, _Scope())
        facts = walker.finish()
        facts.append(closing_fact(path, tree.root_node, LANGUAGE))
        return sorted_facts(facts)

    return extract_tree(path, source, LANGUAGE, extract)


@dataclass(frozen=True)
class _Scope:
    """Where a node sits: namespaces, classes and the enclosing function."""

    namespaces: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    function: str | None = None

    def with_namespace(self, name: str) -> _Scope:
        return _Scope((*self.namespaces, name), self.classes, self.function)

    def with_class(self, name: str) -> _Scope:
        return _Scope(self.namespaces, (*self.classes, name), self.function)

    def in_function(self, name: str, owner: str | None) -> _Scope:
        classes = self.classes + ((owner,) if owner else ())
        return _Scope(self.namespaces, classes, name)

    @property
    def cls(self) -> str | None:
        return self.classes[-1] if self.classes else None

    @property
    def namespace(self) -> str | None:
        named = [n for n in self.namespaces if n]
        return "::".join(named) if named else None


@dataclass
class _ArgList:
    """A kernel argument list under construction (variables can grow after declaration)."""

    name: str
    line: int
    function: str | None
    entries: list[dict[str, Any]] = field(default_factory=list)
    dynamic: bool = False


class _Walker:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.facts: list[Fact] = []
        self.lists: dict[tuple[str | None, str], _ArgList] = {}
        self.metadata: list[tuple[tree_sitter.Node, str, _Scope, str | None, str | None]] = []
        self.constants: dict[str, str] = {}
        self.returns_arguments = False

    def text(self, node: tree_sitter.Node) -> str:
        return node_text(node, self.source)

    def finish(self) -> list[Fact]:
        for node, method, scope, literal, constant in self.metadata:
            value = literal
            if constant is not None:
                value = self.constants.get(constant.split("::")[-1])
            self.facts.append(
                Fact(
                    METADATA_READ,
                    value or constant or "",
                    line_of(node),
                    {
                        "method": method,
                        "function": scope.function,
                        "field": value,
                        "field_constant": constant,
                    },
                )
            )
        for arglist in self.lists.values():
            self.facts.append(
                Fact(
                    KERNEL_ARGUMENT_LIST,
                    arglist.name,
                    arglist.line,
                    {
                        "function": arglist.function,
                        "entries": arglist.entries,
                        "dynamic": arglist.dynamic,
                    },
                )
            )
        return self.facts

    # -- walking -----------------------------------------------------------------------

    def visit(self, node: tree_sitter.Node, scope: _Scope) -> None:
        node_type = node.type
        if node_type == "ERROR":
            return
        if node_type == "preproc_include":
            self.include(node)
            return
        if node_type == "namespace_definition":
            name_node = node.child_by_field_name("name")
            inner = scope.with_namespace(self.text(name_node) if name_node else "")
            self.visit_children(node, inner)
            return
        if node_type in CLASS_TYPES and node.child_by_field_name("body"):
            name_node = node.child_by_field_name("name")
            inner = scope.with_class(self.text(name_node) if name_node else "")
            self.visit_children(node, inner)
            return
        if node_type == "function_definition":
            self.function_definition(node, scope)
            return
        if node_type in ("string_literal", "raw_string_literal", "concatenated_string"):
            value = self.string_value(node)
            if value is not None:  # every literal outside comments (census names, pins)
                self.facts.append(Fact(STRING_LITERAL, value, line_of(node),
                                       {"function": scope.function}))
            return
        if node_type in ("declaration", "field_declaration"):
            self.declaration(node, scope)
        elif node_type == "return_statement":
            self.return_statement(node, scope)
        elif node_type == "call_expression":
            self.call(node, scope)
        self.visit_children(node, scope)

    def visit_children(self, node: tree_sitter.Node, scope: _Scope) -> None:
        for child in node.named_children:
            self.visit(child, scope)

    # -- includes ----------------------------------------------------------------------

    def include(self, node: tree_sitter.Node) -> None:
        path = node.child_by_field_name("path")
        if path is None or node.has_error:
            return
        raw = self.text(path).strip()
        quoted = raw.startswith('"')
        header = raw[1:-1] if len(raw) >= 2 and raw[0] in '"<' else raw
        line = line_of(node)
        self.facts.append(Fact(INCLUDE, header, line, {"quoted": quoted, "line": line}))

    # -- functions ---------------------------------------------------------------------

    def function_definition(self, node: tree_sitter.Node, scope: _Scope) -> None:
        declarator = function_declarator(node.child_by_field_name("declarator"))
        name_node = declarator.child_by_field_name("declarator") if declarator else None
        if declarator is None or name_node is None:
            self.visit_children(node, scope)
            return
        full = self.text(name_node)
        parts = [p.strip() for p in full.split("::")]
        short = parts[-1]
        owner = parts[-2] if len(parts) > 1 else None
        inner = scope.in_function(short, owner)
        qualified = "::".join([n for n in scope.namespaces if n] + list(scope.classes) + parts)
        if not declarator.has_error:
            params = declarator.child_by_field_name("parameters")
            self.facts.append(
                Fact(
                    FUNCTION_DEFINITION,
                    qualified,
                    line_of(node),
                    {
                        "parameters": self.parameters(params) if params else [],
                        "line_end": node.end_point.row + 1,
                        "class": inner.cls,
                        "namespace": scope.namespace,
                    },
                )
            )
        return_type = node.child_by_field_name("type")
        returns = return_type is not None and _mentions_kernel_argument(self.text(return_type))
        body = node.child_by_field_name("body")
        if body is not None:
            self.visit_function_body(body, inner, returns)

    def visit_function_body(self, body: tree_sitter.Node, scope: _Scope, returns: bool) -> None:
        saved = self.returns_arguments
        self.returns_arguments = returns
        try:
            self.visit(body, scope)
        finally:
            self.returns_arguments = saved

    def parameters(self, params: tree_sitter.Node) -> list[dict[str, str | None]]:
        out: list[dict[str, str | None]] = []
        for param in params.named_children:
            if param.type == "comment":
                continue
            name_node = declared_identifier(param.child_by_field_name("declarator"))
            skip = [c for c in param.children if c.type == "comment"]
            if name_node is not None:
                skip.append(name_node)
            default = param.child_by_field_name("default_value")
            end = param.end_byte
            if default is not None:
                end = default.start_byte
            pieces: list[str] = []
            pos = param.start_byte
            for gap in sorted(skip, key=lambda n: n.start_byte):
                if gap.start_byte >= end:
                    break
                pieces.append(self.source[pos : gap.start_byte].decode("utf-8", "replace"))
                pos = gap.end_byte
            pieces.append(self.source[pos:end].decode("utf-8", "replace"))
            type_text = " ".join("".join(pieces).replace("=", " ").split())
            out.append({"type": type_text, "name": self.text(name_node) if name_node else None})
        return out

    # -- declarations ------------------------------------------------------------------

    def declaration(self, node: tree_sitter.Node, scope: _Scope) -> None:
        type_node = node.child_by_field_name("type")
        type_text = self.text(type_node) if type_node else ""
        specifiers = {
            self.text(c)
            for c in node.children
            if c.type in ("type_qualifier", "storage_class_specifier")
        }
        for declarator in node.children_by_field_name("declarator"):
            value = declarator.child_by_field_name("value")
            if value is None and declarator.type == "init_declarator":
                value = next(
                    (
                        c
                        for c in declarator.named_children
                        if c.type in ("initializer_list", "argument_list")
                    ),
                    None,
                )
            if value is None:
                value = node.child_by_field_name("default_value")
            name_node = declared_identifier(declarator)
            if name_node is None:
                continue
            name = self.text(name_node)
            if "constexpr" in specifiers and value is not None and not node.has_error:
                string = self.string_value(value)
                if string is not None and _is_string_type(type_text, declarator):
                    self.constants[name] = string
                    self.facts.append(
                        Fact(
                            CONSTEXPR_STRING,
                            name,
                            line_of(node),
                            {
                                "value": string,
                                "namespace": scope.namespace,
                            },
                        )
                    )
            if name == "s_packs" and value is not None and value.type == "initializer_list":
                self.pack_rows(value)
            if _mentions_kernel_argument(type_text) and not _isfunction_declarator(declarator):
                self.argument_variable(name, value, node, scope)

    def argument_variable(
        self, name: str, value: tree_sitter.Node | None, node: tree_sitter.Node, scope: _Scope
    ) -> None:
        qualified = f"{scope.function}.{name}" if scope.function else name
        arglist = _ArgList(qualified, line_of(node), scope.function)
        if value is not None and value.type == "initializer_list":
            self.fill_entries(arglist, value)
        elif value is not None:
            arglist.dynamic = True
        self.lists[(scope.function, name)] = arglist

    def return_statement(self, node: tree_sitter.Node, scope: _Scope) -> None:
        if not self.returns_arguments or scope.function is None:
            return
        value = next((c for c in node.named_children if c.type != "comment"), None)
        if value is None:
            return
        if value.type == "identifier" and (scope.function, self.text(value)) in self.lists:
            return
        key = (scope.function, "")
        arglist = self.lists.get(key)
        if arglist is None:
            arglist = _ArgList(scope.function, line_of(node), scope.function)
            self.lists[key] = arglist
        if value.type == "initializer_list":
            self.fill_entries(arglist, value)
        else:
            arglist.dynamic = True

    def fill_entries(self, arglist: _ArgList, init: tree_sitter.Node) -> None:
        if init.has_error:
            arglist.dynamic = True
        for item in init.named_children:
            if item.type == "comment":
                continue
            if item.type == "compound_literal_expression":
                inner = item.child_by_field_name("value")
                item = inner if inner is not None else item
            if item.type != "initializer_list":
                arglist.dynamic = True
                continue
            entry = self.entry(item)
            if entry is None:
                arglist.dynamic = True
                continue
            arglist.entries.append(entry)
            if any(entry[key] is None for key in _ENTRY_FIELDS):
                arglist.dynamic = True

    def entry(self, item: tree_sitter.Node) -> dict[str, Any] | None:
        values = [c for c in item.named_children if c.type != "comment"]
        if len(values) != 4:
            return None
        kind, size, offset, name = values
        return {
            "kind": self.string_value(kind),
            "size": _int_value(self.text(size)) if size.type == "number_literal" else None,
            "offset": _int_value(self.text(offset)) if offset.type == "number_literal" else None,
            "name": self.string_value(name),
            "line": line_of(item),
        }

    def pack_rows(self, init: tree_sitter.Node) -> None:
        for row in init.named_children:
            if row.type != "initializer_list" or row.has_error:
                continue
            values = [c for c in row.named_children if c.type != "comment"]
            if len(values) != 4:
                continue
            engine = self.string_value(values[0])
            if engine is None:
                continue
            self.facts.append(
                Fact(
                    PACK_ROW,
                    engine,
                    line_of(row),
                    {
                        "register": self.text(values[1]).lstrip("&").strip(),
                        "owns_module_cache": self.text(values[2]),
                        "reset": self.text(values[3]).lstrip("&").strip(),
                    },
                )
            )

    # -- calls -------------------------------------------------------------------------

    def call(self, node: tree_sitter.Node, scope: _Scope) -> None:
        if node.has_error:
            return
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None:
            return
        receiver: str | None = None
        if function.type == "field_expression":
            field_node = function.child_by_field_name("field")
            argument = function.child_by_field_name("argument")
            method = self.text(field_node) if field_node else ""
            receiver = self.text(argument) if argument else None
        else:
            method = self.text(function).split("::")[-1]
        args = [a for a in arguments.named_children if a.type != "comment"]
        texts = [self.text(a) for a in args]
        if method == "launch" and receiver is not None and scope.function is not None:
            self.facts.append(
                Fact(
                    LAUNCH_CALL,
                    f"{scope.function}:{receiver}",
                    line_of(node),
                    {
                        "receiver": receiver,
                        "function": scope.function,
                        "class": scope.cls,
                        "arguments": texts,
                    },
                )
            )
        elif method in _GEOMETRY_METHODS:
            self.facts.append(
                Fact(
                    GEOMETRY_CALL,
                    method,
                    line_of(node),
                    {
                        "function": scope.function,
                        "arguments": texts,
                    },
                )
            )
        elif method in _METADATA_METHODS and args:
            literal = self.string_value(args[0])
            constant = None
            if literal is None and args[0].type in ("identifier", "qualified_identifier"):
                constant = texts[0]
            if literal is not None or constant is not None:
                self.metadata.append((node, method, scope, literal, constant))
        elif method in _GROWING_METHODS and receiver is not None:
            arglist = self.lists.get((scope.function, receiver))
            if arglist is not None:
                arglist.dynamic = True

    # -- literals ----------------------------------------------------------------------

    def string_value(self, node: tree_sitter.Node) -> str | None:
        return string_value(node, self.source)


def _int_value(text: str) -> int | None:
    cleaned = _INT_SUFFIX.sub("", text.replace("'", ""))
    try:
        if len(cleaned) > 1 and cleaned[0] == "0" and cleaned[1].isdigit():
            return int(cleaned, 8)
        return int(cleaned, 0)
    except ValueError:
        return None


def _mentions_kernel_argument(type_text: str) -> bool:
    return re.search(r"\bKernelArgument\b", type_text) is not None


def _is_string_type(type_text: str, declarator: tree_sitter.Node) -> bool:
    if "string_view" in type_text or "string" in type_text.split("::")[-1]:
        return True
    return "char" in type_text and _has_pointer_or_array(declarator)


def _has_pointer_or_array(node: tree_sitter.Node | None) -> bool:
    while node is not None:
        if node.type in ("pointer_declarator", "array_declarator"):
            return True
        node = node.child_by_field_name("declarator")
    return False


def _isfunction_declarator(node: tree_sitter.Node | None) -> bool:
    while node is not None:
        if node.type == "function_declarator":
            return True
        node = node.child_by_field_name("declarator")
    return False
