"""Benchmark: `impact report` on a repository the size of ROCm/rocm-libraries.

Builds, with `git fast-import`, a repository of `--files` files (default 100,000): filler
spread over many folders as in rocm-libraries (projects/*/library/src/**, clients, docs,
third_party, shared/, dnn-providers/...), with impact's synthetic hipDNN/rocKE tree inside
at its real paths, its gfx950 attention_dense KDP grown to `--variants` variants (default
900; the census test grows with it), `--history` filler commits on `main` (default 200), a
branch `target` `--target-commits` commits ahead of `main` (default 20) and four pull
request branches off `main`:

    body-edit     a builder body edit            expected: NEEDS-DEVICE gfx950
    comment-edit  a comment in a builder         expected: NONE
    arg-edit      a `b.param` added to a builder expected: BREAKS
    outside       an edit outside every surface  expected: N/A

Then it times, in fresh processes, `impact report --base main --head BRANCH` for each
branch (and `--target-tip target` once for arg-edit) and `git diff --name-only
main...BRANCH`, `--runs` times each (default 3), and prints the median wall time, the peak
RSS, the verdict line and the ratio to git diff. Run:

    python benchmarks/scale.py [--files 100000] [--dir DIR] [--keep] [--scaling]
                               [--warm] [--json FILE]

`--scaling` also builds and times a 10,000-file repository (`--small-files`) and prints
the ratio of the two sizes. Each report runs with its own empty `XDG_CACHE_HOME` (cold);
`--warm` adds runs that share one cache warmed by a first, untimed report: the same report
again (`stored`: read back from the cache's stored reports), and again with the stored
reports removed before each run (`facts warm`: every fact cached, the report computed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

Files = dict[str, bytes]

EPOCH = 1_700_000_000
AUTHOR = b"Scale Bench <scale@example.invalid>"
CENSUS = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
          "TestGfx950AttentionDensePacks.cpp")

# ---------------------------------------------------------------------------- the fixture tree


def _head_pairs() -> Iterator[tuple[int, int]]:
    """(query heads, kv heads) pairs, kv dividing hq, in a fixed order."""
    for hq in (8, 16, 32, 64, 128, 4, 2, 40, 48, 96, 12, 24, 56, 80, 112, 256):
        for kv in (1, 8, 2, 4, 16, 3, 5, 6, 7, 10, 12, 14, 20, 24, 32):
            if kv <= hq and hq % kv == 0:
                yield hq, kv


def grow_kdp(text: bytes, variants: int) -> tuple[bytes, list[str]]:
    """The KDP with its inline variants grown to `variants` (copies of the shipped ones
    with other head counts, renamed and re-identified); and every variant name, in order."""
    doc = json.loads(text)
    entries = doc["kernelDescriptors"]
    names = [v["name"] for v in entries]
    seen = set(names)
    templates = list(entries)
    for hq, kv in _head_pairs():
        for template in templates:
            if len(entries) >= variants:
                break
            name = re.sub(r"_hq\d+_kv\d+_", f"_hq{hq}_kv{kv}_", template["name"], count=1)
            if name in seen:
                continue
            variant = json.loads(json.dumps(template))
            variant["name"] = name
            variant["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"impact-scale/{name}"))
            variant["kernel_source"]["spec"]["num_query_heads"] = hq
            variant["kernel_source"]["spec"]["num_kv_heads"] = kv
            variant["metadata"]["num_query_heads"] = hq
            variant["metadata"]["num_kv_heads"] = kv
            entries.append(variant)
            names.append(name)
            seen.add(name)
    if len(entries) < variants:
        raise ValueError(f"cannot grow the KDP past {len(entries)} variants")
    del entries[variants:], names[variants:]
    return (json.dumps(doc, indent=2) + "\n").encode(), names


_CENSUS_ARRAY = re.compile(
    r"(constexpr std::array<std::string_view, )\d+(> EXPECTED_KERNEL_NAMES = \{\n).*?(\n\};)",
    re.S)


def grow_census(text: bytes, names: list[str]) -> bytes:
    """The census test with its pinned name list set to `names`."""
    body = "\n".join(f'    "{name}",' for name in names)
    new, count = _CENSUS_ARRAY.subn(lambda m: f"{m.group(1)}{len(names)}{m.group(2)}{body}"
                                    f"{m.group(3)}", text.decode())
    if count != 1:
        raise e.AnchorMissing(f"{CENSUS}: no EXPECTED_KERNEL_NAMES array")
    return new.encode()


def fixture_files(variants: int) -> tuple[Files, list[str]]:
    """The synthetic hipDNN/rocKE tree with the gfx950 dense KDP (and its census) grown."""
    files = rocke_tree_files()
    files[e.GFX950_DENSE_KDP], names = grow_kdp(files[e.GFX950_DENSE_KDP], variants)
    files[CENSUS] = grow_census(files[CENSUS], names)
    return files, names


BODY_EDIT = e.replace(e.GFX950_DENSE,
                      '    seqlen_kv = b.param("seqlen_kv", I32)\n    extras = {}\n',
                      '    seqlen_kv = b.param("seqlen_kv", I32)\n    extras = {}\n'
                      '    b.kernel.attrs["amdgpu_ieee"] = False\n')

# branch -> (what it does, its fixture edit or None for the outside edit, expected verdict)
BRANCHES: dict[str, tuple[str, Callable[[Files], None] | None, str]] = {
    "body-edit": ("a builder body edit", BODY_EDIT, "NEEDS-DEVICE gfx950"),
    "comment-edit": ("a comment in a builder", e.edit_comment(e.GFX950_DENSE), "NONE"),
    "arg-edit": ("a b.param added to a builder",
                 e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"), "BREAKS"),
    "outside": ("an edit outside every surface", None, "N/A"),
}

# ---------------------------------------------------------------------------- the filler

PROJECTS = {  # rocm-libraries' projects, weighted roughly by their size
    "composablekernel": 14, "miopen": 12, "hipblaslt": 10, "rocblas": 9, "rocsparse": 6,
    "rocsolver": 6, "rocfft": 5, "rocprim": 4, "rocrand": 3, "rocthrust": 3, "hipsparselt": 3,
    "rocroller": 3, "hipcub": 2, "hipblas": 2, "hipsolver": 2, "hipsparse": 2, "rocwmma": 2,
    "hiptensor": 2, "hipdnn": 2, "hipfft": 1, "hiprand": 1, "hipblas-common": 1,
}
OTHER_ROOTS = {  # outside projects/: (root, weight)
    "shared/tensile": 5, "shared/origami": 1, "shared/mxdatagenerator": 1,
    "dnn-providers/miopen-provider": 2, "dnn-providers/fusilli-provider": 1,
    "dnn-providers/hip-kernel-provider/src/engines/miopen_legacy_engine": 1,
    "dnn-providers/hip-kernel-provider/src/tests/engines/miopen_legacy_engine": 1,
    "docs": 1,
}
# folder template -> (weight, file kinds); {p} project, {w}/{v} words, {t} third-party, {a} arch
AREAS = {
    "library/src/{w}": (14, "src"), "library/src/{w}/{v}": (18, "src"),
    "library/src/{w}/{v}/{a}": (6, "src"), "library/include/{p}/{w}": (6, "hdr"),
    "include/{p}/{w}": (4, "hdr"), "clients/gtest/{w}": (8, "src"),
    "clients/benchmarks/{w}": (4, "src"), "clients/samples/{w}": (2, "src"),
    "test/{w}/{v}": (8, "src"), "docs/{w}": (4, "doc"), "docs/sphinx": (1, "doc"),
    "third_party/{t}/{w}": (5, "tp"), "third_party/{t}/include/{t}": (2, "hdr"),
    "scripts/{w}": (3, "py"), "python/{p}/{w}": (3, "py"), "cmake": (1, "cmake"),
    "kernels/{a}/{w}": (6, "asm"), "library/src/blas3/Tensile/Logic/{a}/{w}": (4, "yaml"),
}
WORDS = (
    "gemm", "trsm", "syrk", "herk", "symm", "trmm", "axpy", "dot", "nrm2", "scal", "gemv",
    "ger", "trsv", "level1", "level2", "level3", "batched", "strided", "utils", "common",
    "device", "host", "kernels", "tuning", "solutions", "logic", "handle", "memory", "fused",
    "reduction", "convolution", "pooling", "softmax", "layernorm", "activation", "conv", "fwd",
    "bwd", "wrw", "tensor", "ops", "layout", "solver", "fft", "radix", "stockham", "bluestein",
    "sort", "scan", "histogram", "transform", "partition", "select", "merge", "random",
    "philox", "mrg32k3a", "sobol", "sparse", "csr", "coo", "bsr", "ell", "spmv", "spmm",
    "sddmm", "gtsv", "getrf", "potrf", "geqrf", "syevd", "gesvd", "attention", "rope", "mha",
    "gqa", "quant", "dequant", "fp8", "bf16", "int8", "epilogue", "bias", "scaling", "amax",
    "grouped", "streamk", "splitk", "xdlops", "wmma", "mfma", "lds", "dpp", "swizzle",
    "pipeline", "scheduler", "allocator", "graph", "runtime", "logging", "config", "env"
)
THIRD_PARTY = (
    "googletest", "fmt", "nlohmann_json", "half", "boost_lite", "msgpack", "rapidjson", "cli11",
    "yaml_cpp", "eigen", "benchmark", "spdlog"
)
ARCHS = (
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx940", "gfx942", "gfx950", "gfx1030", "gfx1100",
    "gfx1201"
)
KIND_EXTS = {
    "src": ((".cpp", 60), (".hpp", 18), (".h", 8), (".hip", 8), (".cu", 2), (".py", 4)),
    "hdr": ((".hpp", 70), (".h", 25), (".inl", 5)),
    "doc": ((".md", 45), (".rst", 45), (".png.txt", 5), (".yaml", 5)),
    "tp": ((".cc", 35), (".h", 35), (".c", 10), (".txt", 10), (".md", 10)),
    "py": ((".py", 85), (".json", 10), (".txt", 5)),
    "cmake": ((".cmake", 100),),
    "asm": ((".s", 50), (".hip", 30), (".yaml", 20)),
    "yaml": ((".yaml", 100),),
}
ROOT_FILES = (".gitignore", ".gitattributes", "CODEOWNERS", "README.md", "LICENSE.md",
              ".github/workflows/therock-ci.yml", ".github/workflows/pre-commit.yml",
              ".github/CODEOWNERS", ".pre-commit-config.yaml", "docs/README.md")


def _pick(rng: random.Random, weighted: dict[str, Any] | tuple) -> Any:
    items = list(weighted.items()) if isinstance(weighted, dict) else list(weighted)
    return rng.choices([k for k, _ in items],
                       weights=[w[0] if isinstance(w, tuple) else w for _, w in items])[0]


def filler_paths(count: int, taken: set[str], seed: int = 7) -> list[str]:
    """`count` distinct file paths laid out like rocm-libraries, none in `taken`."""
    rng = random.Random(seed)
    out = [p for p in ROOT_FILES if p not in taken][:count]
    seen = set(out) | taken
    roots = {f"projects/{p}": w for p, w in PROJECTS.items()} | OTHER_ROOTS
    while len(out) < count:
        root = _pick(rng, roots)
        area = _pick(rng, AREAS)
        kind = AREAS[area][1]
        project = root.rsplit("/", 1)[-1]
        folder = root + "/" + area.format(p=project, w=rng.choice(WORDS), v=rng.choice(WORDS),
                                          t=rng.choice(THIRD_PARTY), a=rng.choice(ARCHS))
        if root == "docs":
            folder = f"docs/{rng.choice(WORDS)}/{rng.choice(WORDS)}"
            kind = "doc"
        n = rng.randint(4, 40)
        if kind in ("src", "tp", "py") and rng.random() < 0.6:
            path = f"{folder}/CMakeLists.txt" if kind != "py" else f"{folder}/requirements.txt"
            if kind == "py" and rng.random() < 0.8:
                path = f"{folder}/__init__.py"
            if path not in seen:
                seen.add(path)
                out.append(path)
        for i in range(n):
            if len(out) >= count:
                break
            ext = _pick(rng, KIND_EXTS[kind])
            path = f"{folder}/{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}{ext}"
            if path not in seen:
                seen.add(path)
                out.append(path)
    return out[:count]


_LICENSE = ("Copyright (C) Advanced Micro Devices, Inc. All rights reserved.\n"
            "SPDX-License-Identifier: MIT\n")


def filler_content(path: str, version: int = 0) -> bytes:
    """Deterministic text for a filler file, different per path and version."""
    rng = random.Random(zlib.crc32(path.encode()) * 1000 + version)
    name = re.sub(r"\W", "_", path.rsplit("/", 1)[-1].split(".")[0])
    words = [rng.choice(WORDS) for _ in range(24)]
    base = path.rsplit("/", 1)[-1]
    if base == "CMakeLists.txt":
        folder = path.rsplit("/", 2)[-2]
        return (f"# {_LICENSE.splitlines()[0]}\n"
                f"set({folder.upper()}_SOURCES\n"
                + "".join(f"    {w}_{i}.cpp\n" for i, w in enumerate(words[:rng.randint(3, 12)]))
                + f")\nadd_library({folder}_{version} OBJECT ${{{folder.upper()}_SOURCES}})\n"
                f"target_link_libraries({folder}_{version} PRIVATE roc::{words[0]})\n").encode()
    if base.endswith((".md", ".rst", ".txt")):
        lines = [f"# {name.replace('_', ' ')} (rev {version})", ""]
        for _ in range(rng.randint(3, 30)):
            lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))) + ".")
        return ("\n".join(lines) + "\n").encode()
    if base.endswith((".yaml", ".yml", ".json")):
        lines = [f"# {name} rev {version}", f"name: {name}", "entries:"]
        for i in range(rng.randint(3, 60)):
            lines.append(f"  - {{id: {i}, {words[i % 24]}: {rng.randint(0, 4096)}, "
                         f"tile: [{rng.choice((16, 32, 64, 128, 256))}, {rng.randint(1, 8)}]}}")
        text = "\n".join(lines) + "\n"
        return (json.dumps({"name": name, "rev": version, "text": text}) + "\n").encode() \
            if base.endswith(".json") else text.encode()
    if base.endswith(".py"):
        lines = [f'"""{name}: {" ".join(words[:6])} (rev {version})."""', "", "import os", ""]
        for i in range(rng.randint(2, 40)):
            lines += [f"def {words[i % 24]}_{i}(x, y={rng.randint(0, 99)}):",
                      f"    return x * {rng.randint(1, 999)} + y  # {words[(i + 3) % 24]}", ""]
        return "\n".join(lines).encode()
    if base.endswith(".s"):
        lines = [f"// {name} rev {version}", f".amdgcn_target \"amdgcn-amd-amdhsa--{ARCHS[5]}\""]
        for i in range(rng.randint(10, 120)):
            lines.append(f"  v_mfma_f32_32x32x8_f16 v[{i % 64}:{i % 64 + 15}], "
                         f"v[{rng.randint(0, 200)}:{rng.randint(201, 255)}], a[0:15]")
        return ("\n".join(lines) + "\n").encode()
    lines = [f"// {line}" for line in _LICENSE.splitlines()]
    lines += ["#pragma once" if base.endswith((".h", ".hpp", ".inl")) else
              f'#include "{words[0]}.hpp"', "", f"namespace {words[1]}_{name} {{", ""]
    for i in range(rng.randint(2, 50)):
        lines.append(f"int {words[i % 24]}_{i}(int x) {{ return x * {rng.randint(1, 999)} + "
                     f"{rng.randint(0, 99)}; }} // rev {version}")
    lines += ["", "} // namespace", ""]
    return "\n".join(lines).encode()


def outside_path(paths: list[str]) -> str:
    """A filler C++ source far from hipDNN: on no surface of the hipdnn map."""
    for path in paths:
        if (path.startswith("projects/rocblas/library/src/") and path.endswith(".cpp")):
            return path
    for path in paths:
        if path.startswith("projects/") and not path.startswith("projects/hipdnn/") \
                and path.endswith(".cpp"):
            return path
    raise ValueError("no filler C++ source for the outside edit")


# ---------------------------------------------------------------------------- fast-import


class FastImport:
    """A `git fast-import` stream: commits with inline blobs, marks for commits."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "-C", str(repo), "fast-import", "--quiet", "--done"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        assert self.proc.stdin is not None
        self.out: IO[bytes] = self.proc.stdin
        self.mark = 0
        self.clock = EPOCH

    def _data(self, data: bytes) -> None:
        self.out.write(b"data %d\n" % len(data))
        self.out.write(data)
        self.out.write(b"\n")

    def commit(self, ref: str, message: str, parent: int | None,
               changes: dict[str, bytes | None]) -> int:
        """One commit on `ref`: each path written (bytes) or deleted (None)."""
        self.mark += 1
        self.clock += 60
        stamp = b"%s %d +0000\n" % (AUTHOR, self.clock)
        self.out.write(b"commit refs/heads/%s\nmark :%d\n" % (ref.encode(), self.mark))
        self.out.write(b"author " + stamp + b"committer " + stamp)
        self._data(message.encode() + b"\n")
        if parent is not None:
            self.out.write(b"from :%d\n" % parent)
        for path, data in sorted(changes.items()):
            if data is None:
                self.out.write(b"D %s\n" % path.encode())
            else:
                mode = b"100755" if data.startswith(b"#!") else b"100644"
                self.out.write(b"M %s inline %s\n" % (mode, path.encode()))
                self._data(data)
        self.out.write(b"\n")
        return self.mark

    def close(self) -> None:
        self.out.write(b"done\n")
        self.out.close()
        if self.proc.wait() != 0:
            raise RuntimeError(f"git fast-import failed (exit {self.proc.returncode})")


