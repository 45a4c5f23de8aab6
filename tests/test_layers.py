"""The layering is executable: import-linter's contracts from pyproject.toml must hold."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (pip install '.[test]')")
    proc = subprocess.run([str(lint), str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "broken" not in proc.stdout.lower().replace("0 broken", "")


def _named_in_contracts() -> set[str]:
    """Every module or package the layers or forbidden contracts name."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    named: set[str] = set()
    for contract in config["tool"]["importlinter"]["contracts"]:
        for layer in contract.get("layers", ()):
            named.update(part.strip() for part in re.split(r"[|:]", layer) if part.strip())
        named.update(contract.get("source_modules", ()))
    return named


def _modules(package: str) -> list[str]:
    """Every importable module of `package` in the checkout (packages are folders holding an
    __init__.py; a fixture tree's own folders are not)."""
    found: list[str] = []

    def walk(folder: Path, dotted: str) -> None:
        for path in sorted(folder.iterdir()):
            if path.is_dir() and (path / "__init__.py").is_file() and path.name.isidentifier():
                found.append(f"{dotted}.{path.name}")
                walk(path, f"{dotted}.{path.name}")
            elif path.suffix == ".py" and path.stem != "__init__" and path.stem.isidentifier():
                found.append(f"{dotted}.{path.stem}")

    walk(ROOT / package, package)
    return found


def _covered(module: str, named: set[str]) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:i]) in named for i in range(1, len(parts) + 1))


def test_every_module_is_in_a_layer() -> None:
    named = _named_in_contracts()
    assert not _covered("impact.not_a_module", named)  # the check itself can fail
    loose = [m for p in ("impact", "emit") for m in _modules(p) if not _covered(m, named)]
    assert loose == [], f"modules in no layer of pyproject.toml's contracts: {loose}"
