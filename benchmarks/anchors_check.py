"""Are findings anchored on the lines the change changed? Checked against git's own diff.

For each of a repository's commits (the newest first-parent ones, or those named), this
runs `impact report --commit C --format json` from this checkout and, for every side a
charged row names as `changed` at the head, asks `git diff -U0 C^ C` whether its line is
an added or replaced line of that file (git's Myers diff, not impact's), else a line of
a hunk's three lines of context (GitHub shows an annotation there too). A side the row
says it could not anchor (`details.unanchored`, with why) is counted apart. It prints one
line per commit with findings, then the totals, and every side that is neither. Run:

    python benchmarks/anchors_check.py --repo /path/to/aiter.git --last 40 --want 10

Exit status: 0 when every changed side is in a hunk or says why, 1 otherwise,
3 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realhist import first_parent  # the same commit walk as realhist.py

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
ROOT = Path(__file__).resolve().parent.parent


def added_lines(repo: str, sha: str, context: int = 0) -> dict[str, set[int]]:
    """path → the lines of the commit's version that git's diff adds or replaces, with
    `context` lines around each hunk (GitHub shows 3: an annotation on one shows inline)."""
    text = subprocess.run(["git", "--git-dir", repo, "diff", f"-U{context}", "--no-renames",
                           "--no-color", f"{sha}^", sha], capture_output=True, text=True,
                          errors="replace", check=True).stdout
    out: dict[str, set[int]] = {}
    path = ""
    for line in text.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else ""
        match = _HUNK.match(line)
        if match and path:
            start = int(match[1])
            count = int(match[2]) if match[2] is not None else 1
            out.setdefault(path, set()).update(range(start, start + count))
    return out


def report(repo: str, sha: str, given: list[str]) -> dict[str, Any] | None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "impact", "report", "--repo", repo,
                           "--commit", sha, "--format", "json", "--no-cache", *given], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True)
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="a git repository (bare is fine)")
    parser.add_argument("--last", type=int, default=40, help="newest first-parent commits")
    parser.add_argument("--want", type=int, default=10,
                        help="stop after this many commits with charged findings")
    parser.add_argument("--commit", action="append", default=[], help="these commits instead")
    parser.add_argument("--surface-map", help="passed to impact report")
    args = parser.parse_args(argv)
    repo = subprocess.run(["git", "-C", args.repo, "rev-parse", "--git-dir"],
                          capture_output=True, text=True)
    if repo.returncode:
        print(f"anchors_check: '{args.repo}' is not a git repository", file=sys.stderr)
        return 3
    git_dir = str((Path(args.repo) / repo.stdout.strip()).resolve()) \
        if not Path(repo.stdout.strip()).is_absolute() else repo.stdout.strip()
    given = ["--surface-map", str(Path(args.surface_map).resolve())] if args.surface_map else []
    commits = args.commit or [sha for sha, _ in first_parent(args.repo, args.last)]
    on = said = off = near = seen = 0
    misses: list[str] = []
    for sha in commits:
        doc = report(args.repo, sha, given)
        if doc is None:
            print(f"{sha[:10]}  no report")
            continue
        rows = [r for r in doc["rows"] if not r["preexisting"]
                and r["status"] in ("mismatch", "changed")]
        if not rows:
            continue
        seen += 1
        lines = added_lines(git_dir, sha)
        hunks = added_lines(git_dir, sha, 3)
        counts = [0, 0, 0, 0]
        for row in rows:
            why = row["details"].get("unanchored", {})
            for side in row["sides"]:
                if side["role"] != "changed" or side["revision"] != "head":
                    continue
                if side["line"] in lines.get(side["file"], set()):
                    counts[0] += 1
                elif side["file"] in why:
                    counts[1] += 1
                elif side["line"] in hunks.get(side["file"], set()):
                    counts[3] += 1
                else:
                    counts[2] += 1
                    misses.append(f"{sha[:10]} {row['contract']}/{row['reason']} "
                                  f"{side['file']}:{side['line']}")
        on, said, off = on + counts[0], said + counts[1], off + counts[2]
        near += counts[3]
        print(f"{sha[:10]}  {doc['verdict']['kind']:<12} on a changed line {counts[0]:>3}, "
              f"in a hunk's context {counts[3]:>3}, says why {counts[1]:>3}, "
              f"outside every hunk {counts[2]:>3}")
        if seen >= args.want:
            break
    print(f"\n{seen} commits with findings: {on} changed sides on a changed line, {near} on "
          f"a context line of a hunk (git's diff aligned the lines otherwise), {said} say "
          f"why not, {off} outside every hunk")
    for miss in misses:
        print(f"  outside every hunk: {miss}")
    return 1 if off else 0


if __name__ == "__main__":
    raise SystemExit(main())
