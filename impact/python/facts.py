"""Facts about one Python (rocKE) source file: defs, imports, builder params and signatures."""

# Maintainers: this module reads the bytes it is handed and nothing else; it must never touch git
# or the filesystem. Every failure to read a file becomes one parse-failure Fact.

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from impact.facts import INTERNAL_ERROR, Fact, content_fact, sorted_facts
from impact.kinds import FactKind
from impact.python.digest import TreeDigests, expression_digest
from impact.python.scaffold import (
    Source,
    dotted_name,
    extract_python,
    parameters,
    positional_defaults,
    string_value,
    walk,
)

__all__ = ["INTERNAL_ERROR", "extract_python_facts", "module_name_for", "package_name_for"]

VALUE_LIMIT = 200

FUNCTION = FactKind.FUNCTION
CLASS = FactKind.CLASS
ASSIGNMENT = FactKind.ASSIGNMENT
IMPORT = FactKind.IMPORT
RE_EXPORT = FactKind.RE_EXPORT
PARAM = FactKind.PARAM
PARAM_UNREAD = FactKind.PARAM_UNREAD
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
    A file that is not UTF-8 or that `ast` cannot parse yields exactly one parse-failure Fact.
    """

    def extract(parsed: Source) -> list[Fact]:
        extractor = _Extractor(path, parsed, package, tuple(dsl_modules))
        facts = extractor.run()
        facts.append(content_fact(path, extractor.digests.module()))
        return sorted_facts(facts)

    return extract_python(path, source, extract)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_IMPORTS = (ast.Import, ast.ImportFrom)


@dataclass
class _FunctionState:
    """What one function's own body (nested defs excluded) holds, gathered in one walk."""

    name: str
    calls: list[tuple[ast.Call, str]] = field(default_factory=list)
    bound: dict[str, ast.Call] = field(default_factory=dict)
    reads: set[str] = field(default_factory=set)
    # Calls written inside a comprehension or generator (run once per element).
    repeated: set[int] = field(default_factory=set)
    # The function's own parameter names (a `b.param` on one declares on a caller's builder).
    arguments: set[str] = field(default_factory=set)
    # How many times each local name is stored to (a type read through a local is read only
    # when the local is bound once, to a call).
    stores: dict[str, int] = field(default_factory=dict)
    # A `b.param(name, ...)` that is the one declaration of a `for name in ("a", "b"):`
    # loop over literal strings: the names it declares, in order, and the guard outside it.
    unrolled: dict[int, tuple[list[str], str]] = field(default_factory=dict)


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _and(guard: str, cond: str) -> str:
    return cond if guard == "always" else f"{guard} and {cond}"


def _branches(node: ast.AST, guard: str,
              text: Callable[[ast.AST], str]) -> list[tuple[ast.AST, str]] | None:
    """The parts of a conditional expression with the guard each runs under (`x if c else
    y`: c always, x under c, y under not c; `a and b`: b under a; `a or b`: b under not a),
    so a `b.param` written in one is as conditional as under an `if`; None for any other
    node."""
    if isinstance(node, ast.IfExp):
        cond = text(node.test)
        return [(node.test, guard), (node.body, _and(guard, cond)),
                (node.orelse, _and(guard, f"not ({cond})"))]
    if isinstance(node, ast.BoolOp):
        out, held = [(node.values[0], guard)], guard
        for before, value in zip(node.values, node.values[1:], strict=False):
            cond = text(before)
            held = _and(held, cond if isinstance(node.op, ast.And) else f"not ({cond})")
            out.append((value, held))
        return out
    return None


