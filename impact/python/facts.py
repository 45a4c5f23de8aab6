"""Facts about one Python (rocKE) source file: defs, imports, builder params and signatures."""

# Maintainers: this module reads the bytes it is handed and nothing else; it must never touch git
# or the filesystem. Every failure to read a file becomes one parse-failure Fact.

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import (
    ExpressionContext,
    ExpressionContextProvider,
    MetadataWrapper,
    PositionProvider,
)

from impact.facts import INTERNAL_ERROR, Fact, content_fact, sorted_facts
from impact.kinds import FactKind
from impact.python.digest import body_digest, expression_digest, module_digest
from impact.python.scaffold import dotted_name, extract_python, parameters, string_value

__all__ = ["INTERNAL_ERROR", "extract_python_facts", "module_name_for", "package_name_for"]

VALUE_LIMIT = 200
_CONSTANTS = frozenset({"True", "False", "None"})

FUNCTION = FactKind.FUNCTION
CLASS = FactKind.CLASS
ASSIGNMENT = FactKind.ASSIGNMENT
IMPORT = FactKind.IMPORT
RE_EXPORT = FactKind.RE_EXPORT
PARAM = FactKind.PARAM
SIGNATURE_BUILDER = FactKind.SIGNATURE_BUILDER
KERNEL_MODULE = FactKind.KERNEL_MODULE
KEYWORD_LITERAL = FactKind.KEYWORD_LITERAL
READS = FactKind.READS


def module_name_for(path: str, roots: list[str]) -> str | None:
    """Dotted module name of `path` under the longest matching root, or None.

    `roots[i]/kernels/common/__init__.py` is `kernels.common`; a root of "" or "." is the
    repository root. Paths that are not `.py` files or hold non-identifier parts give None.
    """
    path = posixpath.normpath(path)
    best: str | None = None
    best_len = -1
    for root in roots:
        root = posixpath.normpath(root) if root not in ("", ".") else ""
        rel = path if not root else None
        if root and path.startswith(root + "/"):
            rel = path[len(root) + 1 :]
        if rel is None or not rel.endswith(".py") or len(root) <= best_len:
            continue
        parts = rel[: -len(".py")].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(part.isidentifier() for part in parts):
            best, best_len = ".".join(parts), len(root)
    return best


def package_name_for(path: str, roots: list[str]) -> str | None:
    """The package relative imports in `path` resolve against (Python's `__package__`)."""
    module = module_name_for(path, roots)
    if module is None or posixpath.basename(path) == "__init__.py":
        return module
    return module.rpartition(".")[0] or None


def extract_python_facts(path: str, source: bytes, *, package: str | None = None,
                         dsl_modules: Sequence[str] = ()) -> list[Fact]:
    """All facts of one Python file, sorted; never raises.

    `package` is the package the file lives in (see `package_name_for`); with it relative
    imports are recorded as absolute modules, without it as their relative spelling.
    `dsl_modules` are the modules whose `SignatureBuilder` and `KernelModule` may also be
    spelled fully qualified (`<module>.SignatureBuilder(...)`); the surface map names them.
    A file that is not UTF-8 or that libcst cannot parse yields exactly one parse-failure Fact.
    """

    def extract(wrapper: MetadataWrapper) -> list[Fact]:
        facts = _Extractor(path, wrapper, package, tuple(dsl_modules)).run()
        facts.append(content_fact(path, module_digest(wrapper.module)))
        return sorted_facts(facts)

    return extract_python(path, source, extract)


@dataclass
class _FunctionState:
    """What one function's own body (nested defs excluded) holds, gathered in one walk."""

    name: str
    calls: list[tuple[cst.Call, str]] = field(default_factory=list)
    bound: dict[str, cst.Call] = field(default_factory=dict)
    reads: set[str] = field(default_factory=set)


