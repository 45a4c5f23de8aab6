"""Benchmark: `impact report` on one commit of a large aiter-like repository.

Builds (once, into a folder you name or a temporary one) a repository with about 300
bound ops and 2,000 `py::arg` entries and a history of thousands of commits, then times
`impact report --commit ...` in a fresh process for a few kinds of commit. Run:

    python benchmarks/bindings_report.py [--commits 2000] [--keep DIR]

It prints one line per case: the median wall time of three fresh-process runs (Python
start-up and imports included), the verdict line and the number of rows.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from impact.fixtures import Change, Scenario, build_repository

MODULES = 30
OPS_PER_MODULE = 10
PARAMS = 7


def op(m: int, i: int) -> str:
    return f"op_{m:02d}_{i:02d}"


def base_tree() -> dict[str, str]:
    files: dict[str, str] = {
        "aiter/__init__.py": "",
        "aiter/jit/__init__.py": "",
        "aiter/jit/core.py": "def compile_ops(module, fc_name=None, ffi_type='pybind'):\n"
                             "    def wrap(f):\n        return f\n    return wrap\n",
    }
    config = {}
    for m in range(MODULES):
        stubs = ["from aiter.jit.core import compile_ops\n"]
        macro = [f"#define MODULE_{m}_PYBIND \\"]
        header = ["#pragma once", "#include <torch/extension.h>", "namespace aiter {"]
        for i in range(OPS_PER_MODULE):
            name = op(m, i)
            params = [f"p{k}" for k in range(PARAMS)]
            stubs.append(f"\n@compile_ops(\"module_{m}\")\n"
                         f"def {name}({', '.join(params[:-1])}, {params[-1]}: int = 0) -> None:"
                         " ...\n")
            args = ", ".join(f'py::arg("{p}")' for p in params[:-1])
            macro.append(f'    m.def("{name}", &aiter::{name}, {args}, '
                         f'py::arg("{params[-1]}") = 0); \\')
            header.append(f"void {name}({', '.join(f'torch::Tensor& {p}' for p in params[:-1])},"
                          f" int {params[-1]});")
        header.append("}")
        files[f"aiter/ops/mod_{m:02d}.py"] = "".join(stubs)
        files[f"csrc/include/mod_{m:02d}_ops.hpp"] = "\n".join(macro) + "\n\n"
        files[f"csrc/include/mod_{m:02d}.h"] = "\n".join(header) + "\n"
        files[f"csrc/pybind/mod_{m:02d}_pybind.cu"] = (
            f'#include "../include/mod_{m:02d}_ops.hpp"\n'
            f"PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ MODULE_{m}_PYBIND; }}\n")
        config[f"module_{m}"] = {"srcs": [f"csrc/pybind/mod_{m:02d}_pybind.cu"]}
    files["aiter/jit/optCompilerConfig.json"] = json.dumps(config, indent=2) + "\n"
    files["csrc/include/rocm_ops.hpp"] = "#pragma once\n"
    for k in range(200):  # the rest of a real tree: docs and unrelated code
        files[f"docs/page_{k:03d}.md"] = f"page {k}\n"
    return files


def history(commits: int, seed: int = 7) -> tuple[Change, ...]:
    rng = random.Random(seed)
    changes = []
    for c in range(commits):
        m = rng.randrange(MODULES)
        changes.append(Change(f"commit {c}", write={f"docs/page_{rng.randrange(200):03d}.md":
                                                    f"edit {c}\n"} if c % 3 else {},
                              edits=() if c % 3 else (_comment(m, c),)))
    # The last three commits are the ones the benchmark reports on.
    changes.append(Change("docs only", write={"docs/page_000.md": "final\n"}))
    changes.append(Change("one stub re-signed", edits=(_drop_param(3, 4),)))
    changes.append(Change("a consistent change to one op", edits=(_consistent(5, 2),)))
    return tuple(changes)


def _comment(m: int, c: int):
    def edit(files: dict[str, bytes]) -> None:
        path = f"aiter/ops/mod_{m:02d}.py"
        files[path] = files[path] + f"# note {c}\n".encode()
    return edit


def _drop_param(m: int, i: int):
    def edit(files: dict[str, bytes]) -> None:
        path = f"aiter/ops/mod_{m:02d}.py"
        files[path] = files[path].replace(f"def {op(m, i)}(p0, ".encode(),
                                          f"def {op(m, i)}(".encode())
    return edit


def _consistent(m: int, i: int):
    def edit(files: dict[str, bytes]) -> None:
        name = op(m, i).encode()
        stub, ops = f"aiter/ops/mod_{m:02d}.py", f"csrc/include/mod_{m:02d}_ops.hpp"
        header = f"csrc/include/mod_{m:02d}.h"
        files[stub] = files[stub].replace(b"def " + name + b"(p0, ", b"def " + name + b"(q0, ")
        files[ops] = files[ops].replace(b'"' + name + b'", &aiter::' + name + b', py::arg("p0")',
                                        b'"' + name + b'", &aiter::' + name + b', py::arg("q0")')
        files[header] = files[header].replace(b"void " + name + b"(torch::Tensor& p0",
                                              b"void " + name + b"(torch::Tensor& q0")
    return edit


def timed(repo: Path, commit: str) -> tuple[float, dict]:
    runs, doc = [], {}
    for _ in range(3):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "impact", "report", "--repo", str(repo),
                               "--commit", commit, "--format", "json"],
                              capture_output=True, text=True, check=False)
        runs.append(time.perf_counter() - start)
        doc = json.loads(proc.stdout)
    return statistics.median(runs), doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--keep", help="build the repository here and keep it")
    args = parser.parse_args()
    where = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="impact-bench-"))
    start = time.perf_counter()
    built = build_repository(Scenario(base=base_tree(), head=history(args.commits)),
                             where / "repo")
    tree = base_tree()
    n_args = sum(text.count("py::arg(") for text in tree.values())
    print(f"built {len(built.head_commits)} commits, {MODULES * OPS_PER_MODULE} bound ops, "
          f"{n_args} py::arg entries, {len(tree)} files in {time.perf_counter() - start:.1f} s")
    for label, commit in (("docs only", "head~2"), ("one stub re-signed", "head~1"),
                          ("a consistent change to one op", "head")):
        seconds, doc = timed(built.path, commit)
        rows = len(doc.get("rows", []))
        print(f"{label:<32} {seconds:6.2f} s  {doc['verdict']['line']}  ({rows} rows)")


if __name__ == "__main__":
    main()
