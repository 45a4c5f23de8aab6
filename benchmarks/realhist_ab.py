"""Two checkouts of impact timed on the same real commits, one right after the other.

Wall time on a shared machine drifts by tens of percent within an hour, so two separate
`realhist.py` runs cannot tell a regression of 0.1 s from noise. This runs, for each of a
repository's newest first-parent commits, `impact report --commit C --no-cache -q` in a
fresh process from checkout A and then from checkout B (each on `PYTHONPATH`), and prints
both medians and worsts and the commits whose difference is largest. Make the older
checkout with `git worktree add /tmp/old <rev>`. Run:

    python benchmarks/realhist_ab.py --repo /path/to/aiter.git --a /tmp/old --b . --last 40

Exit status: 0, or 3 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realhist import first_parent  # the same commit walk as realhist.py


def seconds(checkout: str, repo: str, sha: str, timeout: float, given: list[str]) -> float:
    """Wall seconds of one report from `checkout` (a timeout counts as `timeout`)."""
    env = {**os.environ, "PYTHONPATH": str(Path(checkout).resolve())}
    start = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "impact", "report", "--repo", repo, "--commit",
                        sha, "--no-cache", "-q", *given], env=env, cwd=tempfile.gettempdir(),
                       capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return timeout
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="the repository reported on")
    parser.add_argument("--a", required=True, help="checkout A of impact (e.g. the older)")
    parser.add_argument("--b", required=True, help="checkout B of impact")
    parser.add_argument("--last", type=int, default=40, help="newest first-parent commits")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a report")
    parser.add_argument("--surface-map", help="passed to impact report (a repository no "
                                              "built-in map fits: benchmarks/maps/)")
    args = parser.parse_args(argv)
    for checkout in (args.a, args.b):
        if not (Path(checkout) / "impact" / "__init__.py").is_file():
            print(f"realhist_ab: '{checkout}' is not a checkout of impact", file=sys.stderr)
            return 3
    times: dict[str, list[float]] = {"A": [], "B": []}
    commits = first_parent(args.repo, args.last)
    given = ["--surface-map", str(Path(args.surface_map).resolve())] if args.surface_map else []
    for sha, _ in commits:
        times["A"].append(seconds(args.a, args.repo, sha, args.timeout, given))
        times["B"].append(seconds(args.b, args.repo, sha, args.timeout, given))
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.2f}s, worst {max(values):.2f}s "
              f"over {len(values)} reports")
    moved = sorted(zip(times["A"], times["B"], commits, strict=True),
                   key=lambda t: t[1] - t[0], reverse=True)
    print("largest B - A:")
    for a, b, (sha, subject) in moved[:5]:
        print(f"  {b - a:+.2f}s  {sha[:10]}  A {a:.2f}s  B {b:.2f}s  {subject[:60]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
