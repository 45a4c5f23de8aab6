"""`impact demo`: a report on a repository built from the bundled synthetic rocKE tree.

Needs no hipDNN checkout: the fixture tree ships inside the package, and the
repository is built in a temporary folder (or in `keep`, kept for the user). The report
is the library entry's (impact/api.py), in a Session that reads and writes no cache
folder: the demo leaves nothing behind but what `keep` asks for.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from impact.api import Progress, Report, Session, report
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


def demo_report(*, keep: str | None = None, progress: Progress | None = None) -> Report:
    """Build the demo repository and report on head against base, merged onto target;
    `progress` hears the name of each stage as it starts."""
    if keep is not None:
        where = Path(keep)
        if where.exists() and any(where.iterdir()):
            raise BadUsage(f"--keep folder '{keep}' is not empty", "name a new or empty folder")
        return _report(where, progress)
    with tempfile.TemporaryDirectory(prefix="impact-demo-") as tmp:
        return _report(Path(tmp) / "repo", progress)


def _report(where: Path, progress: Progress | None) -> Report:
    if progress is not None:
        progress("building the demo repository")
    built = build_repository(demo_scenario(), where, checkout=True)
    return report(built.path, base="base", head="head", target_tip="target",
                  session=Session.for_command(use_cache=False), progress=progress)
