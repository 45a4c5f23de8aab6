"""The LLVM flavor the child lowers with: pinned, from the environment, or the newest of
the ladder the tree states, read statically.

Maintainers: reads the tree's source, never imports it (the flavor is chosen before any
tree code runs). Where the ladder lives and which variable the lowering reads come from
the rules file (`Emitter.flavor_ladders`, `Emitter.flavor_env`).
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from emit.child.context import Context


def _find_module_file(ctx: Context, module: str) -> Path | None:
    rel = module.replace(".", "/") + ".py"
    for root in ctx.roots:
        if (root / rel).is_file():
            return root / rel
    return None


def read_flavor_ladder(ctx: Context) -> list[str]:
    """The names of the first ladder the tree has (module, variable: a tuple or list of
    strings); never imported."""
    for module, variable in ctx.emitter.flavor_ladders:
        path = _find_module_file(ctx, module)
        if path is None:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            targets, value = [], None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            if not any(isinstance(t, ast.Name) and t.id == variable for t in targets):
                continue
            if isinstance(value, (ast.Tuple, ast.List)):
                names = [e.value for e in value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if names:
                    return names
    return []


def _flavor_rank(name: str) -> tuple[int, str]:
    digits = re.findall(r"\d+", name)
    return (int(digits[0]) if digits else -1, name)


def choose_flavor(ctx: Context, pinned: str | None) -> str | None:
    """--flavor, else the lowering's own environment variable, else the newest flavor of
    the tree's ladder (None when none is known)."""
    if pinned:
        return pinned
    env = os.environ.get(ctx.emitter.flavor_env)
    if env:
        return env
    ladder = read_flavor_ladder(ctx)
    return max(ladder, key=_flavor_rank) if ladder else None
