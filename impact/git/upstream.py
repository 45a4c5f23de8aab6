"""Which revision a branch's work is compared against when no one names it: the branch's
upstream, else the repository's default branch.

Why: a push hook that is given no remote ref (a branch never pushed, no upstream) must
still compare the pushed commits with something, or a break passes unseen. Git's own
answer is the upstream (`branch.<name>.remote` and `.merge`); a branch without one is
compared with the default branch, as a pull request of it would be.

Maintainers: reads the repository's config and refs through dulwich, never writes them and
runs no `git`. Returns the revision as spelled (`origin/main`) so a report names what it
compared with; the merge base is the report's own business (`open_views`).
"""

from __future__ import annotations

from impact.git.repository import Repository, Revision

DEFAULT_BRANCHES = ("main", "master")
"""The default branch's usual names, tried when `origin/HEAD` names none."""

HEADS = "refs/heads/"


def current_branch(repository: Repository) -> str | None:
    """The branch HEAD points at (`refs/heads/...`), or None on a detached HEAD."""
    refs, _sha = repository.repo.refs.follow(b"HEAD")
    names = [ref.decode() for ref in refs if ref.startswith(HEADS.encode())]
    return names[-1] if names else None


def upstream(repository: Repository, branch: str) -> str | None:
    """The ref the branch tracks (`branch.<name>.remote` and `.merge`), when it is set and
    exists: `refs/remotes/<remote>/<name>`, or a local branch for the remote `.`."""
    name = branch.removeprefix(HEADS)
    config = repository.repo.get_config()
    section = (b"branch", name.encode())
    try:
        remote = config.get(section, b"remote").decode()
        merge = config.get(section, b"merge").decode()
    except KeyError:
        return None
    tracked = merge.removeprefix(HEADS)
    ref = merge if remote == "." else f"refs/remotes/{remote}/{tracked}"
    return ref if ref.encode() in repository.repo.refs else None


def default_branch(repository: Repository, branch: str | None) -> str | None:
    """The default branch's ref: what `origin/HEAD` names, else `origin/main` or
    `origin/master`, else a local `main` or `master` other than `branch` itself."""
    refs = repository.repo.refs
    symbolic = refs.get_symrefs().get(b"refs/remotes/origin/HEAD")
    candidates = [symbolic.decode()] if symbolic else []
    candidates += [f"refs/remotes/origin/{name}" for name in DEFAULT_BRANCHES]
    candidates += [f"{HEADS}{name}" for name in DEFAULT_BRANCHES]
    for ref in candidates:
        if ref != branch and ref.encode() in refs:
            return ref
    return None


def _short(ref: str) -> str:
    for prefix in (HEADS, "refs/remotes/"):
        if ref.startswith(prefix):
            return ref[len(prefix):]
    return ref


def comparison_base(repository: Repository, branch: str | None) -> Revision | None:
    """What `branch`'s work is compared against (its upstream, else the default branch),
    or None when the repository has neither."""
    ref = (upstream(repository, branch) if branch else None) or default_branch(
        repository, branch)
    if ref is None:
        return None
    return Revision(spelled=_short(ref), sha=repository.resolve(ref).sha)
