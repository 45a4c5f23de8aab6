"""Binding facts of one Python file: compile_ops stubs, extension call sites, fake twins.

Maintainers: this module reads the bytes it is handed and nothing else; it must never touch
git or the filesystem. `extract_binding_python_facts` never raises: a file libcst cannot
read yields exactly one parse-failure fact.
"""

from __future__ import annotations

import sys
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from impact.facts import Fact, sorted_facts
from impact.kinds import FactKind
from impact.python.digest import digest_code, module_digest
from impact.python.scaffold import dotted_name, extract_python, parameters, string_value

# Imports whose attribute calls are ordinary library calls, not calls into a kernel
# extension: the standard library and a few ubiquitous packages (`torch.ops.<ns>` excepted).
_NOT_EXTENSIONS = frozenset(sys.stdlib_module_names) | {
    "torch", "numpy", "triton", "einops", "pytest", "packaging", "setuptools",
    "typing_extensions", "pandas",
}
_FAKE_DECORATORS = ("register_fake", "impl_abstract")


def extract_binding_python_facts(path: str, source: bytes) -> list[Fact]:
    """`op-stub`, `op-call` and `fake-twin` facts and the `content` fact of one file, sorted.

    Never raises; a file that is not UTF-8 or not Python yields one parse-failure fact.
    """

    def extract(wrapper: MetadataWrapper) -> list[Fact]:
        visitor = _Visitor(wrapper.module)
        wrapper.visit(visitor)
        facts = visitor.facts
        code = wrapper.module.code
        docstrings = [span for span in visitor.blanked if span[2]]
        # Docstrings, comments and layout left out; then also what the facts state.
        digest = _beyond(code, docstrings)
        data: dict[str, Any] = {"digest": digest if digest is not None
                                else module_digest(wrapper.module)}
        beyond = _beyond(code, visitor.blanked)
        if beyond is not None:  # not computed: the check treats the code as changed
            data["beyond_bindings"] = beyond
        facts.append(Fact(FactKind.CONTENT, path, 0, data))
        return sorted_facts(facts)

    return extract_python(path, source, extract)


class _Visitor(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, module: cst.Module) -> None:
        super().__init__()
        self.module = module
        self.facts: list[Fact] = []
        self.modules: dict[str, list[str]] = {}
        self.functions: list[str] = []
        self.bindings_done = False
        self.stub_names: set[str] = set()
        # The spans whose text the facts state (stub parameter lists, op-call argument
        # lists) or that are docstrings, with what replaces them in the `beyond_bindings`
        # digest: ((start line, column), (end line, column), replacement).
        self.blanked: list[tuple[tuple[int, int], tuple[int, int], str]] = []

    def blank(self, node: cst.CSTNode, last: cst.CSTNode | None = None,
              replacement: str = "") -> None:
        start = self.get_metadata(PositionProvider, node).start
        end = self.get_metadata(PositionProvider, last or node).end
        self.blanked.append(((start.line, start.column), (end.line, end.column), replacement))

    def docstring(self, body: Any) -> None:
        statements = list(getattr(body, "body", []) or [])
        if statements and isinstance(statements[0], cst.SimpleStatementLine) \
                and len(statements[0].body) == 1 and isinstance(statements[0].body[0], cst.Expr) \
                and isinstance(statements[0].body[0].value,
                               (cst.SimpleString, cst.ConcatenatedString)):
            self.blank(statements[0].body[0].value, replacement="...")

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.docstring(node.body)
        return True

    def line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    # -- module-ish names: imports and `x = torch.ops.<ns>` ------------------------------

    def bind(self, name: str, module: str) -> None:
        bound = self.modules.setdefault(name, [])
        if module not in bound:
            bound.append(module)

    def visit_Module(self, node: cst.Module) -> bool:
        # Bindings first, so a call above its import (inside a function) still resolves.
        node.visit(_Binder(self))
        self.docstring(node)
        return True

    # -- functions -----------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            self.decorator(node, decorator.decorator)
        self.docstring(node.body)
        self.functions.append(node.name.value)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def decorator(self, func: cst.FunctionDef, expr: cst.BaseExpression) -> None:
        call = expr if isinstance(expr, cst.Call) else None
        dotted = dotted_name(call.func if call is not None else expr) or ""
        last = dotted.rsplit(".", 1)[-1]
        if call is not None and last.endswith("compile_ops"):
            self.stub(func, call)
        elif any(word in last for word in _FAKE_DECORATORS):
            self.fake_twin(func, call, dotted)

    def stub(self, func: cst.FunctionDef, call: cst.Call) -> None:
        self.blank(func.params)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        module = string_value(positional[0].value) if positional else None
        fc_name = string_value(keywords["fc_name"]) if "fc_name" in keywords else None
        ffi_type = string_value(keywords["ffi_type"]) if "ffi_type" in keywords else None
        line = self.line(func)
        self.facts.append(Fact(FactKind.OP_STUB, func.name.value, line, {
            "module": module,
            "fc_name": fc_name,
            "ffi_type": ffi_type,
            "symbol": fc_name or func.name.value,
            "params": self.params(func.params),
            "line": line,
        }))

    def fake_twin(self, func: cst.FunctionDef, call: cst.Call | None, dotted: str) -> None:
        qualified: str | None = None
        if call is not None:
            first = next((a for a in call.args if a.keyword is None and not a.star), None)
            qualified = string_value(first.value) if first is not None else None
        if qualified is None:
            head = dotted.rsplit(".", 1)[0] if "." in dotted else ""
            if not head:
                return  # a bare `@register_fake` names no op
            qualified = head
        namespace, _, op = qualified.rpartition("::")
        self.facts.append(Fact(FactKind.FAKE_TWIN, op, self.line(func), {
            "namespace": namespace or None,
            "qualified": qualified,
            "function": func.name.value,
            "params": self.params(func.params),
        }))

    def params(self, params: cst.Parameters) -> list[dict[str, Any]]:
        return parameters(params, self.code)

    # -- calls ---------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Name):
            op = func.value
            receivers = self.name_receivers(op)
            if not receivers:
                return True
        else:
            if not isinstance(func, cst.Attribute):
                return True
            target = dotted_name(func)
            if target is None:
                return True
            parts = target.split(".")
            if parts[-1] == "default" and len(parts) > 1:
                parts = parts[:-1]
            if len(parts) < 2:
                return True
            op = parts[-1]
            receiver_text = ".".join(parts[:-1])
            receivers = self.receivers(receiver_text)
            if not receivers:
                return True
        if node.args:
            self.blank(node.args[0], node.args[-1])
        positional = 0
        keywords: list[str] = []
        for arg in node.args:
            if arg.star == "*":
                positional = -1
            elif arg.star == "**":
                keywords.append("**")
            elif arg.keyword is not None:
                keywords.append(arg.keyword.value)
            elif positional >= 0:
                positional += 1
        data: dict[str, Any] = {
            "receiver": receivers[0],
            "function": self.functions[-1] if self.functions else None,
            "positional": positional,
            "keywords": sorted(keywords),
            # What the call passes, layout-blind: a call whose arguments changed is a copy
            # the change rewrote.
            "arguments": digest_code("(" + ", ".join(
                self.code(a).rstrip(",").strip() for a in node.args) + ")"),
        }
        if len(receivers) > 1:
            data["receivers"] = sorted(receivers)
        self.facts.append(Fact(FactKind.OP_CALL, op, self.line(node), data))
        return True

    def name_receivers(self, name: str) -> list[str]:
        """A bare call `f(...)`: a stub of this file (receiver `.`), or a name imported
        with `from m import f` from a package that is not a plain library (receiver `m`)."""
        if name in self.stub_names:
            return ["."]
        found: list[str] = []
        for module in self.modules.get(name, []):
            head, _, last = module.rpartition(".")
            if last == name and head.strip(".") and (
                    module.startswith(".") or head.split(".")[0] not in _NOT_EXTENSIONS):
                found.append(head)
        return found

    def receivers(self, text: str) -> list[str]:
        parts = text.split(".")
        if len(parts) == 3 and parts[:2] == ["torch", "ops"]:
            return [text]
        found: list[str] = []
        for module in self.modules.get(text, []):
            if module.startswith("torch.ops.") or module.split(".")[0] not in _NOT_EXTENSIONS:
                found.append(module)
        return found