def _collect(node: ast.AST, state: _FunctionState, guard: str,
             text: Callable[[ast.AST], str] | None = None) -> None:
    """Calls, call-bound names and reads of one piece of a function, not entering nested
    defs or classes. A read is a name or dotted name loaded, and (as libcst's expression
    contexts counted them) a name an import or a `global`/`nonlocal` statement spells.
    With `text` (a node's source), a call inside a conditional expression carries the
    condition it runs under in its guard."""
    stack = [(node, False, guard)]
    while stack:
        current, repeated, guard = stack.pop()
        if isinstance(current, _SCOPES):
            continue
        repeated = repeated or isinstance(current, _COMPREHENSIONS)
        parts = _branches(current, guard, text) if text is not None else None
        if parts is not None:
            stack.extend((part, repeated, held) for part, held in reversed(parts))
            continue
        if isinstance(current, ast.Call):
            state.calls.append((current, guard))
            if repeated:
                state.repeated.add(id(current))
        elif isinstance(current, ast.Assign) and isinstance(current.value, ast.Call):
            for target in current.targets:
                if isinstance(target, ast.Name):
                    state.bound[target.id] = current.value
        elif isinstance(current, ast.Name):
            if isinstance(current.ctx, ast.Load):
                state.reads.add(current.id)
            else:
                state.stores[current.id] = state.stores.get(current.id, 0) + 1
            continue
        elif isinstance(current, ast.Attribute):
            if isinstance(current.ctx, ast.Load):
                chain = dotted_name(current)
                if chain is not None:
                    state.reads.add(chain)
        elif isinstance(current, ast.Import):
            for alias in current.names:
                state.reads.update(_prefixes(alias.name))
        elif isinstance(current, ast.ImportFrom):
            if current.module:
                state.reads.update(_prefixes(current.module))
            state.reads.update(alias.name for alias in current.names if alias.name != "*")
        elif isinstance(current, (ast.Global, ast.Nonlocal)):
            state.reads.update(current.names)
        stack.extend((child, repeated, guard)
                     for child in reversed(list(ast.iter_child_nodes(current))))


def _prefixes(dotted: str) -> list[str]:
    parts = dotted.split(".")
    return [".".join(parts[:index]) for index in range(1, len(parts) + 1)]


def _join_guard(guard: list[str]) -> str:
    return " and ".join(guard) if guard else "always"


