"""A variadic `launch()` call read argument by argument: which leading arguments are
launch parameters (the stream, grid and block dimensions, shared memory, the kernel
handle) and, for each kernel argument after them, the name it passes and its kind and
size where the file settles them (a cast, a declared type, `auto` resolved through its
initialiser, a struct field); a packed struct or a `std::tuple` is expanded in order.

Maintainers: pure functions over tree-sitter nodes (through impact/cpp/values.py);
impact/cpp/facts.py makes the launch-call fact from what this returns. A name or type it
cannot settle is None, never guessed.
"""

from __future__ import annotations

import re
from typing import Any

import tree_sitter

from impact.cpp.scaffold import declared_identifier, function_declarator, line_of
from impact.cpp.values import POINTER, Values, type_kind

# Types and names that make a leading argument a launch parameter, not a kernel argument.
_LAUNCH_TYPES = re.compile(r"\b(hipStream_t|cudaStream_t|dim3|hipFunction_t|CUfunction|"
                           r"hipModule_t|IRunnableKernel)\b")
_LAUNCH_NAMES = re.compile(r"(?i)^(stream|s|grid|block|blocks|threads|grid_?dim|block_?dim|"
                           r"grid_?size|block_?size|shared_?mem(_?bytes)?|shmem|lds_?bytes|"
                           r"dynamic_?shared|kernel|function|func|module|code)$")
_STREAM_CALL = re.compile(r"(?i)(get_?stream|stream)\s*\(")
_PASS_THROUGH_FIELDS = {"ptr", "data", "get", "value", "address", "buffer", "get_ptr"}
_TUPLES = {"make_tuple", "tuple", "forward_as_tuple", "tie"}


