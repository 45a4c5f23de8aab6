"""Build the GPU proof repository: the gpukern fixture at `base`, one branch per scenario.

    python benchmarks/gpu/scenarios.py --out DIR

writes a git repository at DIR (with dulwich; fixed authors and times, so commit ids are the
same on every machine): branch `main` and tag `base` hold the fixture tree
(impact/fixtures/gpu_tree), and each scenario of SCENARIOS is a branch of that name with
one commit on top of base.  The working tree is checked out at `main`.  What each scenario
should give is in expected.json beside this file; run_all.sh runs them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dulwich.index import build_index_from_tree, commit_tree
from dulwich.objects import Blob, Commit, Tag
from dulwich.repo import Repo

import impact.fixtures
from impact.fixtures.edits import replace

Files = dict[str, bytes]
Edit = Callable[[Files], None]

FIXTURE = Path(impact.fixtures.__file__).resolve().parent / "gpu_tree"
AUTHOR = b"GPU Scenario Builder <gpu-scenarios@example.invalid>"
EPOCH = 1_750_000_000
_SKIP_DIRS = {"__pycache__", ".pytest_cache", "build"}


@dataclass(frozen=True)
class GpuScenario:
    """A branch off base: its name, commit message, edits, and how it is run."""

    name: str
    message: str
    edits: tuple[Edit, ...]
    gpu: bool = True  # False: run_all.sh hides the GPU (CUDA_VISIBLE_DEVICES=)


_SCALE_ADD_LAUNCH = """\
        scale_add_kernel<scalar_t><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
            out.data_ptr<scalar_t>(), xc.data_ptr<scalar_t>(), yc.data_ptr<scalar_t>(),
            static_cast<acc_t>(alpha), n);
