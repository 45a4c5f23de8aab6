"""The pre-commit hook's entry point: the `impact-pre-commit` console script.

Reports in-process (`impact.api.report`, as `impact report --worktree`) on the repository
in the current folder (under
`git commit`, pre-commit has stashed the unstaged edits, so this is what is being
committed); at the pre-push stage, where pre-commit sets `PRE_COMMIT_FROM_REF` and
`PRE_COMMIT_TO_REF`, it reports on the commits being pushed instead. It prints the
one-line findings and the verdict line, and fails the hook per `--fail-on` (`breaks`
default, `needs-device`, `never`); a report that could not run always fails. `impact
report`'s own exit codes stay as documented.

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
from impact.errors import EXIT_BAD_INPUT, EXIT_NONE, failure
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


def _report(args: argparse.Namespace, env: Mapping[str, str]) -> Report:
    """The pushed commits at the pre-push stage (pre-commit names them in `env`), else
    the work being committed."""
    from_ref, to_ref = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")
    change: dict[str, Any] = ({"base": from_ref, "head": to_ref} if from_ref and to_ref
                              else {"worktree": True})
    return report(args.repo, surface_map=args.surface_map, session=Session.for_command(),
                  **change)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="impact-pre-commit",
        description="impact report on uncommitted work (or the commits being pushed), as a "
                    "pre-commit hook")
    parser.add_argument("--fail-on", choices=list(FAIL_ON), default="breaks",
                        help="what fails the hook: breaks (default), needs-device, never")
    parser.add_argument("--repo", default=".", help="the repository (default: here)")
    parser.add_argument("--surface-map", metavar="NAME|PATH", help="as for impact report")
    return parser


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point of `impact-pre-commit`; 0 passes the hook, anything else fails it."""
    args = _parser().parse_args(argv)
    try:
        result = _report(args, os.environ if env is None else env)
    except (Exception, KeyboardInterrupt) as exc:
        line, code = failure(exc)
        print(line, file=sys.stderr)
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
