"""Compare run_all.sh's outputs with expected.json: one line per scenario.

    python benchmarks/gpu/summary.py OUT [SCENARIO ...]

Reads OUT/<s>.report.json (its verdict line) and OUT/<s>.validation.json (its verdict and
degraded_mode) and OUT/timings.txt. Exit 0 when every verdict matches, 1 otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

EXPECTED = Path(__file__).with_name("expected.json")


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def report_line(doc: dict | None) -> str:
    """The runtime verdict line of an `impact report --format json` document."""
    if not doc or not isinstance(doc.get("verdict"), dict):
        return "(no report)"
    return str(doc["verdict"].get("line", "(no verdict line)"))


def validate_verdict(doc: dict | None) -> str:
    """The verdict of a validation report, with its degraded mode when there is one."""
    if not doc:
        return "(no validation report)"
    verdict = str(doc.get("verdict", "(no verdict)"))
    return verdict


def timings(out: Path) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    path = out / "timings.txt"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) >= 3:
                found[(parts[0], parts[1])] = parts[2]
    return found


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: summary.py OUT [SCENARIO ...]", file=sys.stderr)
        return 2
    out = Path(argv[0])
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))["scenarios"]
    names = argv[1:] or list(expected)
    times = timings(out)
    ok = True
    for name in names:
        want = expected[name]
        got_report = report_line(_read(out / f"{name}.report.json"))
        validation = _read(out / f"{name}.validation.json")
        got_verdict = validate_verdict(validation)
        degraded = (validation or {}).get("degraded_mode")
        match = got_report == want["report"] and got_verdict == want["validate"]
        ok = ok and match
        print(f"{'ok  ' if match else 'DIFF'} {name:12} report: {got_report!r} "
              f"(want {want['report']!r}, {times.get((name, 'report'), '?')} s)  "
              f"validate: {got_verdict}{f' [{degraded}]' if degraded else ''} "
              f"(want {want['validate']}, {times.get((name, 'validate'), '?')} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
