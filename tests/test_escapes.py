"""Nothing a hostile tree or child names makes the parent write, read or run outside the
places it chose (issue 25, escapes).

- a git tree can hold entries that no checkout writes (dulwich stores any name: `..`,
  a name with `/`, `.git`): the parent writing a tree out (the emitter's
  `emit/trees.py materialise`, validate's `write_tree`) refuses each such path, writes
  nothing outside its folder, and says which paths it refused;
- the clean-up's error hook never changes the mode of what a symlink points at;
- a changed file's name filled into a bench command (`{op}`, `{stem}`) is one shell word;
- the parent reads what a test process could have replaced (a test file it inspects, a
  command's log) only as a bounded regular file.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
import time
from pathlib import Path

import pytest
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from emit.sandbox import _writable, remove
from emit.trees import materialise
from impact.git.views import open_snapshot
from impact.safefile import unsafe_tree_path
from impact.surface import DeviceTests
from impact.validate.correctness import choose_runner
from impact.validate.materialise import write_tree
from impact.validate.perf import run_bench

ODD = (b"..", b"a/b", b".git", b".GIT", b"/abs", b".")


def odd_repository(where: Path) -> tuple[str, str]:
    """A repository whose one commit holds `pkg/ok.py` and, under a folder named `..`,
    files with every name in ODD (git refuses to check such a tree out; dulwich writes
    it); (its path, the commit)."""
    repo = Repo.init(str(where), mkdir=True)
    blob = Blob.from_string(b"PWNED = True\n")
    repo.object_store.add_object(blob)
    inner = Tree()
    inner.add(b"escaped.py", 0o100644, blob.id)
    for name in ODD:
        inner.add(name, 0o100644, blob.id)
    repo.object_store.add_object(inner)
    pkg = Tree()
    pkg.add(b"..", 0o040000, inner.id)
    pkg.add(b"ok.py", 0o100644, blob.id)
    pkg.add(b"a/b", 0o100644, blob.id)
    repo.object_store.add_object(pkg)
    top = Tree()
    top.add(b"pkg", 0o040000, pkg.id)
    top.add(b"..", 0o040000, inner.id)
    repo.object_store.add_object(top)
    commit = Commit()
    commit.tree = top.id
    commit.author = commit.committer = b"t <t@example.com>"
    commit.commit_time = commit.author_time = int(time.time())
    commit.commit_timezone = commit.author_timezone = 0
    commit.message = b"odd names"
    repo.object_store.add_object(commit)
    repo.refs[b"refs/heads/main"] = commit.id
    return str(where), commit.id.decode()


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("path", ["pkg/../x", "../x", "/etc/x", "pkg//x", "pkg/./x",
                                  "pkg/.git/hooks/pre-commit", "PKG/.Git/x", "pkg/x\x00",
                                  "", "pkg/"])
def test_unsafe_tree_paths_are_named(path: str) -> None:
    assert unsafe_tree_path(path)


@pytest.mark.parametrize("path", ["pkg/x.py", "a/.gitignore", "a/..b/c", "a/b.git/c"])
def test_ordinary_paths_are_safe(path: str) -> None:
    assert unsafe_tree_path(path) is None


def test_the_emitter_writes_no_entry_outside_its_folder(tmp_path: Path) -> None:
    repo, commit = odd_repository(tmp_path / "repo")
    _, snapshot = open_snapshot(repo, commit)
    into = tmp_path / "scratch" / "rev" / "tree"
    into.mkdir(parents=True)
    refused = materialise(snapshot, ("pkg",), into)
    assert files_under(tmp_path / "scratch") == {"rev/tree/pkg/ok.py"}
    assert not (tmp_path / "scratch" / "escaped.py").exists()
    assert not (tmp_path / "scratch" / "rev" / "escaped.py").exists()
    named = {line.partition(" (")[0] for line in refused}
    assert {"pkg/../escaped.py", "pkg/a/b"} <= named


def test_validate_writes_no_entry_outside_its_folder(tmp_path: Path) -> None:
    repo, commit = odd_repository(tmp_path / "repo")
    _, snapshot = open_snapshot(repo, commit)
    folder = tmp_path / "scratch" / "head" / "src"
    folder.mkdir(parents=True)
    submodules, refused = write_tree(snapshot, folder)
    assert files_under(tmp_path / "scratch") == {"head/src/pkg/ok.py"}
    assert submodules == [] and {"../escaped.py", "pkg/../escaped.py", "pkg/a/b"} <= set(refused)


def test_validate_writes_no_file_through_a_symlinked_folder(tmp_path: Path) -> None:
    """A file whose folder is a symlink the tree itself wrote is refused, never written
    through the link (a case-insensitive or odd tree could name both)."""
    from impact.validate.materialise import _write_file

    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "link").symlink_to(outside)
    with pytest.raises(OSError):
        _write_file(folder, "link/x.py", b"PWNED\n", 0o100644)
    assert list(outside.iterdir()) == []


def test_the_cleanup_never_chmods_a_symlinks_target(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("key")
    secret.chmod(0o400)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    link = scratch / "link"
    link.symlink_to(secret)
    _writable(os.unlink, str(link), None)  # as rmtree calls it when unlink fails
    assert stat.S_IMODE(secret.stat().st_mode) == 0o400
    assert not link.exists() and not link.is_symlink()
    folder = scratch / "folder"
    folder.mkdir()
    (folder / "to-secret").symlink_to(secret)
    remove(str(scratch))
    assert not scratch.exists() and stat.S_IMODE(secret.stat().st_mode) == 0o400


def test_a_file_name_is_one_word_of_a_bench_command(tmp_path: Path) -> None:
    entry = DeviceTests(0, ("ops/*.py",), (), ("tests/test_{op}.py",),
                        ("python bench.py --op {op} --name {stem}",))
    name = "ops/x;touch PWNED;$(touch PWNED2)`touch PWNED3`'.py"
    tests, bench = entry.fill(name)
    [command] = bench
    words = shlex.split(command)
    stem = "x;touch PWNED;$(touch PWNED2)`touch PWNED3`'"
    assert words == ["python", "bench.py", "--op", stem, "--name", stem]
    assert tests == [f"tests/test_{stem}.py"]  # an argv word, never a shell's
    (tmp_path / "bench.py").write_text("import sys\nprint(sys.argv)\n")
    env = {"PATH": os.environ["PATH"]}
    done = run_bench(command.replace("python", shlex.quote(sys.executable), 1),
                     tmp_path, env, tmp_path / "bench.log", "base", 60)
    assert done.exit == 0, done.error
    assert not any(p.name.startswith("PWNED") for p in tmp_path.iterdir())


def test_a_test_file_linked_to_a_device_is_not_read(tmp_path: Path) -> None:
    """The runner is chosen without reading through a link the tree wrote (/dev/zero
    would exhaust the parent's memory, a secret would be parsed)."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_zero.py").symlink_to("/dev/zero")
    runner, reason = choose_runner(tmp_path, "tests/test_zero.py")
    assert runner == "pytest" and "regular file" in reason


def test_an_emitted_revision_with_refused_paths_reads_crashed() -> None:
    """Its children saw another tree than git's: nothing of it folds (fail closed)."""
    from emit.results import finish
    from emit.revision import Revision

    revision = Revision("head", "0" * 40, {"pkg": "1" * 40},
                        refused=["pkg/../escaped.py (a '..' part)"])
    record = finish(revision, None, None)
    assert record["status"] == "crashed" and record["result"] is None
    assert "pkg/../escaped.py" in record["reason"]