class _Extractor:
    def __init__(self, path: str, parsed: Source, package: str | None,
                 dsl_modules: tuple[str, ...]) -> None:
        self.path = path
        self.dsl_modules = dsl_modules
        self.source = parsed
        self.digests = TreeDigests(parsed.tree, parsed.text)
        self.package = package
        self.facts: list[Fact] = []

    # -- helpers -------------------------------------------------------------------------

    @staticmethod
    def line(node: Any) -> int:
        return int(node.lineno)

    @staticmethod
    def _flat(code: str) -> str:
        return " ".join(code.split()) if "\n" in code else code

    def text(self, node: ast.AST) -> str:
        return self._flat(self.source.code(node))

    def bare_text(self, node: ast.AST) -> str:
        """`text` without parentheses around the whole expression, which change nothing
        in argument position (`b.param("n", (ir.I32))`); a tuple or generator keeps its own."""
        if isinstance(node, (ast.Tuple, ast.GeneratorExp)):
            return self.text(node)
        return self._flat(self.source.bare(node))

    def arg_text(self, node: ast.AST) -> str:
        """`k=v`, `*v`, `**v` or `v` of a class base or keyword, without the comma."""
        if isinstance(node, ast.Starred):
            return f"*{self.text(node.value)}"
        if isinstance(node, ast.keyword):
            keyword = "**" if node.arg is None else f"{node.arg}="
            return f"{keyword}{self.text(node.value)}"
        return self.text(node)

    def opt_text(self, node: ast.AST | None) -> str | None:
        return None if node is None else self.text(node)

    # -- walking -------------------------------------------------------------------------

    def run(self) -> list[Fact]:
        self.block(self.source.tree.body, [], [], [], None)
        self.keyword_literals()
        return self.facts

    def keyword_literals(self) -> None:
        """A `keyword-literal` fact for each `name="text"` argument of any call, anywhere in
        the module (how a packer pins a backend: `compile_kernel(..., backend="python")`)."""
        for node in walk(self.source.tree):
            if not isinstance(node, ast.Call):
                continue
            for arg in node.keywords:
                value = string_value(arg.value) if arg.arg is not None else None
                if arg.arg is not None and value is not None:
                    self.facts.append(Fact(
                        KEYWORD_LITERAL, arg.arg, arg.lineno,
                        {"value": value, "call": dotted_name(node.func) or ""}))

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

    def scan(self, node: ast.AST | None, guard: list[str], func: _FunctionState | None) -> None:
        if node is not None and func is not None:
            _collect(node, func, _join_guard(guard), self.text)

    def suite(self, body: list[ast.stmt], qual, scope, guard, func) -> None:
        self.block(body, qual, scope, guard, func)

    def statement(self, stmt: ast.stmt, qual, scope, guard, func) -> None:
        if isinstance(stmt, _DEFS):
            self.function(stmt, qual, scope)
        elif isinstance(stmt, ast.ClassDef):
            self.klass(stmt, qual, scope)
        elif isinstance(stmt, ast.If):
            self.if_(stmt, qual, scope, guard, func, "if")
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                self.scan(item.context_expr, guard, func)
                self.scan(item.optional_vars, guard, func)
            header = "with " + ", ".join(self.with_items(stmt))
            self.suite(stmt.body, qual, [*scope, header], guard, func)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            self.try_(stmt, qual, scope, guard, func)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self.scan(stmt.iter, guard, func)
            self.scan(stmt.target, guard, func)
            if func is not None:
                self.unroll(stmt, guard, func)
            loop = f"{self.text(stmt.target)} in {self.text(stmt.iter)}"
            self.suite(stmt.body, qual, [*scope, f"for {loop}"], [*guard, f"loop: {loop}"], func)
            if stmt.orelse:
                self.suite(stmt.orelse, qual, [*scope, f"else of for {loop}"], guard, func)
        elif isinstance(stmt, ast.While):
            self.scan(stmt.test, guard, func)
            cond = self.text(stmt.test)
            self.suite(stmt.body, qual, [*scope, f"while {cond}"], [*guard, f"loop: {cond}"], func)
            if stmt.orelse:
                self.suite(stmt.orelse, qual, [*scope, f"else of while {cond}"], guard, func)
        elif isinstance(stmt, ast.Match):
            self.scan(stmt.subject, guard, func)
            subject = self.text(stmt.subject)
            for case in stmt.cases:
                cond = f"match {subject}: case {self.text(case.pattern)}"
                self.suite(case.body, qual, [*scope, cond], [*guard, cond], func)
        else:
            self.small(stmt, qual, scope, guard, func)

    def unroll(self, stmt: ast.For | ast.AsyncFor, guard: list[str],
               func: _FunctionState) -> None:
        """A loop over a literal tuple or list of strings whose body declares exactly one
        argument, named by the loop variable, and can leave no element out (no `break`,
        `continue`, `return`, `raise`, no condition around the call, no `else`): the
        argument is declared once per string, in order. Anything else stays unread."""
        target, items = stmt.target, stmt.iter
        if not isinstance(target, ast.Name) or not isinstance(items, (ast.Tuple, ast.List)):
            return
        names = [string_value(item) for item in items.elts]
        if not names or any(n is None for n in names) or stmt.orelse:
            return
        inside = [n for body in stmt.body for n in walk(body)]
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Raise, ast.If,
                              ast.IfExp, ast.Try, ast.While, ast.For, ast.Match,
                              *_COMPREHENSIONS, *_SCOPES)) for n in inside):
            return
        calls = [n for n in inside if isinstance(n, ast.Call) and self.is_param_like(n)]
        if len(calls) != 1:
            return
        name_node, _type = self.param_args(calls[0])
        if isinstance(name_node, ast.Name) and name_node.id == target.id:
            func.unrolled[id(calls[0])] = ([str(n) for n in names], _join_guard(guard))

    def with_items(self, stmt: ast.With | ast.AsyncWith) -> list[str]:
        """Each item as libcst wrote it: what follows it up to the next item (its comma)
        belongs to it, so a trailing comma does too."""
        source = self.source
        spans = []
        for item in stmt.items:
            begin, end = source.span(item.context_expr)
            if item.optional_vars is not None:
                end = source.span(item.optional_vars)[1]
            spans.append((begin, end))
        out = []
        for index, (begin, end) in enumerate(spans):
            if index + 1 < len(spans):
                end = spans[index + 1][0]
            else:
                after = source.forward(end)
                if source.text[after] == ",":
                    end = after + 1
            out.append(self._flat(source.text[begin:end].strip()))
        return out

    def if_(self, stmt: ast.If, qual, scope, guard, func, keyword: str) -> None:
        self.scan(stmt.test, guard, func)
        cond = self.text(stmt.test)
        test = stmt.test
        always = isinstance(test, ast.Constant) and test.value is True
        taken = guard if always else [*guard, cond]
        self.suite(stmt.body, qual, [*scope, f"{keyword} {cond}"], taken, func)
        if not stmt.orelse:
            return
        negated = [*guard, f"not ({cond})"]
        other = [*scope, f"else of {keyword} {cond}"]
        first = stmt.orelse[0]
        if len(stmt.orelse) == 1 and isinstance(first, ast.If) \
                and self.source.text.startswith("elif", self.source.start(first)):
            self.if_(first, qual, other, negated, func, "elif")
        else:
            self.suite(stmt.orelse, qual, other, negated, func)

    def try_(self, stmt: ast.Try | ast.TryStar, qual, scope, guard, func) -> None:
        self.suite(stmt.body, qual, [*scope, "try"], guard, func)
        for handler in stmt.handlers:
            caught = "except" if handler.type is None else f"except {self.text(handler.type)}"
            self.scan(handler.type, guard, func)
            self.suite(handler.body, qual, [*scope, caught], [*guard, caught], func)
        if stmt.orelse:
            self.suite(stmt.orelse, qual, [*scope, "else of try"], guard, func)
        if stmt.finalbody:
            self.suite(stmt.finalbody, qual, [*scope, "finally"], guard, func)

    def small(self, small: ast.stmt, qual, scope, guard, func) -> None:
        self.scan(small, guard, func)
        if qual:
            # An import inside a function runs when the function does (the packer imports
            # rocke.helpers.compile that way): record it, bound to that function.
            if isinstance(small, _IMPORTS):
                owner = qual[:-1] if qual[-1] == "<locals>" else qual
                self.imports(small, function=".".join(owner))
            return
        if isinstance(small, _IMPORTS):
            self.imports(small)
        elif isinstance(small, ast.Assign):
            for target in small.targets:
                self.assignment(target, small.value)
        elif isinstance(small, (ast.AnnAssign, ast.AugAssign)):
            self.assignment(small.target, small.value)

    # -- module-level facts --------------------------------------------------------------

    def assignment(self, target: ast.expr, value: ast.expr | None) -> None:
        data: dict[str, Any] = {"value_digest": None, "value": None}
        if value is not None:
            data = {
                "value_digest": expression_digest(value),
                "value": self.source.code(value)[:VALUE_LIMIT],
            }
        self.facts.append(Fact(ASSIGNMENT, self.text(target), self.target_line(target), data))

    def target_line(self, target: ast.expr) -> int:
        """The line a target starts on, its parentheses left out (`ast` starts a written
        tuple at its `(`, libcst at its first element)."""
        begin = self.source.start(target)
        if isinstance(target, ast.Tuple) and self.source.text[begin] == "(":
            return self.source.line_of(self.source.forward(begin + 1))
        return self.line(target)
    def resolve(self, level: int, module: str | None) -> str:
        if level == 0:
            return module or ""
        parts = self.package.split(".") if self.package else []
        if self.package is None or level - 1 >= len(parts):
            return "." * level + (module or "")
        base = ".".join(parts[: len(parts) - (level - 1)])
        return f"{base}.{module}" if module else base

    def imports(self, node: ast.Import | ast.ImportFrom, function: str | None = None) -> None:
        line = self.line(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                dotted = alias.name
                asname = alias.asname
                data = {"module": dotted, "name": None, "alias": asname, "level": 0, "star": False,
                        "function": function}
                self.facts.append(Fact(IMPORT, asname or dotted, line, data))
            return
        level = node.level
        written = node.module
        module = self.resolve(level, written)
        is_init = posixpath.basename(self.path) == "__init__.py"
        from_sub = level == 1 and written is not None
        if self.package and written and level == 0:
            from_sub = written.startswith(self.package + ".")
        if node.names and node.names[0].name == "*":
            data = {"module": module, "name": "*", "alias": None, "level": level, "star": True,
                    "function": function}
            self.facts.append(Fact(IMPORT, "*", line, data))
            return
        for alias in node.names:
            name = alias.name
            asname = alias.asname
            data = {"module": module, "name": name, "alias": asname, "level": level, "star": False,
                    "function": function}
            self.facts.append(Fact(IMPORT, asname or name, line, data))
            if is_init and from_sub and function is None:
                exported = {"module": module, "name": name}
                self.facts.append(Fact(RE_EXPORT, asname or name, line, exported))

    # -- defs ----------------------------------------------------------------------------

    def klass(self, node: ast.ClassDef, qual: list[str], scope: list[str]) -> None:
        name = ".".join([*qual, node.name])
        bases = [self.arg_text(arg) for arg in [*node.bases, *node.keywords]]
        data = {"bases": bases, "digest": self.digests.body(node)}
        self.facts.append(Fact(CLASS, name, self.line(node), data))
        self.suite(node.body, [*qual, node.name], [], [], None)

    def params(self, args: ast.arguments) -> list[dict[str, Any]]:
        return parameters(args, self.text)

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, qual: list[str],
                 scope: list[str]) -> None:
        name = ".".join([*qual, node.name])
        line = self.line(node)
        data = {
            "params": self.params(node.args),
            "digest": self.digests.body(node),
            "decorators": [self.text(dec) for dec in node.decorator_list],
            "scope": list(scope),
            "returns": self.opt_text(node.returns),
        }
        self.facts.append(Fact(FUNCTION, name, line, data))
        state = _FunctionState(name)
        state.arguments = {p["name"] for p in data["params"]}
        for default in positional_defaults(node.args):
            self.scan(default, [], state)
        self.suite(node.body, [*qual, node.name, "<locals>"], [], [], state)
        self.function_facts(state, line)

    def function_facts(self, state: _FunctionState, line: int) -> None:
        self.facts.append(Fact(READS, state.name, line, {"names": sorted(state.reads)}))
        calls = sorted(self.through_partials(state), key=lambda item: self.call_position(item[0]))
        params: list[tuple[ast.Call, str, str | None]] = []
        for call, guard in calls:
            if id(call) in state.repeated:
                continue
            if id(call) in state.unrolled:
                names, outer = state.unrolled[id(call)]
                params.extend((call, outer, name) for name in names)
            elif self.is_param_call(call):
                params.append((call, guard, None))
        for index, (call, guard, name) in enumerate(params):
            self.param_fact(state.name, index, call, guard, state, name)
        for call, _guard in calls:
            if not self.is_param_like(call) or (
                    id(call) in state.unrolled and id(call) not in state.repeated):
                continue
            assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
            passed_in = call.func.value.id in state.arguments
            if passed_in or id(call) in state.repeated or not self.is_param_call(call):
                self.facts.append(Fact(PARAM_UNREAD, state.name, self.line(call.func), {
                    "construct": self._flat(self.text(call))[:120],
                    "passed_in": passed_in,
                    "placed": self.is_param_call(call) and id(call) not in state.repeated}))
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

    _PARTIAL = frozenset({"partial", "functools.partial"})

    def through_partials(self, state: _FunctionState) -> list[tuple[ast.Call, str]]:
        """The function's calls, each call of a local bound once to
        `functools.partial(b.param, ...)` read as the `b.param` call it makes (the partial's
        arguments first, the call's keywords over the partial's). A local bound to such a
        partial more than once keeps its calls as they are, made unplaceable: each is a
        `b.param` whose name is not a literal, so it reads as a `param-unread` fact."""
        partials: dict[str, ast.Call] = {}
        for var, bound in state.bound.items():
            if (dotted_name(bound.func) in self._PARTIAL and bound.args
                    and isinstance(bound.args[0], ast.Attribute)
                    and bound.args[0].attr == "param"
                    and isinstance(bound.args[0].value, ast.Name)):
                partials[var] = bound
        if not partials:
            return list(state.calls)
        out = []
        for call, guard in state.calls:
            func = call.func
            partial = partials.get(func.id) if isinstance(func, ast.Name) else None
            if partial is None:
                out.append((call, guard))
                continue
            method = ast.copy_location(
                ast.Attribute(value=partial.args[0].value, attr="param", ctx=ast.Load()), func)
            if state.stores.get(func.id) == 1:
                keywords = {k.arg: k for k in partial.keywords if k.arg}
                keywords.update({k.arg: k for k in call.keywords if k.arg})
                spread = [k for k in (*partial.keywords, *call.keywords) if not k.arg]
                made = ast.Call(func=method, args=[*partial.args[1:], *call.args],
                                keywords=[*keywords.values(), *spread])
            else:  # rebound: which partial a call makes is not settled statically
                made = ast.Call(func=method, args=[ast.copy_location(
                    ast.Name(id=func.id, ctx=ast.Load()), func)], keywords=[])
            made = ast.copy_location(made, call)
            if id(call) in state.repeated:
                state.repeated.add(id(made))
            out.append((made, guard))
        return out

    def call_position(self, call: ast.Call) -> tuple[int, int]:
        func = call.func
        if isinstance(func, ast.Attribute):  # where the method's name is written
            end = self.source.end(func)
            begin = end - len(func.attr)
            return (self.source.line_of(begin), begin - self.source.starts[
                self.source.line_of(begin) - 1])
        start = self.source.start(call)
        return (call.lineno, start - self.source.starts[call.lineno - 1])

    @staticmethod
    def param_args(call: ast.Call) -> tuple[ast.expr | None, ast.expr | None]:
        """The name and type a `b.param(name, type, ...)` call passes, positionally or as
        `name=`/`type=` keywords (Python binds both the same way)."""
        positional = [arg for arg in call.args if not isinstance(arg, ast.Starred)]
        keyword = {arg.arg: arg.value for arg in call.keywords if arg.arg}
        slots: list[ast.expr | None] = []
        for i, name in enumerate(("name", "type")):
            slots.append(positional[i] if i < len(positional) else keyword.get(name))
        return slots[0], slots[1]

    @staticmethod
    def is_param_like(call: ast.Call) -> bool:
        """`<name>.param(...)` with arguments: how a builder declares a kernel argument."""
        func = call.func
        return (isinstance(func, ast.Attribute) and func.attr == "param"
                and isinstance(func.value, ast.Name) and bool(call.args or call.keywords))

    @classmethod
    def is_param_call(cls, call: ast.Call) -> bool:
        if not cls.is_param_like(call):
            return False
        name, _type = cls.param_args(call)
        return name is not None and string_value(name) is not None

    def calls_name(self, node: ast.AST, name: str) -> bool:
        """Whether `node` calls `name`, spelled bare or qualified by a DSL module."""
        if not isinstance(node, ast.Call):
            return False
        called = dotted_name(node.func)
        return called == name or any(called == f"{module}.{name}" for module in self.dsl_modules)

    def on_root(self, call: ast.Call, bound: set[str], ctor: str,
                methods: tuple[str, ...]) -> bool:
        if not isinstance(call.func, ast.Attribute) or call.func.attr not in methods:
            return False
        # Down the receiver chain `ctor().a().b()` or `var.a().b()`; a qualified
        # `dsl.ir.SignatureBuilder()` is itself a call on an attribute, so stop at it.
        node: ast.expr = call.func.value
        while isinstance(node, ast.Call):
            if self.calls_name(node, ctor):
                return True
            if not isinstance(node.func, ast.Attribute):
                return False
            node = node.func.value
        return isinstance(node, ast.Name) and node.id in bound

    @staticmethod
    def positional(call: ast.Call) -> list[ast.expr]:
        return [arg for arg in call.args if not isinstance(arg, ast.Starred)]

    def param_fact(self, function: str, index: int, call: ast.Call, guard: str,
                   state: _FunctionState | None = None, unrolled: str | None = None) -> None:
        name_node, type_node = self.param_args(call)
        assert name_node is not None
        if (state is not None and isinstance(type_node, ast.Name)
                and type_node.id not in state.arguments
                and state.stores.get(type_node.id) == 1 and type_node.id in state.bound):
            # `ptr = ir.PtrType(elem)` once, then `b.param("x", ptr)`: the call is the type.
            type_node = state.bound[type_node.id]
        param = unrolled if unrolled is not None else string_value(name_node)
        attrs = {arg.arg: self.bare_text(arg.value)
                 for arg in call.keywords if arg.arg and arg.arg not in ("name", "type")}
        data = {
            "function": function,
            "index": index,
            "param": param,
            "type": None if type_node is None else self.bare_text(type_node),
            "attrs": attrs,
            "guard": guard,
        }
        self.facts.append(Fact(PARAM, f"{function}:{param}", self.line(call.func), data))

    def signature_entry(self, call: ast.Call, guard: str) -> dict[str, Any]:
        assert isinstance(call.func, ast.Attribute)
        args = self.positional(call)
        name = None
        if args:
            name = string_value(args[0]) or self.text(args[0])
        return {
            "method": call.func.attr,
            "name": name,
            "type": self.opt_text(args[1]) if len(args) > 1 else None,
            "guard": guard,
        }

    def listed_kernels(self, call: ast.Call, guard: str) -> list[dict[str, Any]]:
        out = []
        for arg in self.positional(call):
            if isinstance(arg, (ast.List, ast.Tuple)):
                for element in arg.elts:
                    value = element.value if isinstance(element, ast.Starred) else element
                    out.append({"name": None, "kernel": self.text(value), "guard": guard})
        return out

    def added_kernel(self, call: ast.Call, guard: str) -> dict[str, Any]:
        args = self.positional(call)
        name = (string_value(args[0]) or self.text(args[0])) if args else None
        kernel = self.text(args[-1]) if len(args) > 1 else None
        return {"name": name, "kernel": kernel, "guard": guard}