class _Collector(cst.CSTVisitor):
    """Calls, call-bound names and reads of one piece of a function, not entering nested defs."""

    def __init__(self, extractor: _Extractor, state: _FunctionState, guard: str) -> None:
        super().__init__()
        self.extractor = extractor
        self.state = state
        self.guard = guard

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        self.state.calls.append((node, self.guard))
        return True

    def visit_Assign(self, node: cst.Assign) -> bool:
        if isinstance(node.value, cst.Call):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.state.bound[target.target.value] = node.value
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # the keyword is not a read
        return False

    def visit_Name(self, node: cst.Name) -> bool:
        loaded = self.extractor.context.get(node) == ExpressionContext.LOAD
        if loaded and node.value not in _CONSTANTS:
            self.state.reads.add(node.value)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        chain = dotted_name(node)
        if chain is not None and self.extractor.context.get(node) == ExpressionContext.LOAD:
            self.state.reads.add(chain)
        node.value.visit(self)
        return False


class _KeywordLiterals(cst.CSTVisitor):
    """A `keyword-literal` fact for each `name="text"` argument of any call, anywhere in
    the module (how a packer pins a backend: `compile_kernel(..., backend="python")`)."""

    def __init__(self, extractor: _Extractor) -> None:
        super().__init__()
        self.extractor = extractor

    def visit_Call(self, node: cst.Call) -> bool:
        for arg in node.args:
            value = string_value(arg.value) if arg.keyword is not None else None
            if arg.keyword is not None and value is not None:
                self.extractor.facts.append(Fact(
                    KEYWORD_LITERAL, arg.keyword.value, self.extractor.positions[arg].start.line,
                    {"value": value, "call": dotted_name(node.func) or ""}))
        return True


def _join_guard(guard: list[str]) -> str:
    return " and ".join(guard) if guard else "always"


