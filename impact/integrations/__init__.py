"""Ways into `impact` from other tools: the GitHub Action's entry and the pre-commit hook.

Maintainers: these sit on top, beside the command line: each runs one report through the
library entry (`impact.api.report`, in a `Session.for_command`), shows a report that could
not run as the command line would (`impact.errors.failure`: one line, the documented exit
code), and decides nothing: the verdict and its exit code come from the report; an
integration only maps them onto its host through `--fail-on`.
"""

from __future__ import annotations

from collections.abc import Mapping

from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS, EXIT_NEEDS_DEVICE

# Which report exit codes fail the host's step or hook, per `fail-on` value. An error
# (exit 3 or 4) always fails: a report that could not run has said nothing.
FAIL_ON: Mapping[str, frozenset[int]] = {
    "breaks": frozenset({EXIT_BREAKS}),
    "needs-device": frozenset({EXIT_BREAKS, EXIT_NEEDS_DEVICE}),
    "never": frozenset(),
}


def fails(exit_code: int, fail_on: str) -> bool:
    """Whether a report that ended in `exit_code` fails the host under `fail_on`."""
    return exit_code >= EXIT_BAD_INPUT or exit_code in FAIL_ON[fail_on]


__all__ = ["FAIL_ON", "fails"]