"""

_CONSISTENT = (
    replace("gpukern/ops.py",
            "def scale_add(x: Tensor, y: Tensor, alpha: float) -> Tensor: ...",
            "def scale_add(x: Tensor, y: Tensor, alpha: float, beta: float = 1.0)"
            " -> Tensor: ..."),
    replace("csrc/binding.cpp", 'py::arg("alpha"));',
            'py::arg("alpha"), py::arg("beta") = 1.0);'),
    replace("csrc/ops.h",
            "// alpha * x + y, elementwise;",
            "// alpha * x + beta * y, elementwise;"),
    replace("csrc/ops.h",
            "at::Tensor scale_add(const at::Tensor& x, const at::Tensor& y, double alpha);",
            "at::Tensor scale_add(const at::Tensor& x, const at::Tensor& y, double alpha,\n"
            "                     double beta = 1.0);"),
    replace("csrc/scale_add.cu", "// scale_add: out = alpha * x + y",
            "// scale_add: out = alpha * x + beta * y"),
    replace("csrc/scale_add.cu",
            "at::opmath_type<scalar_t> alpha,\n",
            "at::opmath_type<scalar_t> alpha,\n"
            "                                 at::opmath_type<scalar_t> beta,\n"),
    replace("csrc/scale_add.cu",
            "alpha * static_cast<acc_t>(x[i]) + static_cast<acc_t>(y[i])",
            "alpha * static_cast<acc_t>(x[i]) + beta * static_cast<acc_t>(y[i])"),
    replace("csrc/scale_add.cu",
            "const at::Tensor& y, double alpha)\n{",
            "const at::Tensor& y, double alpha, double beta)\n{"),
    replace("csrc/scale_add.cu", "            static_cast<acc_t>(alpha), n);",
            "            static_cast<acc_t>(alpha), static_cast<acc_t>(beta), n);"),
    replace("tests/test_scale_add.py", "\n\ndef test_rejects_mismatched_shapes():",
            "\n\ndef test_beta_scales_y():\n"
            "    x = torch.randn(4096, device=\"cuda\")\n"
            "    y = torch.randn(4096, device=\"cuda\")\n"
            "    out = ops.scale_add(x, y, 0.5, beta=-2.0)\n"
            "    torch.testing.assert_close(out, 0.5 * x - 2.0 * y)\n"
            "\n\ndef test_rejects_mismatched_shapes():"),
)

SCENARIOS: tuple[GpuScenario, ...] = (
    GpuScenario(
        "swap-args",
        "binding: list scale_add's py::arg names as y, x (the stub and C++ still say x, y)",
        (replace("csrc/binding.cpp", 'py::arg("x"), py::arg("y"), py::arg("alpha")',
                 'py::arg("y"), py::arg("x"), py::arg("alpha")'),),
    ),
    GpuScenario(
        "slow-kernel",
        "scale_add: write the output in two passes (same result, twice the memory traffic)",
        (replace("csrc/scale_add.cu", _SCALE_ADD_LAUNCH,
                 "        for (int pass = 0; pass < 2; ++pass) {\n"
                 + "".join("    " + line + "\n" for line in _SCALE_ADD_LAUNCH.splitlines())
                 + "        }\n"),),
    ),
    GpuScenario(
        "consistent",
        "scale_add: add beta (default 1.0) on every side: stub, py::arg, C++ and kernel",
        _CONSISTENT,
    ),
    GpuScenario(
        "both-fail",
        "softmax: rename a local (the known-bad test fails before and after)",
        (replace("gpukern/triton_ops.py",
                 "    num = tl.exp(x)\n    y = num / tl.sum(num, axis=0)\n",
                 "    numer = tl.exp(x)\n    y = numer / tl.sum(numer, axis=0)\n"),),
    ),
    GpuScenario(
        "no-gpu",
        "scale_add: add beta (default 1.0) on every side (validated with no GPU visible)",
        _CONSISTENT,
        gpu=False,
    ),
)


def fixture_files(root: Path = FIXTURE) -> Files:
    """Repository-relative path -> bytes of every file of the fixture tree, without caches
    and build outputs a local run may have left."""
    files: Files = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or _SKIP_DIRS & set(rel.parts[:-1]) or path.suffix == ".pyc":
            continue
        files[rel.as_posix()] = path.read_bytes()
    if not files:
        raise FileNotFoundError(f"no fixture tree at {root}")
    return files


class _Writer:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.clock = EPOCH

    def commit(self, files: Files, parents: list[bytes], message: str) -> bytes:
        store = self.repo.object_store
        entries = []
        for path, data in sorted(files.items()):
            blob = Blob.from_string(data)
            store.add_object(blob)
            entries.append((path.encode(), blob.id, 0o100644))
        commit = Commit()
        commit.tree = commit_tree(store, entries)
        commit.parents = parents
        commit.author = commit.committer = AUTHOR
        self.clock += 60
        commit.author_time = commit.commit_time = self.clock
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = message.encode() + b"\n"
        store.add_object(commit)
        return commit.id


def build(out: str | Path, scenarios: tuple[GpuScenario, ...] = SCENARIOS) -> dict[str, str]:
    """Write the repository at `out` (absent or empty); return ref name -> commit id
    ('base' and one entry per scenario)."""
    root = Path(out)
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty; give a new folder")
    root.mkdir(parents=True, exist_ok=True)
    repo = Repo.init(str(root))
    try:
        writer = _Writer(repo)
        base_files = fixture_files()
        base = writer.commit(base_files, [], "base: the gpukern fixture")
        ids = {"base": base.decode()}
        for scenario in scenarios:
            files = dict(base_files)
            for edit in scenario.edits:
                edit(files)
            head = writer.commit(files, [base], f"{scenario.name}: {scenario.message}")
            repo.refs[f"refs/heads/{scenario.name}".encode()] = head
            ids[scenario.name] = head.decode()
        repo.refs[b"refs/heads/main"] = base
        tag = Tag()
        tag.name = b"base"
        tag.object = (Commit, base)
        tag.tagger = AUTHOR
        tag.tag_time = EPOCH
        tag.tag_timezone = 0
        tag.message = b"the gpukern fixture, before every scenario\n"
        repo.object_store.add_object(tag)
        repo.refs[b"refs/tags/base"] = tag.id
        repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/main")
        build_index_from_tree(str(root), repo.index_path(), repo.object_store,
                              repo[base].tree)
    finally:
        repo.close()
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the gpukern scenario repository.")
    parser.add_argument("--out", required=True, help="new folder for the repository")
    parser.add_argument("--list", action="store_true",
                        help="also print 'name gpu|no-gpu' per scenario")
    args = parser.parse_args(argv)
    try:
        ids = build(args.out)
    except (FileExistsError, FileNotFoundError) as err:
        print(f"scenarios: {err}", file=sys.stderr)
        return 2
    for name, commit in ids.items():
        print(f"{name} {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