class _Extractor:
    def __init__(self, path: str, wrapper: MetadataWrapper, package: str | None,
                 dsl_modules: tuple[str, ...]) -> None:
        self.path = path
        self.dsl_modules = dsl_modules
        self.module = wrapper.module
        self.package = package
        self.positions = wrapper.resolve(PositionProvider)
        self.context = wrapper.resolve(ExpressionContextProvider)
        self.facts: list[Fact] = []

    # -- helpers -------------------------------------------------------------------------

    def line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line

    def text(self, node: cst.CSTNode) -> str:
        code = self.module.code_for_node(node).strip()
        return " ".join(code.split()) if "\n" in code else code

    def bare_text(self, node: cst.BaseExpression) -> str:
        """`text` without parentheses around the whole expression, which change nothing
        in argument position (`b.param("n", (ir.I32))`); a tuple or generator keeps its own."""
        if (getattr(node, "lpar", None) and not isinstance(node, (cst.Tuple, cst.GeneratorExp))):
            node = node.with_changes(lpar=[], rpar=[])  # type: ignore[attr-defined]
        return self.text(node)

    def arg_text(self, arg: cst.Arg) -> str:
        """`k=v`, `*v` or `v` without the separating comma."""
        star = arg.star if isinstance(arg.star, str) else ""
        keyword = f"{arg.keyword.value}=" if arg.keyword is not None else ""
        return f"{star}{keyword}{self.text(arg.value)}"

    def opt_text(self, node: cst.CSTNode | None) -> str | None:
        return None if node is None else self.text(node)

    # -- walking -------------------------------------------------------------------------

    def run(self) -> list[Fact]:
        self.block(self.module.body, [], [], [], None)
        self.module.visit(_KeywordLiterals(self))
        return self.facts

    def block(
        self,
        stmts: Any,
        qual: list[str],
        scope: list[str],
        guard: list[str],
        func: _FunctionState | None,
    ) -> None:
        for stmt in stmts:
            self.statement(stmt, qual, scope, guard, func)

    def scan(self, node: cst.CSTNode | None, guard: list[str], func: _FunctionState | None) -> None:
        if node is not None and func is not None:
            node.visit(_Collector(self, func, _join_guard(guard)))

    def suite(self, body: cst.BaseSuite, qual, scope, guard, func) -> None:
        if isinstance(body, cst.SimpleStatementSuite):
            for small in body.body:
                self.small(small, qual, scope, guard, func)
        else:
            self.block(body.body, qual, scope, guard, func)

    def statement(self, stmt: cst.CSTNode, qual, scope, guard, func) -> None:
        if isinstance(stmt, cst.FunctionDef):
            self.function(stmt, qual, scope)
        elif isinstance(stmt, cst.ClassDef):
            self.klass(stmt, qual, scope)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, qual, scope, guard, func)
        elif isinstance(stmt, cst.If):
            self.if_(stmt, qual, scope, guard, func, "if")
        elif isinstance(stmt, cst.With):
            self.scan_all(stmt.items, guard, func)
            header = "with " + ", ".join(self.text(item) for item in stmt.items)
            self.suite(stmt.body, qual, [*scope, header], guard, func)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.try_(stmt, qual, scope, guard, func)
        elif isinstance(stmt, cst.For):
            self.scan(stmt.iter, guard, func)
            self.scan(stmt.target, guard, func)
            loop = f"{self.text(stmt.target)} in {self.text(stmt.iter)}"
            self.suite(stmt.body, qual, [*scope, f"for {loop}"], [*guard, f"loop: {loop}"], func)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, qual, [*scope, f"else of for {loop}"], guard, func)
        elif isinstance(stmt, cst.While):
            self.scan(stmt.test, guard, func)
            cond = self.text(stmt.test)
            self.suite(stmt.body, qual, [*scope, f"while {cond}"], [*guard, f"loop: {cond}"], func)
            if stmt.orelse is not None:
                self.suite(stmt.orelse.body, qual, [*scope, f"else of while {cond}"], guard, func)
        elif isinstance(stmt, cst.Match):
            self.scan(stmt.subject, guard, func)
            subject = self.text(stmt.subject)
            for case in stmt.cases:
                cond = f"match {subject}: case {self.text(case.pattern)}"
                self.suite(case.body, qual, [*scope, cond], [*guard, cond], func)
        else:
            self.scan(stmt, guard, func)

    def scan_all(self, nodes: Any, guard: list[str], func: _FunctionState | None) -> None:
        for node in nodes:
            self.scan(node, guard, func)

    def if_(self, stmt: cst.If, qual, scope, guard, func, keyword: str) -> None:
        self.scan(stmt.test, guard, func)
        cond = self.text(stmt.test)
        always = isinstance(stmt.test, cst.Name) and stmt.test.value == "True"
        taken = guard if always else [*guard, cond]
        self.suite(stmt.body, qual, [*scope, f"{keyword} {cond}"], taken, func)
        if stmt.orelse is None:
            return
        negated = [*guard, f"not ({cond})"]
        other = [*scope, f"else of {keyword} {cond}"]
        if isinstance(stmt.orelse, cst.If):
            self.if_(stmt.orelse, qual, other, negated, func, "elif")
        else:
            self.suite(stmt.orelse.body, qual, other, negated, func)

    def try_(self, stmt: cst.Try | cst.TryStar, qual, scope, guard, func) -> None:
        self.suite(stmt.body, qual, [*scope, "try"], guard, func)
        for handler in stmt.handlers:
            caught = "except" if handler.type is None else f"except {self.text(handler.type)}"
            self.scan(handler.type, guard, func)
            self.suite(handler.body, qual, [*scope, caught], [*guard, caught], func)
        if stmt.orelse is not None:
            self.suite(stmt.orelse.body, qual, [*scope, "else of try"], guard, func)
        if stmt.finalbody is not None:
            self.suite(stmt.finalbody.body, qual, [*scope, "finally"], guard, func)

    def small(self, small: cst.CSTNode, qual, scope, guard, func) -> None:
        self.scan(small, guard, func)
        if qual:
            # An import inside a function runs when the function does (the packer imports
            # rocke.helpers.compile that way): record it, bound to that function.
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                owner = qual[:-1] if qual[-1] == "<locals>" else qual
                self.imports(small, function=".".join(owner))
            return
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            self.imports(small)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                self.assignment(target.target, small.value)
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            self.assignment(small.target, small.value)

    # -- module-level facts --------------------------------------------------------------

    def assignment(self, target: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        data: dict[str, Any] = {"value_digest": None, "value": None}
        if value is not None:
            data = {
                "value_digest": expression_digest(value),
                "value": self.module.code_for_node(value).strip()[:VALUE_LIMIT],
            }
        self.facts.append(Fact(ASSIGNMENT, self.text(target), self.line(target), data))

    def resolve(self, level: int, module: str | None) -> str:
        if level == 0:
            return module or ""
        parts = self.package.split(".") if self.package else []
        if self.package is None or level - 1 >= len(parts):
            return "." * level + (module or "")
        base = ".".join(parts[: len(parts) - (level - 1)])
        return f"{base}.{module}" if module else base

    def imports(self, node: cst.Import | cst.ImportFrom, function: str | None = None) -> None:
        line = self.line(node)
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = self.text(alias.name)
                asname = self.alias(alias)
                data = {"module": dotted, "name": None, "alias": asname, "level": 0, "star": False,
                        "function": function}
                self.facts.append(Fact(IMPORT, asname or dotted, line, data))
            return
        level = len(node.relative)
        written = None if node.module is None else self.text(node.module)
        module = self.resolve(level, written)
        is_init = posixpath.basename(self.path) == "__init__.py"
        from_sub = level == 1 and written is not None
        if self.package and written and level == 0:
            from_sub = written.startswith(self.package + ".")
        if isinstance(node.names, cst.ImportStar):
            data = {"module": module, "name": "*", "alias": None, "level": level, "star": True,
                    "function": function}
            self.facts.append(Fact(IMPORT, "*", line, data))
            return
        for alias in node.names:
            name = self.text(alias.name)
            asname = self.alias(alias)
            data = {"module": module, "name": name, "alias": asname, "level": level, "star": False,
                    "function": function}
            self.facts.append(Fact(IMPORT, asname or name, line, data))
            if is_init and from_sub and function is None:
                exported = {"module": module, "name": name}
                self.facts.append(Fact(RE_EXPORT, asname or name, line, exported))

    def alias(self, alias: cst.ImportAlias) -> str | None:
        return None if alias.asname is None else self.text(alias.asname.name)

    # -- defs ----------------------------------------------------------------------------

    def klass(self, node: cst.ClassDef, qual: list[str], scope: list[str]) -> None:
        name = ".".join([*qual, node.name.value])
        bases = [self.arg_text(arg) for arg in [*node.bases, *node.keywords]]
        data = {"bases": bases, "digest": body_digest(node)}
        self.facts.append(Fact(CLASS, name, self.line(node), data))
        self.suite(node.body, [*qual, node.name.value], [], [], None)

    def params(self, params: cst.Parameters) -> list[dict[str, Any]]:
        return parameters(params, self.text)

    def function(self, node: cst.FunctionDef, qual: list[str], scope: list[str]) -> None:
        name = ".".join([*qual, node.name.value])
        line = self.line(node)
        returns = None if node.returns is None else node.returns.annotation
        data = {
            "params": self.params(node.params),
            "digest": body_digest(node),
            "decorators": [self.text(dec.decorator) for dec in node.decorators],
            "scope": list(scope),
            "returns": self.opt_text(returns),
        }
        self.facts.append(Fact(FUNCTION, name, line, data))
        state = _FunctionState(name)
        for param in node.params.params:
            self.scan(param.default, [], state)
        self.suite(node.body, [*qual, node.name.value, "<locals>"], [], [], state)
        self.function_facts(state, line)

    def function_facts(self, state: _FunctionState, line: int) -> None:
        self.facts.append(Fact(READS, state.name, line, {"names": sorted(state.reads)}))
        calls = sorted(state.calls, key=lambda item: self.call_position(item[0]))
        params = [(call, guard) for call, guard in calls if self.is_param_call(call)]
        for index, (call, guard) in enumerate(params):
            self.param_fact(state.name, index, call, guard)
        bound = state.bound.items()
        builders = {var for var, call in bound if self.calls_name(call, "SignatureBuilder")}
        modules = {var for var, call in bound if self.calls_name(call, "KernelModule")}
        if any(self.calls_name(call, "SignatureBuilder") for call, _ in calls):
            entries = [self.signature_entry(call, guard) for call, guard in calls
                       if self.on_root(call, builders, "SignatureBuilder", ("ptr", "scalar"))]
            self.facts.append(Fact(SIGNATURE_BUILDER, state.name, line, {"entries": entries}))
        if any(self.calls_name(call, "KernelModule") for call, _ in calls):
            kernels: list[dict[str, Any]] = []
            for call, guard in calls:
                if self.calls_name(call, "KernelModule"):
                    kernels.extend(self.listed_kernels(call, guard))
                elif self.on_root(call, modules, "KernelModule", ("add",)):
                    kernels.append(self.added_kernel(call, guard))
            self.facts.append(Fact(KERNEL_MODULE, state.name, line, {"kernels": kernels}))

    def call_position(self, call: cst.Call) -> tuple[int, int]:
        anchor: cst.CSTNode = call.func.attr if isinstance(call.func, cst.Attribute) else call
        start = self.positions[anchor].start
        return (start.line, start.column)

    @staticmethod
    def param_args(call: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
        """The name and type a `b.param(name, type, ...)` call passes, positionally or as
        `name=`/`type=` keywords (Python binds both the same way)."""
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        keyword = {arg.keyword.value: arg.value for arg in call.args if arg.keyword}
        slots: list[cst.BaseExpression | None] = []
        for i, name in enumerate(("name", "type")):
            slots.append(positional[i] if i < len(positional) else keyword.get(name))
        return slots[0], slots[1]

    @classmethod
    def is_param_call(cls, call: cst.Call) -> bool:
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "param"
                and isinstance(func.value, cst.Name) and call.args):
            return False
        name, _type = cls.param_args(call)
        return name is not None and string_value(name) is not None

    def calls_name(self, node: cst.BaseExpression, name: str) -> bool:
        """Whether `node` calls `name`, spelled bare or qualified by a DSL module."""
        if not isinstance(node, cst.Call):
            return False
        called = dotted_name(node.func)
        return called == name or any(called == f"{module}.{name}" for module in self.dsl_modules)

    def on_root(self, call: cst.Call, bound: set[str], ctor: str,
                methods: tuple[str, ...]) -> bool:
        if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in methods:
            return False
        # Down the receiver chain `ctor().a().b()` or `var.a().b()`; a qualified
        # `dsl.ir.SignatureBuilder()` is itself a call on an attribute, so stop at it.
        node: cst.BaseExpression = call.func.value
        while isinstance(node, cst.Call):
            if self.calls_name(node, ctor):
                return True
            if not isinstance(node.func, cst.Attribute):
                return False
            node = node.func.value
        return isinstance(node, cst.Name) and node.value in bound

    def positional(self, call: cst.Call) -> list[cst.BaseExpression]:
        return [arg.value for arg in call.args if arg.keyword is None and not arg.star]

    def param_fact(self, function: str, index: int, call: cst.Call, guard: str) -> None:
        name_node, type_node = self.param_args(call)
        assert name_node is not None
        param = string_value(name_node)
        attrs = {arg.keyword.value: self.bare_text(arg.value)
                 for arg in call.args if arg.keyword and arg.keyword.value not in ("name", "type")}
        data = {
            "function": function,
            "index": index,
            "param": param,
            "type": None if type_node is None else self.bare_text(type_node),
            "attrs": attrs,
            "guard": guard,
        }
        self.facts.append(Fact(PARAM, f"{function}:{param}", self.line(call.func), data))

    def signature_entry(self, call: cst.Call, guard: str) -> dict[str, Any]:
        assert isinstance(call.func, cst.Attribute)
        args = self.positional(call)
        name = None
        if args:
            name = string_value(args[0]) or self.text(args[0])
        return {
            "method": call.func.attr.value,
            "name": name,
            "type": self.opt_text(args[1]) if len(args) > 1 else None,
            "guard": guard,
        }

    def listed_kernels(self, call: cst.Call, guard: str) -> list[dict[str, Any]]:
        out = []
        for arg in self.positional(call):
            if isinstance(arg, (cst.List, cst.Tuple)):
                for element in arg.elements:
                    out.append({"name": None, "kernel": self.text(element.value), "guard": guard})
        return out

    def added_kernel(self, call: cst.Call, guard: str) -> dict[str, Any]:
        args = self.positional(call)
        name = (string_value(args[0]) or self.text(args[0])) if args else None
        kernel = self.text(args[-1]) if len(args) > 1 else None
        return {"name": name, "kernel": kernel, "guard": guard}
