"""The pre-commit hook's entry point: the `impact-pre-commit` console script.

Reports in-process (`impact.api.report`, as `impact report --worktree`) on the repository
in the current folder (under `git commit`, pre-commit has stashed the unstaged edits, so
this is what is being committed). At the pre-push stage it reports on the commits being
pushed, from their merge base with the remote's commit (`PRE_COMMIT_FROM_REF` and
`PRE_COMMIT_TO_REF`); for a branch the remote has no commit of (no from-ref, or the
all-zero one of a new branch) from their merge base with `--base`, else the branch's
upstream, else the default branch (`origin/HEAD`, `origin/main`, `origin/master`, a local
`main` or `master`); with none of them it fails with one line naming the fix. It never
passes without a report. It prints the one-line findings and the verdict line, and fails
the hook per `--fail-on` (`breaks` default, `needs-device`, `never`); a report that could
not run always fails. `impact report`'s own exit codes stay as documented.

Maintainers: the report runs once, through the library entry; a report that cannot run
is one `impact: error: ...` line and its exit code, as on the command line
(`impact.errors.failure`). The lines are made here from `findings()` and the words
module, the verdict line last (`--quiet` would drop the findings).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from impact.api import Report, Session, report
from impact.errors import EXIT_BAD_INPUT, EXIT_NONE, NoComparisonBase, failure
from impact.git import Revision, open_repository
from impact.git.upstream import HEADS, comparison_base, current_branch
from impact.integrations import FAIL_ON, fails
from impact.render.findings import findings
from impact.render.words import printable, reason_text
from impact.rows import Lane, Status


def _where(side: Mapping[str, Any]) -> str:
    return f"{side['file']}:{side['line']}" if side["line"] else side["file"]


def one_line_findings(report: Mapping[str, Any]) -> list[str]:
    """One line per charged finding that needs attention, most severe first (paths with
    control characters print as escapes: a file name cannot forge a verdict line)."""
    report = printable(report)
    lines = []
    for finding in findings(report):
        if (finding.preexisting or finding.lane != Lane.IMPACT
                or finding.status not in (Status.MISMATCH, Status.CHANGED)):
            continue
        where = ", ".join(dict.fromkeys(_where(s) for s in finding.changed_sides))
        against = ", ".join(dict.fromkeys(_where(s) for s in finding.counterparts))
        line = (f"{finding.status} {finding.contract} {finding.subject} "
                f"[{'+'.join(finding.views)}]: {reason_text(finding.reason, finding.details)}"
                f" ({where}")
        lines.append(line + (f" vs {against})" if against else ")"))
    return lines


ZERO_SHA = "0" * 40
"""The from-ref a push of a new branch carries: the remote has no commit of it."""


def _pushing(env: Mapping[str, str]) -> bool:
    """Whether this is the pre-push stage: pre-commit names the refs being pushed, or (for
    a history the remote lacks entirely) only the branch and the remote."""
    return any(env.get(name) for name in ("PRE_COMMIT_TO_REF", "PRE_COMMIT_LOCAL_BRANCH",
                                          "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_BRANCH"))


def _fallback_base(repo: str, branch: str | None, given: str | None) -> Revision:
    """What a push that names no remote commit is compared with: `--base`, else the
    branch's upstream, else the default branch; none is one error line naming the fix."""
    repository = open_repository(repo)
    if given:
        return repository.resolve(given)
    if branch is None or not branch.startswith(HEADS):
        branch = current_branch(repository)
    found = comparison_base(repository, branch)
    if found is None:
        name = branch.removeprefix(HEADS) if branch else "HEAD"
        raise NoComparisonBase(
            f"nothing to compare the push of '{name}' with: the remote has none of its "
            "commits, it has no upstream, and there is no default branch (origin/HEAD, "
            "origin/main, origin/master, or another local main or master)",
            f"push it once with 'git push -u <remote> {name}', set an upstream with "
            "'git branch --set-upstream-to', or give the hook --base REV")
    return found


def _change(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, Any]:
    """What the hook reports on: at the pre-push stage the pushed commits from their merge
    base with the remote's commit, or, for a branch the remote lacks (no from-ref, or the
    all-zero one), with `--base`, the upstream or the default branch; else the work being
    committed. Never nothing: a push with no base is an error, not a pass."""
    if not _pushing(env):
        return {"worktree": True}
    from_ref = env.get("PRE_COMMIT_FROM_REF") or ""
    local = env.get("PRE_COMMIT_LOCAL_BRANCH")
    head = env.get("PRE_COMMIT_TO_REF") or local or "HEAD"
    if from_ref and from_ref != ZERO_SHA:
        return {"base": from_ref, "head": head}
    base = _fallback_base(args.repo, local, args.base)
    print(f"impact-pre-commit: the remote has no commit of this branch; comparing with "
          f"its merge base with {base.spelled} ({base.sha[:12]})")
    return {"base": base.sha, "head": head}


def _report(args: argparse.Namespace, env: Mapping[str, str]) -> Report:
    """The pushed commits at the pre-push stage (pre-commit names them in `env`), else
    the work being committed."""
    return report(args.repo, surface_map=args.surface_map, session=Session.for_command(),
                  **_change(args, env))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="impact-pre-commit",
        description="impact report on uncommitted work (or the commits being pushed), as a "
                    "pre-commit hook")
    parser.add_argument("--fail-on", choices=list(FAIL_ON), default="breaks",
                        help="what fails the hook: breaks (default), needs-device, never")
    parser.add_argument("--repo", default=".", help="the repository (default: here)")
    parser.add_argument("--surface-map", metavar="NAME|PATH", help="as for impact report")
    parser.add_argument("--base", metavar="REV",
                        help="what a push of a branch the remote lacks is compared with "
                             "(default: its upstream, else origin/HEAD, origin/main, "
                             "origin/master, main or master)")
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point of `impact-pre-commit`; 0 passes the hook, anything else fails it."""
    args = _parser().parse_args(argv)
    try:
        result = _report(args, os.environ if env is None else env)
    except (Exception, KeyboardInterrupt) as exc:
        line, code = failure(exc)
        print(printable(line), file=sys.stderr)
    else:
        code = result.exit_code
        for line in one_line_findings(result.document):
            print(line)
        print(result.verdict_line())
    if fails(code, args.fail_on):
        if code < EXIT_BAD_INPUT:
            print(f"impact-pre-commit: failing on this verdict (--fail-on {args.fail_on})")
        return code
    return EXIT_NONE


if __name__ == "__main__":
    sys.exit(main())
