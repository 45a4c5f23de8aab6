"""The views a report compares: base, head and (with a target tip) merged.

Maintainers: turns the user's input form into commits and snapshots. A
conflicted merge is a result, not an error: the merged snapshot keeps every
cleanly merged path and names the conflicted ones.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from dulwich.diff_tree import CHANGE_ADD, CHANGE_DELETE, tree_changes
from dulwich.merge import Merger, three_way_merge
from dulwich.objects import Commit

from impact.errors import BadUsage, ImpactError, UnknownRevision
from impact.git.repository import Repository, Revision, open_repository
from impact.git.snapshot import Snapshot, SnapshotDiff, diff_snapshots
from impact.git.trees import EMPTY_TREE, Trees
from impact.git.worktree import worktree_entries, write_tree
from impact.kinds import InputForm, ViewName

WORKTREE = "WORKTREE"
MEMORY = "memory"
"""Where views built from in-memory snapshots say they come from (no repository)."""
BASE_TO_HEAD = f"{ViewName.BASE}..{ViewName.HEAD}"
HEAD_TO_TIP = f"{ViewName.HEAD}..{ViewName.TARGET_TIP}"
"""The keys of `Views.merge_bases`: the pairs of revisions whose merge bases were looked up."""


@dataclass(frozen=True)
class View:
    """One comparison: `new` against `old`, with what changed between them. The merged
    view also holds the target tip it merged onto (`tip`), so a check can tell the head's
    part of a merged file from the tip's."""

    name: ViewName
    old: Snapshot
    new: Snapshot | None
    diff: SnapshotDiff
    conflicts: tuple[str, ...] = ()
    unavailable: str | None = None
    tip: Snapshot | None = None