# ---------------------------------------------------------------------------- the repository


@dataclass
class Built:
    path: Path
    files: int
    filler: int
    variants: int
    kdp_bytes: int
    history: int
    target_commits: int
    build_s: float
    pack_bytes: int
    outside: str
    branches: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def _history_changes(rng: random.Random, paths: list[str], versions: dict[str, int],
                     index: int) -> dict[str, bytes | None]:
    """One filler commit: a few files edited; every seventh, one file replaced by a new one
    (the file count stays as it was)."""
    changes: dict[str, bytes | None] = {}
    for path in rng.sample(paths, k=min(len(paths), rng.randint(1, 8))):
        versions[path] = versions.get(path, 0) + 1
        changes[path] = filler_content(path, versions[path])
    if index % 7 == 3 and len(paths) > 2:
        gone = paths.pop(rng.randrange(len(paths)))
        changes[gone] = None
        new = f"{gone.rsplit('/', 1)[0]}/added_in_{index}.md"
        paths.append(new)
        changes[new] = filler_content(new)
    return changes


def build(where: Path, *, files: int = 100_000, history: int = 200, target_commits: int = 20,
          variants: int = 900, seed: int = 7, log: Callable[[str], None] = print) -> Built:
    """Build the repository at `where` (which must not exist or be empty)."""
    start = time.perf_counter()
    where.mkdir(parents=True, exist_ok=True)
    if any(where.iterdir()):
        raise SystemExit(f"{where} is not empty")
    subprocess.run(["git", "init", "-q", "-b", "main", str(where)], check=True)
    fixture, names = fixture_files(variants)
    paths = filler_paths(max(0, files - len(fixture)), set(fixture), seed)
    log(f"  writing {len(fixture) + len(paths):,} files ({len(fixture)} hipDNN/rocKE, "
        f"KDP of {len(names)} variants) ...")
    stream = FastImport(where)
    root: dict[str, bytes | None] = dict(fixture)
    root.update((path, filler_content(path)) for path in paths)
    tip = stream.commit("main", "Import rocm-libraries (synthetic)", None, root)
    del root
    rng = random.Random(seed + 1)
    versions: dict[str, int] = {}
    live = list(paths)
    for i in range(history):
        tip = stream.commit("main", f"filler change {i}", tip,
                            _history_changes(rng, live, versions, i))
    outside = outside_path(live)
    mark = tip
    for i in range(target_commits):
        mark = stream.commit("target", f"target: filler change {i}", mark,
                             _history_changes(rng, live, versions, history + i))
    branches = {}
    for branch, (what, edit, _) in BRANCHES.items():
        if edit is None:
            changes = {outside: filler_content(outside, versions.get(outside, 0) + 1000)}
        else:
            edited = dict(fixture)
            edit(edited)
            changes = {p: d for p, d in edited.items() if fixture.get(p) != d}
        stream.commit(branch, what, tip, changes)  # type: ignore[arg-type]
        branches[branch] = what
    stream.close()
    subprocess.run(["git", "-C", str(where), "symbolic-ref", "HEAD", "refs/heads/main"],
                   check=True)
    pack = sum(p.stat().st_size for p in (where / ".git" / "objects").rglob("*") if p.is_file())
    return Built(path=where, files=len(fixture) + len(paths), filler=len(paths),
                 variants=len(names), kdp_bytes=len(fixture[e.GFX950_DENSE_KDP]),
                 history=history, target_commits=target_commits,
                 build_s=time.perf_counter() - start, pack_bytes=pack, outside=outside,
                 branches=branches)


