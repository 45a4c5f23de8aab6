"""Errors a user can act on, each carrying its exit code.

Holds the exception types every stage raises for bad input, and `failure`: the one
`impact: error: ...` line and exit code any failure is shown as. Only the ways in (the
command line, the pre-commit hook, the GitHub Action's entry) print it; the library
raises.
"""

from __future__ import annotations

EXIT_NONE = 0
EXIT_BREAKS = 1
EXIT_NEEDS_DEVICE = 2
EXIT_BAD_INPUT = 3
EXIT_INTERNAL = 4


class ImpactError(Exception):
    """A failure the user can fix; the message names the problem and the fix."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem}; {fix}")
        self.problem = problem
        self.fix = fix


class NotARepository(ImpactError):
    """The path given as the repository holds no git repository."""


class UnknownRevision(ImpactError):
    """A revision spelling resolves to no commit."""


class NoMergeBase(ImpactError):
    """Two revisions share no history, so there is no base to compare with."""


class NoComparisonBase(ImpactError):
    """A branch has no upstream and the repository no default branch, so a push of it
    has nothing to be compared with."""


class ShallowHistory(ImpactError):
    """A shallow or partial clone lacks the history or objects needed."""


class BadUsage(ImpactError):
    """The command line itself is inconsistent (missing or clashing options)."""


class DamagedRepository(ImpactError):
    """The repository's object store could not be read: a corrupt or truncated pack or
    index, a damaged loose object, or permission denied on `.git/objects`."""


def failure(exc: BaseException) -> tuple[str, int]:
    """The one stderr line and the exit code a way in shows for `exc`: an ImpactError's
    problem and fix with its own code; an interrupt; anything else an internal error
    (exit 4) that asks for the traceback."""
    if isinstance(exc, ImpactError):
        return f"impact: error: {exc}", exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return "impact: interrupted", EXIT_INTERNAL
    return (f"impact: internal error: {type(exc).__name__}: {exc} "
            "(run again with --debug for the traceback, and report it)", EXIT_INTERNAL)
