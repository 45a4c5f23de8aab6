"""Scenario repositories of real third-party packages for the H200 proof of
`impact validate` and `impact gate` (benchmarks/gpu/thirdparty/README.md).

Each branch holds a real commit's tree, read from a fetched mirror (`fetch` of the search
tool: /work/.mirror/<owner>+<name>/repo); the commit message names the real SHA. A blob the
mirror lacks (its largest files may be absent) is left out and listed in `manifest.json`;
the trees are otherwise identical, file for file. Run where the mirrors are:

    python benchmarks/gpu/thirdparty/make_repos.py OUT

OUT/liger: `fix-base` = 9ac26bb8^, `fix` = 9ac26bb8 (linkedin/Liger-Kernel #1298, fused linear
cross entropy with reduction="none"), `bug` = 9ac26bb8 with the kernel file put back to its
parent's (the bug re-introduced, the fix's test kept).
OUT/fht: `base` = 29c652e, `head` = e7706fa (Dao-AILab/fast-hadamard-transform: a setup.py
CUDA extension; the head gates c10::DeviceGuard by torch version), `bug` = e7706fa with the
CUDA file put back to its blob before bd94076 (the `log_N == 2` twice in the 12N/20N/28N/40N
dispatch re-introduced; the CUDA file is otherwise the same at both).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dulwich.objects import Commit, Tree
from dulwich.repo import Repo

MIRRORS = Path("/work/.mirror")
WHEN = 1_780_000_000  # fixed, so the scenario commits are the same everywhere


def _copy_tree(source: Repo, target: Repo, tree_id: bytes, path: str,
               missing: list[str], replace: dict[str, bytes]) -> bytes:
    """`tree_id` of `source` into `target`, blob by blob; blobs `source` lacks are left
    out (named in `missing`), and `replace` swaps a path's blob for another one."""
    tree = source[tree_id]
    assert isinstance(tree, Tree)
    out = Tree()
    for entry in tree.items():
        name = entry.path.decode()
        full = f"{path}{name}"
        sha = replace.get(full, entry.sha)
        if entry.mode & 0o170000 == 0o040000:
            sha = _copy_tree(source, target, entry.sha, f"{full}/", missing, replace)
        elif entry.mode & 0o170000 == 0o160000:
            continue  # a submodule: nothing to copy
        else:
            try:
                blob = source[sha]
            except KeyError:
                missing.append(full)
                continue
            target.object_store.add_object(blob)
        out.add(entry.path, entry.mode, sha)
    target.object_store.add_object(out)
    return out.id


def _commit(target: Repo, tree: bytes, parents: list[bytes], message: str) -> bytes:
    commit = Commit()
    commit.tree, commit.parents = tree, parents
    commit.author = commit.committer = b"impact scenarios <scenarios@impact.invalid>"
    commit.author_time = commit.commit_time = WHEN + len(parents)
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode()
    target.object_store.add_object(commit)
    return commit.id


def build(out: Path, mirror: str, branches: list[tuple[str, str, str | None, dict[str, str]]]
          ) -> dict[str, object]:
    """Branches (name, real commit, parent branch, {path: commit whose blob to use})."""
    source = Repo(str(MIRRORS / mirror / "repo"))
    out.mkdir(parents=True)
    target = Repo.init(str(out))
    made: dict[str, bytes] = {}
    manifest: dict[str, object] = {"mirror": mirror, "branches": {}}
    for name, real, parent, swaps in branches:
        sha = _resolve(source, real)
        commit = source[sha]
        replace = {path: _blob_at(source, _resolve(source, at), path)
                   for path, at in swaps.items()}
        missing: list[str] = []
        tree = _copy_tree(source, target, commit.tree, "", missing, replace)
        subject = commit.message.decode("utf-8", "replace").splitlines()[0]
        note = "".join(f"\n{p} put back to its blob at {at}" for p, at in swaps.items())
        message = (f"{name}: the tree of {sha.decode()} ({subject}){note}\n"
                   + (f"\nleft out (the mirror lacks them): {', '.join(missing)}\n"
                      if missing else ""))
        made[name] = _commit(target, tree, [made[parent]] if parent else [], message)
        target.refs[f"refs/heads/{name}".encode()] = made[name]
        manifest["branches"][name] = {"real": sha.decode(), "commit": made[name].decode(),
                                      "missing": missing, "swapped": swaps}
    target.refs.set_symbolic_ref(b"HEAD", f"refs/heads/{branches[0][0]}".encode())
    return manifest


def _resolve(repo: Repo, spelled: str) -> bytes:
    """A commit id from a (possibly short, possibly `^`-suffixed) spelling."""
    parent = spelled.endswith("^")
    stem = spelled.rstrip("^")
    found = [sha for sha in repo.object_store if sha.decode().startswith(stem)
             and repo[sha].type_name == b"commit"] if len(stem) < 40 else [stem.encode()]
    if len(found) != 1:
        raise SystemExit(f"make_repos: '{stem}' names {len(found)} commits")
    sha = found[0]
    return repo[sha].parents[0] if parent else sha


def _blob_at(repo: Repo, commit: bytes, path: str) -> bytes:
    tree = repo[repo[commit].tree]
    _, sha = tree.lookup_path(repo.__getitem__, path.encode())
    return sha


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: make_repos.py OUT", file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    kernel = "src/liger_kernel/ops/fused_linear_cross_entropy.py"
    fix = "9ac26bb82226c9279f0fda784300f5e02ce444b2"
    manifests = {
        "liger": build(out / "liger", "linkedin+Liger-Kernel", [
            ("fix-base", fix + "^", None, {}),
            ("fix", fix, "fix-base", {}),
            ("bug", fix, "fix", {kernel: fix + "^"}),
        ]),
        "fht": build(out / "fht", "Dao-AILab+fast-hadamard-transform", [
            ("base", "29c652e", None, {}),
            ("head", "e7706fa", "base", {}),
            ("bug", "e7706fa", "head",
             {"csrc/fast_hadamard_transform_cuda.cu": "bd94076^"}),
        ]),
    }
    (out / "manifest.json").write_text(json.dumps(manifests, indent=2, sort_keys=True) + "\n")
    print(json.dumps(manifests, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
