"""Everything that touches a repository, through dulwich only.

Maintainers: this package reads git objects and, for `--worktree`, the files of
the working tree. It never checks out, never writes to the analysed repository
(new objects such as merged trees live in an in-memory store layered over it),
and never runs a `git` subprocess.
"""

from impact.git.repository import Repository, Revision, open_repository
from impact.git.snapshot import Entry, Folder, Snapshot, SnapshotDiff, diff_snapshots
from impact.git.views import (
    BASE_TO_HEAD,
    HEAD_TO_TIP,
    InputForm,
    View,
    Views,
    merged_commit,
    open_snapshot,
    open_views,
    queue_views,
    revision_snapshot,
    tree_views,
)

__all__ = [
    "BASE_TO_HEAD",
    "HEAD_TO_TIP",
    "Entry",
    "Folder",
    "InputForm",
    "Repository",
    "Revision",
    "Snapshot",
    "SnapshotDiff",
    "View",
    "Views",
    "diff_snapshots",
    "merged_commit",
    "open_repository",
    "open_snapshot",
    "open_views",
    "queue_views",
    "revision_snapshot",
    "tree_views",
]
