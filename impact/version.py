"""The versions a document carries: the tool's and the report schema's.

Maintainers: a leaf. It imports nothing from impact, so the report, the emitter
and the CLI can all read it without importing one another.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path

# The report document's schema version (impact/contracts/report.schema.json).
SCHEMA_VERSION = "0.3"
_DISTRIBUTION = "kernel-impact"


@cache
def tool_version() -> str:
    """The version of the code that runs: run from a git checkout (on PYTHONPATH, or an
    editable install), its pyproject's version with the checkout's commit as a local
    label (`0.1.0+g1a2b3c4`); installed, the distribution's version; else `0+unknown`."""
    checkout = Path(__file__).resolve().parents[1]
    found = _checkout_version(checkout)
    if found is not None:
        return found
    try:
        return metadata.version(_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _checkout_version(root: Path) -> str | None:
    """`version+g<commit>` of a checkout of this project at `root`, or None when `root`
    is not one (an installed package has no pyproject.toml and .git beside it)."""
    pyproject, git = root / "pyproject.toml", root / ".git"
    if not pyproject.is_file() or not git.exists():
        return None
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if project.get("name") != _DISTRIBUTION or not isinstance(project.get("version"), str):
        return None
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        with Repo(str(root)) as repo:
            commit = repo.head().decode("ascii")[:7]
    except (NotGitRepository, KeyError, OSError, ValueError):
        return f"{project['version']}+unknown.commit"
    return f"{project['version']}+g{commit}"