def _beyond(code: str, spans: list[tuple[tuple[int, int], tuple[int, int], str]]
            ) -> str | None:
    """The layout-blind digest of `code` with each span replaced (outer spans win over
    the ones inside them), or None when what is left does not tokenize."""
    starts = [0]
    for line in code.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(point: tuple[int, int]) -> int:
        return starts[point[0] - 1] + point[1] if point[0] - 1 < len(starts) else len(code)

    chosen: list[tuple[int, int, str]] = []
    for begin, end, replacement in sorted(
            ((offset(a), offset(b), r) for a, b, r in spans), key=lambda x: (x[0], -x[1])):
        if chosen and begin < chosen[-1][1]:
            continue  # inside a span already replaced
        chosen.append((begin, end, replacement))
    pieces, at = [], 0
    for begin, end, replacement in chosen:
        pieces += [code[at:begin], replacement]
        at = end
    pieces.append(code[at:])
    try:
        return digest_code("".join(pieces))
    except Exception:  # a tokenizer error: leave it to the check to say changed
        return None


class _Binder(cst.CSTVisitor):
    """Names bound to modules anywhere in the file: imports and `x = torch.ops.<ns>`."""

    def __init__(self, owner: _Visitor) -> None:
        super().__init__()
        self.owner = owner

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            module = dotted_name(alias.name)
            if module is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.owner.bind(alias.asname.name.value, module)
            else:
                # `import a.b` binds `a`, and `a.b.op(...)` names the module `a.b`
                for index in range(1, module.count(".") + 2):
                    prefix = ".".join(module.split(".")[:index])
                    self.owner.bind(prefix, prefix)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar):
            return False
        base = dotted_name(node.module) if node.module is not None else ""
        dots = "." * len(node.relative)
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            module = f"{dots}{base}.{name}" if base else f"{dots}{name}"
            bound = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                bound = alias.asname.name.value
            self.owner.bind(bound, module)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            expr = decorator.decorator
            call = expr if isinstance(expr, cst.Call) else None
            dotted = dotted_name(call.func) if call is not None else None
            if dotted is not None and dotted.rsplit(".", 1)[-1].endswith("compile_ops"):
                self.owner.stub_names.add(node.name.value)
        return True

    def visit_Assign(self, node: cst.Assign) -> bool:
        value = dotted_name(node.value)
        if value is None:
            return True
        parts = value.split(".")
        if len(parts) == 3 and parts[:2] == ["torch", "ops"]:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.owner.bind(target.target.value, value)
        return True
