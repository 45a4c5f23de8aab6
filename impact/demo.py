"""`impact demo`: a report on a repository built from the bundled synthetic rocKE tree.

Needs no hipDNN checkout: the fixture tree ships inside the package, and the
repository is built in a temporary folder (or in `keep`, kept for the user).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from impact.errors import BadUsage
from impact.fixtures import Change, Scenario, build_repository
from impact.fixtures.edits import (
    GFX950_DENSE,
    GFX950_DENSE_KDP,
    add_builder_param,
    edit_comment,
    set_kdp_arch,
)
from impact.fixtures.tree import rocke_tree_files
from impact.git import open_views
from impact.report import build_report
from impact.surface import map_for_views


def demo_scenario() -> Scenario:
    """A pull request that adds a kernel argument, and a target tip that moved meanwhile."""
    return Scenario(
        base=rocke_tree_files(),
        head=(
            Change("gfx950 attention_dense: add a dropout_seed kernel argument",
                   edits=(add_builder_param(GFX950_DENSE, "dropout_seed", "I32"),)),
            Change("gfx950 attention_dense: reword a comment",
                   edits=(edit_comment(GFX950_DENSE),)),
        ),
        target=(
            Change("ship gfx950 attention_dense on gfx942 too",
                   edits=(set_kdp_arch(GFX950_DENSE_KDP, ["gfx950", "gfx942"]),)),
        ),
    )


def demo_report(*, keep: str | None = None,
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build the demo repository and report on head against base, merged onto target;
    `progress` hears the name of each stage as it starts."""
    if keep is not None:
        where = Path(keep)
        if where.exists() and any(where.iterdir()):
            raise BadUsage(f"--keep folder '{keep}' is not empty", "name a new or empty folder")
        return _report(where, progress or _silent)
    with tempfile.TemporaryDirectory(prefix="impact-demo-") as tmp:
        return _report(Path(tmp) / "repo", progress or _silent)


def _silent(_stage: str) -> None:
    return None


def _report(where: Path, progress: Callable[[str], None]) -> dict[str, Any]:
    progress("building the demo repository")
    built = build_repository(demo_scenario(), where, checkout=True)
    views = open_views(built.path, base="base", head="head", target_tip="target")
    progress("checking the contracts")
    return build_report(views, {"base": "base", "head": "head", "target_tip": "target"},
                        map_for_views(None, views))
