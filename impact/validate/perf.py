"""Timing: A/B/A rounds (base, head, base) of each bench command, and the classification
of every label.

Maintainers: the bench prints lines this module reads, one measurement each, in either
form (times in microseconds, lower is better):

    {"label": "gemm|1024x1024|fp16", "us": 12.5}
    gemm|1024x1024|fp16: 12.5 us

Any other line is ignored. The two base rounds give the noise floor; the threshold is the
largest of 3 %, the control deviation (between the two base rounds) and the base spread.
"""

from __future__ import annotations

import enum
import json
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from impact.kinds import ViewName
from impact.safefile import read_regular
from impact.validate.confine import Jail, confined_run
from impact.validate.verdict import Severity, StageStatus

MIN_THRESHOLD = 0.03
# The most of a bench command's output read back (its log file, which the command could
# replace with a FIFO or a link: impact/safefile.py); more reads as a failed round.
LOG_LIMIT_BYTES = 64 << 20


class PerfStatus(enum.StrEnum):
    """How one bench label's head compares with its base rounds."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    UNCHANGED = "unchanged"
    INCOMPARABLE = "incomparable"  # a side measured nothing

ROUNDS = (ViewName.BASE, ViewName.HEAD, ViewName.BASE)
_PLAIN = re.compile(r"^\s*(?P<label>[^:{}]+?)\s*:\s*(?P<us>[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?\d+)?)"
                    r"\s*us\s*$")


def parse_bench(text: str) -> dict[str, list[float]]:
    """Every measurement in a bench's output, by label."""
    out: dict[str, list[float]] = {}
    for line in text.splitlines():
        line = line.strip()
        label, value = None, None
        if line.startswith("{"):
            try:
                item = json.loads(line)
            except ValueError:
                continue
            if isinstance(item, dict) and isinstance(item.get("label"), str) and isinstance(
                    item.get("us"), int | float) and not isinstance(item.get("us"), bool):
                label, value = item["label"], float(item["us"])
        else:
            match = _PLAIN.match(line)
            if match:
                label, value = match["label"], float(match["us"])
        if label is not None and value is not None and value > 0:
            out.setdefault(label, []).append(value)
    return out


def classify(base1: list[float], head: list[float], base2: list[float]) -> dict[str, Any]:
    """One label's row from its three rounds."""
    row: dict[str, Any] = {"samples": {ViewName.BASE: len(base1) + len(base2),
                                       ViewName.HEAD: len(head)}}
    if not head or not (base1 and base2):
        missing = ViewName.HEAD if not head else ViewName.BASE
        row.update(status=PerfStatus.INCOMPARABLE, reason=f"no measurement on {missing}")
        return row
    base_all = base1 + base2
    base_median = statistics.median(base_all)
    head_median = statistics.median(head)
    m1, m2 = statistics.median(base1), statistics.median(base2)
    control = abs(m1 - m2) / base_median
    spread = (max(base_all) - min(base_all)) / base_median
    threshold = max(MIN_THRESHOLD, control, spread)
    change = (head_median - base_median) / base_median
    status = (PerfStatus.REGRESSION if change > threshold else
              PerfStatus.IMPROVEMENT if change < -threshold else PerfStatus.UNCHANGED)
    row.update(status=status, base_median=base_median, head_median=head_median,
               gain=base_median / head_median, change_pct=round(change * 100, 3),
               noise_floor=round(control * 100, 3), control_deviation=round(control * 100, 3),
               base_spread=round(spread * 100, 3), threshold_pct=round(threshold * 100, 3))
    return row


@dataclass
class BenchRun:
    """One round of one bench command."""

    side: str
    command: str
    exit: int | None
    seconds: float
    log: str
    values: dict[str, list[float]]
    error: str = ""
    isolation: dict[str, Any] = field(default_factory=dict)  # the jail's record


def run_bench(command: str, root: Path, env: dict[str, str], log: Path, side: str,
              timeout: float, jail: Jail | None = None) -> BenchRun:
    """One shell command in `root`, confined by `jail` (impact/validate/confine.py;
    default: only `root` writable); its output kept in `log` (a folder of the parent's)
    and parsed."""
    jail = jail or Jail(writable=(root,))
    log.unlink(missing_ok=True)
    done = confined_run(command, cwd=root, env=env, writable=jail.writable, log=log,
                        timeout=timeout, devices=jail.devices, read_only=jail.read_only,
                        hide=jail.hide, network=jail.network, isolate=jail.isolate)
    code, seconds = done.exit, done.seconds
    if done.error:
        return BenchRun(side, command, code, seconds, str(log), {}, done.error,
                        done.isolation)
    error = "" if code == 0 else f"exit {code}"
    try:  # only as a regular file of a bounded size
        text = read_regular(log, limit=LOG_LIMIT_BYTES).decode(errors="replace")
    except OSError as exc:
        return BenchRun(side, command, code, seconds, str(log), {},
                        f"its output cannot be read ({exc})", done.isolation)
    return BenchRun(side, command, code, seconds, str(log),
                    parse_bench(text) if code == 0 else {}, error, done.isolation)


def compare_rounds(rounds: list[BenchRun]) -> tuple[str, str, list[dict[str, Any]],
                                                     list[dict[str, str]]]:
    """The perf stage from the A/B/A rounds of one or more commands: (status, reason,
    rows, findings). A failed round makes it fail (an environment fact, not blame)."""
    errors = [f"{r.side} round of '{r.command}': {r.error}" for r in rounds if r.error]
    if errors:
        return StageStatus.FAIL, "; ".join(errors), [], []
    rows: list[dict[str, Any]] = []
    by_command: dict[str, list[BenchRun]] = {}
    for r in rounds:
        by_command.setdefault(r.command, []).append(r)
    for command, runs in sorted(by_command.items()):
        base1, head, base2 = (r.values for r in runs)
        for label in sorted(set(base1) | set(head) | set(base2)):
            row = classify(base1.get(label, []), head.get(label, []), base2.get(label, []))
            rows.append({"label": label, "command": command, **row})
    findings = [{"severity": Severity.SHOULD_FIX, "stage": "perf",
                 "detail": f"{r['label']}: head is {r['change_pct']:g}% slower than base "
                           f"(threshold {r['threshold_pct']:g}%)"}
                for r in rows if r["status"] == PerfStatus.REGRESSION]
    findings += [{"severity": Severity.NOTE, "stage": "perf",
                  "detail": f"{r['label']}: {r['reason']}"}
                 for r in rows if r["status"] == PerfStatus.INCOMPARABLE]
    comparable = [r for r in rows if r["status"] != PerfStatus.INCOMPARABLE]
    regressed = [r for r in rows if r["status"] == PerfStatus.REGRESSION]
    if findings and any(f["severity"] == Severity.SHOULD_FIX for f in findings):
        return StageStatus.FAIL, f"{len(regressed)} label(s) regressed", rows, findings
    if not comparable:
        return (StageStatus.SKIP, "the bench printed no measurement both sides share", rows,
                findings)
    return (StageStatus.PASS, f"{len(comparable)} label(s) compared, no regression", rows,
            findings)
