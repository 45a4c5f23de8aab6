"""Binding facts of one Python file: compile_ops stubs, wrappers, extension call sites, fake twins.

Maintainers: this module reads the bytes it is handed and nothing else; it must never touch
git or the filesystem. `extract_binding_python_facts` never raises: a file `ast` cannot
read yields exactly one parse-failure fact.
"""

from __future__ import annotations

import ast
import sys
from typing import Any

from impact.bindings.python_forwards import forward_facts
from impact.bindings.python_renames import rename_facts
from impact.facts import Fact, never_raises, sorted_facts
from impact.kinds import FactKind, ValueKind
from impact.python.digest import arguments_digest, module_digests
from impact.python.scaffold import (
    Source,
    children,
    decode_python,
    dotted_name,
    extract_python,
    parameters,
    parse_statements,
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
_PASSED_TEXT = 60  # characters of a passed value kept to name it in a finding


def _source_tail(item: ast.expr) -> str | None:
    """A source path as a decorator writes it, less any leading `{DIR}/`: the literal
    text after the last formatted value (None when nothing literal follows it)."""
    if isinstance(item, ast.Constant) and isinstance(item.value, str):
        return item.value.lstrip("./") or None
    if not isinstance(item, ast.JoinedStr) or not item.values:
        return None
    last = item.values[-1]
    if not (isinstance(last, ast.Constant) and isinstance(last.value, str)):
        return None
    return last.value.lstrip("/") or None


def literal_kind(value: ast.expr) -> ValueKind:
    """The kind of a literal a call passes (`-1` and `+2.0` included), else `expr`."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub | ast.UAdd):
        value = value.operand
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            return ValueKind.EXPR
    if not isinstance(value, ast.Constant):
        return ValueKind.EXPR
    literal = value.value
    if literal is None:
        return ValueKind.NONE
    for kind, types in ((ValueKind.BOOL, bool), (ValueKind.INT, int),
                        (ValueKind.FLOAT, float), (ValueKind.STR, str)):
        if isinstance(literal, types):
            return kind
    return ValueKind.EXPR


def extract_binding_python_facts(path: str, source: bytes, *,
                                 forwarders: tuple[str, ...] = (),
                                 keeps_signature: tuple[str, ...] = (),
                                 own_keywords: tuple[str, ...] = ()) -> list[Fact]:
    """`op-stub`, `op-wrapper`, `op-call`, `fake-twin`, `op-forwarded-call`, `op-callee`
    and `content` facts of a file, sorted. `forwarders`, `keeps_signature` and
    `own_keywords` are the surface map's `call_forwarders`, `signature_decorators` and
    `forwarder_keywords` (impact/bindings/python_forwards.py).

    Never raises; a file that is not UTF-8 or not Python yields its parse-failure fact,
    and beside it the facts of the module-level statements that parse on their own.
    """

    def extract(parsed: Source) -> list[Fact]:
        visitor = _Visitor(parsed)
        visitor.run()
        facts = visitor.facts + forward_facts(parsed.tree, visitor.modules, visitor.code,
                                              visitor.passed, forwarders, keeps_signature,
                                              own_keywords, parsed.nodes())
        # Docstrings, comments and layout left out; then also what the facts state.
        digest, beyond = module_digests(parsed.tree, visitor.blanked, parsed.text,
                                        parsed.nodes())
        facts.append(Fact(FactKind.CONTENT, path, 0,
                          {"digest": digest, "beyond_bindings": beyond,
                           # what tells a parameter renamed alike everywhere from an edit
                           "renames": rename_facts(parsed.tree, parsed.nodes())}))
        return sorted_facts(facts)

    facts = extract_python(path, source, extract)
    if len(facts) != 1 or facts[0].kind != FactKind.PARSE_FAILURE:
        return facts
    # A file that does not parse still says what its other statements state: the calls
    # and stubs of the functions the error is not in are read (the failure stays, so the
    # file is still not understood, and no content digest says it is).
    partial = _statements(path, source)
    if partial is None:
        return facts
    read = never_raises(path, "python", lambda: extract(partial))
    return sorted_facts([*facts, *(f for f in read if f.kind not in (
        FactKind.CONTENT, FactKind.PARSE_FAILURE))])


def _statements(path: str, source: bytes) -> Source | None:
    """The statements that parse of a file that does not, decoded as `compile()` decodes
    it; None for a file that does not decode (or declares a codec that is not read)."""
    text = decode_python(path, source)
    if isinstance(text, Fact):
        return None
    try:
        return parse_statements(text)
    except (RecursionError, MemoryError, ValueError):
        return None


class _Visitor:
    """One walk over the tree, in the order the file is written, after the names bound to
    modules are known (a call above its import, inside a function, still resolves)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.facts: list[Fact] = []
        self.modules: dict[str, list[str]] = {}
        self.functions: list[str] = []
        self.stub_names: set[str] = set()
        # Module-level functions (by name) and which of them call into an extension:
        # those are wrappers, and the bare calls of them in this file are calls of an op.
        self.top_level: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.wrappers: set[str] = set()
        self.reaches: dict[str, set[str]] = {}  # a wrapper -> the op names it calls into
        self.enclosing: dict[str, str] = {}  # a function's name -> its module-level function
        self.local_calls: list[tuple[ast.Call, str, str | None]] = []
        module_level = [n for n in source.tree.body if isinstance(n, _DEFS)]
        self.constants = _string_constants(source.tree)
        self.local_functions = {n.name for n in module_level}
        self.module_defs = {id(n) for n in module_level}
        self.tops: list[str | None] = []  # beside `functions`: the module-level one
        # The fields whose code the facts state, left out of the `beyond_bindings`
        # digest, by node id: a stub's parameter list, an op call's arguments.
        self.blanked: dict[int, frozenset[str]] = {}

    def run(self) -> None:
        tree = self.source.tree
        _bind(self, tree)
        # (node, whether leaving it): a def's name is the enclosing function of what is
        # written inside it, its decorators and defaults included.
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.functions.pop()
                self.tops.pop()
                continue
            if isinstance(node, _DEFS):
                for decorator in node.decorator_list:
                    self.decorator(node, decorator)
                # The module-level function it is, or sits in (None in a class: a
                # method is no wrapper, its callers reach it through an object).
                top = node.name if id(node) in self.module_defs else (
                    self.tops[-1] if self.tops else None)
                if top == node.name and node.name not in self.top_level:
                    self.top_level[node.name] = node
                if top is not None:
                    self.enclosing.setdefault(node.name, top)
                self.functions.append(node.name)
                self.tops.append(top)
                stack.append((node, True))
            elif isinstance(node, ast.Call):
                self.call(node)
            stack.extend((child, False) for child in reversed(children(node)))
        self.wrapper_facts()

    def wrapper_facts(self) -> None:
        """A module-level function that calls into an extension is an op wrapper (flash-
        attention's `_flash_attn_forward`): its parameter list is a layer its callers
        bind to, and its bare calls in this file are calls of it."""
        # A function that calls a wrapper of this file (or a stub) wraps the extension too.
        grew = True
        while grew:
            grew = False
            for _, op, function in self.local_calls:
                top = self.enclosing.get(function) if function else None
                if top and (op in self.wrappers or op in self.stub_names):
                    reached = self.reaches.get(op, set()) | ({op} if op in self.stub_names
                                                              else set())
                    if top not in self.wrappers or not reached <= self.reaches.get(top, set()):
                        self.wrappers.add(top)
                        self.reaches.setdefault(top, set()).update(reached)
                        grew = True
        for name in sorted(self.wrappers - self.stub_names):
            func = self.top_level[name]
            line = self.line(func)
            self.facts.append(Fact(FactKind.OP_WRAPPER, name, line, {
                "params": self.params(func.args), "line": line,
                # the names it calls into, through the extension or the file's own
                # wrappers and stubs: a wrapper is an op's only where one is bound
                "reaches": sorted(self.reaches.get(name, set()))}))
        for node, op, function in self.local_calls:
            if op in self.wrappers and op not in self.stub_names:
                self.record_call(node, op, ["."], function)
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

    def string(self, node: ast.AST | None) -> str | None:
        """A str literal, or a module-level name bound once to one (`@compile_ops(MD_NAME)`
        with `MD_NAME = "module_x"` names the module `module_x`, as the literal does)."""
        if isinstance(node, ast.Name):
            return self.constants.get(node.id)
        return string_value(node)

    def stub(self, func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> None:
        self.blanked[id(func)] = frozenset({"args"})
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        keywords = {a.arg: a.value for a in call.keywords if a.arg is not None}
        module = self.string(positional[0]) if positional else self.string(
            keywords.get("md_name"))
        fc_name = self.string(keywords.get("fc_name"))
        # aiter's first era (`ater`, 2024) names the stub's own sources in its decorator
        # (`srcs=[f"{ATER_CSRC_DIR}/py_itfs_ck/norm_pybind.cu", ...]`): the module's build.
        srcs = keywords.get("srcs")
        sources = [tail for item in (srcs.elts if isinstance(srcs, ast.List | ast.Tuple)
                                     else []) if (tail := _source_tail(item))]
        ffi_type = string_value(keywords.get("ffi_type"))
        # aiter's `develop=True`: the wrapper hands C++ `aiter_tensor_t`s for tensors
        # (False when not given; None when not a literal, so nothing is concluded).
        develop_node = keywords.get("develop")
        develop = False if develop_node is None else (
            develop_node.value if isinstance(develop_node, ast.Constant)
            and isinstance(develop_node.value, bool) else None)
        line = self.line(func)
        self.facts.append(Fact(FactKind.OP_STUB, func.name, line, {
            "module": module,
            "fc_name": fc_name,
            "ffi_type": ffi_type,
            "develop": develop,
            "symbol": fc_name or func.name,
            "sources": sources,
            "params": self.params(func.args),
            "line": line,
        }))

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
            if receivers == ["."]:
                self.local_calls.append(
                    (node, op, self.functions[-1] if self.functions else None))
            if not receivers:
                if op in self.local_functions:  # a wrapper's, once the walk knows them
                    self.local_calls.append(
                        (node, op, self.functions[-1] if self.functions else None))
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
        if self.tops and self.tops[-1] is not None and any(r != "." for r in receivers):
            self.wrappers.add(self.tops[-1])
            self.reaches.setdefault(self.tops[-1], set()).add(op)
        self.record_call(node, op, receivers, self.functions[-1] if self.functions else None)

    def record_call(self, node: ast.Call, op: str, receivers: list[str],
                    function: str | None) -> None:
        self.blanked[id(node)] = frozenset({"args", "keywords"})
        positional = -1 if any(isinstance(a, ast.Starred) for a in node.args) \
            else len(node.args)
        keywords = sorted("**" if k.arg is None else k.arg for k in node.keywords)
        data: dict[str, Any] = {
            "receiver": receivers[0],
            "function": function,
            "positional": positional,
            "keywords": keywords,
            # What the call passes, layout-blind: a call whose arguments changed is a copy
            # the change rewrote.
            "arguments": arguments_digest(node),
            # Each value as written and its kind, so a binding can say which parameter it
            # lands on at each revision and whether that parameter takes its kind.
            "passed": [self.passed(a) for a in node.args if not isinstance(a, ast.Starred)],
            "passed_keywords": {k.arg: self.passed(k.value) for k in node.keywords
                                if k.arg is not None},
        }
        if len(receivers) > 1:
            data["receivers"] = sorted(receivers)
        self.facts.append(Fact(FactKind.OP_CALL, op, self.line(node), data))

    def passed(self, value: ast.expr) -> dict[str, str]:
        """A passed value: its code, layout-blind and cut short, and its kind (`none`,
        `bool`, `int`, `float`, `str` for a literal, else `expr`)."""
        # A name or a dotted name (most values) is its own text; anything else is read
        # from the source as written.
        text = dotted_name(value) if isinstance(value, ast.Name | ast.Attribute) else None
        if text is None:
            # Layout folded, parentheses around the whole value left out (they are
            # layout too), so the text as written serves.
            text = " ".join(self.source.bare(value).split())
        return {"text": text if len(text) <= _PASSED_TEXT else text[:_PASSED_TEXT - 1] + "…",
                "kind": str(literal_kind(value))}

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


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """The module-level names bound exactly once in the file, to a str literal, at module
    level, and never assigned elsewhere in it (a name bound twice, or inside a function or
    by a loop or `global`, names no one value: it stays unread)."""
    found: dict[str, str] = {}
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
            targets = [node.target]
        elif isinstance(node, ast.Global):
            for name in node.names:
                bound[name] = bound.get(name, 0) + 2
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound[name.id] = bound.get(name.id, 0) + 1
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            value = string_value(node.value)
            name = node.targets[0].id
            if value is not None and bound.get(name) == 1:
                found[name] = value
    return found


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
