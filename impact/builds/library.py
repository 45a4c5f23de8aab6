"""What the build-script evaluator (`pyeval.py`) knows of Python's own library: the calls,
string methods and path attributes it applies to the atoms of a value.

Maintainers: each entry takes the evaluator (for the script's working folder and for what
iterating a value yields), the evaluated positional and keyword arguments, and the line;
it returns a value, never raises, and reads nothing outside the script. A call absent
here is a gap where it stands.
"""

from __future__ import annotations

import ast
import itertools
import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from impact.builds.values import MAX_ATOMS, NONE, GlobPattern, Val, bounded, product, truth, union

if TYPE_CHECKING:
    from impact.builds.pyeval import Evaluator

Call = Callable[["Evaluator", list[Val], dict[str, Val], int], Val]


def join(*parts: Any) -> str:
    return posixpath.join(*(str(p) for p in parts))


def seq_of(value: Val) -> Val:
    return value.as_seq()


def _getenv(ev: Evaluator, args: list[Val], kwargs: dict[str, Val], line: int) -> Val:
    """The default a build script gives an environment variable is what it names (the
    variable may override it; impact reads the script as its authors ship it)."""
    default = args[1] if len(args) > 1 else kwargs.get("default", NONE)
    return default.unsettled()


def _glob(ev: Evaluator, args: list[Val], kwargs: dict[str, Val], line: int) -> Val:
    recursive = truth(kwargs.get("recursive", Val.of(False))) is not False
    root = kwargs.get("root_dir")
    pattern = args[0] if args else Val.gap(line, "glob()")
    parts = [pattern] if root is None else [root, pattern]
    return product(parts, lambda *p: GlobPattern(ev.absolute(join(*p)), recursive), line
                   ).as_seq()


def _product(ev: Evaluator, args: list[Val], kwargs: dict[str, Val], line: int) -> Val:
    members = [ev.members(a, line) for a in args]
    size = 1
    for m in members:
        size *= max(1, len(m.atoms))
    gaps = frozenset().union(*(m.gaps for m in members))
    if size > MAX_ATOMS:
        return Val.gap(line, "more values than impact follows").as_seq()
    return Val(frozenset(itertools.product(*(m.atoms for m in members))), gaps, True)


def _range(ev: Evaluator, args: list[Val], kwargs: dict[str, Val], line: int) -> Val:
    ends = [a.atoms for a in args]
    if not args or any(len(e) != 1 or not isinstance(next(iter(e)), int) for e in ends) or \
            any(a.gaps for a in args):
        return Val.gap(line, "range()").as_seq()
    numbers = range(*(next(iter(e)) for e in ends))
    return bounded(Val(frozenset(numbers), frozenset(), True), line)


def _each(apply: Callable[..., Any]) -> Call:
    def call(ev: Evaluator, args: list[Val], kwargs: dict[str, Val], line: int) -> Val:
        return product(args or [Val.gap(line, "()")], apply, line)
    return call


def _path_call(ev: Evaluator, args: list[Val], kwargs: dict[str, Val], line: int) -> Val:
    return product(args, join, line) if args else Val.of(ev.cwd)


CALLS: dict[str, Call] = {
    "os.path.join": lambda ev, a, k, line: product(a, join, line),
    "os.path.dirname": _each(posixpath.dirname),
    "os.path.basename": _each(posixpath.basename),
    "os.path.normpath": _each(posixpath.normpath),
    "os.path.expanduser": _each(lambda p: p),
    "os.path.abspath": lambda ev, a, k, line: product(a, ev.absolute, line),
    "os.path.realpath": lambda ev, a, k, line: product(a, ev.absolute, line),
    "os.getcwd": lambda ev, a, k, line: Val.of(ev.cwd),
    "os.getenv": _getenv,
    "os.environ.get": _getenv,
    "glob.glob": _glob,
    "glob.iglob": _glob,
    "pathlib.Path": _path_call,
    "pathlib.PurePath": _path_call,
    "pathlib.PosixPath": _path_call,
    "str": _each(str),
    "list": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a))),
    "tuple": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a))),
    "set": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a))),
    "frozenset": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a))),
    "sorted": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a[:1]))),
    "reversed": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a[:1]))),
    "max": lambda ev, a, k, line: union(*(ev.members(x, line) if x.seq else x for x in a)),
    "min": lambda ev, a, k, line: union(*(ev.members(x, line) if x.seq else x for x in a)),
    "int": _each(int),
    "itertools.product": _product,
    "itertools.chain": lambda ev, a, k, line: seq_of(union(*(ev.members(x, line) for x in a))),
    "range": _range,
}
BUILTINS = frozenset({"str", "list", "tuple", "set", "frozenset", "sorted", "reversed", "max",
                       "min", "int", "range"})
MUTATORS = frozenset({"append", "extend", "insert", "add", "update"})
STRING_METHODS: dict[str, Callable[..., Any]] = {
    name: getattr(str, name) for name in (
        "strip", "lstrip", "rstrip", "lower", "upper", "replace",
        "startswith", "endswith", "isdigit", "removeprefix", "removesuffix")}
PATH_ATTRIBUTES: dict[str, Callable[[str], Any]] = {
    "parent": posixpath.dirname,
    "name": posixpath.basename,
    "stem": lambda p: posixpath.splitext(posixpath.basename(p))[0],
    "suffix": lambda p: posixpath.splitext(p)[1],
}


def refuse() -> Any:
    """Fail one combination of atoms (a string repeated too often): it becomes a gap."""
    raise ValueError("refused")


def compare_atoms(op: ast.cmpop, a: Any, b: Any) -> bool:
    """`a <op> b` of two concrete atoms (raising where Python would: the caller keeps a gap)."""
    table: dict[type, Callable[[Any, Any], bool]] = {
        ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y,
        ast.Lt: lambda x, y: x < y, ast.LtE: lambda x, y: x <= y,
        ast.Gt: lambda x, y: x > y, ast.GtE: lambda x, y: x >= y,
        ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y,
        ast.In: lambda x, y: x in y, ast.NotIn: lambda x, y: x not in y,
    }
    return table[type(op)](a, b)
