"""C++ facts: argument lists, launch calls, metadata reads and the rest, from one source.

Maintainers: this module parses the bytes it is handed with tree-sitter-cpp, or with
tree-sitter-cuda for a `.hip`/`.cu` source or a CUDA-flavoured header (`grammar_for` in
impact/cpp/scaffold.py), and must not touch git or the filesystem. `extract_cpp_facts`
never raises: a file it cannot read fully yields one `parse-failure` fact beside whatever
its clean parts showed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import tree_sitter

from impact.cpp.arglists import ArgLists, ListRead, mentions_element
from impact.cpp.launches import LaunchReader
from impact.cpp.literals import string_value
from impact.cpp.metadata import MetadataReads
from impact.cpp.scaffold import (
    CLASS_TYPES,
    closing_fact,
    declared_identifier,
    extract_tree,
    function_declarator,
    grammar_for,
    language_label,
    line_of,
    node_text,
    parse,
)
from impact.cpp.values import Values
from impact.facts import Fact, sorted_facts
from impact.kinds import FactKind

LANGUAGE = "C++"
STRING_LITERAL = FactKind.STRING_LITERAL
KERNEL_ARGUMENT_LIST = FactKind.KERNEL_ARGUMENT_LIST
LAUNCH_CALL = FactKind.LAUNCH_CALL
CONSTEXPR_STRING = FactKind.CONSTEXPR_STRING
GEOMETRY_CALL = FactKind.GEOMETRY_CALL
INCLUDE = FactKind.INCLUDE
PACK_ROW = FactKind.PACK_ROW
FUNCTION_DEFINITION = FactKind.FUNCTION_DEFINITION
CONSTANT_DEFINITION = FactKind.CONSTANT_DEFINITION
SYMBOL_DECLARATION = FactKind.SYMBOL_DECLARATION

_DEFINED_STRING = re.compile(r'^\s*"([^"\\]*)"\s*$')
_GEOMETRY_METHODS = {"setGridSize", "setBlockSize"}


def extract_cpp_facts(path: str, source: bytes, *, pack_array: str = "") -> list[Fact]:
    """Every fact one C++ source states, sorted; never raises.

    `pack_array` names the array whose rows register native packs (the surface map's
    `pack_array` convention; hipDNN's `s_packs`): its rows become `pack-row` facts, and
    without it none is read. Parse errors do not hide the clean parts: their facts come
    back with one `parse-failure` fact naming the first broken line.
    """

    def extract(text: bytes) -> list[Fact]:
        grammar = grammar_for(path, text)
        tree = parse(text, grammar)
        walker = _Walker(text, tree.root_node, pack_array)
        walker.visit(tree.root_node, _Scope())
        facts = walker.finish()
        facts.append(closing_fact(path, tree.root_node, language_label(grammar)))
        return sorted_facts(facts)

    return extract_tree(path, source, LANGUAGE, extract, preprocessor_lines=True)


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
    """A kernel argument list as read: its entries and the constructs left unread."""

    name: str
    line: int
    function: str | None
    read: ListRead = field(default_factory=ListRead)
    helper: str | None = None  # the function it is returned from, when it is returned

    @property
    def dynamic(self) -> bool:
        return bool(self.read.unread) or any(
            e[key] is None for e in self.read.entries for key in ("kind", "size", "name"))


class _Walker:
    def __init__(self, source: bytes, root: tree_sitter.Node, pack_array: str) -> None:
        self.source = source
        self.pack_array = pack_array
        self.facts: list[Fact] = []
        self.lists: dict[tuple[str | None, str], _ArgList] = {}
        self.metadata = MetadataReads(source)
        self.constants: dict[str, str] = {}
        self.values = Values(source, root)
        self.arglists = ArgLists(self.values)
        self.launches = LaunchReader(self.values)
        self.function_node: tree_sitter.Node | None = None
        self.class_node: tree_sitter.Node | None = None

    def text(self, node: tree_sitter.Node) -> str:
        return node_text(node, self.source)

    def finish(self) -> list[Fact]:
        self.facts.extend(self.metadata.facts(self.constants))
        for arglist in self.lists.values():
            if arglist.helper is not None and arglist.helper in self.arglists.helpers_used:
                continue  # a helper another list is built from: read as part of that list
            self.facts.append(
                Fact(
                    KERNEL_ARGUMENT_LIST,
                    arglist.name,
                    arglist.line,
                    {
                        "function": arglist.function,
                        "entries": arglist.read.entries,
                        "dynamic": arglist.dynamic,
                        "unread": arglist.read.unread,
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
            if name_node is not None:
                self.declared(scope, self.text(name_node), node)
            inner = scope.with_class(self.text(name_node) if name_node else "")
            saved_class, self.class_node = self.class_node, node
            try:
                self.visit_children(node, inner)
            finally:
                self.class_node = saved_class
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
        if node_type == "using_declaration":  # `using ns::gfx950Grid;` names it here too
            target = next((c for c in node.named_children
                           if c.type in ("qualified_identifier", "identifier")), None)
            if target is not None:
                self.declared(scope, self.text(target).split("::")[-1], node)
        if node_type in ("alias_declaration", "type_definition"):
            names = ([node.child_by_field_name("name")] if node_type == "alias_declaration"
                     else node.children_by_field_name("declarator"))
            for name_node in names:
                if name_node is not None:
                    self.declared(scope, self.text(name_node), node)
        if node_type == "preproc_def":  # `#define FIELD "name"`: a string constant too
            name_node, value_node = (node.child_by_field_name("name"),
                                     node.child_by_field_name("value"))
            literal = _DEFINED_STRING.match(self.text(value_node)) if value_node else None
            if name_node is not None and literal is not None:
                self.constants.setdefault(self.text(name_node), literal.group(1))
        if node_type in ("declaration", "field_declaration"):
            self.declaration(node, scope)
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
        returns = return_type is not None and self.arglists.is_list(
            self.text(return_type), declarator.child_by_field_name("declarator"))
        body = node.child_by_field_name("body")
        if body is not None:
            if returns or mentions_element(self.text(body)):
                self.function_lists(body, inner, short, returns)
            saved, self.function_node = self.function_node, node
            try:
                self.visit(body, inner)
            finally:
                self.function_node = saved

    def function_lists(self, body: tree_sitter.Node, scope: _Scope, name: str,
                       returns: bool) -> None:
        """The lists a function body declares, and the one it returns (when its return
        type is a list): each read in order, helpers evaluated."""
        state = self.arglists.body(body, self.values.function_env(body))
        returned = {self.text(v) for _n, v, _r in state.returns if v.type == "identifier"}
        for local, node in state.declared:
            read = state.locals[local]
            if read.modified_copy:
                continue  # a neighbour ABI made from another list on purpose: not a copy
            if local in state.copies and not (returns and local in returned):
                continue  # another list passed around under a new name: not a copy of its own
            self.arglists.helpers_used |= read.helpers
            qualified = f"{scope.function}.{local}"
            self.lists[(scope.function, local)] = _ArgList(
                qualified, line_of(node), scope.function, read)
        for _node, _value, read in state.returns:
            if returns and not read.modified_copy:
                self.arglists.helpers_used |= read.helpers
        if not returns or scope.function is None:
            return
        if len(state.returns) == 1:
            value = state.returns[0][1]
            if value.type == "identifier" and (scope.function, self.text(value)) in self.lists:
                self.lists[(scope.function, self.text(value))].helper = name
                return
        if any(read.modified_copy for _n, _v, read in state.returns):
            return
        line = line_of(state.returns[0][0]) if state.returns else line_of(body)
        self.lists[(scope.function, "")] = _ArgList(scope.function, line, scope.function,
                                                     state.result, helper=name)

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

    def declared(self, scope: _Scope, name: str, node: tree_sitter.Node) -> None:
        """A `symbol-declaration` fact for `name`, qualified as a definition would be,
        made outside any function (a mirror may be named by its prototype or its alias)."""
        if scope.function is not None or not name or node.has_error:
            return
        qualified = "::".join([n for n in scope.namespaces if n] + list(scope.classes)
                              + [p.strip() for p in name.split("::")])
        self.facts.append(Fact(SYMBOL_DECLARATION, qualified, line_of(node),
                               {"namespace": scope.namespace}))

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
            self.declared(scope, name, node)
            if "constexpr" in specifiers and value is not None and not node.has_error:
                string = self.string_value(_braced_single(value))
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
            elif ("const" in specifiers and value is not None and not node.has_error
                  and _is_string_type(type_text, declarator)):
                string = self.string_value(value)  # `static const std::string F = "x";`
                if string is not None:
                    self.constants.setdefault(name, string)
            if (scope.function is None and value is not None
                    and specifiers & {"constexpr", "const"}
                    and not _isfunction_declarator(declarator)):
                # A named constant can be a profile's C++ mirror (a block size).
                qualified = "::".join([n for n in scope.namespaces if n]
                                      + list(scope.classes) + [name])
                self.facts.append(Fact(CONSTANT_DEFINITION, qualified, line_of(node),
                                       {"namespace": scope.namespace}))
            if (self.pack_array and name == self.pack_array and value is not None
                    and value.type == "initializer_list"):
                self.pack_rows(value)
            if (scope.function is None and self.arglists.is_list(type_text, declarator)
                    and not _isfunction_declarator(declarator)):
                read = self.arglists.new_read(type_text)
                if value is not None:
                    self.arglists.sequence(value, self.values.file, read)
                self.arglists.helpers_used |= read.helpers
                self.lists[(None, name)] = _ArgList(name, line_of(node), None, read)

    def pack_rows(self, init: tree_sitter.Node) -> None:
        """The pack array's rows: `{engine, register, owns cache, reset}` with or without the
        row's type name, positional or designated (`.engineName = ...`)."""
        for row in init.named_children:
            if row.type == "compound_literal_expression":
                row = row.child_by_field_name("value") or row
            if row.type != "initializer_list" or row.has_error:
                continue
            values = [c for c in row.named_children if c.type != "comment"]
            if values and all(v.type == "initializer_pair" for v in values):
                values = _designated_pack_row(values, self.source)
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
            receiver = _receiver_name(argument, self.source) if argument else None
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
                        **self.launches.read(node, self.function_node, self.class_node),
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
        else:
            self.metadata.call(node, function, args, scope.function)

    # -- literals ----------------------------------------------------------------------

    def string_value(self, node: tree_sitter.Node) -> str | None:
        return string_value(node, self.source)


def _designated_pack_row(pairs: list[tree_sitter.Node], source: bytes
                         ) -> list[tree_sitter.Node]:
    """A designated pack row's values in the positional order (engine, register,
    owns cache, reset), matched by what each field is named for; [] when one is missing."""
    by_role: dict[str, tree_sitter.Node] = {}
    for pair in pairs:
        designator = pair.child_by_field_name("designator")
        value = pair.child_by_field_name("value")
        if designator is None or value is None:
            return []
        name = node_text(designator, source).lstrip(".").lower()
        role = next((r for r in ("engine", "register", "own", "reset") if r in name), None)
        if role is None or role in by_role:
            return []
        by_role[role] = value
    roles = ("engine", "register", "own", "reset")
    return [by_role[r] for r in roles] if all(r in by_role for r in roles) else []


def _receiver_name(node: tree_sitter.Node, source: bytes) -> str:
    """What a launch() is called on, as its subject names it: the object's own text, or
    for a call (`prepared.kernelForStream(stream).launch(...)`) the method it calls."""
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        if function is not None and function.type == "field_expression":
            field_node = function.child_by_field_name("field")
            if field_node is not None:
                return node_text(field_node, source)
        if function is not None:
            return node_text(function, source).split("::")[-1]
    return node_text(node, source)


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


def _braced_single(value: tree_sitter.Node) -> tree_sitter.Node:
    """The one element of a braced or parenthesised initialiser (`std::string_view
    kName{"a.b"}` and `kName("a.b")` hold the string `kName = "a.b"` does); `value`
    itself otherwise."""
    if value.type in ("initializer_list", "argument_list") and value.named_child_count == 1:
        only = value.named_children[0]
        if only.type not in ("comment",):
            return only
    return value
