"""Facts of a Python build script (setup.py): the extension modules it declares.

Maintainers: reads the bytes it is handed (standard `ast`, through the shared Python
scaffold) and never runs them. One `extension-module` fact per module name a
`CUDAExtension`/`CppExtension`/`Extension` call can give, with what `pyeval.py` finds its
arguments may hold where the call stands: the sources (repository-relative paths, and
`glob` patterns left for the graph to resolve against the tree), the compile arguments,
the archs their flags name, and every piece it could not resolve (a gap: name, sources,
flags or archs, with line and text). Flags in functions the script never calls itself
(build hooks it installs, such as a patched ninja writer) belong to every module it
declares, and so does the code of a hook it installs (`hooks`: name and digest).
The statements that prebuild or copy what the JIT compiles are read apart, on demand
(impact/builds/steps.py). `extract_setup_facts` never raises.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Any

from impact.builds.archflags import flag_archs, torch_arch
from impact.builds.pyeval import EXTENSION_CLASSES, ROOT, Evaluator
from impact.builds.values import Gap, GlobPattern, Val, union
from impact.facts import Fact, content_fact, sorted_facts
from impact.kinds import BuildFile, BuildGap, FactKind
from impact.python.digest import tree_digest
from impact.python.scaffold import Source, extract_python

_DECLARES = re.compile(r"\b(?:" + "|".join(sorted(EXTENSION_CLASSES)) + r")\b")
NAME, SOURCES, FLAGS, ARCHS = BuildGap.NAME, BuildGap.SOURCES, BuildGap.FLAGS, BuildGap.ARCHS
_COMPILE_KEYWORDS = ("extra_compile_args", "define_macros", "extra_cuda_cflags",
                     "extra_cflags")


def extract_setup_facts(path: str, source: bytes) -> list[Fact]:
    """The `extension-module` facts of a setup.py and its `content` fact (the module
    without docstrings, blind to comments and layout); a file Python will not compile
    yields one parse-failure fact."""
    return extract_python(path, source, lambda parsed: _facts(path, parsed))


def _facts(path: str, parsed: Source) -> list[Fact]:
    content = content_fact(path, tree_digest(parsed.tree))
    if not _DECLARES.search(parsed.text):
        return [content]  # no extension-module class to evaluate
    calls: list[tuple[int, dict[str, Val]]] = []
    evaluator = Evaluator(parsed.tree, path, lambda _node, named, line: calls.append(
        (line, named)))
    evaluator.run()
    hooks = _hook_archs(evaluator)
    # Every module is compiled through the hooks the script installs: their code counts.
    installed = sorted(f"{node.name}:{tree_digest(node)}" for node in evaluator.hooks)
    facts: list[Fact] = []
    seen: set[tuple[str, int]] = set()
    for line, named in calls:
        for name, data in _declarations(evaluator, line, named, hooks):
            if (name, line) not in seen:
                seen.add((name, line))
                facts.append(Fact(FactKind.EXTENSION_MODULE, name, line,
                                  {**data, "hooks": installed}))
    facts.append(content)
    return sorted_facts(facts)


def _hook_archs(evaluator: Evaluator) -> tuple[set[str], set[str], set[Gap]]:
    """The archs and arch flags of what the script sets for every module: the build hooks
    it never calls itself, and TORCH_CUDA_ARCH_LIST / PYTORCH_ROCM_ARCH."""
    archs: set[str] = set()
    flags: set[str] = set()
    gaps: set[Gap] = set()
    for value in evaluator.hook_values:
        found, spelled, machine = _scan(value.strings())
        archs |= found
        flags |= spelled
        gaps |= {g for g in value.gaps if g.arch} | {Gap(0, m, arch=True) for m in machine}
    for value in evaluator.env_archs:
        for text in value.strings():
            for entry in text.replace(";", " ").split():
                arch = torch_arch(entry)
                if arch is None:
                    gaps.add(Gap(0, entry, arch=True))
                else:
                    archs.add(arch)
                    flags.add(entry)
        gaps |= {Gap(g.line, g.text, arch=True) for g in value.gaps}
    return archs, flags, gaps


def _scan(strings: Iterable[str]) -> tuple[set[str], set[str], set[str]]:
    archs: set[str] = set()
    flags: set[str] = set()
    machine: set[str] = set()
    for text in strings:
        found, spelled, local = flag_archs(text)
        archs |= found
        flags |= spelled
        machine |= local
    return archs, flags, machine


def _declarations(evaluator: Evaluator, line: int, named: dict[str, Val],
                  hooks: tuple[set[str], set[str], set[Gap]]
                  ) -> Iterable[tuple[str, dict[str, Any]]]:
    """(module name, fact data) for each name the call at `line` can give its module."""
    gaps: list[dict[str, Any]] = []

    def gap(what: BuildGap, found: Iterable[Gap]) -> None:
        gaps.extend({"what": str(what), "line": g.line or line, "text": g.text} for g in found)

    name = named.get("name", Val.gap(line, "name"))
    names = name.strings()
    gap(NAME, name.gaps)
    sources = named.get("sources", Val.gap(line, "sources"))
    literal, patterns, external = _paths(evaluator, sources)
    gap(SOURCES, sources.gaps)
    compile_args = union(*(_flags(named[k]) for k in _COMPILE_KEYWORDS if k in named))
    archs, flags, machine = _scan(compile_args.strings())
    hook_archs, hook_flags, hook_gaps = hooks
    gap(FLAGS, (g for g in compile_args.gaps if not g.arch))
    gap(ARCHS, [*(g for g in compile_args.gaps if g.arch), *hook_gaps,
                *(Gap(line, m, arch=True) for m in machine)])
    data = {"build": str(BuildFile.SETUP_PY), "sources": literal, "patterns": patterns,
            "external": external,
            "archs": sorted(archs | hook_archs), "arch_flags": sorted(flags | hook_flags),
            "compile_args": compile_args.strings(),
            "gaps": sorted(gaps, key=lambda g: (g["what"], g["line"], g["text"]))}
    for module in names or [""]:
        yield module, data


def _flags(value: Val) -> Val:
    """Compile arguments as strings: a `define_macros` pair `(NAME, value)` as `-DNAME=value`."""
    atoms = set()
    for atom in value.atoms:
        if isinstance(atom, tuple) and len(atom) == 2:
            atoms.add(f"-D{atom[0]}" + ("" if atom[1] is None else f"={atom[1]}"))
        else:
            atoms.add(atom)
    return Val(frozenset(atoms), value.gaps, value.seq)


def _paths(evaluator: Evaluator, value: Val) -> tuple[list[str], list[str], list[str]]:
    """The sources a value may hold: repository-relative files, repository-relative glob
    patterns (`**` only where the glob is recursive), and paths outside the repository."""
    literal: set[str] = set()
    patterns: set[str] = set()
    external: set[str] = set()
    for atom in value.atoms:
        if isinstance(atom, GlobPattern):
            where, text = _in_repository(evaluator.absolute(atom.pattern))
            text = text if atom.recursive else text.replace("**", "*")
            (patterns if where else external).add(text)
        elif isinstance(atom, str):
            where, text = _in_repository(evaluator.absolute(atom))
            (literal if where else external).add(text)
    return sorted(literal), sorted(patterns), sorted(external)


def _in_repository(absolute: str) -> tuple[bool, str]:
    normal = posixpath.normpath(absolute)
    if normal.startswith(ROOT + "/"):
        return True, normal[len(ROOT) + 1:]
    return False, normal


__all__ = ["extract_setup_facts"]
