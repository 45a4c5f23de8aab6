"""The one function that decides a validation verdict, and its exit code.

Maintainers: the rules of docs (consumers.md §1, "How the verdict is computed"), in
order: a missing stage is added as `skip`; a blocker finding → BLOCK; a should-fix
finding → NEEDS_WORK; a required stage without its satisfying status (`pass`; `info` for
the scan) or a missing runtime_identity → INCONCLUSIVE; else PASS. A report that fails its
schema can never stay PASS. Nothing else in impact decides a validation verdict.
"""

from __future__ import annotations

import enum
from typing import Any

from impact.errors import EXIT_BAD_INPUT


class StageStatus(enum.StrEnum):
    """How one stage of a validation ended."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    INFO = "info"  # the diff scan's: it names candidates, never a verdict


class Severity(enum.StrEnum):
    """How much a validation finding weighs, worst first."""

    BLOCKER = "blocker"
    SHOULD_FIX = "should-fix"
    NOTE = "note"


class Verdict(enum.StrEnum):
    """A validation's verdict."""

    PASS = "PASS"
    BLOCK = "BLOCK"
    NEEDS_WORK = "NEEDS_WORK"
    INCONCLUSIVE = "INCONCLUSIVE"


STAGES = ("merge_sim", "gpu_claim", "runtime_compat", "test_policy", "correctness", "perf",
          "diff_scan")
"""Every stage, always present in a report; all are required."""
SATISFIED = {"diff_scan": StageStatus.INFO}
"""A stage's satisfying status when it is not `pass` (the scan is informational)."""

EXIT_CODES = {Verdict.PASS: 0, Verdict.BLOCK: 1, Verdict.NEEDS_WORK: 1, Verdict.INCONCLUSIVE: 2}
EXIT_BAD_ARGUMENTS = EXIT_BAD_INPUT  # impact's documented bad-input code (3), never 2


def fill_stages(stages: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every stage present: one that did not run is `skip` with a reason."""
    return {name: stages.get(name) or {"status": StageStatus.SKIP,
                                       "reason": "the stage did not run", "detail": {}}
            for name in STAGES}


def decide(stages: dict[str, dict[str, Any]], findings: list[dict[str, Any]],
           runtime_identity: dict[str, Any] | None, *, schema_valid: bool = True
           ) -> tuple[Verdict, int, list[str]]:
    """(verdict, process exit code, why): the rules above, applied once."""
    stages = fill_stages(stages)
    severities = {f["severity"] for f in findings}
    if Severity.BLOCKER in severities:
        verdict, why = Verdict.BLOCK, ["a blocker finding"]
    elif Severity.SHOULD_FIX in severities:
        verdict, why = Verdict.NEEDS_WORK, ["a should-fix finding"]
    else:
        why = [f"{name} is {stage['status']}, not {SATISFIED.get(name, StageStatus.PASS)}"
               for name, stage in stages.items()
               if stage["status"] != SATISFIED.get(name, StageStatus.PASS)]
        if runtime_identity is None:
            why.append("no runtime_identity")
        verdict = Verdict.INCONCLUSIVE if why else Verdict.PASS
    if verdict == Verdict.PASS and not schema_valid:
        verdict, why = Verdict.INCONCLUSIVE, ["the report does not fit its schema"]
    return verdict, EXIT_CODES[verdict], why
