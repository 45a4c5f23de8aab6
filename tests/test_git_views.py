"""Every input form against scenario repositories built on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import add_orphan_branch
from dulwich.repo import Repo

from impact.errors import NoMergeBase, NotARepository, ShallowHistory, UnknownRevision
from impact.fixtures import Change, Scenario
from impact.git import open_views

BASE = {
    "src/a.py": "def f():\n    return 1\n",
    "src/b.cpp": "int g() { return 2; }\n",
    "docs/readme.md": "hello\n",
    "data/keep.json": '{"k": 1}\n',
}

PR = Scenario(
    base=BASE,
    head=(
        Change("edit a", write={"src/a.py": "def f():\n    return 10\n"}),
        Change("rename keep, delete b", rename={"data/keep.json": "data/moved.json"},
               delete=("src/b.cpp",)),
        Change("add c", write={"src/c.py": "C = 3\n"}),
    ),
    target=(
        Change("target edits docs and a", write={
            "docs/readme.md": "hello target\n", "src/a.py": "def f():\n    return 99\n"}),
    ),
    tags={"v-head": "head", "v-old": "head~2"},
)


def test_base_head_form(build) -> None:
    repo = build(PR)
    views = open_views(repo.path, base="target", head="head")
    assert views.revisions["head"].sha == repo.head
    assert views.merge_bases["base..head"] == [repo.base]
    head = views.view("head")
    assert head.diff.added == ("src/c.py",)
    assert head.diff.removed == ("src/b.cpp",)
    assert head.diff.modified == ("src/a.py",)
    assert head.diff.renamed == (("data/keep.json", "data/moved.json"),)
    assert views.view("merged") is None


def test_range_form_equals_base_head(build) -> None:
    repo = build(PR)
    by_range = open_views(repo.path, range="target..head")
    by_pair = open_views(repo.path, base="target", head="head")
    assert by_range.view("head").diff == by_pair.view("head").diff
    assert by_range.revisions["base"].spelled == "target"
    assert open_views(repo.path, range="target...head").view("head").diff == by_pair.view(
        "head").diff


def test_commit_form_is_parent_against_commit(build) -> None:
    repo = build(PR)
    views = open_views(repo.path, commit=repo.head_commits[1][:10])
    assert views.revisions["base"].sha == repo.head_commits[0]
    diff = views.view("head").diff
    assert diff.removed == ("src/b.cpp",)
    assert diff.renamed == (("data/keep.json", "data/moved.json"),)
    assert diff.modified == () and diff.added == ()


def test_root_commit_compares_with_the_empty_tree(build) -> None:
    repo = build(PR)
    diff = open_views(repo.path, commit="base").view("head").diff
    assert diff.added == tuple(sorted(BASE))


@pytest.mark.parametrize(("spelled", "index"), [
    ("v-old", 0),        # an annotated tag
    ("head~2", 0),       # X~n
    ("head^", 1),        # X^
    ("v-head~1", 1),     # a tag with ~n
])
def test_revision_spellings(build, spelled: str, index: int) -> None:
    repo = build(PR)
    views = open_views(repo.path, base="base", head=spelled)
    assert views.revisions["head"].sha == repo.head_commits[index]


def test_full_and_short_sha_and_remote_branch(build) -> None:
    repo = build(PR)
    Repo(str(repo.path)).refs[b"refs/remotes/origin/main"] = repo.target.encode()
    assert open_views(repo.path, base="origin/main", head=repo.head).revisions[
        "base"].sha == repo.target
    assert open_views(repo.path, base=repo.target[:8], head="HEAD").revisions[
        "head"].sha == repo.head


def test_merged_view_with_conflict_keeps_clean_paths(build) -> None:
    repo = build(PR)
    views = open_views(repo.path, base="base", head="head", target_tip="target")
    merged = views.view("merged")
    assert merged.unavailable is None
    assert merged.conflicts == ("src/a.py",)
    assert merged.new is not None
    # Cleanly merged paths from both sides are all there.
    assert merged.new.read("docs/readme.md") == b"hello target\n"
    assert "src/c.py" in merged.new and "data/moved.json" in merged.new
    assert "src/b.cpp" not in merged.new
    assert "docs/readme.md" in merged.diff.modified
    assert views.merge_bases["head..target_tip"] == [repo.base]


def test_merged_view_without_conflict(build) -> None:
    scenario = Scenario(
        base=BASE,
        head=(Change("h", write={"src/a.py": "def f():\n    return 5\n"}),),
        target=(Change("t", write={"src/b.cpp": "int g() { return 7; }\n"}),),
    )
    repo = build(scenario)
    merged = open_views(repo.path, base="base", head="head", target_tip="target").view("merged")
    assert merged.conflicts == ()
    assert merged.diff.modified == ("src/a.py", "src/b.cpp")


def test_analysis_writes_nothing_to_the_repository(build) -> None:
    repo = build(PR, checkout=True)
    Path(repo.path, "src/a.py").write_text("changed\n")
    Path(repo.path, "new.py").write_text("new\n")

    def state() -> tuple:
        files = []
        for root, _dirs, names in os.walk(repo.path / ".git"):
            for name in names:
                full = Path(root, name)
                files.append((str(full), full.stat().st_size, full.stat().st_mtime_ns))
        return tuple(sorted(files))

    before = state()
    open_views(repo.path, base="base", head="head", target_tip="target")
    open_views(repo.path, worktree=True, target_tip="target")
    assert state() == before


def test_worktree_form(build) -> None:
    repo = build(PR, checkout=True)
    root = repo.path
    Path(root, ".gitignore").write_text("*.log\nbuild/\n")
    Path(root, "debug.log").write_text("ignored\n")
    Path(root, "build").mkdir()
    Path(root, "build", "out.o").write_text("ignored too\n")
    Path(root, "src", "new_untracked.py").write_text("X = 1\n")
    Path(root, "src", "a.py").write_text("def f():\n    return 42\n")       # unstaged edit
    Path(root, "docs", "readme.md").unlink()                                # unstaged deletion
    # A staged edit: write the blob into the index as `git add` would.
    staged = Path(root, "src", "c.py")
    staged.write_text("C = 4\n")
    from dulwich import porcelain
    porcelain.add(str(root), [str(staged)])

    views = open_views(root, worktree=True)
    assert views.revisions["base"].sha == repo.head
    diff = views.view("head").diff
    assert diff.added == (".gitignore", "src/new_untracked.py")
    assert diff.removed == ("docs/readme.md",)
    assert diff.modified == ("src/a.py", "src/c.py")
    assert views.head.read("src/a.py") == b"def f():\n    return 42\n"
    assert views.head.read("src/c.py") == b"C = 4\n"
    assert "debug.log" not in views.head and "build/out.o" not in views.head


def test_worktree_with_target_tip(build) -> None:
    repo = build(PR, checkout=True)
    Path(repo.path, "docs", "readme.md").write_text("hello worktree\n")
    merged = open_views(repo.path, worktree=True, target_tip="target").view("merged")
    # head changed src/a.py and the work changes the readme; target changed both.
    assert merged.conflicts == ("docs/readme.md", "src/a.py")
    assert "src/c.py" in merged.new


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(NotARepository):
        open_views(tmp_path, base="a", head="b")
    with pytest.raises(NotARepository):
        open_views(tmp_path / "missing", base="a", head="b")


def test_unknown_revision(build) -> None:
    repo = build(PR)
    with pytest.raises(UnknownRevision, match="no-such-branch"):
        open_views(repo.path, base="base", head="no-such-branch")
    with pytest.raises(UnknownRevision):
        open_views(repo.path, base="base", head="head~40")


def test_no_merge_base(build, tmp_path: Path) -> None:
    repo = build(PR)
    add_orphan_branch(repo, build(Scenario(base={"z": "z\n"})))
    with pytest.raises(NoMergeBase):
        open_views(repo.path, base="orphan", head="head")
    # For the merged view the missing base is recorded, not fatal.
    merged = open_views(repo.path, base="base", head="head", target_tip="orphan").view("merged")
    assert merged.new is None and "share no history" in merged.unavailable


def test_shallow_clone_missing_the_merge_base(build) -> None:
    repo = build(PR)
    # Mark the first head commit shallow, as `git clone --depth` does: its
    # parents are cut off, so head and target no longer meet.
    Path(repo.path, ".git", "shallow").write_text(repo.head_commits[0] + "\n")
    with pytest.raises(ShallowHistory, match="shallow"):
        open_views(repo.path, base="target", head="head")


def test_worktree_keeps_a_staged_submodule_as_recorded(build) -> None:
    from dulwich.index import IndexEntry

    repo = build(PR, checkout=True)
    dulwich_repo = Repo(str(repo.path))
    index = dulwich_repo.open_index()
    gitlink = "1" * 40
    index[b"vendor/sub"] = IndexEntry(
        ctime=(0, 0), mtime=(0, 0), dev=0, ino=0, mode=0o160000, uid=0, gid=0, size=0,
        sha=gitlink.encode())
    index.write()
    Path(repo.path, "vendor", "sub").mkdir(parents=True)
    views = open_views(repo.path, worktree=True)
    assert views.head["vendor/sub"].sha == gitlink and views.head["vendor/sub"].is_submodule
    assert views.view("head").diff.added == ("vendor/sub",)


def test_untracked_files_follow_dulwich_rules_without_entering_nested_repositories(
        build) -> None:
    from dulwich.index import IndexEntry
    from dulwich.objects import Blob
    from dulwich.porcelain import get_untracked_paths

    from impact.git import open_repository
    from impact.git.worktree import untracked_paths

    repo = build(PR, checkout=True)
    root = Path(repo.path)
    files = {
        ".gitignore": "*.log\nbuild/\nout/*\n!out/keep.txt\n/top-only.txt\n",
        "debug.log": "x", "src/deep/trace.log": "x", "build/a.o": "x", "src/build/b.o": "x",
        "out/drop.txt": "x", "out/keep.txt": "x", "top-only.txt": "x",
        "src/top-only.txt": "x", "src/new.py": "x", "fresh/dir/f.txt": "x",
        "fresh/.gitignore": "*.tmp\n", "fresh/dir/g.tmp": "x", "docs/extra.md": "x",
    }
    for path, text in files.items():
        Path(root, path).parent.mkdir(parents=True, exist_ok=True)
        Path(root, path).write_text(text)
    # A folder git ignores that holds a tracked file (force-added): its other files stay
    # ignored, a negation below it included.
    Path(root, ".gitignore").write_text(files[".gitignore"] + "vendored/\n!vendored/keep.c\n")
    for path in ("vendored/tracked.c", "vendored/sub/tracked.h", "vendored/new.c",
                 "vendored/keep.c", "vendored/sub/new.h", "vendored/fresh/n.c"):
        Path(root, path).parent.mkdir(parents=True, exist_ok=True)
        Path(root, path).write_text("x")
    index = Repo(str(root)).open_index()
    for path in ("vendored/tracked.c", "vendored/sub/tracked.h"):
        blob = Blob.from_string(b"x")
        Repo(str(root)).object_store.add_object(blob)
        index[path.encode()] = IndexEntry(ctime=(0, 0), mtime=(0, 0), dev=0, ino=0,
                                          mode=0o100644, uid=0, gid=0, size=1, sha=blob.id)
    index.write()
    repository = open_repository(root)
    index = repository.repo.open_index()
    ours = sorted(untracked_paths(repository, index))
    theirs = sorted(p.replace(os.sep, "/") for p in get_untracked_paths(
        str(root), str(root), index, exclude_ignored=True, repo=repository.repo)
        if not p.endswith(os.sep))
    assert ours == theirs
    assert ours == [".gitignore", "docs/extra.md", "fresh/.gitignore", "fresh/dir/f.txt",
                    "out/keep.txt", "src/new.py", "src/top-only.txt"]

    # A nested repository's files (a submodule's checkout) are not this repository's.
    Path(root, "vendor", "nested", "lib").mkdir(parents=True)
    Repo.init(str(Path(root, "vendor", "nested")))
    Path(root, "vendor", "nested", "lib", "x.c").write_text("int x;\n")
    Path(root, "vendor", "nested", "top.c").write_text("int y;\n")
    assert sorted(untracked_paths(repository, index)) == ours
