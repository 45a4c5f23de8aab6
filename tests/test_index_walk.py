"""The tree index walks only the folders a surface pattern reaches, and finds what
classifying every path of the tree finds."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from impact.fixtures import Change, Scenario
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot, open_snapshot, open_views
from impact.index import IndexMemo, TreeIndex
from impact.surface import BUILTIN_MAPS, SurfaceMap, builtin_map, parse_surface_map

SCALE_REPO = Path(os.environ.get("IMPACT_SCALE_REPO", "/tmp/scalebench/repo-100000"))

TRICKY = parse_surface_map(b'''schema_version = 1
name = "tricky"
markers = ["**"]

[[surface]]
kind = "deep-first"
lane = "IMPACT"
language = "python"
patterns = ["src/deep/**"]

[[surface]]
kind = "anywhere"
lane = "IMPACT"
language = "python"
patterns = ["**/*.py", "*.md"]

[[surface]]
kind = "one-level"
lane = "IMPACT"
language = "cpp"
patterns = ["src/*.cpp", "lib/x?/*.h", "lib/b**"]

[[surface]]
kind = "exact"
lane = "BUILD"
language = "text"
patterns = ["tools/gen/config.txt", "lib/[ab]/k.txt"]

[[surface]]
kind = "spanning"
lane = "IMPACT"
language = "text"
patterns = ["lib/*/deep/*.txt", "src/**/tail/*.json"]

[[surface]]
kind = "shadowed"
lane = "IMPACT"
language = "python"
patterns = ["lib/xa/*.py", "src/**/m.py", "lib/a/k.txt"]
''', "test:tricky")


def _every_path(snapshot: Snapshot, surface: SurfaceMap) -> dict[str, object]:
    """The index as it was before the folder walk: every path of the tree classified."""
    return {p: e.kind for p in snapshot if (e := surface.classify(p)) is not None}


@pytest.fixture(autouse=True)
def _cold(fresh_session) -> None:
    """Each test classifies from nothing: a Session of its own, whose memo starts empty."""


def _index(snapshot: Snapshot, surface: SurfaceMap) -> dict[str, object]:
    index = TreeIndex(snapshot, surface)
    by_kind = {kind: index.paths(kind) for kind in {e.kind for e in surface.entries}}
    assert all(paths == sorted(paths) for paths in by_kind.values())
    return {p: index.kind(p) for p in index.surface_paths()}


@pytest.mark.parametrize("name", BUILTIN_MAPS)
def test_fixture_tree_index_equals_classifying_every_path(build, name: str) -> None:
    surface = builtin_map(name)
    files = rocke_tree_files()
    memory = Snapshot.from_files(files)
    expected = _every_path(memory, surface)
    assert _index(memory, surface) == expected
    repo = build(Scenario(base=files))
    _, lazy = open_snapshot(repo.path, "base")
    assert lazy.lazy
    assert _index(lazy, surface) == expected
    if name == "hipdnn":
        assert len(expected) > 50


def _random_paths(rng: random.Random) -> dict[str, str]:
    parts = ["src", "lib", "deep", "tail", "xa", "xb", "a", "b", "bz", "gen", "tools"]
    leaves = ["m.py", "k.txt", "c.cpp", "h.h", "r.md", "j.json", "config.txt", "x.py"]
    files = {}
    for _ in range(300):
        depth = rng.randint(0, 4)
        path = "/".join([*(rng.choice(parts) for _ in range(depth)), rng.choice(leaves)])
        if not any(p.startswith(path + "/") or path.startswith(p + "/") for p in files):
            files[path] = path
    return files


@pytest.mark.parametrize("seed", range(8))
def test_tricky_patterns_index_equals_classifying_every_path(build, seed: int) -> None:
    files = _random_paths(random.Random(seed))
    files.update({"tools/gen/config.txt": "c", "lib/a/k.txt": "k", "lib/xa/h.h": "h",
                  "lib/bz/deep/q.txt": "q", "src/deep/m.py": "m", "src/c.cpp": "c",
                  "lib/q/deep/k.txt": "d", "src/a/b/tail/j.json": "t", "lib/xa/m.py": "m"})
    memory = Snapshot.from_files(files)
    expected = _every_path(memory, TRICKY)
    assert _index(memory, TRICKY) == expected
    assert expected["src/deep/m.py"] == "deep-first"  # the first entry wins
    assert expected["lib/q/deep/k.txt"] == "spanning"
    assert expected["lib/xa/m.py"] == "anywhere"  # an earlier entry from a folder above
    assert expected["lib/a/k.txt"] == "exact"
    _, lazy = open_snapshot(build(Scenario(base=files)).path, "base")
    assert _index(lazy, TRICKY) == expected


def test_one_folder_at_two_paths_is_classified_at_each(build) -> None:
    same = {"m.py": "x = 1\n", "c.cpp": "int x;\n", "k.txt": "k\n"}
    files = {f"{top}/{name}": text for top in ("src", "src/deep", "lib/xa", "other")
             for name, text in same.items()}
    repo = build(Scenario(base=files, head=(Change("edit", write={"src/c.cpp": "int y;\n"}),)))
    views = open_views(repo.path, base="base", head="head")
    for snap in (views.base, views.head):  # the head reuses the base's folders
        assert _index(snap, TRICKY) == _every_path(snap, TRICKY)
    assert TreeIndex.of(views.head, TRICKY).kind("src/deep/c.cpp") == "deep-first"
    assert TreeIndex.of(views.head, TRICKY).kind("src/c.cpp") == "one-level"
    assert TreeIndex.of(views.head, TRICKY).kind("other/c.cpp") == "outside"


def test_markers_found_under_their_folder_as_in_a_sorted_scan(build) -> None:
    files = rocke_tree_files()
    _, lazy = open_snapshot(build(Scenario(base=files)).path, "base")
    for name in BUILTIN_MAPS:
        surface = builtin_map(name)
        scanned = next((p for p in sorted(files)
                        if any(rx.fullmatch(p.encode()) for rx in surface.markers)), None)
        assert surface.marker_in(lazy) == surface.marker_in(Snapshot.from_files(files)) == scanned
    assert builtin_map("hipdnn").marker_in(lazy) is not None


@pytest.mark.skipif(not (SCALE_REPO / ".git").exists(),
                    reason="build it: python benchmarks/scale.py --build-only --keep")
def test_scale_repository_index_equals_classifying_every_path() -> None:
    _, main = open_snapshot(SCALE_REPO, "main")
    surface = builtin_map("hipdnn")
    assert _index(main, surface) == _every_path(main, surface)


def _fresh(snapshot: Snapshot, surface: SurfaceMap) -> TreeIndex:
    """An index that knows no folder yet (a memo of its own)."""
    return TreeIndex(snapshot, surface, memo=IndexMemo())


@pytest.mark.parametrize("name", ["tricky", *BUILTIN_MAPS])
def test_each_kind_asked_first_finds_what_classifying_every_path_finds(build, name) -> None:
    """The index classifies lazily (the anchored kinds, the whole tree only for a kind that
    can lie anywhere): whichever question comes first, the answer is the full one."""
    surface = TRICKY if name == "tricky" else builtin_map(name)
    files = _random_paths(random.Random(3)) if name == "tricky" else rocke_tree_files()
    _, lazy = open_snapshot(build(Scenario(base=files)).path, "base")
    expected = _every_path(lazy, surface)
    for kind in {e.kind for e in surface.entries}:
        assert _fresh(lazy, surface).paths(kind) == sorted(
            p for p, k in expected.items() if k == kind), kind
    for language in {e.language for e in surface.entries}:
        kinds = {e.kind for e in surface.entries if e.language == language}
        assert _fresh(lazy, surface).language_paths(language) == sorted(
            p for p, k in expected.items() if k in kinds), language
    index = _fresh(lazy, surface)
    assert all(index.kind(p) == expected.get(p, "outside") for p in files)
    assert index.holds_a_surface_path() == bool(expected)
    assert index.surface_paths() == sorted(expected)


class _Counting:
    """A snapshot that records which folders are read."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.inner, self.read = snapshot, []
        self.tree_id = snapshot.tree_id

    def folder(self, path: str, tree_id: str | None = None):
        self.read.append(path)
        return self.inner.folder(path, tree_id)

    def __contains__(self, path: str) -> bool:
        return path in self.inner


