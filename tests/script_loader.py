"""Load a script that is not a package module (a benchmark, the GPU scenario builder) as a
module, so a test can call its functions."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str) -> ModuleType:
    """The script at `path`, executed as the module `name` (registered in sys.modules,
    where its dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
