"""Stale branches from real history: each commit's change replayed onto an older base.

For each of a repository's newest first-parent commits C, with first parent P, the change
P -> C is replayed onto B = P~K (a three-way merge with P as the base, as a cherry-pick
does, by dulwich) and committed as R on B, in a scratch clone that borrows the
repository's objects (the repository itself is not written). Then, in fresh processes:

    impact report --base B --head R --target-tip P    the pull request as if opened K
                                                       commits earlier, reviewed against
                                                       the branch as it stood when C landed
    impact report --commit C                           C as it landed

R merged onto P is C's own tree (a replay for which it is not, such as a revert of a commit
newer than B, which replays as nothing, is skipped), so the stale report must not be
milder than C's own verdict on what C did: C BREAKS -> BREAKS, C NEEDS-DEVICE -> not NONE
or N/A. A milder one is a miss and is listed (exit 1). A more severe one is listed too,
for a hand check: the head view compares R with B, whose counterparts may differ from P's
(a real finding for a branch based on B), or the merged view charged the tip's own edits
to the branch (a precision loss). A replay that conflicts is skipped and counted. Prints
the time of every stale report, their median and worst. Run:

    python benchmarks/stale.py --repo /path/to/aiter.git --last 150 --back 20 [--json F]

Needs the git command line (for the scratch clone). Exit status: 0, 1 on a miss or an
error, 3 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dulwich.merge import Merger, three_way_merge
from dulwich.objects import Commit
from dulwich.repo import Repo
from realhist import Outcome, first_parent, git_dir, run_one, run_report

SEVERITY = {"N/A": 0, "NONE": 1, "NEEDS-DEVICE": 2, "BREAKS": 3}


@dataclass
class Pair:
    """One commit: its own report and the report of its change replayed onto P~K."""

    commit: str
    subject: str
    own: str
    stale: str
    stale_seconds: float
    own_seconds: float
    note: str = ""


def replay(repo: Repo, commit: str, back: int) -> tuple[str, str, str] | str:
    """(B, R, P) for `commit`, or why it cannot be replayed: R is P -> C merged onto
    B = P~K (a cherry-pick, by dulwich's three-way merge), written into `repo`."""
    target = repo[commit.encode()]
    if not target.parents:
        return "a root commit"
    parent = repo[target.parents[0]]
    base = parent
    for _ in range(back):
        if not base.parents:
            return f"fewer than {back} commits below its parent"
        base = repo[base.parents[0]]
    store = repo.object_store
    tree, conflicts = three_way_merge(store, parent, base, target, merger=Merger(store))
    if conflicts:
        return "the replay conflicts"
    store.add_object(tree)
    head = Commit()
    head.tree, head.parents = tree.id, [base.id]
    head.author = head.committer = b"stale <stale@example.invalid>"
    head.author_time = head.commit_time = target.commit_time
    head.author_timezone = head.commit_timezone = 0
    head.message = b"replay " + target.id + b"\n"
    store.add_object(head)
    # The comparison holds only where the branch merged onto the tip is the commit: a
    # revert of a commit newer than B replays as nothing, and merges onto P as P.
    merged, conflicts = three_way_merge(store, base, parent, head, merger=Merger(store))
    if conflicts or merged.id != target.tree:
        return "merged onto the tip, the replay is not the commit"
    return base.id.decode(), head.id.decode(), parent.id.decode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the repository (bare is fine)")
    parser.add_argument("--last", type=int, default=50, help="the newest N first-parent commits")
    parser.add_argument("--back", type=int, default=20, help="how many commits older the base is")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per report (60)")
    parser.add_argument("--json", type=Path, help="also write every pair to this file")
    args = parser.parse_args(argv)
    if not Path(git_dir(args.repo)).is_dir():
        parser.exit(3, f"stale: no git repository at {args.repo}; pass --repo DIR\n")
    if shutil.which("git") is None:
        parser.exit(3, "stale: needs the git command line\n")
    from impact_bytecode import ready  # benchmarks/impact_bytecode.py

    print(ready(sys.executable, cwd=tempfile.gettempdir()))
    scratch = Path(tempfile.mkdtemp(prefix="impact-stale-"))
    pairs: list[Pair] = []
    skipped: Counter[str] = Counter()
    try:
        clone = scratch / "repo.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", git_dir(args.repo),
                        str(clone)], check=True, capture_output=True)
        writable = Repo(str(clone))
        for sha, subject in first_parent(str(clone), args.last):
            made = replay(writable, sha, args.back)
            if isinstance(made, str):
                skipped[made] += 1
                continue
            base, head, parent = made
            stale: Outcome = run_report(str(clone), ["--base", base, "--head", head,
                                                     "--target-tip", parent],
                                        sha, subject, args.timeout, cache=False)
            own = run_one(str(clone), sha, subject, args.timeout, None, cache=False)
            pair = Pair(sha, subject, own.verdict, stale.verdict, stale.seconds, own.seconds,
                        stale.note or own.note)
            pairs.append(pair)
            print(f"{sha[:10]} own {own.verdict:<12} stale {stale.verdict:<12} "
                  f"{stale.seconds:5.1f}s  {subject[:60]}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    known = [p for p in pairs if p.own in SEVERITY and p.stale in SEVERITY]
    milder = [p for p in known if SEVERITY[p.stale] < SEVERITY[p.own]]
    harsher = [p for p in known if SEVERITY[p.stale] > SEVERITY[p.own]]
    errors = [p for p in pairs if p not in known]
    times = [p.stale_seconds for p in pairs]
    print(f"\n{len(pairs)} replayed {args.back} commits back; skipped: "
          + (", ".join(f"{why} {n}" for why, n in skipped.items()) or "none"))
    if times:
        worst = max(pairs, key=lambda p: p.stale_seconds)
        print(f"stale report wall time: median {statistics.median(times):.2f}s, worst "
              f"{worst.stale_seconds:.2f}s ({worst.commit[:10]})")
    print(f"same verdict {len(known) - len(milder) - len(harsher)}, milder {len(milder)}, "
          f"more severe {len(harsher)}, errors {len(errors)}")
    for label, group in (("MILDER (a miss)", milder), ("more severe (check by hand)", harsher),
                         ("error", errors)):
        for p in group:
            print(f"  {label}: {p.commit[:10]} own {p.own} stale {p.stale}  {p.subject[:60]}"
                  f"{'  ' + p.note if p.note else ''}")
    if args.json:
        args.json.write_text(json.dumps([asdict(p) for p in pairs], indent=1) + "\n",
                             encoding="utf-8")
    return 1 if milder or errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
