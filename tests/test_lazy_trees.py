"""Lazy snapshots: a git tree read folder by folder gives what reading every path gave.

Random trees (nested folders, renames, a file becoming a folder, mode changes, symlinks,
submodules) are written as git trees into a memory store; the lazy snapshot, its walks
and its diffs are compared with the eager snapshot of the same entries.
"""

from __future__ import annotations

import random

import pytest
from dulwich.index import commit_tree
from dulwich.lru_cache import LRUSizeCache
from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob

from impact.fixtures import Change, Scenario
from impact.fixtures.tree import rocke_tree_files
from impact.git import Entry, Snapshot, diff_snapshots, open_views
from impact.git import trees as trees_module
from impact.git.snapshot import EXECUTABLE, GITLINK, REGULAR, SYMLINK
from impact.git.trees import EMPTY_TREE, Trees

NAMES = ["a", "b", "a.b", "a-b", "src", "x", "y.py", "z.cpp", "CMakeLists.txt"]


class CountingStore:
    """A memory store that counts the objects read from it."""

    def __init__(self) -> None:
        self.store = MemoryObjectStore()
        self.reads: list[str] = []

    def get_raw(self, sha: bytes) -> tuple[int, bytes]:
        self.reads.append(sha.decode())
        return self.store.get_raw(sha)

    def __getitem__(self, sha: bytes):
        return self.store[sha]


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """An empty process-wide folder cache, so a test sees every folder it reads."""
    monkeypatch.setattr(trees_module, "_NODES", LRUSizeCache(
        max_size=trees_module.NODE_CACHE_ENTRIES, compute_size=lambda node: 1))


def _missing(sha: str) -> Exception:
    return LookupError(f"missing {sha}")


def _blob(store: MemoryObjectStore, data: bytes) -> str:
    blob = Blob.from_string(data)
    store.add_object(blob)
    return blob.id.decode()


def _random_entries(rng: random.Random, store: MemoryObjectStore) -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for _ in range(rng.randint(0, 40)):
        depth = rng.randint(1, 4)
        path = "/".join(rng.choice(NAMES) for _ in range(depth))
        if any(p == path or p.startswith(path + "/") or path.startswith(p + "/")
               for p in entries):
            continue  # a path cannot be a file and a folder at once
        mode = rng.choice([REGULAR, REGULAR, REGULAR, EXECUTABLE, SYMLINK, GITLINK])
        sha = "1" * 40 if mode == GITLINK else _blob(store, rng.choice([b"1", b"2", b"3"]))
        entries[path] = Entry(sha, mode)
    return entries


def _mutate(rng: random.Random, entries: dict[str, Entry],
            store: MemoryObjectStore) -> dict[str, Entry]:
    new = dict(entries)
    for path in list(new):
        roll = rng.random()
        if roll < 0.15:
            del new[path]
        elif roll < 0.3:
            new[path + "2"] = new.pop(path)  # a rename (unless the name is taken)
        elif roll < 0.4:
            new[path] = Entry(_blob(store, rng.choice([b"1", b"4"])), new[path].mode)
        elif roll < 0.45:
            new[path] = Entry(new[path].sha, EXECUTABLE if new[path].mode == REGULAR
                              else REGULAR)
        elif roll < 0.5:
            sha = new.pop(path).sha  # the file becomes a folder of that name
            new[path + "/inner.py"] = Entry(sha, REGULAR)
    new.update(_random_entries(rng, store) if rng.random() < 0.5 else {})
    # Drop any path that would be a file and a folder at once after the edits.
    return {p: e for p, e in new.items() if not any(q.startswith(p + "/") for q in new)}


def _tree(store: MemoryObjectStore, entries: dict[str, Entry]) -> str:
    return commit_tree(store, [(p.encode(), e.sha.encode(), e.mode)
                               for p, e in sorted(entries.items())]).decode()


def _lazy(trees: Trees, tree_id: str, label: str = "t") -> Snapshot:
    return Snapshot.from_tree(trees, tree_id, lambda sha: b"", label=label)


def _folders(entries: dict[str, Entry]) -> set[str]:
    return {p.rsplit("/", i)[0] for p in entries for i in range(1, p.count("/") + 1)}


@pytest.mark.parametrize("seed", range(60))
def test_lazy_snapshot_and_diff_equal_the_eager_ones(seed: int) -> None:
    rng = random.Random(seed)
    store = MemoryObjectStore()
    trees = Trees(store, _missing)
    old_entries = _random_entries(rng, store)
    new_entries = _mutate(rng, old_entries, store)
    old = _lazy(trees, _tree(store, old_entries))
    new = _lazy(trees, _tree(store, new_entries))

    for path, entry in old_entries.items():
        assert path in old and old[path] == entry
    for folder in _folders(old_entries):
        assert folder not in old
        assert sorted(old.paths_under(folder)) == list(old.paths_under(folder)) == sorted(
            p for p in old_entries if p.startswith(folder + "/"))
        assert list(old.walk(folder)) == list(
            Snapshot(old_entries, old._reader, label="e").walk(folder))
    assert "no/such/path" not in old and 3 not in old
    assert list(old) == sorted(old_entries) and len(old) == len(old_entries)
    assert dict(old) == old_entries

    lazy_diff = diff_snapshots(_lazy(trees, old.tree_id or ""), new)
    eager_diff = diff_snapshots(dict(old_entries), dict(new_entries))
    assert lazy_diff == eager_diff
    assert diff_snapshots(new, old) == diff_snapshots(dict(new_entries), dict(old_entries))