class LaunchReader:
    """Reads the arguments of one file's launch() calls."""

    def __init__(self, values: Values) -> None:
        self.values = values

    def text(self, node: tree_sitter.Node) -> str:
        return self.values.text(node)

    def read(self, call: tree_sitter.Node, function: tree_sitter.Node | None,
             cls: tree_sitter.Node | None) -> dict[str, Any]:
        """`arguments` (kernel argument texts), `launch_parameters` and
        `kernel_arguments` (name, kind, size, line of each) of a launch() call."""
        args = call.child_by_field_name("arguments")
        nodes = [a for a in args.named_children if a.type != "comment"] if args else []
        types = self.local_types(function, cls)
        lead = 0
        while lead < len(nodes) and self.is_launch_parameter(nodes[lead], types):
            lead += 1
        tail = nodes[lead:]
        expanded = self.expand(tail, types) if len(tail) == 1 else None
        described = expanded if expanded is not None else [
            self.describe(node, types) for node in tail]
        return {
            "arguments": [d["text"] for d in described],
            "launch_parameters": [self.text(n) for n in nodes[:lead]],
            "kernel_arguments": described,
        }

    # -- roles -------------------------------------------------------------------------

    def is_launch_parameter(self, node: tree_sitter.Node,
                            types: dict[str, tuple[str, tree_sitter.Node | None]]) -> bool:
        text = self.text(node)
        if _STREAM_CALL.search(text) or text.startswith(("dim3", "{")):
            return True
        name = self.base_name(node)
        declared = types.get(name or "", ("", None))[0]
        if declared and _LAUNCH_TYPES.search(declared):
            return True
        return node.type == "identifier" and _LAUNCH_NAMES.match(text) is not None

    # -- kernel arguments --------------------------------------------------------------

    def describe(self, node: tree_sitter.Node,
                 types: dict[str, tuple[str, tree_sitter.Node | None]]) -> dict[str, Any]:
        kind = self.kind_of(node, types, 0)
        return {"text": self.text(node), "name": self.base_name(node),
                "kind": kind[0] if kind else None, "size": kind[1] if kind else None,
                "line": line_of(node)}

    def base_name(self, node: tree_sitter.Node) -> str | None:
        """The name an argument expression passes: through casts, `&`, `*`, `.ptr` and
        `.data()`; a member's own name otherwise (`binding.scale` passes `scale`)."""
        for _ in range(8):
            inner = self.values.cast_operand(node)
            if inner is not None:
                node = inner
                continue
            if node.type in ("parenthesized_expression", "pointer_expression"):
                node = next((c for c in node.named_children if c.type != "comment"), node)
                if node.type in ("parenthesized_expression", "pointer_expression"):
                    continue
            if node.type == "call_expression":
                function = node.child_by_field_name("function")
                args = node.child_by_field_name("arguments")
                values = [a for a in args.named_children if a.type != "comment"] if args else []
                if function is not None and function.type == "field_expression" and not values:
                    node = function
                elif len(values) == 1 and values[0].type == "string_literal":
                    return self.values.string(values[0], None)  # `t.device("Q")` passes Q
                else:
                    return None
            if node.type == "field_expression":
                field = node.child_by_field_name("field")
                argument = node.child_by_field_name("argument")
                if field is None or argument is None:
                    return None
                if self.text(field) in _PASS_THROUGH_FIELDS:
                    node = argument
                    continue
                return self.text(field)
            if node.type in ("identifier", "field_identifier"):
                return self.text(node)
            if node.type == "qualified_identifier":
                return self.text(node).split("::")[-1]
            if node.type not in ("parenthesized_expression", "pointer_expression"):
                return None
        return None

    def kind_of(self, node: tree_sitter.Node,
                types: dict[str, tuple[str, tree_sitter.Node | None]],
                depth: int) -> tuple[str, int] | None:
        """(kind, size) of an argument expression, where the file settles it."""
        if depth > 6:
            return None
        cast = self.values.cast_type(node)
        if cast is not None:
            return type_kind(cast)
        if node.type == "pointer_expression" and self.text(node).startswith("&"):
            return POINTER
        if node.type == "number_literal":
            return None
        if node.type == "parenthesized_expression":
            inner = next((c for c in node.named_children if c.type != "comment"), None)
            return self.kind_of(inner, types, depth + 1) if inner is not None else None
        if node.type == "identifier":
            declared, value = types.get(self.text(node), ("", None))
            if declared and declared.strip() not in ("auto", "const auto", "auto&"):
                return type_kind(declared)
            if value is not None:
                return self.kind_of(value, types, depth + 1)
            return None
        if node.type == "field_expression":
            field = node.child_by_field_name("field")
            if field is None:
                return None
            name = self.text(field)
            if name in ("ptr",):
                return POINTER
            owners = [t for fields in self.values.structs.values() for f, t in fields
                      if f == name]
            if len(set(owners)) == 1:
                return type_kind(owners[0])
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and function.type == "field_expression":
                field = function.child_by_field_name("field")
                if field is not None and self.text(field) in ("data", "get"):
                    return POINTER
        return None

    def expand(self, tail: list[tree_sitter.Node],
               types: dict[str, tuple[str, tree_sitter.Node | None]]
               ) -> list[dict[str, Any]] | None:
        """A single packed argument spelled out: a `std::tuple` (made in place or held
        in a variable) element by element, a struct of the file field by field."""
        node = tail[0]
        if node.type == "identifier":
            declared, value = types.get(self.text(node), ("", None))
            struct = self.values.structs.get(declared.replace("const", "").strip(" &"))
            if struct:
                return [{"text": f"{self.text(node)}.{name}", "name": name,
                         "kind": (type_kind(t) or (None, None))[0],
                         "size": (type_kind(t) or (None, None))[1], "line": line_of(node)}
                        for name, t in struct]
            if value is None:
                return None
            node = value
        if node.type in ("call_expression", "compound_literal_expression"):
            function = (node.child_by_field_name("function") if node.type == "call_expression"
                        else node.child_by_field_name("type"))
            name = self.text(function).split("<")[0].split("::")[-1] if function else ""
            args = (node.child_by_field_name("arguments") if node.type == "call_expression"
                    else node.child_by_field_name("value"))
            if name in _TUPLES and args is not None:
                return [self.describe(a, types) for a in args.named_children
                        if a.type != "comment"]
        return None

    # -- where names are declared ------------------------------------------------------

    def local_types(self, function: tree_sitter.Node | None, cls: tree_sitter.Node | None
                    ) -> dict[str, tuple[str, tree_sitter.Node | None]]:
        """Name -> (declared type, initialiser) of the function's parameters and locals,
        then of its class's members (first declaration wins)."""
        found: dict[str, tuple[str, tree_sitter.Node | None]] = {}
        if function is not None:
            declarator = function_declarator(function.child_by_field_name("declarator"))
            params = declarator.child_by_field_name("parameters") if declarator else None
            for param in params.named_children if params is not None else ():
                self._declared(param, found, with_value=False)
            body = function.child_by_field_name("body")
            stack = [body] if body is not None else []
            while stack:
                node = stack.pop()
                for child in node.named_children:
                    if child.type == "declaration":
                        self._declared(child, found)
                    elif child.type not in ("lambda_expression", "function_definition"):
                        stack.append(child)
        body = cls.child_by_field_name("body") if cls is not None else None
        for member in body.named_children if body is not None else ():
            if member.type == "field_declaration":
                self._declared(member, found)
        return found

    def _declared(self, node: tree_sitter.Node,
                  found: dict[str, tuple[str, tree_sitter.Node | None]], *,
                  with_value: bool = True) -> None:
        type_node = node.child_by_field_name("type")
        if type_node is None:
            return
        type_text = self.text(type_node)
        declarators = node.children_by_field_name("declarator")
        for declarator in declarators:
            ident = declared_identifier(declarator)
            if ident is None:
                continue
            pointer = "*" if "*" in self.text(declarator).split("=")[0] else ""
            value = declarator.child_by_field_name("value") if with_value else None
            found.setdefault(self.text(ident), (type_text + pointer, value))