def test_an_anchored_question_walks_only_its_folders(build, monkeypatch) -> None:
    """Asking for a kind whose patterns start with a literal folder (rocke-library), or
    whether the map fits at all, reads none of the folders outside every such start; a
    kind that can lie anywhere (build: `**/CMakeLists.txt`) reads them, once."""
    from impact.kinds import SurfaceKind

    monkeypatch.setenv("IMPACT_FULL_PATH", "")
    files = {**rocke_tree_files(), "zzz/a/b/CMakeLists.txt": "project(x)\n",
             "zzz/a/c/notes.txt": "n\n"}
    _, lazy = open_snapshot(build(Scenario(base=files)).path, "base")
    surface = builtin_map("hipdnn")
    counting = _Counting(lazy)
    index = _fresh(counting, surface)  # type: ignore[arg-type]
    assert index.paths(SurfaceKind.ROCKE_LIBRARY)
    assert index.holds_a_surface_path()
    assert not any(p.startswith("zzz") for p in counting.read)
    assert "zzz/a/b/CMakeLists.txt" in index.paths(SurfaceKind.BUILD)
    assert "zzz/a" in counting.read
    walked = len(counting.read)
    index.surface_paths()
    index.paths(SurfaceKind.DVC_POINTER)
    assert len(counting.read) == walked