def _distinct_files(store: MemoryObjectStore) -> dict[str, Entry]:
    """96 files in 8 folders of 4, each file's content its path (no two folders alike)."""
    paths = [f"{top}/{mid}/f{i}.py" for top in "abcdefgh" for mid in "pqrs" for i in range(3)]
    return {p: Entry(_blob(store, p.encode())) for p in paths}


def test_a_lookup_reads_only_the_folders_on_its_path(fresh_cache: None) -> None:
    counting = CountingStore()
    entries = _distinct_files(counting.store)
    root = _tree(counting.store, entries)
    snap = _lazy(Trees(counting, _missing), root)
    assert snap["c/q/f1.py"] == entries["c/q/f1.py"]
    assert len(counting.reads) == 3  # the root, c, c/q
    counting.reads.clear()
    assert list(snap.paths_under("d")) == sorted(p for p in entries if p.startswith("d/"))
    assert len(counting.reads) == 5  # d and its four folders; the root is cached


def test_a_tree_diff_reads_only_the_folders_that_differ(fresh_cache: None) -> None:
    counting = CountingStore()
    entries = _distinct_files(counting.store)
    old_id = _tree(counting.store, entries)
    entries["e/r/f1.py"] = Entry(_blob(counting.store, b"y"))
    new_id = _tree(counting.store, entries)
    trees = Trees(counting, _missing)
    diff = diff_snapshots(_lazy(trees, old_id), _lazy(trees, new_id))
    assert diff.modified == ("e/r/f1.py",)
    assert len(counting.reads) == 6  # two roots, two e, two e/r


def test_the_empty_tree_needs_no_object() -> None:
    store = MemoryObjectStore()
    trees = Trees(store, _missing)
    empty = _lazy(trees, EMPTY_TREE)
    assert list(empty) == [] and "a" not in empty
    one = _lazy(trees, _tree(store, {"a": Entry(_blob(store, b"1"))}))
    assert diff_snapshots(empty, one).added == ("a",)


def test_a_missing_folder_is_named_by_the_repository_error() -> None:
    store = MemoryObjectStore()
    snap = _lazy(Trees(store, _missing), "2" * 40)
    with pytest.raises(LookupError, match="missing 2222"):
        snap["a/b"]


def test_folders_of_a_memory_snapshot_match_a_git_one() -> None:
    files = {p: "x" for p in ("a/b/c.py", "a/b.py", "a/c/d/e.txt", "top.md", "a.b/x")}
    memory = Snapshot.from_files(files)
    store = MemoryObjectStore()
    blob = _blob(store, b"x")
    git = _lazy(Trees(store, _missing), _tree(store, {p: Entry(blob) for p in files}))
    for folder in ("", "a", "a/b", "a/c", "a/c/d", "a.b"):
        in_memory, in_git = memory.folder(folder), git.folder(folder)
        assert in_memory is not None and in_git is not None
        assert sorted(in_memory.files) == sorted(in_git.files)
        assert sorted(in_memory.folders) == sorted(in_git.folders)
    assert memory.folder("nope") is None and git.folder("nope") is None
    assert git.folder("top.md") is None


def _random_edits(rng: random.Random, files: dict[str, bytes]) -> Change:
    paths = sorted(files)
    picked = rng.sample(paths, 12)
    return Change(
        "random edits",
        write={**{p: files[p] + b"\n# edited\n" for p in picked[:4]},
               f"new/{rng.randint(0, 99)}.py": "x = 1\n",
               "CMakeLists.txt": files.get("CMakeLists.txt", b"") + b"# more\n"},
        delete=tuple(picked[4:7]),
        rename={p: p + ".moved" for p in picked[7:10]})


@pytest.mark.parametrize("seed", range(3))
def test_views_of_a_fixture_repository_diff_as_the_eager_comparison(build, seed: int) -> None:
    rng = random.Random(seed)
    files = rocke_tree_files()
    repo = build(Scenario(base=files, head=(_random_edits(rng, files),),
                          target=(_random_edits(rng, files),)))
    views = open_views(repo.path, base="base", head="head", target_tip="target")
    for view in views.views:
        assert view.new is not None
        assert view.old.lazy and view.new.lazy
        assert view.diff == diff_snapshots(dict(view.old), dict(view.new))
        assert view.diff