@dataclass(frozen=True)
class Views:
    """Everything later stages need about the revisions; nothing reaches back into git.

    `repository` is None for views built from in-memory snapshots (`from_snapshots`).
    """

    repository: Repository | None
    form: InputForm
    revisions: dict[ViewName, Revision]
    merge_bases: dict[str, list[str]]
    base: Snapshot
    head: Snapshot
    views: tuple[View, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    """(what, why) for each work-tree entry skipped unread, for the report's coverage."""

    def view(self, name: ViewName) -> View | None:
        return next((v for v in self.views if v.name == name), None)

    @property
    def location(self) -> str:
        """The repository's path, or MEMORY when the trees never were in one."""
        return MEMORY if self.repository is None else str(self.repository.path)

    @classmethod
    def from_snapshots(cls, base: Snapshot, head: Snapshot, *, merged: Snapshot | None = None,
                       conflicts: Iterable[str] = (),
                       form: InputForm = InputForm.BASE_HEAD) -> Views:
        """Views over trees held in memory (`Snapshot.from_files`), with no repository, so
        a check can be run on a tree and its edit without writing git objects to disk.

        The snapshots are relabelled base, head and merged (the roles rows name); each
        revision is recorded as `memory:<role>` with its tree id as the sha. `merged` is
        the head merged onto a target tip as the caller computed it, `conflicts` the
        paths that merge left conflicted; there are no merge bases. No target tip is held,
        so every path the head changed stays the head's part of the merged view.
        """
        base_snap = base.relabelled(ViewName.BASE)
        head_snap = head.relabelled(ViewName.HEAD)
        revisions = {role: Revision(f"{MEMORY}:{role}", str(snap.tree_id))
                     for role, snap in ((ViewName.BASE, base_snap), (ViewName.HEAD, head_snap))}
        views = [View(ViewName.HEAD, base_snap, head_snap, diff_snapshots(base_snap, head_snap))]
        if merged is not None:
            conflicted = frozenset(conflicts)
            merged_snap = merged.relabelled(ViewName.MERGED, conflicted=conflicted)
            revisions[ViewName.TARGET_TIP] = Revision(f"{MEMORY}:{ViewName.MERGED}",
                                                      str(merged_snap.tree_id))
            views.append(View(ViewName.MERGED, base_snap, merged_snap,
                              diff_snapshots(base_snap, merged_snap),
                              conflicts=tuple(sorted(conflicted))))
        return cls(None, form, revisions, {}, base_snap, head_snap, tuple(views))


def _snapshot(repository: Repository, tree_id: str, label: str,
              conflicted: frozenset[str] = frozenset()) -> Snapshot:
    """Tree `tree_id`, its folders read when a later stage asks for them."""
    return Snapshot.from_tree(repository.trees, tree_id, repository.read_blob, label=label,
                              conflicted=conflicted)


def _commit_snapshot(repository: Repository, sha: str, label: str) -> Snapshot:
    return _snapshot(repository, repository.commit(sha).tree.decode(), label)


def _split_range(spelled: str) -> tuple[str, str]:
    sep = "..." if "..." in spelled else ".."
    if sep not in spelled:
        raise BadUsage(f"--range '{spelled}' has no '..'", "write it as A..B (or A...B)")
    left, right = spelled.split(sep, 1)
    return left or "HEAD", right or "HEAD"


def _worktree_commit(repository: Repository, head: Revision | None, tree_id: str) -> Commit:
    """A commit object, in the scratch store only, that holds the uncommitted work."""
    commit = Commit()
    commit.tree = tree_id.encode()
    commit.parents = [head.sha.encode()] if head else []
    commit.author = commit.committer = b"impact <impact@localhost>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"uncommitted work\n"
    repository.scratch.add_object(commit)
    return commit


def _merged_view(repository: Repository, base: Snapshot, head_commit: Commit,
                 head_rev: Revision | None, tip: Revision,
                 merge_bases: dict[str, list[str]]) -> View:
    """Head merged onto the target tip, compared with `base`."""
    if head_rev is None:
        reason = "the uncommitted work has no commit history to merge from"
        return View(ViewName.MERGED, base, None, SnapshotDiff(), unavailable=reason)
    try:
        bases = repository.merge_bases(head_rev.sha, tip.sha)
    except ImpactError as exc:
        return View(ViewName.MERGED, base, None, SnapshotDiff(), unavailable=str(exc))
    merge_bases[HEAD_TO_TIP] = bases
    if not bases:
        reason = f"head and target tip '{tip.spelled}' share no history"
        return View(ViewName.MERGED, base, None, SnapshotDiff(), unavailable=reason)
    try:
        tip_commit = repository.commit(tip.sha)
    except ImpactError as exc:
        return View(ViewName.MERGED, base, None, SnapshotDiff(), unavailable=str(exc))
    return _merge_onto(repository, base, head_commit, bases[0], tip_commit)


def _merge_onto(repository: Repository, base: Snapshot, head_commit: Commit,
                merge_base: str, tip_commit: Commit) -> View:
    """`head_commit` merged onto `tip_commit` from `merge_base` (dulwich's three-way
    merge, conflicts kept), compared with `base`; the tip may be a commit of the scratch
    store (`merged_commit`)."""
    merger = Merger(repository.objects)
    try:
        tree, conflicts = three_way_merge(
            repository.objects,
            repository.commit(merge_base),
            tip_commit,
            head_commit,
            merger=merger,
        )
    except ImpactError as exc:
        return View(ViewName.MERGED, base, None, SnapshotDiff(), unavailable=str(exc))
    repository.scratch.add_object(tree)
    conflicted = frozenset(p.decode() for p in conflicts) | moved_folder_conflicts(
        repository.trees, repository.commit(merge_base).tree.decode(),
        head_commit.tree.decode(), tip_commit.tree.decode())
    merged = _snapshot(repository, tree.id.decode(), ViewName.MERGED, conflicted)
    return View(ViewName.MERGED, base, merged, diff_snapshots(base, merged),
                conflicts=tuple(sorted(conflicted)),
                tip=_snapshot(repository, tip_commit.tree.decode(), ViewName.TARGET_TIP))


def moved_folder_conflicts(trees: Trees, merge_base: str, head: str, tip: str) -> set[str]:
    """The files one side adds into a folder the other side removed, renamed or not.

    dulwich merges path by path and detects no rename. A file renamed on one side and
    edited on the other is a modify/delete conflict already; but git moves a file added
    into a folder the other side renamed along with that folder, while dulwich leaves it
    in the old folder, clean. Those files are conflicted here (fail closed: the merged
    tree may not be the one git would land). Reads only the head's change and the
    folders it removed, never a whole tree."""
    found: set[str] = set()
    removed: set[str] = set()
    for change in tree_changes(trees, merge_base.encode(), head.encode()):
        if change.type == CHANGE_ADD:
            path = change.new.path.decode()
            folder = path.rpartition("/")[0]
            if folder and trees.folder(merge_base, folder) is not None \
                    and trees.folder(tip, folder) is None:
                found.add(path)  # the head adds into a folder the tip removed
        elif change.type == CHANGE_DELETE:
            folder = change.old.path.decode().rpartition("/")[0]
            if folder and trees.folder(head, folder) is None:
                removed.add(folder)
    for folder in sorted(removed):  # the tip adds into a folder the head removed
        at_tip, at_base = trees.folder(tip, folder), trees.folder(merge_base, folder)
        if at_tip is None or at_tip == at_base:
            continue
        before = {path for path, _ in trees.walk(at_base)} if at_base else set()
        found.update(f"{folder}/{path}" for path, _ in trees.walk(at_tip)
                     if path not in before)
    return found


def open_views(
    repo: str | os.PathLike[str] = ".",
    *,
    base: str | None = None,
    head: str | None = None,
    range: str | None = None,
    commit: str | None = None,
    worktree: bool = False,
    target_tip: str | None = None,
) -> Views:
    """Resolve one input form into the base, head and merged views.

    Exactly one form: `base` with `head`, `range` ('A..B'), `commit`, or
    `worktree` (HEAD against the working tree and index).
    """
    forms = [bool(base or head), bool(range), bool(commit), worktree]
    if sum(forms) != 1:
        raise BadUsage(
            "give exactly one input form",
            "use --base B --head H, --range A..B, --commit C or --worktree",
        )
    if (base or head) and not (base and head):
        raise BadUsage("--base and --head go together", "give both --base and --head")

    repository = open_repository(repo)
    revisions: dict[ViewName, Revision] = {}
    merge_bases: dict[str, list[str]] = {}

    if worktree:
        form = InputForm.WORKTREE
        try:
            head_parent: Revision | None = repository.resolve("HEAD")
        except UnknownRevision:
            head_parent = None
        if head_parent:
            revisions[ViewName.BASE] = head_parent
            base_snap = _commit_snapshot(repository, head_parent.sha, ViewName.BASE)
        else:
            base_snap = _snapshot(repository, EMPTY_TREE, ViewName.BASE)
        entries = worktree_entries(repository)
        tree_id = write_tree(repository, entries)
        head_commit = _worktree_commit(repository, head_parent, tree_id)
        head_snap = _snapshot(repository, tree_id, ViewName.HEAD)
        head_rev = head_parent  # the merged view merges from HEAD's history
    else:
        if commit:
            form = InputForm.COMMIT
            head_rev = repository.resolve(commit)
            parents = repository.commit(head_rev.sha).parents
            if parents:
                revisions[ViewName.BASE] = Revision(f"{commit}^", parents[0].decode())
                base_snap = _commit_snapshot(repository, parents[0].decode(), ViewName.BASE)
            else:
                base_snap = _snapshot(repository, EMPTY_TREE, ViewName.BASE)
        else:
            if range:
                form = InputForm.RANGE
                left, right = _split_range(range)
            else:
                form = InputForm.BASE_HEAD
                left, right = base or "", head or ""
            base_given = repository.resolve(left)
            head_rev = repository.resolve(right)
            revisions[ViewName.BASE] = base_given
            mb = repository.merge_base(base_given, head_rev)
            merge_bases[BASE_TO_HEAD] = repository.merge_bases(base_given.sha, head_rev.sha)
            base_snap = _commit_snapshot(repository, mb, ViewName.BASE)
        revisions[ViewName.HEAD] = head_rev
        head_commit = repository.commit(head_rev.sha)
        head_snap = _commit_snapshot(repository, head_rev.sha, ViewName.HEAD)

    views = [View(ViewName.HEAD, base_snap, head_snap, diff_snapshots(base_snap, head_snap))]
    if target_tip:
        tip = repository.resolve(target_tip)
        revisions[ViewName.TARGET_TIP] = tip
        views.append(_merged_view(repository, base_snap, head_commit, head_rev, tip, merge_bases))
    skipped = tuple((f"work-tree folder {path}", kind) if path.endswith("/") else
                    (f"work-tree file {path}", f"{kind}, not a regular file: skipped unread")
                    for path, kind in sorted(repository.skipped_work.items()))
    return Views(repository, form, revisions, merge_bases, base_snap, head_snap, tuple(views),
                 skipped)


def open_snapshot(repo: str | os.PathLike[str], rev: str) -> tuple[Revision, Snapshot]:
    """One revision's tree, for commands that look at a single commit."""
    repository = open_repository(repo)
    revision = repository.resolve(rev)
    return revision, _commit_snapshot(repository, revision.sha, rev)


def tree_views(repository: Repository, rev: str) -> Views:
    """One revision against the empty tree: every path of `rev` is added, so every copy
    of every contract is a changed side and the checks compare each tree's copies with
    each other (`impact audit`: the drift a tree already holds, charged to nobody)."""
    revision = repository.resolve(rev)
    base = _snapshot(repository, EMPTY_TREE, ViewName.BASE)
    head = _commit_snapshot(repository, revision.sha, ViewName.HEAD)
    return Views(repository, InputForm.COMMIT, {ViewName.HEAD: revision}, {}, base, head,
                 (View(ViewName.HEAD, base, head, diff_snapshots(base, head)),))


def revision_snapshot(repository: Repository, revision: Revision,
                      label: str = ViewName.BASE) -> Snapshot:
    """The tree of one resolved revision, its folders read when asked for."""
    return _commit_snapshot(repository, revision.sha, label)


def merged_commit(repository: Repository, view: View, tip: Revision,
                  head: Revision) -> Commit | None:
    """The merged tree of `view` (`head` merged onto `tip`) as a commit of the scratch
    store, parents the tip then the head, so that another change can be merged onto it in
    turn; None when the view holds no merged tree."""
    if view.new is None:
        return None
    commit = Commit()
    commit.tree = str(view.new.tree_id).encode()
    commit.parents = [tip.sha.encode(), head.sha.encode()]
    commit.author = commit.committer = b"impact <impact@localhost>"
    commit.author_time = commit.commit_time = 0
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = b"merged by impact queue\n"
    repository.scratch.add_object(commit)
    return commit


def queue_views(repository: Repository, target: Revision, head: Revision,
                onto: tuple[Revision, Commit] | None = None) -> Views:
    """One pull request of a merge queue, as `impact report --base T --head PR
    --target-tip T` sees it: merge base -> head, and the head merged onto the target;
    with `onto` (another pull request and its `merged_commit` onto the target), the head
    merged onto that instead, from its merge base with either parent of it, so the
    merged view holds both changes and a race between them is the head's."""
    merge_bases: dict[str, list[str]] = {}
    revisions = {ViewName.BASE: target, ViewName.HEAD: head}
    mb = repository.merge_base(target, head)
    merge_bases[BASE_TO_HEAD] = repository.merge_bases(target.sha, head.sha)
    base_snap = _commit_snapshot(repository, mb, ViewName.BASE)
    head_commit = repository.commit(head.sha)
    head_snap = _commit_snapshot(repository, head.sha, ViewName.HEAD)
    views = [View(ViewName.HEAD, base_snap, head_snap, diff_snapshots(base_snap, head_snap))]
    if onto is None:
        revisions[ViewName.TARGET_TIP] = target
        views.append(_merged_view(repository, base_snap, head_commit, head, target,
                                  merge_bases))
    else:
        other, tip_commit = onto
        tip = Revision(f"{target.spelled}+{other.spelled}", tip_commit.id.decode())
        revisions[ViewName.TARGET_TIP] = tip
        bases = repository.merge_bases(head.sha, target.sha, other.sha)
        merge_bases[HEAD_TO_TIP] = bases
        if not bases:
            reason = f"head and '{tip.spelled}' share no history"
            views.append(View(ViewName.MERGED, base_snap, None, SnapshotDiff(),
                              unavailable=reason))
        else:
            views.append(_merge_onto(repository, base_snap, head_commit, bases[0],
                                     tip_commit))
    return Views(repository, InputForm.BASE_HEAD, revisions, merge_bases, base_snap,
                 head_snap, tuple(views))
