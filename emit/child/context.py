"""The child's view of one revision: the tree, its Python roots, the rules file impact wrote
and the library's names that file carries.

Maintainers: standard library only, never `impact` (emit/child/__init__.py says why). The
library's module and function names reach the child here, from the rules file
(`Emitter`), and nowhere else: no module of the child spells one.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import sys
from pathlib import Path

RULES_VERSION = 2

QualifiedName = tuple[str, str]  # (dotted module, name in it)


class Emitter:
    """What the child calls in the tree: the surface map's `[conventions.emitter]` (with its
    `python_backend` and `dsl_modules`), as emit/rules.py wrote it into the rules file."""

    def __init__(self, data: dict) -> None:
        self.source_kind: str = data["source_kind"]
        self.python_backend: str = data["python_backend"]
        self.dsl_modules: tuple[str, ...] = tuple(data["dsl_modules"])
        self.flavor_env: str = data["flavor_env"]
        self.flavor_ladders: list[QualifiedName] = [tuple(n) for n in data["flavor_ladders"]]
        self.enumerators: list[tuple[QualifiedName, str]] = [
            (tuple(e["call"]), e["returns"]) for e in data["enumerators"]]
        self.producer: QualifiedName = tuple(data["producer"])
        self.predicate_resolvers: tuple[str, ...] = tuple(data["predicate_resolvers"])
        self.builder_prefix: str = data["builder_prefix"]
        self.support_predicates: tuple[str, ...] = tuple(data["support_predicates"])
        self.lowering: QualifiedName = tuple(data["lowering"])
        self.lowering_reexports: tuple[str, ...] = tuple(data["lowering_reexports"])


def read_rules(path: Path) -> dict:
    """The data impact hands this child; anything else is refused (an error document). A
    rules file without the library's names (`emitter`) is refused too: the child never
    guesses what to call."""
    rules = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(rules, dict) or rules.get("schema_version") != RULES_VERSION:
        raise ValueError(f"rules file is not schema version {RULES_VERSION}")
    if not isinstance(rules.get("emitter"), dict):
        raise ValueError("rules file names no emitter conventions: nothing to build with")
    return rules


def source_module(source: str) -> str:
    """A kernel source as a module path: slashes to dots, `.py` dropped."""
    stem = source[:-3] if source.endswith(".py") else source
    return ".".join(part for part in stem.split("/") if part)


class Context:
    """What every stage needs: the tree, its python roots, the rules, the library's names
    and the sanitiser."""

    def __init__(self, tree: Path, roots: list[Path], descriptor_rel: str,
                 rules: dict) -> None:
        self.tree = tree
        self.roots = roots
        self.rules = rules
        self.descriptor_rel = descriptor_rel.strip("/")
        self.descriptor_root = tree / self.descriptor_rel
        self._under: dict[str, bool] = {}  # a module file path -> under a root (resolved once)

    @functools.cached_property
    def emitter(self) -> Emitter:
        """The library's names, from the rules (read_rules checked they are there)."""
        return Emitter(self.rules["emitter"])

    def clean(self, text: str) -> str:
        """Drop the temporary tree path from a message so documents are comparable."""
        text = text.replace(str(self.tree) + os.sep, "").replace(str(self.tree), "<tree>")
        return text if len(text) <= 2000 else text[:2000] + "..."

    def describe(self, exc: BaseException) -> str:
        return self.clean(f"{type(exc).__name__}: {exc}")

    def kdp_rel(self, rel: str) -> str:
        return f"{self.descriptor_rel}/{rel}" if self.descriptor_rel else rel

    def member_archs(self, arch: str) -> list[str]:
        """The concrete targets one descriptor arch stands for (a generic target's members)."""
        return list(self.rules["generic_targets"].get(arch, (arch,)))

    # -- tree modules in sys.modules ------------------------------------------

    def _under_roots(self, path) -> bool:
        if not isinstance(path, str):
            return False
        known = self._under.get(path)
        if known is None:
            try:
                real = Path(path).resolve()
            except (OSError, ValueError):
                return False
            known = self._under[path] = any(real == r or r in real.parents for r in self.roots)
        return known

    def is_tree_module(self, module) -> bool:
        if self._under_roots(getattr(module, "__file__", None)):
            return True
        return any(self._under_roots(p) for p in list(getattr(module, "__path__", None) or ()))

    def tree_modules(self) -> list[str]:
        return sorted(n for n, m in list(sys.modules.items())
                      if m is not None and self.is_tree_module(m))

    def purge(self) -> None:
        for name in self.tree_modules():
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
