"""Errors a user can act on, each carrying its exit code.

Holds only exception types: every stage raises these for bad input, and only
`impact/cli.py` turns them into one `impact: error: ...` line and an exit code.
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


class ShallowHistory(ImpactError):
    """A shallow or partial clone lacks the history or objects needed."""


class BadUsage(ImpactError):
    """The command line itself is inconsistent (missing or clashing options)."""


class DamagedRepository(ImpactError):
    """The repository's object store could not be read: a corrupt or truncated pack or
    index, a damaged loose object, or permission denied on `.git/objects`."""
