"""A consistent tree gives zero `mismatch` rows, pre-existing or not (issue 11, point 4).

The property runs over every fixture tree under impact/fixtures/ that has a hipDNN surface
(found by the hipDNN map's own markers, so a tree added later is covered without editing
this file): a no-op change — nothing at all, or a comment appended to every surface file
the tree's index lists — reports no mismatch anywhere, in any check.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

import pytest

from impact.checks import run_checks
from impact.checks.base import CheckContext
from impact.git import Snapshot, Views
from impact.index import TreeIndex
from impact.rows import Status
from impact.surface import builtin_map

_COMMENTS = {".py": b"\n# a comment only\n", ".cpp": b"\n// a comment only\n",
             ".hpp": b"\n// a comment only\n", ".h": b"\n// a comment only\n",
             ".cc": b"\n// a comment only\n", ".yaml": b"\n# a comment only\n",
             ".yml": b"\n# a comment only\n", ".toml": b"\n# a comment only\n",
             ".txt": b"\n# a comment only\n"}


def _walk(node: Traversable, prefix: str, out: dict[str, bytes]) -> None:
    for child in node.iterdir():
        if child.is_dir():
            if child.name != "__pycache__":
                _walk(child, f"{prefix}{child.name}/", out)
        elif not child.name.endswith(".pyc"):
            out[f"{prefix}{child.name}"] = child.read_bytes()


def _hipdnn_trees() -> dict[str, dict[str, bytes]]:
    """Every fixture tree the hipDNN map recognises, by folder name."""
    surface = builtin_map("hipdnn")
    found = {}
    for folder in sorted(resources.files("impact.fixtures").iterdir(), key=lambda f: f.name):
        if not folder.is_dir() or folder.name.startswith("__"):
            continue
        files: dict[str, bytes] = {}
        _walk(folder, "", files)
        if surface.marker_in(Snapshot.from_files(files)) is not None:
            found[folder.name] = files
    return found


TREES = _hipdnn_trees()


def test_the_first_fixture_tree_is_covered() -> None:
    assert "rocke_tree" in TREES


def _commented(files: dict[str, bytes], paths: list[str]) -> dict[str, bytes]:
    out = dict(files)
    for path in paths:
        suffix = path[path.rfind("."):] if "." in path.rsplit("/", 1)[-1] else ""
        if path.endswith("CMakeLists.txt") or suffix in _COMMENTS:
            out[path] = files[path] + _COMMENTS.get(suffix, b"\n# a comment only\n")
    return out


@pytest.mark.parametrize("tree", sorted(TREES))
@pytest.mark.parametrize("change", ["nothing", "a comment in every surface file"])
def test_no_op_change_reports_no_mismatch(tree: str, change: str) -> None:
    files = TREES[tree]
    surface = builtin_map("hipdnn")
    base = Snapshot.from_files(files)
    paths = TreeIndex.of(base, surface).surface_paths()
    head = files if change == "nothing" else _commented(files, paths)
    assert change == "nothing" or head != files
    ctx = CheckContext(Views.from_snapshots(base, Snapshot.from_files(head)), surface)
    rows = run_checks(ctx)
    mismatches = [(r.contract, r.subject, str(r.reason), r.details) for r in rows
                  if r.status == Status.MISMATCH]
    assert mismatches == []


@pytest.mark.parametrize("tree", sorted(TREES))
def test_the_property_is_not_vacuous(tree: str) -> None:
    """Each tree's lists and launch() calls are read and paired: the property above
    compares them, it does not pass for want of anything to compare."""
    surface = builtin_map("hipdnn")
    snapshot = Snapshot.from_files(TREES[tree])
    views = Views.from_snapshots(snapshot, snapshot)
    graph = CheckContext(views, surface).graph(snapshot)
    lists = [a for a in graph.kernels.argument_lists() if a.pairing.builder is not None]
    launches = [c for c in graph.kernels.launch_calls() if c.pairing.builder is not None]
    assert lists and launches
    assert any(not a.dynamic and a.entries for a in lists)