# ---------------------------------------------------------------------------- timing


@dataclass
class Run:
    seconds: float
    cpu_s: float
    rss_kb: int
    code: int
    stdout: str
    stderr: str


GNU_TIME = "/usr/bin/time"


def rss_method() -> str:
    if os.access(GNU_TIME, os.X_OK):
        return "GNU time %M (the command's own peak RSS)"
    return "wait4 ru_maxrss (includes this benchmark's RSS at spawn: an upper bound)"


def run_once(argv: list[str], env: dict[str, str] | None = None) -> Run:
    """Run `argv` in a fresh process: wall time, CPU time and peak RSS.

    The peak RSS comes from GNU time when present: a child spawned straight from this
    (large) Python process starts with this process's high-water RSS, so wait4's figure
    is only an upper bound; GNU time's child starts from GNU time's.
    """
    use_time = os.access(GNU_TIME, os.X_OK)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        command = [GNU_TIME, "-o", stats.name, "-f", "%U %S %M", *argv] if use_time else argv
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        cpu, rss = usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)
        if use_time:
            last = (stats.read().strip().splitlines() or [""])[-1].split()
            if len(last) == 3:
                cpu, rss = float(last[0]) + float(last[1]), int(last[2])
        out.seek(0)
        err.seek(0)
        return Run(seconds, cpu, rss, code, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"))


def _summary(runs: list[Run]) -> dict[str, Any]:
    return {"median_s": statistics.median(r.seconds for r in runs),
            "runs_s": [round(r.seconds, 4) for r in runs],
            "median_cpu_s": statistics.median(r.cpu_s for r in runs),
            "cpu_s": [round(r.cpu_s, 3) for r in runs],
            "peak_rss_mb": round(max(r.rss_kb for r in runs) / 1024, 1),
            "rss_mb": [round(r.rss_kb / 1024, 1) for r in runs],
            "exit": [r.code for r in runs]}


def verdict_of(run: Run) -> str:
    for line in reversed(run.stdout.splitlines()):
        if line.startswith("Runtime impact:"):
            return line.removeprefix("Runtime impact:").strip()
    last = (run.stderr.strip().splitlines() or ["no output"])[-1]
    return f"(exit {run.code}: {last[:100]})"


def verdict_matches(verdict: str, expected: str) -> bool:
    """The verdict is the expected one; a lane note after it, such as `(left to the BUILD
    lane)` for the target tip's CMake edits in the merged view, is allowed."""
    return verdict == expected or verdict.startswith(expected + " (")


def impact_argv(repo: Path, branch: str, target: bool) -> list[str]:
    argv = [sys.executable, "-m", "impact", "report", "--repo", str(repo),
            "--base", "main", "--head", branch]
    return argv + (["--target-tip", "target"] if target else [])


def time_cases(repo: Path, *, runs: int, warm: bool, log: Callable[[str], None] = print
               ) -> list[dict[str, Any]]:
    cases = []
    scratch = Path(tempfile.mkdtemp(prefix="impact-scale-cache-"))
    try:
        for branch, target in [(b, False) for b in BRANCHES] + [("arg-edit", True)]:
            expected = BRANCHES[branch][2]
            git = [run_once(["git", "-C", str(repo), "diff", "--name-only",
                             f"main...{branch}"]) for _ in range(runs)]
            cold = []
            for i in range(runs):  # each cold run with its own empty cache folder
                cache = scratch / f"{branch}-{target}-cold-{i}"
                cache.mkdir()
                cold.append(run_once(impact_argv(repo, branch, target),
                                     os.environ | {"XDG_CACHE_HOME": str(cache)}))
            case: dict[str, Any] = {
                "branch": branch, "target_tip": target, "what": BRANCHES[branch][0],
                "changed_paths": git[0].stdout.split(), "git_diff": _summary(git),
                "impact": _summary(cold), "verdict": verdict_of(cold[-1]),
                "expected": expected,
            }
            case["ok"] = verdict_matches(case["verdict"], expected)
            case["ratio"] = case["impact"]["median_s"] / max(case["git_diff"]["median_s"], 1e-6)
            if warm:
                shared = os.environ | {"XDG_CACHE_HOME": str(scratch / f"{branch}-{target}")}
                run_once(impact_argv(repo, branch, target), shared)
                hot = [run_once(impact_argv(repo, branch, target), shared) for _ in range(runs)]
                case["impact_warm"] = _summary(hot)
                case["verdict_warm"] = verdict_of(hot[-1])
                # The facts warm but no stored report: what another report over the same
                # blobs costs (the graphs are built again from cached facts).
                facts = []
                for _ in range(runs):
                    shutil.rmtree(scratch / f"{branch}-{target}" / "impact" / "reports",
                                  ignore_errors=True)
                    facts.append(run_once(impact_argv(repo, branch, target), shared))
                case["impact_warm_facts"] = _summary(facts)
                case["verdict_warm_facts"] = verdict_of(facts[-1])
                case["ok"] = case["ok"] and all(  # the caches never move a verdict
                    case[k] == case["verdict"] for k in ("verdict_warm", "verdict_warm_facts"))
            cases.append(case)
            log(f"  {_label(case):<28} impact {case['impact']['median_s']:7.2f} s   "
                f"{case['verdict']}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return cases


def _label(case: dict[str, Any]) -> str:
    return case["branch"] + (" --target-tip target" if case["target_tip"] else "")


def table(repo: dict[str, Any], cases: list[dict[str, Any]]) -> str:
    head = ["change", "git diff", "RSS", "impact report", "CPU", "RSS", "x git", "verdict"]
    if any("impact_warm" in c for c in cases):
        head[6:6] = ["stored", "CPU", "RSS", "facts warm", "CPU", "RSS"]
    rows = []
    for c in cases:
        g, i = c["git_diff"], c["impact"]
        row = [_label(c), f"{g['median_s']:.3f} s", f"{g['peak_rss_mb']:.0f} MB",
               f"{i['median_s']:.2f} s", f"{i['median_cpu_s']:.2f} s", f"{i['peak_rss_mb']:.0f} MB",
               f"{c['ratio']:,.0f}x",
               c["verdict"] + ("" if c["ok"] else f"  (expected {c['expected']})")]
        if "impact_warm" in c:
            row[6:6] = [cell for w in (c["impact_warm"], c.get("impact_warm_facts"))
                        for cell in ([f"{w['median_s']:.2f} s", f"{w['median_cpu_s']:.2f} s",
                                      f"{w['peak_rss_mb']:.0f} MB"] if w else ["-"] * 3)]
        rows.append(row)
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    lines = [f"{repo['files']:,} files, {repo['history']} + {repo['target_commits']} commits, "
             f"KDP {repo['variants']} variants ({repo['kdp_bytes'] / 1e6:.2f} MB), "
             f"objects {repo['pack_bytes'] / 1e6:.0f} MB, built in {repo['build_s']:.1f} s; "
             f"median of {len(cases[0]['impact']['runs_s'])} fresh processes; "
             "CPU = user + system; RSS = peak",
             "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- main


def _machine() -> dict[str, Any]:
    git = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    here = Path(__file__).resolve().parent.parent
    rev = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    from impact_bytecode import ready  # benchmarks/impact_bytecode.py

    bytecode = ready(sys.executable)
    print(bytecode, flush=True)
    return {"python": platform.python_version(), "git": git, "cpus": len(os.sched_getaffinity(0)),
            "loadavg_at_start": list(os.getloadavg()), "platform": platform.platform(),
            "impact_commit": rev or None, "rss_method": rss_method(), "bytecode": bytecode}


def _one_size(root: Path, files: int, args: argparse.Namespace) -> tuple[Built, list[dict]]:
    print(f"building {files:,} files in {root} ...", flush=True)
    built = build(root, files=files, history=args.history, target_commits=args.target_commits,
                  variants=args.variants, seed=args.seed,
                  log=lambda s: print(s, flush=True))
    print(f"  built in {built.build_s:.1f} s ({built.pack_bytes / 1e6:.0f} MB of objects)",
          flush=True)
    cases = time_cases(root, runs=args.runs, warm=args.warm,
                       log=lambda s: print(s, flush=True))
    return built, cases


def summarize(doc: dict[str, Any]) -> None:
    """Print the tables, the scaling ratios (added to `doc`) and any unexpected verdict."""
    sizes = [s for s in doc["sizes"] if s["cases"]]
    print()
    for size in sizes:
        print(table(size["repository"], size["cases"]))
        print()
    if len(sizes) == 2:
        (small, s_cases), (large, l_cases) = ((s["repository"], s["cases"]) for s in sizes)
        scaling = {_label(a): {"wall": b["impact"]["median_s"] / a["impact"]["median_s"],
                               "cpu": b["impact"]["median_cpu_s"] / a["impact"]["median_cpu_s"]}
                   for a, b in zip(s_cases, l_cases, strict=True)}
        doc["scaling"] = {"small_files": small["files"], "large_files": large["files"],
                          "impact_ratio": scaling}
        print(f"scaling {small['files']:,} -> {large['files']:,} files (impact report median):")
        for label, ratio in scaling.items():
            print(f"  {label:<28} wall {ratio['wall']:5.2f}x   CPU {ratio['cpu']:5.2f}x")
    bad = [f"{_label(c)} ({s['repository']['files']:,} files)"
           for s in sizes for c in s["cases"] if not c["ok"]]
    if bad:
        print("verdicts other than expected: " + ", ".join(bad))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--history", type=int, default=200, help="filler commits on main")
    parser.add_argument("--target-commits", type=int, default=20)
    parser.add_argument("--variants", type=int, default=900, help="gfx950 dense KDP variants")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--runs", type=int, default=3, help="fresh-process runs per case")
    parser.add_argument("--dir", help="build here (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the repositories")
    parser.add_argument("--build-only", action="store_true", help="build, time nothing")
    parser.add_argument("--warm", action="store_true",
                        help="also time reports sharing one warmed XDG_CACHE_HOME")
    parser.add_argument("--scaling", action="store_true",
                        help="also build and time --small-files files, and print the ratio")
    parser.add_argument("--small-files", type=int, default=10_000)
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--from-json", metavar="FILE",
                        help="print the tables of an earlier --json FILE; build and time nothing")
    args = parser.parse_args(argv)
    if args.from_json:
        doc = json.loads(Path(args.from_json).read_text())
        for size in doc["sizes"]:  # judged again, by this version's rule
            for case in size["cases"]:
                case["ok"] = verdict_matches(case["verdict"], case["expected"])
        summarize(doc)
        return 1 if any(not c["ok"] for s in doc["sizes"] for c in s["cases"]) else 0
    if shutil.which("git") is None:
        raise SystemExit("scale.py needs the git command line")

    base = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="impact-scale-"))
    created: list[Path] = [] if args.dir else [base]  # only what this run made is removed
    sizes = sorted({args.small_files, args.files}) if args.scaling else [args.files]
    doc: dict[str, Any] = {"machine": _machine(), "args": vars(args), "sizes": []}
    try:
        for files in sizes:
            root = base / f"repo-{files}" if len(sizes) > 1 or not args.dir else base
            if root.exists() and any(root.iterdir()):
                raise SystemExit(f"{root} is not empty")
            created.append(root)
            if args.build_only:
                built = build(root, files=files, history=args.history,
                              target_commits=args.target_commits, variants=args.variants,
                              seed=args.seed)
                print(f"built {built.files:,} files at {root} in {built.build_s:.1f} s")
                doc["sizes"].append({"repository": built.as_json(), "cases": []})
                continue
            built, cases = _one_size(root, files, args)
            doc["sizes"].append({"repository": built.as_json(), "cases": cases})
        summarize(doc)
    finally:
        if args.json:
            Path(args.json).write_text(json.dumps(doc, indent=2, default=str) + "\n")
        if args.keep:
            print(f"kept {base}")
        else:
            for path in created:
                shutil.rmtree(path, ignore_errors=True)
    return 1 if any(not c["ok"] for s in doc["sizes"] for c in s["cases"]) else 0


if __name__ == "__main__":
    sys.exit(main())
