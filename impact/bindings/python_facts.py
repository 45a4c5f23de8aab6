"""Binding facts of one Python file: compile_ops stubs, extension call sites, fake twins.

Maintainers: this module reads the bytes it is handed and nothing else; it must never touch
git or the filesystem. `extract_binding_python_facts` never raises: a file `ast` cannot
read yields exactly one parse-failure fact.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from impact.facts import Fact, sorted_facts
from impact.kinds import FactKind
from impact.python.digest import arguments_digest, digest_code, module_digest
from impact.python.scaffold import (
    Source,
    children,
    dotted_name,
    extract_python,
    parameters,
    string_tokens,
    string_value,
)

# Imports whose attribute calls are ordinary library calls, not calls into a kernel
# extension: the standard library and a few ubiquitous packages (`torch.ops.<ns>` excepted).
_NOT_EXTENSIONS = frozenset(sys.stdlib_module_names) | {
    "torch", "numpy", "triton", "einops", "pytest", "packaging", "setuptools",
    "typing_extensions", "pandas",
}
_FAKE_DECORATORS = ("register_fake", "impl_abstract")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
Span = tuple[int, int, str]


def extract_binding_python_facts(path: str, source: bytes) -> list[Fact]:
    """`op-stub`, `op-call` and `fake-twin` facts and the `content` fact of one file, sorted.

    Never raises; a file that is not UTF-8 or not Python yields one parse-failure fact.
    """

    def extract(parsed: Source) -> list[Fact]:
        visitor = _Visitor(parsed)
        visitor.run()
        facts = visitor.facts
        # Docstrings, comments and layout left out; then also what the facts state.
        data: dict[str, Any] = {"digest": module_digest(parsed.tree)}
        beyond = _beyond(parsed.text, visitor.blanked)
        if beyond is not None:  # not computed: the check treats the code as changed
            data["beyond_bindings"] = beyond
        facts.append(Fact(FactKind.CONTENT, path, 0, data))
        return sorted_facts(facts)

    return extract_python(path, source, extract)


class _Visitor:
    """One walk over the tree, in the order the file is written, after the names bound to
    modules are known (a call above its import, inside a function, still resolves)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.facts: list[Fact] = []
        self.modules: dict[str, list[str]] = {}
        self.functions: list[str] = []
        self.stub_names: set[str] = set()
        # The spans whose text the facts state (stub parameter lists, op-call argument
        # lists) or that are docstrings, with what replaces them in the `beyond_bindings`
        # digest: (start offset, end offset, replacement).
        self.blanked: list[Span] = []

    def run(self) -> None:
        tree = self.source.tree
        _bind(self, tree)
        self.docstring(tree, tree.body, inline=False)
        # (node, whether leaving it): a def's name is the enclosing function of what is
        # written inside it, its decorators and defaults included.
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.functions.pop()
                continue
            if isinstance(node, _DEFS):
                for decorator in node.decorator_list:
                    self.decorator(node, decorator)
                self.docstring(node, node.body)
                self.functions.append(node.name)
                stack.append((node, True))
            elif isinstance(node, ast.ClassDef):
                self.docstring(node, node.body)
            elif isinstance(node, ast.Call):
                self.call(node)
            stack.extend((child, False) for child in reversed(children(node)))

    def blank(self, begin: int, end: int, replacement: str = "") -> None:
        self.blanked.append((begin, end, replacement))

    def docstring(self, owner: ast.AST, body: list[ast.stmt], inline: bool | None = None) -> None:
        """Blank the docstring of a module, class or def body: a lone string statement on
        the first line of an indented body (as libcst found it: not one after `:` on the
        def line, not one sharing its line with another statement)."""
        if not body or not isinstance(body[0], ast.Expr):
            return
        first, value = body[0], body[0].value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, (str, bytes))) \
                and not (isinstance(value, ast.JoinedStr) and self.concatenated(value)):
            return
        if len(body) > 1 and body[1].lineno == first.end_lineno:
            return  # `"doc"; x = 1`
        source = self.source
        if inline is None:
            colon = source.backward(source.start(first))
            inline = not any(char in "\r\n" for char in source.text[colon:source.start(first)])
        if not inline:
            self.blank(source.start(value), source.end(value), "...")

    def concatenated(self, node: ast.JoinedStr) -> bool:
        """Whether an f-string node is written as several literals (libcst's concatenated
        string, which it took for a docstring) rather than one f-string."""
        pieces = string_tokens(self.source.text[self.source.start(node):self.source.end(node)])
        return pieces is not None and len(pieces) > 1

    def line(self, node: ast.AST) -> int:
        return node.lineno  # type: ignore[attr-defined]

    def code(self, node: ast.AST) -> str:
        return self.source.code(node)

    # -- module-ish names: imports and `x = torch.ops.<ns>` ------------------------------

    def bind(self, name: str, module: str) -> None:
        bound = self.modules.setdefault(name, [])
        if module not in bound:
            bound.append(module)

    # -- functions -----------------------------------------------------------------------

    def decorator(self, func: ast.FunctionDef | ast.AsyncFunctionDef, expr: ast.expr) -> None:
        call = expr if isinstance(expr, ast.Call) else None
        dotted = dotted_name(call.func if call is not None else expr) or ""
        last = dotted.rsplit(".", 1)[-1]
        if call is not None and last.endswith("compile_ops"):
            self.stub(func, call)
        elif any(word in last for word in _FAKE_DECORATORS):
            self.fake_twin(func, call, dotted)

    def stub(self, func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> None:
        span = self.params_span(func)
        if span is not None:
            self.blank(*span)
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        keywords = {a.arg: a.value for a in call.keywords if a.arg is not None}
        module = string_value(positional[0]) if positional else None
        fc_name = string_value(keywords.get("fc_name"))
        ffi_type = string_value(keywords.get("ffi_type"))
        line = self.line(func)
        self.facts.append(Fact(FactKind.OP_STUB, func.name, line, {
            "module": module,
            "fc_name": fc_name,
            "ffi_type": ffi_type,
            "symbol": fc_name or func.name,
            "params": self.params(func.args),
            "line": line,
        }))

    def params_span(self, func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int] | None:
        """From the first parameter to the `)` that closes the list; None when empty."""
        args = func.args
        source = self.source
        ends = [source.end(a) for a in (*args.posonlyargs, *args.args, args.vararg,
                                        *args.kwonlyargs, args.kwarg) if a is not None]
        ends += [source.span(d)[1] for d in (*args.defaults, *args.kw_defaults)
                 if d is not None]
        if not ends:
            return None
        close = source.forward(max(ends))
        while source.text[close] in ",/":
            close = source.forward(close + 1)
        at = source.start(func)
        for word in ("async", "def"):
            if source.text.startswith(word, at):
                at = source.forward(at + len(word))
        for bound in getattr(func, "type_params", ()):  # `def f[T: (A, B)](...)`, 3.12
            at = max(at, source.end(bound))
        at = source.text.index("(", at)
        return source.forward(at + 1), close

    def fake_twin(self, func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call | None,
                  dotted: str) -> None:
        qualified: str | None = None
        if call is not None:
            first = next((a for a in call.args if not isinstance(a, ast.Starred)), None)
            qualified = string_value(first) if first is not None else None
        if qualified is None:
            head = dotted.rsplit(".", 1)[0] if "." in dotted else ""
            if not head:
                return  # a bare `@register_fake` names no op
            qualified = head
        namespace, _, op = qualified.rpartition("::")
        self.facts.append(Fact(FactKind.FAKE_TWIN, op, self.line(func), {
            "namespace": namespace or None,
            "qualified": qualified,
            "function": func.name,
            "params": self.params(func.args),
        }))

    def params(self, args: ast.arguments) -> list[dict[str, Any]]:
        return parameters(args, self.code)

    # -- calls ---------------------------------------------------------------------------

    def call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            op = func.id
            receivers = self.name_receivers(op)
            if not receivers:
                return
        else:
            if not isinstance(func, ast.Attribute):
                return
            target = dotted_name(func)
            if target is None:
                return
            parts = target.split(".")
            if parts[-1] == "default" and len(parts) > 1:
                parts = parts[:-1]
            if len(parts) < 2:
                return
            op = parts[-1]
            receiver_text = ".".join(parts[:-1])
            receivers = self.receivers(receiver_text)
            if not receivers:
                return
        args = self.arguments(node)
        if args:
            self.blank(args[0][0], args[-1][1])
        positional = -1 if any(isinstance(a, ast.Starred) for a in node.args) \
            else len(node.args)
        keywords = sorted("**" if k.arg is None else k.arg for k in node.keywords)
        data: dict[str, Any] = {
            "receiver": receivers[0],
            "function": self.functions[-1] if self.functions else None,
            "positional": positional,
            "keywords": keywords,
            # What the call passes, layout-blind: a call whose arguments changed is a copy
            # the change rewrote.
            "arguments": arguments_digest(node),
        }
        if len(receivers) > 1:
            data["receivers"] = sorted(receivers)
        self.facts.append(Fact(FactKind.OP_CALL, op, self.line(node), data))

    def arguments(self, node: ast.Call) -> list[tuple[int, int]]:
        """Where each argument is written, `*`, `**` and `name=` included, in order."""
        source = self.source
        spans = [source.span(a) if not isinstance(a, ast.Starred)
                 else (source.start(a), source.end(a)) for a in node.args]
        spans += [(source.start(k), source.end(k)) for k in node.keywords]
        return sorted(spans)

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


def _beyond(code: str, spans: list[Span]) -> str | None:
    """The layout-blind digest of `code` with each span replaced (outer spans win over
    the ones inside them), or None when what is left does not tokenize."""
    chosen: list[Span] = []
    for begin, end, replacement in sorted(spans, key=lambda x: (x[0], -x[1])):
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


def _bind(owner: _Visitor, tree: ast.Module) -> None:
    """Names bound to modules anywhere in the file: imports and `x = torch.ops.<ns>`, in
    the order they are written; and the names of this file's `compile_ops` stubs."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                module = alias.name
                if alias.asname is not None:
                    owner.bind(alias.asname, module)
                else:
                    # `import a.b` binds `a`, and `a.b.op(...)` names the module `a.b`
                    for index in range(1, module.count(".") + 2):
                        prefix = ".".join(module.split(".")[:index])
                        owner.bind(prefix, prefix)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            dots = "." * node.level
            for alias in node.names:
                if alias.name == "*":
                    break
                module = f"{dots}{base}.{alias.name}" if base else f"{dots}{alias.name}"
                owner.bind(alias.asname or alias.name, module)
        elif isinstance(node, ast.stmt):
            if isinstance(node, _DEFS):
                for expr in node.decorator_list:
                    dotted = dotted_name(expr.func) if isinstance(expr, ast.Call) else None
                    if dotted is not None and dotted.rsplit(".", 1)[-1].endswith("compile_ops"):
                        owner.stub_names.add(node.name)
            elif isinstance(node, ast.Assign):
                value = dotted_name(node.value)
                parts = [] if value is None else value.split(".")
                if len(parts) == 3 and parts[:2] == ["torch", "ops"]:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            owner.bind(target.id, value)  # type: ignore[arg-type]
            stack.extend(reversed([child for child in children(node)
                                   if isinstance(child, ast.stmt | ast.excepthandler
                                                 | ast.match_case)]))
        elif isinstance(node, ast.Module | ast.excepthandler | ast.match_case):
            stack.extend(reversed([child for child in children(node)
                                   if isinstance(child, ast.stmt)]))
