"""Benchmark: `impact queue` over 50 pull requests on a repository the size of
ROCm/rocm-libraries.

Builds the repository of benchmarks/scale.py (`--files`, default 100,000, the synthetic
hipDNN/rocKE tree inside, a `target` branch ahead of `main`), then `--prs` pull request
branches off `main` (default 50), written with `git fast-import`:

    pr/race-arg   a b.param added to the gfx950 builder and every copy of its list
    pr/race-pin   a new test pin restating that list as it stands    (the two break together)
    pr/comment-N  a comment appended to one surfaced Python or C++ file (a few share a file)
    pr/outside-N  an edit of one filler file outside every surface

and times `impact queue --target target 'pr/*'` in a fresh process with an empty cache,
`--runs` times (default 1), printing wall and CPU seconds, peak RSS, the pair counts
(pairs, skipped as disjoint, analysed) and the verdict; it fails unless the race pair
reads BREAKS and the verdict is BREAKS. The goal: 50 pull requests in at most 60 s on 2
cores. Run:

    python benchmarks/queue_scale.py [--files 100000] [--prs 50] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scale  # benchmarks/scale.py: the repository and the timing

from impact.fixtures import edits as e

PIN = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
       "TestGfx950AttentionDenseSignature.cpp")
PIN_COPY = PIN.replace("Signature.cpp", "SignatureCopy.cpp")


def _race(files: scale.Files) -> dict[str, dict[str, bytes]]:
    """The two pull requests that are each consistent alone and break together."""
    arg = dict(files)
    for edit in (e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),
                 e.add_pack_argument(e.GFX950_DENSE_PACK, "dropout_seed"),
                 e.add_pack_argument(PIN, "dropout_seed"),
                 e.add_launch_argument(e.GFX950_DENSE_PACK, "dropoutSeed")):
        edit(arg)
    pin = files[PIN].replace(b"TestGfx950AttentionDenseSignature",
                             b"TestGfx950AttentionDenseSignatureCopy")
    return {"pr/race-arg": {p: d for p, d in arg.items() if files.get(p) != d},
            "pr/race-pin": {PIN_COPY: pin}}


def _comment(path: str, data: bytes, n: int) -> bytes:
    mark = b"#" if path.endswith(".py") else b"//"
    return data + mark + b" queue benchmark note %d\n" % n


def pull_requests(fixture: scale.Files, filler: list[str], count: int
                  ) -> dict[str, dict[str, bytes]]:
    """`count` pull requests: the race pair, then comment edits on surfaced files (every
    fifth on a file an earlier one edits, so some pairs share a file), then filler edits."""
    prs = _race(fixture)
    sources = sorted(p for p in fixture if p.endswith((".py", ".cpp"))
                     and "/aot_catalog/" not in p and p not in (e.GFX950_DENSE, PIN))
    comments = max(0, (count - len(prs)) * 2 // 5)
    for i in range(comments):
        path = sources[(i // 5 if i % 5 == 4 else i) % len(sources)]
        prs[f"pr/comment-{i:02d}"] = {path: _comment(path, fixture[path], i)}
    outside = [p for p in filler if p.startswith("projects/") and p.endswith(".cpp")
               and not p.startswith("projects/hipdnn/")]
    for i in range(count - len(prs)):
        path = outside[i]
        prs[f"pr/outside-{i:02d}"] = {path: scale.filler_content(path, 5000 + i)}
    return prs


def add_branches(repo: Path, prs: dict[str, dict[str, bytes]]) -> None:
    """Each pull request as one commit on `main`'s tip, on its own branch."""
    main_sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "main"], check=True,
                              capture_output=True, text=True).stdout.strip()
    stream = scale.FastImport(repo)
    out = stream.out
    for ref, changes in prs.items():
        stream.clock += 60
        stamp = b"%s %d +0000\n" % (scale.AUTHOR, stream.clock)
        out.write(b"commit refs/heads/%s\n" % ref.encode())
        out.write(b"author " + stamp + b"committer " + stamp)
        stream._data(f"{ref}\n".encode())
        out.write(b"from %s\n" % main_sha.encode())
        for path, data in sorted(changes.items()):
            out.write(b"M 100644 inline %s\n" % path.encode())
            stream._data(data)
        out.write(b"\n")
    stream.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--prs", type=int, default=50)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--dir", help="build here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the repository")
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args(argv)
    if shutil.which("git") is None:
        raise SystemExit("queue_scale.py needs the git command line")
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="impact-queue-"))
    try:
        built = scale.build(root, files=args.files)
        fixture, _names = scale.fixture_files(900)
        filler = subprocess.run(["git", "-C", str(root), "ls-tree", "-r", "--name-only",
                                 "main"], check=True, capture_output=True,
                                text=True).stdout.split()
        prs = pull_requests(fixture, [p for p in filler if p not in fixture], args.prs)
        add_branches(root, prs)
        print(f"built {built.files:,} files and {len(prs)} pull requests at {root} "
              f"in {built.build_s:.1f} s", flush=True)
        from impact_bytecode import ready  # benchmarks/impact_bytecode.py

        print(ready(sys.executable), flush=True)
        runs = []
        for i in range(args.runs):
            cache = root.parent / f"{root.name}-cache-{i}"
            env = os.environ | {"XDG_CACHE_HOME": str(cache)}
            runs.append(scale.run_once(
                [sys.executable, "-m", "impact", "queue", "--repo", str(root), "--target",
                 "target", "--format", "json", "pr/*"], env))
            shutil.rmtree(cache, ignore_errors=True)
        document = json.loads(runs[-1].stdout)
        counts = document["counts"]
        race = [p for p in document["pairs"]
                if {p["first"], p["second"]} == {"pr/race-arg", "pr/race-pin"}]
        ok = bool(race) and race[0]["verdict"]["kind"] == "BREAKS" \
            and document["verdict"]["kind"] == "BREAKS"
        seconds = sorted(r.seconds for r in runs)[len(runs) // 2]
        cpu = sorted(r.cpu_s for r in runs)[len(runs) // 2]
        print(f"impact queue, {counts['prs']} pull requests on {built.files:,} files: "
              f"{seconds:.1f} s wall, {cpu:.1f} s CPU, {max(r.rss_kb for r in runs) / 1024:.0f} "
              f"MB peak; pairs {counts['pairs']}, {counts['disjoint']} skipped as disjoint, "
              f"{counts['analysed']} analysed; {document['verdict']['line']}; "
              f"race pair {'BREAKS' if ok else 'NOT FOUND'}")
        if args.json:
            Path(args.json).write_text(json.dumps({
                "files": built.files, "prs": counts["prs"], "wall_s": seconds, "cpu_s": cpu,
                "counts": counts, "verdict": document["verdict"]["kind"], "ok": ok}, indent=2)
                + "\n")
        return 0 if ok else 1
    finally:
        if args.keep:
            print(f"kept {root}")
        elif not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
