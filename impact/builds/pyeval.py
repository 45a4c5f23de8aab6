"""A small abstract interpreter of build scripts: what each name of a setup.py may hold.

Maintainers: walks an `ast` tree and never runs it (no import, no call, no file read).
Values are may-sets (`values.py`): both arms of a condition it cannot settle are walked
and merged, a loop binds its target to every member, a comprehension is enumerated, a
call of a function the script defines is walked with its arguments (and a list it
mutates is written back), and `os.path`, `pathlib`, `glob`, `itertools.product`,
`os.getenv` (its default) and string methods are applied to the atoms. Anything else is
a gap carrying its line and text. Each extension-module constructor call is handed to
`on_extension` with its arguments evaluated where it stands. Functions the script defines
but never calls itself (build hooks it monkeypatches in) are walked at the end with
unknown parameters, so the flags they hold are seen (`hook_values`); those it installs as
another module's attribute are its build hooks (`hooks`).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from impact.builds.library import (
    BUILTINS,
    CALLS,
    MUTATORS,
    PATH_ATTRIBUTES,
    STRING_METHODS,
    compare_atoms,
    join,
    refuse,
)
from impact.builds.values import (
    EMPTY,
    MAX_ATOMS,
    NONE,
    Built,
    Func,
    Gap,
    GlobPattern,
    Ref,
    Val,
    bounded,
    merge_envs,
    product,
    truth,
    union,
)

ROOT = "/__repository__"
"""Where the evaluator places the repository: `__file__` is `ROOT/<path of the script>`,
so `os.path.dirname(os.path.abspath(__file__))` and its parents stay inside it."""
EXTENSION_CLASSES = frozenset({"CUDAExtension", "CppExtension", "Extension", "HIPExtension",
                               "Pybind11Extension", "SYCLExtension"})
ARCH_HINTS = ("arch=", "offload-arch", "amdgpu-target", "gpu-architecture", "code=sm_")
_BUDGET = 400_000
_DEPTH = 6
Env = dict[str, Val]
OnExtension = Callable[[ast.Call, dict[str, Val], int], None]


def _text(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:
        return type(node).__name__


class Evaluator:
    """One walk of one script. `folder` is the script's folder in the repository (the
    working folder its relative paths are read from)."""

    def __init__(self, module: ast.Module, path: str, on_extension: OnExtension) -> None:
        self.module = module
        self.path = path
        self.cwd = posixpath.join(ROOT, posixpath.dirname(path)).rstrip("/")
        self.on_extension = on_extension
        self.env: Env = {}
        self.steps = 0
        self.depth = 0
        self.walked: set[int] = set()
        self.returns: list[list[Val]] = []
        self.hook_values: list[Val] = []
        self.env_archs: list[Val] = []
        self._fstrings: dict[int, tuple[Any, ...]] = {}  # each f-string's parts, read once
        # Functions the script installs into another module (`cpp_extension._write_ninja_file
        # = _write_ninja_file`): build hooks every module is compiled through.
        self.hooks: list[ast.FunctionDef | ast.AsyncFunctionDef] = []

    # --- statements -------------------------------------------------------------------
    def run(self) -> None:
        """Walk the module, then every function it never called."""
        self.env = self.block(self.module.body, {"__file__": Val.of(f"{ROOT}/{self.path}"),
                                                 "__name__": Val.of("__main__", "setup")})
        for node in ast.walk(self.module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    id(node) not in self.walked:
                self.walked.add(id(node))
                params = {a.arg: Val.gap(node.lineno, a.arg) for a in _all_args(node.args)}
                with self._returns() as returned:
                    inner = self.block(node.body, {**self.env, **params})
                # What the hook itself holds: its returns and the names it binds or grows.
                self.hook_values.extend([*returned, *(v for k, v in inner.items()
                                                      if self.env.get(k) is not v)])

    def block(self, statements: list[ast.stmt], env: Env) -> Env:
        for statement in statements:
            env = self.statement(statement, env)
        return env

    def statement(self, node: ast.stmt, env: Env) -> Env:
        self.steps += 1
        if self.steps > _BUDGET:
            return env
        if isinstance(node, ast.Assign):
            value_node = node.value
            for target in node.targets:
                if isinstance(target, ast.Tuple | ast.List) and isinstance(
                        value_node, ast.Tuple | ast.List) and len(target.elts) == len(
                        value_node.elts):
                    for sub, part in zip(target.elts, value_node.elts, strict=True):
                        self.bind(sub, self.ev(part, env), env)
                else:
                    self.bind(target, self.ev(value_node, env), env)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self.bind(node.target, self.ev(node.value, env), env)
        elif isinstance(node, ast.AugAssign):
            value = self.ev(node.value, env)
            if isinstance(node.target, ast.Name):
                held = env.get(node.target.id, Val.gap(node.lineno, node.target.id))
                env[node.target.id] = self.binop(held, node.op, value, node.lineno)
            else:
                self.bind(node.target, value, env)
        elif isinstance(node, ast.Expr):
            self.ev(node.value, env)
        elif isinstance(node, ast.If):
            env = self.branches(self.ev(node.test, env), node.body, node.orelse, env)
        elif isinstance(node, ast.For | ast.AsyncFor):
            members = self.members(self.ev(node.iter, env), node.lineno)
            for _ in range(2):  # twice: what one pass adds, the next may read
                inner = dict(env)
                self.bind(node.target, members, inner)
                env = merge_envs(env, self.block(node.body, inner))
            env = self.block(node.orelse, env)
        elif isinstance(node, ast.While):
            self.ev(node.test, env)
            for _ in range(2):
                env = merge_envs(env, self.block(node.body, dict(env)))
            env = self.block(node.orelse, env)
        elif isinstance(node, ast.Try | ast.TryStar):
            tried = self.block(node.body, dict(env))
            ends = [tried] + [self.block(h.body, merge_envs(env, tried)) for h in node.handlers]
            env = ends[0]
            for end in ends[1:]:
                env = merge_envs(env, end)
            env = self.block(node.finalbody, self.block(node.orelse, env))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                self.ev(item.context_expr, env)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, Val.gap(node.lineno, "with"), env)
            env = self.block(node.body, env)
        elif isinstance(node, ast.Match):
            self.ev(node.subject, env)
            ends = [self.block(case.body, dict(env)) for case in node.cases]
            for end in ends:
                env = merge_envs(env, end)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            env[node.name] = Val.of(Func(node))
        elif isinstance(node, ast.ClassDef):
            env[node.name] = Val.gap(node.lineno, node.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    env[alias.asname] = Val.of(Ref(alias.name))
                else:
                    top = alias.name.split(".")[0]
                    env[top] = Val.of(Ref(top))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    module = node.module or ""
                    env[alias.asname or alias.name] = Val.of(Ref(f"{module}.{alias.name}"))
        elif isinstance(node, ast.Return):
            if self.returns:
                self.returns[-1].append(self.ev(node.value, env) if node.value else NONE)
        elif isinstance(node, ast.Assert):
            self.ev(node.test, env)
        return env

    def branches(self, test: Val, body: list[ast.stmt], orelse: list[ast.stmt],
                 env: Env) -> Env:
        said = truth(test)
        if said is True:
            return self.block(body, env)
        if said is False:
            return self.block(orelse, env)
        return merge_envs(self.block(body, dict(env)), self.block(orelse, dict(env)))

    def bind(self, target: ast.expr, value: Val, env: Env) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for index, sub in enumerate(target.elts):
                parts = [a[index] for a in value.atoms
                         if isinstance(a, tuple) and len(a) == len(target.elts)]
                clean = len(parts) == len(value.atoms) and not isinstance(sub, ast.Starred)
                part = Val(frozenset(parts), value.gaps) if clean else Val.gap(
                    target.lineno, _text(target))
                self.bind(sub.value if isinstance(sub, ast.Starred) else sub, part, env)
        elif isinstance(target, ast.Attribute):
            self.hooks += [a.node for a in value.atoms
                           if isinstance(a, Func) and a.node not in self.hooks]
        elif isinstance(target, ast.Subscript) and _dotted(target.value, env) == "os.environ":
            # TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH set for the build: its archs.
            key = self.ev(target.slice, env)
            self.env_archs.append(Val(value.atoms, value.gaps, False) if any(
                isinstance(k, str) and "ARCH" in k for k in key.atoms) else EMPTY)

    # --- expressions ------------------------------------------------------------------
    def ev(self, node: ast.expr | None, env: Env) -> Val:
        if node is None:
            return NONE
        self.steps += 1
        if self.steps > _BUDGET:
            return Val.gap(getattr(node, "lineno", 0), "too long to evaluate")
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant):
            return Val.of(node.value)
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            return Val.of(Ref(node.id)) if node.id in BUILTINS else Val.gap(line, node.id)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return union(*(self.ev(e.value, env) if isinstance(e, ast.Starred) else
                           self.element(e, env) for e in node.elts), Val.of(seq=True),
                         line=line).as_seq()
        if isinstance(node, ast.Dict):
            values = [self.ev(v, env) for v in node.values]
            for key in node.keys:
                self.ev(key, env)
            return union(*values, Val.of(seq=True), line=line).as_seq()
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node, env)
        if isinstance(node, ast.FormattedValue):
            return self.formatted(node, env)
        if isinstance(node, ast.BinOp):
            return self.binop(self.ev(node.left, env), node.op, self.ev(node.right, env), line,
                              node)
        if isinstance(node, ast.BoolOp):
            return self.boolop(node, env)
        if isinstance(node, ast.UnaryOp):
            value = self.ev(node.operand, env)
            if isinstance(node.op, ast.Not):
                said = truth(value)
                return Val.of(True, False) if said is None else Val.of(not said)
            return product([value], lambda a: -a if isinstance(node.op, ast.USub) else a, line)
        if isinstance(node, ast.Compare):
            return self.compare(node, env)
        if isinstance(node, ast.IfExp):
            said = truth(self.ev(node.test, env))
            if said is not None:
                return self.ev(node.body if said else node.orelse, env)
            return union(self.ev(node.body, env), self.ev(node.orelse, env), line=line)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return self.comprehension(node.generators, [node.elt], env, line)
        if isinstance(node, ast.DictComp):
            return self.comprehension(node.generators, [node.key, node.value], env, line)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, env)
        if isinstance(node, ast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, ast.NamedExpr):
            value = self.ev(node.value, env)
            self.bind(node.target, value, env)
            return value
        if isinstance(node, ast.Starred):
            return self.ev(node.value, env)
        return Val.gap(line, _text(node))

    def element(self, node: ast.expr, env: Env) -> Val:
        """A member of a list: a tuple written inside one is one member (a pair of
        `define_macros`, a row of a table a loop unpacks), not its items."""
        if isinstance(node, ast.Tuple) and not any(isinstance(e, ast.Starred)
                                                   for e in node.elts):
            return product([self.ev(e, env) for e in node.elts], lambda *a: a, node.lineno)
        return self.ev(node, env)

    def fstring(self, node: ast.JoinedStr, env: Env) -> Val:
        # A placeholder written twice holds one value: `compute_{n},code=compute_{n}`.
        shape = self._fstrings.get(id(node))
        if shape is None:
            keys = [ast.dump(v.value) if isinstance(v, ast.FormattedValue) else None
                    for v in node.values]
            firsts = {k: v.value for k, v in zip(keys, node.values, strict=True)  # type: ignore[attr-defined]
                      if k is not None}
            hinted = any(isinstance(v, ast.Constant) and isinstance(v.value, str)
                         and any(h in v.value for h in ARCH_HINTS) for v in node.values)
            shape = self._fstrings[id(node)] = (keys, sorted(firsts), firsts, hinted)
        keys, distinct, firsts, hinted = shape
        values = [self.ev(firsts[k], env) for k in distinct]
        pieces = [str(v.value) if isinstance(v, ast.Constant) else v for v in node.values]

        def assemble(*atoms: Any) -> str:
            chosen = dict(zip(distinct, atoms, strict=True))
            return "".join(p if isinstance(p, str) else self.render(p, chosen[k])
                           for p, k in zip(pieces, keys, strict=True))
        value = product(values, assemble, node.lineno)
        if value.gaps and hinted:
            value = value.with_gaps({Gap(node.lineno, _text(node)[:160], arch=True)})
        return value

    def formatted(self, node: ast.FormattedValue, env: Env) -> Val:
        return product([self.ev(node.value, env)], lambda a: self.render(node, a), node.lineno)

    @staticmethod
    def render(node: ast.FormattedValue, atom: Any) -> str:
        """One placeholder of an f-string filled with `atom` (its conversion and spec)."""
        if isinstance(atom, Ref | Func | Built | GlobPattern):
            raise TypeError(atom)
        spec = "".join(str(v.value) for v in node.format_spec.values  # type: ignore[attr-defined]
                       if isinstance(v, ast.Constant)) if node.format_spec else ""
        convert = {ord("r"): repr, ord("a"): ascii, ord("s"): str}.get(node.conversion)
        return format(convert(atom) if convert else atom, spec)

    def binop(self, left: Val, op: ast.operator, right: Val, line: int,
              node: ast.AST | None = None) -> Val:
        if isinstance(op, ast.Add):
            if left.seq or right.seq:
                return union(left, right, line=line).as_seq()
            value = product([left, right], lambda a, b: a + b, line)
            if value.gaps and node is not None and any(
                    isinstance(a, str) and any(h in a for h in ARCH_HINTS)
                    for a in left.atoms | right.atoms):
                value = value.with_gaps({Gap(line, _text(node), arch=True)})
            return value
        if isinstance(op, ast.Div):
            return product([left, right], join, line)
        if isinstance(op, ast.Mult):
            if left.seq or right.seq:
                return union(left, right, line=line).as_seq() if left.seq else right
            return product([left, right], lambda a, b: a * b if not (
                isinstance(a, str) and isinstance(b, int) and b > 64) else refuse(), line)
        if isinstance(op, ast.Mod):
            return product([left, right], lambda a, b: a % b, line)
        if isinstance(op, ast.Sub):
            return product([left, right], lambda a, b: a - b, line)
        if isinstance(op, ast.BitOr):
            return union(left, right, line=line)
        return Val.gap(line, type(op).__name__).with_gaps(left.gaps | right.gaps)

    def boolop(self, node: ast.BoolOp, env: Env) -> Val:
        """`a and b` / `a or b` as Python reads them: an operand whose truth is settled
        ends the chain or is skipped; one that is not may be the result."""
        results: list[Val] = []
        stops = isinstance(node.op, ast.Or)
        for at, operand in enumerate(node.values):
            value = self.ev(operand, env)
            said = truth(value)
            if at == len(node.values) - 1 or said is stops:
                results.append(value)
                break
            if said is None:
                results.append(value)
        return union(*results, line=node.lineno)

    def compare(self, node: ast.Compare, env: Env) -> Val:
        left = self.ev(node.left, env)
        outcomes: set[bool] = set()
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.ev(right_node, env)
            if left.gaps or right.gaps or not left.atoms or not (left.settled and
                                                                  right.settled):
                return Val.of(True, False)
            if isinstance(op, ast.In | ast.NotIn) and right.seq:
                found = {(a in right.atoms) for a in left.atoms}
                seen = {True, False} if True in found else {False}
                outcomes |= seen if isinstance(op, ast.In) else {not s for s in seen}
                left = right
                continue
            value = product([left, right], lambda a, b, op=op: compare_atoms(op, a, b), node.lineno)
            if value.gaps or not value.atoms:
                return Val.of(True, False)
            outcomes |= set(value.atoms)
            left = right
        return Val(frozenset(outcomes)) if outcomes else Val.of(True, False)

    def comprehension(self, generators: list[ast.comprehension], elements: list[ast.expr],
                      env: Env, line: int) -> Val:
        bindings: list[Env] = [dict(env)]
        gaps: set[Gap] = set()
        for gen in generators:
            grown: list[Env] = []
            for bound in bindings:
                members = self.members(self.ev(gen.iter, bound), line)
                gaps |= members.gaps
                # Each member, and once the unknown rest (so an element such as
                # f"--offload-arch={arch}" still says what it would have been).
                choices = [Val(frozenset({a}), frozenset(), False, members.settled)
                           for a in members.atoms]
                if members.gaps:
                    choices.append(Val(frozenset(), members.gaps))
                for choice in choices:
                    inner = dict(bound)
                    self.bind(gen.target, choice, inner)
                    if all(truth(self.ev(test, inner)) is not False for test in gen.ifs):
                        grown.append(inner)
                if len(grown) > MAX_ATOMS:
                    return Val.gap(line, "more values than impact follows").as_seq()
            bindings = grown
        values = [self.element(e, bound) for bound in bindings for e in elements]
        return union(*values, Val(frozenset(), frozenset(gaps), True), line=line).as_seq()

    def members(self, value: Val, line: int) -> Val:
        """What iterating `value` yields: a sequence's members, a string's characters are
        not followed (a gap), a number is no iterable."""
        if value.seq:
            return Val(value.atoms, value.gaps, settled=value.settled)
        if value.atoms:
            return Val(frozenset(), value.gaps | {Gap(line, "iterating a value that is not a "
                                                             "list")})
        return value

    def attribute(self, node: ast.Attribute, env: Env) -> Val:
        base = self.ev(node.value, env)
        refs = [a for a in base.atoms if isinstance(a, Ref)]
        if refs and len(refs) == len(base.atoms):
            return Val(frozenset(Ref(f"{r.dotted}.{node.attr}") for r in refs), base.gaps)
        paths = PATH_ATTRIBUTES.get(node.attr)
        if paths is not None and base.atoms and all(isinstance(a, str) for a in base.atoms):
            return product([base], paths, node.lineno)
        return Val.gap(node.lineno, _text(node)).with_gaps(base.gaps)

    def subscript(self, node: ast.Subscript, env: Env) -> Val:
        base = self.ev(node.value, env)
        index = self.ev(node.slice, env) if not isinstance(node.slice, ast.Slice) else None
        if base.seq:
            return Val(base.atoms, base.gaps, True) if index is None else Val(base.atoms,
                                                                            base.gaps)
        if index is not None and base.atoms and all(isinstance(a, str | tuple)
                                                    for a in base.atoms):
            return product([base, index], lambda a, i: a[i], node.lineno)
        return Val.gap(node.lineno, _text(node)).with_gaps(base.gaps)

    # --- calls ------------------------------------------------------------------------
    def call(self, node: ast.Call, env: Env) -> Val:
        line = node.lineno
        func = node.func
        receiver = func.value if isinstance(func, ast.Attribute) else None
        args = [self.ev(a, env) for a in node.args]
        kwargs = {k.arg: self.ev(k.value, env) for k in node.keywords if k.arg is not None}
        for k in node.keywords:
            if k.arg is None:
                self.ev(k.value, env)
        if _names_extension(func):
            return self.extension(node, args, kwargs)
        if isinstance(func, ast.Attribute) and isinstance(receiver, ast.Name) and \
                func.attr in MUTATORS and receiver.id in env and (
                    env[receiver.id].seq or not env[receiver.id].atoms):
            added = union(*args[-1:], line=line) if func.attr != "insert" else union(
                *args[1:], line=line)
            env[receiver.id] = union(env[receiver.id], self.members(added, line)
                                     if func.attr in ("extend", "update") else added,
                                     line=line).as_seq()
            return NONE
        callee = self.ev(func, env) if not isinstance(func, ast.Attribute) else None
        if isinstance(func, ast.Attribute):
            base = self.ev(func.value, env)
            refs = [a for a in base.atoms if isinstance(a, Ref)]
            if refs and len(refs) == len(base.atoms):
                callee = Val(frozenset(Ref(f"{r.dotted}.{func.attr}") for r in refs), base.gaps)
            else:
                return self.method(base, func.attr, args, kwargs, node)
        assert callee is not None
        funcs = [a for a in callee.atoms if isinstance(a, Func)]
        refs = [a for a in callee.atoms if isinstance(a, Ref)]
        if len(funcs) == len(callee.atoms) == 1 and not callee.gaps:
            return self.inline(funcs[0].node, node, args, kwargs, env)
        if refs and len(refs) == len(callee.atoms) and all(
                r.dotted.rsplit(".", 1)[-1] in EXTENSION_CLASSES for r in refs):
            return self.extension(node, args, kwargs)  # imported under another name
        if len(refs) == len(callee.atoms) == 1 and not callee.gaps:
            known = CALLS.get(refs[0].dotted)
            if known is not None:
                return known(self, args, kwargs, line)
        text = _text(node)
        return Val.gap(line, text, arch=any(h in text for h in ARCH_HINTS))

    def extension(self, node: ast.Call, args: list[Val], kwargs: dict[str, Val]) -> Val:
        """An extension-module constructor call: its arguments, by name, to `on_extension`."""
        named = dict(kwargs)
        for key, value in zip(("name", "sources"), args, strict=False):
            named.setdefault(key, value)
        self.on_extension(node, named, node.lineno)
        return Val.of(Built(node.lineno))

    def method(self, base: Val, name: str, args: list[Val], kwargs: dict[str, Val],
               node: ast.Call) -> Val:
        line = node.lineno
        if name in ("glob", "rglob") and base.atoms and args:
            return product([base, args[0]], lambda b, p: GlobPattern(
                self.absolute(join(b, ("**/" if name == "rglob" else "") + p)), True), line
                           ).as_seq()
        if name in ("resolve", "absolute") and base.atoms:
            return product([base], self.absolute, line)
        strings = bool(base.atoms) and all(isinstance(a, str) for a in base.atoms)
        if name in ("split", "rsplit", "splitlines") and strings:
            seps = args[0].atoms if args and name != "splitlines" else frozenset({None})
            parts = {part for s in base.atoms for sep in seps if sep is None or isinstance(
                sep, str) for part in getattr(s, name)(*(() if sep is None else (sep,)))}
            gaps = base.gaps | (args[0].gaps if args else frozenset())
            return bounded(Val(frozenset(parts), gaps, True, base.settled), line)
        apply = STRING_METHODS.get(name)
        if apply is not None and base.atoms and all(isinstance(a, str) for a in base.atoms):
            return product([base, *args], lambda s, *a: apply(s, *a), line)
        if name == "join" and base.atoms and args and not args[0].gaps and len(
                args[0].atoms) <= 1:
            return product([base, args[0]], lambda sep, a: str(a), line)
        text = _text(node)
        return Val.gap(line, text, arch=any(h in text for h in ARCH_HINTS)).with_gaps(
            base.gaps)

    def inline(self, func: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.Call,
               args: list[Val], kwargs: dict[str, Val], env: Env) -> Val:
        if self.depth >= _DEPTH:
            return Val.gap(node.lineno, _text(node))
        self.walked.add(id(func))
        params = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
        bound: Env = {}
        defaults = func.args.defaults
        for index, param in enumerate(params):
            default_at = index - (len(params) - len(defaults))
            if index < len(args):
                bound[param] = args[index]
            elif param in kwargs:
                bound[param] = kwargs[param]
            elif default_at >= 0:
                bound[param] = self.ev(defaults[default_at], env)
            else:
                bound[param] = Val.gap(node.lineno, param)
        for kw, default in zip(func.args.kwonlyargs, func.args.kw_defaults, strict=True):
            bound[kw.arg] = kwargs.get(kw.arg) or (self.ev(default, env) if default else
                                                   Val.gap(node.lineno, kw.arg))
        for extra in (func.args.vararg, func.args.kwarg):
            if extra is not None:
                bound[extra.arg] = Val.gap(node.lineno, extra.arg).as_seq()
        self.depth += 1
        try:
            with self._returns() as returned:
                inner = self.block(func.body, {**self.env, **env, **bound})
        finally:
            self.depth -= 1
        # A list the function grew through its parameter grows the caller's too.
        for index, arg in enumerate(node.args[:len(params)]):
            if isinstance(arg, ast.Name) and arg.id in env and env[arg.id].seq:
                after = inner.get(params[index])
                if after is not None and after is not args[index]:
                    env[arg.id] = union(env[arg.id], after, line=node.lineno).as_seq()
        return union(*returned, line=node.lineno) if returned else NONE

    @contextmanager
    def _returns(self) -> Iterator[list[Val]]:
        self.returns.append([])
        try:
            yield self.returns[-1]
        finally:
            self.returns.pop()

    def absolute(self, path: Any) -> str:
        text = str(path)
        return posixpath.normpath(text if text.startswith("/") else join(self.cwd, text))


def _names_extension(func: ast.expr) -> bool:
    """Whether a call's callee is spelled as an extension-module class, however imported
    (`CUDAExtension(...)`, `cpp_extension.CUDAExtension(...)`)."""
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in EXTENSION_CLASSES


def _all_args(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


def _dotted(node: ast.expr, env: Env) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        held = env.get(node.id)
        refs = [a for a in held.atoms if isinstance(a, Ref)] if held else []
        head = refs[0].dotted if len(refs) == 1 else node.id
        return ".".join([head, *reversed(parts)])
    return ""
