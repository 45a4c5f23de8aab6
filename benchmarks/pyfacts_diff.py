"""Differential harness: the Python fact extractors on `ast` against the libcst ones they
replaced, fact for fact, on real history and on every fixture.

The libcst extractors live in impact's history (before the port, e.g. commit 9e5a0e1); run
them from a checkout of that commit with a Python that has libcst:

    python benchmarks/pyfacts_diff.py --old-root /work/main \\
        --old-python /work/main/.venv/bin/python [--aiter-old REV] [--limit N]

Inputs: every `.py` file of aiter at HEAD and at `--aiter-old` (default HEAD~300) and of
flash-attention at HEAD, read from the bare snapshots under /work/.mirror (skipped when
absent), and every `.py` file under impact/fixtures/. Each file goes through both
extractors (`extract_binding_python_facts` and `extract_python_facts`, the latter with the
package its path gives and a DSL module); facts are compared as JSON. Prints the counts,
each class of difference with its first examples, and the time per extractor (old in the
child process, new here), per file for the largest ones. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MIRROR = Path("/work/.mirror")
SNAPSHOTS = {"aiter": MIRROR / "ROCm+aiter" / "repo",
             "flash-attention": MIRROR / "Dao-AILab+flash-attention" / "repo"}
DSL_MODULES = ("rocke.dsl", "dsl.ir")

# Run in the child with the old checkout first on sys.path: reads the inputs, writes facts.
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from impact.bindings.python_facts import extract_binding_python_facts
from impact.python import extract_python_facts, package_name_for
import impact, libcst
assert impact.__file__.startswith(sys.argv[1]), impact.__file__
inputs = json.load(open(sys.argv[2]))
out = {}
for key, (path, text) in inputs.items():
    source = text.encode("utf-8", "surrogateescape")
    t0 = time.process_time()
    b = [f.to_json() for f in extract_binding_python_facts(path, source)]
    t1 = time.process_time()
    p = [f.to_json() for f in extract_python_facts(path, source,
         package=package_name_for(path, [""]), dsl_modules=tuple(sys.argv[4:]))]
    t2 = time.process_time()
    out[key] = {"bindings": b, "python": p, "tb": t1 - t0, "tp": t2 - t1}
json.dump(out, open(sys.argv[3], "w"))
"""


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True).stdout


def collect(aiter_old: str, limit: int | None) -> dict[str, tuple[str, str]]:
    """label:rev:path -> (path, text); bytes kept exactly through surrogateescape."""
    inputs: dict[str, tuple[str, str]] = {}
    revisions = [("aiter", "HEAD"), ("aiter", aiter_old), ("flash-attention", "HEAD")]
    for name, rev in revisions:
        git_dir = SNAPSHOTS[name]
        if not git_dir.is_dir():
            print(f"skipped {name}: no snapshot at {git_dir}")
            continue
        listing = _git(git_dir, "ls-tree", "-r", rev).decode().splitlines()
        rows = [line.split(None, 3) for line in listing]
        blobs = [(obj, path) for _mode, kind, obj, path in rows
                 if kind == "blob" and path.endswith(".py")][:limit]
        for obj, path in blobs:
            data = _git(git_dir, "cat-file", "blob", obj)
            inputs[f"{name}:{rev}:{path}"] = (path, data.decode("utf-8", "surrogateescape"))
    for file in sorted((REPO / "impact" / "fixtures").rglob("*.py"))[:limit]:
        rel = file.relative_to(REPO / "impact" / "fixtures").as_posix()
        path = rel.split("/", 1)[1] if "/" in rel else rel
        inputs[f"fixtures::{rel}"] = (path, file.read_bytes().decode("utf-8", "surrogateescape"))
    return inputs


def new_facts(inputs: dict[str, tuple[str, str]]) -> dict[str, dict[str, Any]]:
    sys.path.insert(0, str(REPO))
    from impact.bindings.python_facts import extract_binding_python_facts
    from impact.python import extract_python_facts, package_name_for

    out: dict[str, dict[str, Any]] = {}
    for key, (path, text) in inputs.items():
        source = text.encode("utf-8", "surrogateescape")
        t0 = time.process_time()
        b = [f.to_json() for f in extract_binding_python_facts(path, source)]
        t1 = time.process_time()
        p = [f.to_json() for f in extract_python_facts(
            path, source, package=package_name_for(path, [""]), dsl_modules=DSL_MODULES)]
        t2 = time.process_time()
        out[key] = {"bindings": b, "python": p, "tb": t1 - t0, "tp": t2 - t1}
    return out


