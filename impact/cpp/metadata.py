"""KMD metadata reads in a C++ pack: which field each read names, in every spelling.

Why: a pack's matcher reads a candidate's metadata fields (`getIntMetadata`,
`getStringMetadata`, `kernel.metadata.find(...)`), and the real packs seldom pass a
literal: a named constant (constexpr, `static const`, `#define`), wrapped in
`std::string(...)`, or through a local lambda (`intField(HEAD_SIZE_FIELD)`) or a
file-local helper (`integerMetadata(kernel, BLOCK_M_FIELD)`) whose body forwards its
parameter to a getter. Each becomes one read at the call that names the field; one whose
field cannot be settled is a read with no field, naming its construct (never dropped).

Maintainers: `impact/cpp/facts.py` hands every call here while it walks, and asks for
the facts at the end, once the file's string constants are all known.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter

from impact.cpp.literals import string_value
from impact.cpp.scaffold import declared_identifier, function_declarator, line_of, node_text
from impact.facts import Fact
from impact.kinds import FactKind

GETTERS = frozenset({"getIntMetadata", "getStringMetadata", "getBoolMetadata",
                     "getFloatMetadata", "getMetadata"})
_MAP_LOOKUPS = frozenset({"find", "at", "count", "contains"})  # on `<x>.metadata`
_STRING_WRAPPERS = frozenset({"std::string", "std::string_view", "string", "string_view"})
_STRINGS = ("string_literal", "raw_string_literal", "concatenated_string")
_MAX_ROUNDS = 8  # helpers forwarding to helpers: deeper chains stay unread


@dataclass(frozen=True)
class _Read:
    """One call that reads a field: at a getter, or at a forwarder's call."""

    node: tree_sitter.Node
    method: str
    function: str | None
    argument: tree_sitter.Node
    via: str | None = None


class MetadataReads:
    """The metadata reads of one file, collected call by call."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.getters: list[_Read] = []
        self.calls: list[tuple[tree_sitter.Node, str, list[tree_sitter.Node], str | None]] = []

    def text(self, node: tree_sitter.Node) -> str:
        return node_text(node, self.source)

    def call(self, node: tree_sitter.Node, function: tree_sitter.Node,
             args: list[tree_sitter.Node], scope_function: str | None) -> None:
        """Record a call: a getter's, or one that may reach a forwarder."""
        if not args:
            return
        method = self._getter(function)
        if method is not None:
            self.getters.append(_Read(node, method, scope_function, args[0]))
        elif function.type in ("identifier", "qualified_identifier", "template_function"):
            name = self.text(function).split("<")[0].split("::")[-1].strip()
            self.calls.append((node, name, args, scope_function))

    def _getter(self, function: tree_sitter.Node) -> str | None:
        if function.type != "field_expression":
            return None
        field_node = function.child_by_field_name("field")
        method = self.text(field_node) if field_node is not None else ""
        if method in GETTERS:
            return method
        owner = function.child_by_field_name("argument")
        if method in _MAP_LOOKUPS and owner is not None and owner.type == "field_expression":
            member = owner.child_by_field_name("field")
            if member is not None and self.text(member) == "metadata":
                return f"metadata.{method}"
        return None

    # -- resolving ------------------------------------------------------------------------

    def facts(self, constants: dict[str, str]) -> list[Fact]:
        """One `metadata-read` fact per read that names a field (or fails to)."""
        forwarders: dict[str, dict[int, str]] = {}  # name -> parameter index -> method
        reads: list[_Read] = []
        pending = list(self.getters)
        for _round in range(_MAX_ROUNDS):
            found: dict[str, dict[int, str]] = {}
            for read in pending:
                owner = self._parameter_of(self._unwrap(read.argument))
                if owner is None:
                    reads.append(read)
                else:
                    found.setdefault(owner[0], {})[owner[1]] = read.method
            new = {n: ix for n, ix in found.items() if n not in forwarders}
            if not new:
                break
            forwarders.update(new)
            pending = [_Read(node, method, scope, args[index], name)
                       for node, name, args, scope in self.calls if name in new
                       for index, method in new[name].items() if index < len(args)]
        return [self._fact(read, constants) for read in reads]

    def _fact(self, read: _Read, constants: dict[str, str]) -> Fact:
        argument = self._unwrap(read.argument)
        literal = constant = construct = None
        if argument.type in _STRINGS:
            literal = string_value(argument, self.source)
        elif argument.type in ("identifier", "qualified_identifier"):
            constant = self.text(argument)
        if literal is None and constant is None:
            construct = self.text(argument)
        value = literal if literal is not None else (
            constants.get(constant.split("::")[-1]) if constant is not None else None)
        return Fact(FactKind.METADATA_READ, value or constant or construct or "",
                    line_of(read.node),
                    {"method": read.method, "function": read.function, "field": value,
                     "field_constant": constant, "via": read.via, "construct": construct})

    def _unwrap(self, node: tree_sitter.Node) -> tree_sitter.Node:
        """The field expression inside `std::string(x)`, `std::string{x}` and `(x)`."""
        while True:
            if node.type == "parenthesized_expression" and node.named_child_count == 1:
                node = node.named_children[0]
            elif node.type == "call_expression":
                function, arguments = (node.child_by_field_name("function"),
                                       node.child_by_field_name("arguments"))
                inner = [a for a in arguments.named_children if a.type != "comment"] \
                    if arguments is not None else []
                if function is None or self.text(function) not in _STRING_WRAPPERS \
                        or len(inner) != 1:
                    return node
                node = inner[0]
            elif node.type == "compound_literal_expression":
                kind, value = node.child_by_field_name("type"), node.child_by_field_name("value")
                inner = [a for a in value.named_children if a.type != "comment"] \
                    if value is not None else []
                if kind is None or self.text(kind) not in _STRING_WRAPPERS or len(inner) != 1:
                    return node
                node = inner[0]
            else:
                return node

    def _parameter_of(self, node: tree_sitter.Node) -> tuple[str, int] | None:
        """(the lambda's or function's name, the parameter's index) when `node` is a
        parameter of the lambda or function around it."""
        if node.type != "identifier":
            return None
        name = self.text(node)
        current = node.parent
        while current is not None:
            if current.type == "lambda_expression":
                declarator = current.child_by_field_name("declarator")
                index = self._index(declarator, name)
                if index is not None:
                    holder = current.parent
                    target = (holder.child_by_field_name("declarator")
                              if holder is not None and holder.type == "init_declarator"
                              else None)
                    return (self.text(target), index) if target is not None else None
            elif current.type == "function_definition":
                declarator = function_declarator(current.child_by_field_name("declarator"))
                index = self._index(declarator, name)
                inner = declarator.child_by_field_name("declarator") if declarator else None
                if index is None or inner is None:
                    return None
                return self.text(inner).split("::")[-1].strip(), index
            current = current.parent
        return None

    def _index(self, declarator: tree_sitter.Node | None, name: str) -> int | None:
        params = declarator.child_by_field_name("parameters") if declarator else None
        if params is None:
            return None
        named = [p for p in params.named_children if p.type != "comment"]
        for index, param in enumerate(named):
            ident = declared_identifier(param.child_by_field_name("declarator"))
            if ident is not None and self.text(ident) == name:
                return index
        return None