def test_full_path_classifies_the_whole_tree_up_front(build, monkeypatch) -> None:
    monkeypatch.setenv("IMPACT_FULL_PATH", "1")
    files = {**rocke_tree_files(), "zzz/a/b/CMakeLists.txt": "project(x)\n"}
    _, lazy = open_snapshot(build(Scenario(base=files)).path, "base")
    counting = _Counting(lazy)
    _fresh(counting, builtin_map("hipdnn"))  # type: ignore[arg-type]
    assert "zzz/a/b" in counting.read


def test_a_stored_base_lets_the_head_read_only_the_folders_that_differ(build, tmp_path,
                                                                      monkeypatch) -> None:
    """The fact store keeps a tree's classification and the folders its walk read: in a
    later process, the base comes from the store and the head's walk reads only the
    folders whose tree ids differ, and finds what classifying every path finds."""
    from impact.factstore import FactStore
    from impact.kinds import SurfaceKind

    monkeypatch.setenv("IMPACT_FULL_PATH", "")
    files = {**rocke_tree_files(), "zzz/a/b/CMakeLists.txt": "project(x)\n",
             "zzz/q/r/notes.txt": "n\n"}
    repo = build(Scenario(base=files, head=(Change("edit", write={
        "zzz/a/b/CMakeLists.txt": "project(y)\n", "zzz/a/b/more.cmake": "set(x 1)\n"}),)))
    views = open_views(repo.path, base="base", head="head")
    surface = builtin_map("hipdnn")
    store = FactStore(tmp_path / "cache")
    first = TreeIndex(views.base, surface, store, IndexMemo())
    assert "zzz/a/b/CMakeLists.txt" in first.paths(SurfaceKind.BUILD)  # walked and stored
    later = IndexMemo()  # a later process
    base = _Counting(views.base)
    again = TreeIndex(base, surface, store, later)  # type: ignore[arg-type]
    assert again.surface_paths() == first.surface_paths() and base.read == []
    head = _Counting(views.head)
    index = TreeIndex(head, surface, store, later)  # type: ignore[arg-type]
    assert index.surface_paths() == sorted(_every_path(views.head, surface))
    assert "zzz/a/b/more.cmake" in index.paths(SurfaceKind.BUILD)
    assert set(head.read) == {"", "zzz", "zzz/a", "zzz/a/b"}


def test_files_naming_finds_whole_words() -> None:
    """`fwd` is found where a binding names it, not inside every `mha_fwd_kernel`; a
    needle that ends in punctuation (`.def("`) still matches as a substring."""
    files = {
        "src/bind.py": b'm.def("fwd", &mha_fwd)\n',
        "src/kernel.py": b"void mha_fwd_kernel();\nint fwd_count;\n",
        "src/other.py": b"x = 1\n",
        "src/dotted.py": b'  .def("attention", f)\n',
    }
    snapshot = Snapshot.from_files(files)
    index = TreeIndex(snapshot, TRICKY)
    assert index.files_naming({"fwd"}, ("anywhere",)) == {"src/bind.py"}
    assert index.files_naming({"fwd_count"}, ("anywhere",)) == {"src/kernel.py"}
    assert index.files_naming({'.def("'}, ("anywhere",)) == {"src/bind.py", "src/dotted.py"}
    assert index.files_naming({"def fwd("}, ("anywhere",)) == set()