def _norm(facts: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(f, sort_keys=True) for f in facts]


def classify(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    """Names of what differs: `kind.field` per differing fact field, or `kind +/-`."""
    if _norm(old) == _norm(new):
        return []
    classes: list[str] = []
    old_by = defaultdict(list)
    new_by = defaultdict(list)
    for f in old:
        old_by[(f["kind"], f["name"], f["line"])].append(f)
    for f in new:
        new_by[(f["kind"], f["name"], f["line"])].append(f)
    for key in sorted(set(old_by) | set(new_by)):
        a, b = old_by.get(key, []), new_by.get(key, [])
        if len(a) != len(b):
            classes.append(f"{key[0]} count")
            continue
        for fa, fb in zip(a, b, strict=True):
            for field in sorted(set(fa["data"]) | set(fb["data"])):
                if fa["data"].get(field) != fb["data"].get(field):
                    classes.append(f"{key[0]}.{field}")
    return classes or ["order"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old-root", default="/work/main")
    parser.add_argument("--old-python", default="/work/main/.venv/bin/python")
    parser.add_argument("--aiter-old", default="HEAD~300")
    parser.add_argument("--limit", type=int, default=None, help="files per revision")
    parser.add_argument("--show", type=int, default=3, help="examples per class")
    parser.add_argument("--json", help="write every difference here")
    args = parser.parse_args()

    inputs = collect(args.aiter_old, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        given, taken = Path(tmp, "in.json"), Path(tmp, "out.json")
        given.write_text(json.dumps(inputs))
        child = subprocess.Popen([args.old_python, "-c", CHILD, args.old_root, str(given),
                                  str(taken), *DSL_MODULES])
        new = new_facts(inputs)
        if child.wait() != 0:
            print("the old extractors failed", file=sys.stderr)
            return 2
        old = json.loads(taken.read_text())

    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    detail: list[dict[str, Any]] = []
    identical = 0
    for key in inputs:
        same = True
        for extractor in ("bindings", "python"):
            classes = classify(old[key][extractor], new[key][extractor])
            for name in sorted(set(classes)):
                counts[f"{extractor}: {name}"] += 1
                examples[f"{extractor}: {name}"].append(key)
            if classes:
                same = False
                detail.append({"file": key, "extractor": extractor,
                               "old": old[key][extractor], "new": new[key][extractor]})
        identical += same
    print(f"files compared: {len(inputs)}  identical (both extractors): {identical}")
    for name, count in counts.most_common():
        print(f"  {count:5d}  {name}: " + ", ".join(examples[name][:args.show]))
    for label in ("aiter:HEAD:", f"aiter:{args.aiter_old}:", "flash-attention:HEAD:",
                  "fixtures:"):
        keys = [k for k in inputs if k.startswith(label)]
        if not keys:
            continue
        for extractor, field in (("bindings", "tb"), ("python", "tp")):
            t_old = sum(old[k][field] for k in keys)
            t_new = sum(new[k][field] for k in keys)
            print(f"{label:<28} {extractor:<8} {len(keys):5d} files  "
                  f"old {t_old:8.2f} s  new {t_new:7.2f} s cpu")
    largest = sorted(inputs, key=lambda k: -len(inputs[k][1]))[:5]
    largest += [k for k in inputs if k.endswith("HEAD:aiter/fused_moe.py") and k not in largest]
    for key in largest:
        print(f"{key}: {inputs[key][1].count(chr(10))} lines  bindings old "
              f"{old[key]['tb']:.3f} s new {new[key]['tb']:.3f} s  python old "
              f"{old[key]['tp']:.3f} s new {new[key]['tp']:.3f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(detail, indent=1))
    return 0 if not counts else 1


if __name__ == "__main__":
    sys.exit(main())
