"""Revisions into scratch folders, straight from git objects, and the merge simulation.

Maintainers: writes only under the scratch folder it is given; never checks out or
touches the user's working tree. Git is read through impact.git (dulwich); the merge is
impact.git.views' own three-way merge, so validate merges exactly as the report does.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from dulwich.patch import write_tree_diff

from emit.trees import write_new_file, write_new_link
from impact.git import Snapshot, Views, open_views
from impact.kinds import ViewName
from impact.safefile import unsafe_tree_path
from impact.validate.verdict import StageStatus

CACHE_VARS = ("TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR", "AITER_JIT_DIR",
              "FLYDSL_RUNTIME_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPYCACHEPREFIX")
"""Every JIT or kernel cache a side gets fresh, so no build crosses from base to head."""


@dataclass(frozen=True)
class MergeSim:
    """Head merged onto the target tip: the tree to test as head, or why there is none."""

    status: str  # pass | fail
    reason: str
    target: str
    target_sha: str
    tree: Snapshot | None
    conflicts: tuple[str, ...]


def open_for_validation(repo: str, base: str, head: str, target_tip: str | None) -> Views:
    """The report's views of base..head merged onto `target_tip` (the base when none is
    given: the head must still merge onto the commit it is compared with)."""
    return open_views(repo, base=base, head=head, target_tip=target_tip or base)


def merge_sim(views: Views) -> MergeSim:
    """The merged view as a stage: a conflict or an impossible merge fails it."""
    tip = views.revisions[ViewName.TARGET_TIP]
    merged = views.view(ViewName.MERGED)
    if merged is None or merged.new is None:
        why = merged.unavailable if merged is not None else "no merged view"
        return MergeSim(StageStatus.FAIL, f"head cannot be merged onto {tip.spelled}: {why}",
                        tip.spelled, tip.sha, None, ())
    if merged.conflicts:
        return MergeSim(StageStatus.FAIL, f"head conflicts with {tip.spelled} in "
                        f"{len(merged.conflicts)} path(s)", tip.spelled, tip.sha, None,
                        merged.conflicts)
    return MergeSim(StageStatus.PASS, f"head merges cleanly onto {tip.spelled}", tip.spelled,
                    tip.sha, merged.new, ())


def patch_bytes(views: Views) -> tuple[bytes, str]:
    """The diff base..head from their merge base, and the writer that printed it. A review
    gate compares our sha256 with the bytes of the PR's diff, which `git diff A...B`
    prints (hunk headers carry function context); dulwich's patch writer, used only where
    no `git` runs, leaves that context out, so its digest is named as such."""
    import io
    import shutil
    import subprocess

    assert views.repository is not None
    base = views.revisions[ViewName.BASE].sha
    head = views.revisions[ViewName.HEAD].sha
    git = shutil.which("git")
    if git and base and head:
        done = subprocess.run(
            [git, "-C", str(views.location), "-c", "core.quotepath=true", "diff",
             "--no-color", "--no-ext-diff", "--no-textconv", f"{base}...{head}"],
            capture_output=True, check=False)
        if done.returncode == 0:
            return done.stdout, "git diff"
    out = io.BytesIO()
    write_tree_diff(out, views.repository.objects, views.base.tree_id.encode(),
                    views.head.tree_id.encode())
    return out.getvalue(), "dulwich"


def write_tree(snapshot: Snapshot, folder: Path) -> tuple[list[str], list[str]]:
    """Every file of `snapshot` written under `folder` (modes and symlinks kept); the
    paths it did not write: (the submodules, the paths refused). Refused are paths no
    checkout writes (`..`, a `/` in an entry's name, `.git`: impact/safefile.py
    `unsafe_tree_path`) and those whose folder is a symlink the tree wrote. Nothing is
    ever written outside `folder`."""
    submodules, refused = [], []
    for path, entry in snapshot.walk():
        if entry.is_submodule:
            submodules.append(path)
            continue
        if unsafe_tree_path(path) or not snapshot.names_its_parts(path):
            refused.append(path)
            continue
        try:
            _write_file(folder, path, snapshot.read(path), entry.mode)
        except OSError:
            refused.append(path)
    return submodules, refused


def _write_file(root: Path, path: str, data: bytes, mode: int) -> None:
    """`data` at `root`/`path` as a new file (0755 when executable) or, for a symlink
    entry, a new link holding `data`; its folders made as real folders, never through
    a link (emit/trees.py)."""
    if stat.S_IFMT(mode) != stat.S_IFLNK:
        write_new_file(root, path, data, 0o755 if mode & 0o111 else 0o644)
        return
    write_new_link(root, path, data.decode())


@dataclass(frozen=True)
class Side:
    """One materialised revision: its tree, its folder and its own caches."""

    name: str
    tree_id: str
    root: Path
    caches: dict[str, str]
    submodules_skipped: tuple[str, ...]
    refused: tuple[str, ...] = ()  # paths no checkout writes, left unwritten


def materialise(name: str, snapshot: Snapshot, scratch: Path) -> Side:
    """`snapshot` written to `<scratch>/<name>/src` with fresh caches under
    `<scratch>/<name>/cache/`."""
    root = scratch / name / "src"
    root.mkdir(parents=True)
    skipped, refused = write_tree(snapshot, root)
    caches = {}
    for var in CACHE_VARS:
        path = scratch / name / "cache" / var.lower()
        path.mkdir(parents=True)
        caches[var] = str(path)
    return Side(name, str(snapshot.tree_id), root, caches, tuple(skipped), tuple(refused))
