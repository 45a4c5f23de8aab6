"""Starts the emitter's child: ``python -I -B .../emit/child/__main__.py ARGS``, by path, as
emit/children.py starts it inside the jail (emit/child/__init__.py has the arguments).

Maintainers: run by path under ``-I``, the folder that holds the ``emit`` package is not on
sys.path, and an installed ``emit`` may be another version: that folder is put first while
the child's own modules are imported, then taken away, and they leave sys.modules before
any tree code runs, so the tree's imports (of an ``emit`` of its own, say) resolve as if
the child were not there. Nothing of the child may import lazily for that reason.
"""

import sys
from pathlib import Path


def _entry():
    """The child's `main`, imported from this checkout's `emit` package."""
    home = str(Path(__file__).resolve().parents[2])
    sys.path.insert(0, home)
    try:
        from emit.child.entry import main
    finally:
        sys.path.remove(home)
    for name in [n for n in sys.modules if n == "emit" or n.startswith("emit.")]:
        del sys.modules[name]
    return main


if __name__ == "__main__":
    sys.exit(_entry()())
