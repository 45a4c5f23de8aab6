"""tree-sitter-cpp against tree-sitter-cuda on the real CUDA and HIP sources of aiter and
flash-attention: how many files each grammar leaves with ERROR/MISSING nodes, and how long
it takes to parse them.

The files: those impact reads with the CUDA grammar (`grammar_for` in
impact/cpp/scaffold.py): every `.cu`, `.cuh` and `.hip` file, and every `.h`, `.hpp`,
`.cpp` or `.cc` whose text is CUDA-flavoured (`__global__`, `__device__`, `__host__`,
`__shared__`, `__launch_bounds__`, `<<<`), of each mirror at HEAD and at one 2024
commit, read from the bare snapshots under /work/.mirror (a mirror that is absent is
skipped). Each file is parsed as written ("raw") and as the bindings extractor hands it to
tree-sitter, its `#if` blocks inside parentheses flattened ("flat",
`impact/bindings/cpp_conditionals.py`: what a report's syntax errors come from). Then:
the files the CUDA grammar breaks that tree-sitter-cpp reads, and whether the CUDA
grammar's tree reads as tree-sitter-cpp's does: on the files of the same trees (CUDA and
`.cpp`) that both grammars parse cleanly, the bindings extractor's facts are compared.
Run:

    python benchmarks/cuda_grammar.py [--limit N] [--show K]

Not part of the test suite (it needs the mirrors).
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import tree_sitter

from impact.bindings.cpp_conditionals import flatten_conditionals
from impact.cpp.scaffold import CPP, CUDA, first_error_line, grammar_for
from impact.kinds import FactKind

MIRROR = Path("/work/.mirror")
# (mirror folder, the revisions measured): HEAD and one 2024 commit each.
TREES = (
    ("ROCm+aiter", ("HEAD", "963511808d6cdfff876b361617a21d999ecc1e17")),  # 2024-12-31
    ("Dao-AILab+flash-attention", ("HEAD", "v2.7.0")),  # 2024-11-12
)
CPP_SUFFIXES = (".cu", ".cuh", ".hip", ".h", ".hpp", ".cpp", ".cc")
GRAMMARS = {"cpp": CPP, "cuda": CUDA}


def _git(git_dir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True).stdout


def _files(git_dir: Path, rev: str) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    """(the C++ files impact reads with the CUDA grammar, the other `.cpp` files) at `rev`."""
    names = _git(git_dir, "ls-tree", "-r", "--name-only", rev).decode().splitlines()
    wanted = [n for n in names if n.endswith(CPP_SUFFIXES)]
    blobs = _cat(git_dir, [f"{rev}:{n}" for n in wanted])
    cuda, cpp = [], []
    for name, text in zip(wanted, blobs, strict=True):
        if grammar_for(name, text) is CUDA:
            cuda.append((name, text))
        elif name.endswith(".cpp"):
            cpp.append((name, text))
    return cuda, cpp


def _cat(git_dir: Path, specs: list[str]) -> list[bytes]:
    """The blobs `specs` name, through one `git cat-file --batch`."""
    out = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                         input="".join(s + "\n" for s in specs).encode(), check=True,
                         capture_output=True).stdout
    blobs, at = [], 0
    for _ in specs:
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        blobs.append(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
    return blobs


def _measure(files: list[tuple[str, bytes]], grammar: str,
             prepare: Callable[[bytes], bytes]) -> tuple[list[tuple[str, int]], float]:
    """The files whose tree has an ERROR or MISSING node (with the first such line), and
    the seconds of CPU the parses took."""
    parser = tree_sitter.Parser(GRAMMARS[grammar])
    texts = [(name, prepare(text)) for name, text in files]
    broken = []
    start = time.process_time()
    roots = [(name, parser.parse(text).root_node) for name, text in texts]
    seconds = time.process_time() - start
    for name, root in roots:
        if root.has_error:
            broken.append((name, first_error_line(root)))
    return broken, seconds


def _flat(text: bytes) -> bytes:
    return flatten_conditionals(text)[0]


def _facts_agree(files: list[tuple[str, bytes]]) -> tuple[int, list[str], int]:
    """How many of `files` both grammars parse cleanly, those whose binding facts differ
    between the two trees (none should), and how many differ in their `content` digests
    alone (the digests hash node types, which the grammars name differently here and
    there: a file is always compared with itself under one grammar)."""
    from impact.bindings import cpp_facts

    compared, differ, digests = 0, [], 0
    for name, text in files:
        facts = {grammar: cpp_facts.extract_binding_cpp_facts(name, text, grammar=language)
                 for grammar, language in GRAMMARS.items()}
        if any(f.kind == FactKind.PARSE_FAILURE for fs in facts.values() for f in fs):
            continue
        compared += 1
        stated = {grammar: [f.to_json() for f in fs if f.kind != FactKind.CONTENT]
                  for grammar, fs in facts.items()}
        if stated["cpp"] != stated["cuda"]:
            differ.append(name)
        elif [f.to_json() for f in facts["cpp"]] != [f.to_json() for f in facts["cuda"]]:
            digests += 1
    return compared, differ, digests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="at most N files a tree")
    parser.add_argument("--show", type=int, default=5, help="name K broken files a count")
    args = parser.parse_args()
    for folder, revs in TREES:
        git_dir = MIRROR / folder / "repo"
        if not git_dir.exists():
            print(f"{folder}: no mirror at {git_dir}, skipped")
            continue
        for rev in revs:
            sha = _git(git_dir, "rev-parse", f"{rev}^{{commit}}").decode().strip()
            cuda, cpp = _files(git_dir, sha)
            if args.limit:
                cuda, cpp = cuda[: args.limit], cpp[: args.limit]
            size = sum(len(t) for _, t in cuda) / 1e6
            print(f"\n{folder} {rev} ({sha[:10]}): {len(cuda)} CUDA/HIP files "
                  f"({size:.1f} MB), {len(cpp)} .cpp files")
            broken: dict[tuple[str, str], set[str]] = {}
            for form, prepare in (("raw", bytes), ("flat", _flat)):
                for grammar in GRAMMARS:
                    found, seconds = _measure(cuda, grammar, prepare)
                    broken[form, grammar] = {name for name, _ in found}
                    print(f"  {form:4} {grammar:4}: {len(found):4} of {len(cuda)} with "
                          f"ERROR/MISSING, parse {seconds:.2f} s CPU")
                    for name, line in found[: args.show]:
                        print(f"      {name}:{line}")
            worse = sorted(broken["flat", "cuda"] - broken["flat", "cpp"])
            print(f"  flat: {len(worse)} clean under cpp but broken under cuda")
            for name in worse[: args.show]:
                print(f"      {name}")
            for label, group in (("CUDA/HIP", cuda), (".cpp", cpp)):
                compared, differ, digests = _facts_agree(group)
                print(f"  {label} binding facts: {compared} files clean under both grammars, "
                      f"{len(differ)} with different facts, {digests} with different "
                      "content digests only")
                for name in differ[: args.show]:
                    print(f"      {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
