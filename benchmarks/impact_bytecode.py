"""Benchmarks time `impact` as a user runs it: from compiled bytecode.

`pip install` compiles every module of the package it installs; a checkout run with
`PYTHONDONTWRITEBYTECODE` set (as some CI images and sandboxes do) never writes one, so
each timed process would compile impact's sources again (about 0.1-0.2 s of a report on
a 2-core machine). `ready(python)` compiles the `impact` and `emit` packages that
`python -m impact` will import, fixture trees left out, and says where they are, so the
figures are those of an installed tool whatever the environment.
"""

from __future__ import annotations

import os
import subprocess

_COMPILE = """
import compileall, pathlib, re, sys
import emit, impact
roots = [pathlib.Path(m.__file__).parent for m in (impact, emit)]
ok = all(compileall.compile_dir(r, quiet=1, rx=re.compile(r"[/\\\\]fixtures[/\\\\]"))
         for r in roots)
print(" ".join(str(r) for r in roots))
sys.exit(0 if ok else 1)
"""


def ready(python: str, cwd: str | None = None) -> str:
    """Compile the packages `python -m impact` imports (run from `cwd`) and return one
    line naming them, for the benchmark's header."""
    env = os.environ.copy()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([python, "-c", _COMPILE], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)
    where = done.stdout.strip() or done.stderr.strip()[-200:]
    if done.returncode != 0:
        return f"bytecode: NOT compiled ({where}); the figures include compiling impact"
    return f"bytecode: compiled, as an install has it ({where})"
