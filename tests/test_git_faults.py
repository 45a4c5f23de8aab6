"""Faults under git and the work tree end in a row naming the file or one exit-3 line (issue 13).

A damaged object store (a truncated pack or index, bytes flipped inside a blob, a corrupt
loose object, permission denied on an object or on `.git/objects`), an unreadable or
vanishing work-tree file, FIFOs, sockets and devices in the work tree, a symlink loop, and a
gitlink where a file should be: each is an `unreadable`/`changed` row naming the file, a
note in `coverage.skipped`, or `impact: error: ...` with exit 3; never exit 4, a traceback,
a hang, or NONE/N/A for a change that breaks.

Permission faults are real (`chmod 0`) when the tests run as a user other than root; as
root, who reads every file whatever its mode, the same `PermissionError` is injected where
the open would raise it (dulwich's loose-object read, the work tree's blob hash). Each such
test says which it did in its id.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dulwich.index import commit_tree
from dulwich.object_format import DEFAULT_OBJECT_FORMAT
from dulwich.object_store import DiskObjectStore, iter_tree_contents
from dulwich.objects import Blob, Commit
from dulwich.pack import load_pack_index
from dulwich.repo import Repo
from harness import outcome

import impact.git.worktree as worktree_module
from impact.contracts import REPORT_SCHEMA, validate
from impact.document import build_report
from impact.errors import EXIT_BAD_INPUT
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot, Views
from impact.git.snapshot import GITLINK, Entry, tree_id_of
from impact.session import Session
from impact.surface import SurfaceKind, load_surface_map

TREE = rocke_tree_files()
PROFILE_OF_DENSE = ("projects/hipdnn/tools/IngestorGenerator/configs/"
                    "gfx950_attention_dense.profile.yaml")
BARE = {p: c for p, c in TREE.items() if "/aot_catalog/" not in p and p != PROFILE_OF_DENSE}
PIN = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
       "TestGfx950AttentionDenseSignature.cpp")
ADD_ARGUMENT = (e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),
                e.add_pack_argument(PIN, "dropout_seed"))
PACK = e.GFX950_DENSE_PACK
PACK_SHA = Blob.from_string(BARE[PACK]).id.decode()
SAFE = ("Runtime impact: NONE", "Runtime impact: N/A")
ROOT = os.geteuid() == 0
HOW = "injected PermissionError (running as root)" if ROOT else "chmod 0 (non-root)"


def _shown(repo: Path, **form: Any) -> tuple[int, str, str]:
    """What a way in shows for one JSON report (exit code, report, error line), in a
    Session of its own (no blob read before)."""
    return outcome(repo, session=Session(use_cache=False), **form)


def _clean_error(code: int, out: str, err: str, *words: str) -> None:
    """Exit 3, nothing on stdout, one `impact: error:` line naming the problem."""
    assert code == EXIT_BAD_INPUT, (code, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("impact: error: "), err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0]


def _pack_row(out: str) -> tuple[dict, list[dict]]:
    doc = json.loads(out)
    validate(doc, REPORT_SCHEMA)
    rows = [r for r in doc["rows"] if not r["preexisting"] and
            (r["subject"] == PACK or PACK in {s["file"] for s in r["sides"]})]
    return doc, rows


def _assert_pack_named(code: int, out: str, err: str, word: str) -> None:
    """The break still shows and a charged `changed` row names the unreadable pack."""
    assert code in (1, 2), (code, err)
    doc, rows = _pack_row(out)
    assert doc["verdict"]["line"] not in SAFE
    unreadable = [r for r in rows if r["contract"] == "unreadable"]
    assert [r["status"] for r in unreadable] == ["changed"], rows
    assert word in unreadable[0]["details"]["error"]


@pytest.fixture
def arg_repo(build):
    """The issue's case: a builder gains an argument; its unchanged pack is the counterpart."""
    return build(Scenario(base=BARE, head=(Change("arg", edits=ADD_ARGUMENT),)))


def _gc(path: Path) -> Path:
    subprocess.run(["git", "-C", str(path), "gc", "-q"], check=True, capture_output=True)
    packs = sorted((path / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 1
    for f in (packs[0], packs[0].with_suffix(".idx")):
        f.chmod(0o644)
    return packs[0]


# --- a damaged object store -------------------------------------------------------------

def test_a_truncated_pack_is_one_clean_error(arg_repo) -> None:
    pack = _gc(arg_repo.path)
    pack.write_bytes(pack.read_bytes()[: pack.stat().st_size // 2])
    _clean_error(*_shown(arg_repo.path, base="base", head="head"),
                 "could not be read", "ChecksumMismatch", "git fsck")


def test_a_truncated_pack_index_is_one_clean_error(arg_repo) -> None:
    idx = _gc(arg_repo.path).with_suffix(".idx")
    idx.write_bytes(idx.read_bytes()[: idx.stat().st_size // 2])
    _clean_error(*_shown(arg_repo.path, base="base", head="head"),
                 "could not be read", "git fsck")


def test_bytes_flipped_inside_the_packed_blob_name_the_file(arg_repo) -> None:
    pack = _gc(arg_repo.path)
    index = load_pack_index(str(pack.with_suffix(".idx")), DEFAULT_OBJECT_FORMAT)
    offset = index.object_offset(bytes.fromhex(PACK_SHA))
    data = bytearray(pack.read_bytes())
    for i in range(offset + 4, offset + 12):  # inside the blob's compressed data
        data[i] ^= 0xFF
    pack.write_bytes(bytes(data))
    _assert_pack_named(*_shown(arg_repo.path, base="base", head="head"),
                       "could not be read")


def _loose(repo: Path, sha: str) -> Path:
    path = repo / ".git" / "objects" / sha[:2] / sha[2:]
    path.chmod(0o644)
    return path


def test_a_corrupt_loose_object_names_the_file(arg_repo) -> None:
    _loose(arg_repo.path, PACK_SHA).write_bytes(b"not a zlib stream" * 8)
    _assert_pack_named(*_shown(arg_repo.path, base="base", head="head"),
                       "could not be read")


def _deny_loose(monkeypatch, repo: Path, sha: str | None) -> None:
    """Permission denied on one loose object (`sha`) or on all of them (None)."""
    if not ROOT:
        if sha is None:
            (repo / ".git" / "objects").chmod(0)
        else:
            _loose(repo, sha).chmod(0)
        return
    real = DiskObjectStore._get_loose_object

    def denied(self, wanted):
        hexsha = wanted.decode() if len(wanted) == 40 else wanted.hex()
        if sha is None or hexsha == sha:
            raise PermissionError(13, "Permission denied",
                                  str(repo / ".git" / "objects" / hexsha[:2] / hexsha[2:]))
        return real(self, wanted)

    monkeypatch.setattr(DiskObjectStore, "_get_loose_object", denied)


@pytest.mark.parametrize("how", [HOW])
def test_permission_denied_on_an_object_names_the_file(arg_repo, monkeypatch,
                                                       how) -> None:
    _deny_loose(monkeypatch, arg_repo.path, PACK_SHA)
    try:
        _assert_pack_named(*_shown(arg_repo.path, base="base", head="head"),
                           "Permission denied")
    finally:
        _loose(arg_repo.path, PACK_SHA)


@pytest.mark.parametrize("how", [HOW])
def test_permission_denied_on_the_objects_folder_is_one_clean_error(arg_repo, monkeypatch,
                                                                    how) -> None:
    _deny_loose(monkeypatch, arg_repo.path, None)
    try:
        code, out, err = _shown(arg_repo.path, base="base", head="head")
    finally:
        (arg_repo.path / ".git" / "objects").chmod(0o755)
    # Unreadable objects: the revisions cannot be resolved (exit 3) or cannot be read.
    _clean_error(code, out, err)
    assert "Permission denied" in err or "unknown revision" in err


# --- a gitlink where a file should be ----------------------------------------------------

def _one_path_per_surface_kind() -> dict[str, str]:
    surface = load_surface_map()
    found: dict[str, str] = {}
    for path in sorted(BARE):
        kind = surface.describe(path).kind
        if kind != SurfaceKind.OUTSIDE:
            found.setdefault(str(kind), path)
    return found


KIND_PATHS = _one_path_per_surface_kind()


def _with_gitlink(files: dict[str, bytes], path: str, label: str) -> Snapshot:
    snap = Snapshot.from_files(files, label=label)
    entries = dict(snap.items())
    entries[path] = Entry("1" * 40, GITLINK)
    blobs = {snap[p].sha: files[p] for p in files}
    return Snapshot(entries, blobs.__getitem__, label=label, tree_id=tree_id_of(entries))


@pytest.mark.slow
@pytest.mark.parametrize("path", KIND_PATHS.values(), ids=KIND_PATHS.keys())
def test_a_gitlink_where_a_surface_file_should_be_is_a_changed_row(path) -> None:
    views = Views.from_snapshots(Snapshot.from_files(BARE, label="base"),
                                 _with_gitlink(dict(BARE), path, "head"))
    doc = build_report(views, {}, load_surface_map())
    verdict = doc["verdict"]
    # N/A only with the file left to its lane (a dependency or build file), never silently.
    assert verdict["kind"] != "NONE" and (verdict["kind"] != "N/A" or verdict["other_lanes"])
    naming = [r for r in doc["rows"] if not r["preexisting"] and
              (r["subject"] == path or path in {s["file"] for s in r["sides"]})]
    assert naming and {r["status"] for r in naming} <= {"changed", "mismatch"}, naming
    read = [r for r in naming if "content not readable" in json.dumps(r["details"])]
    for row in read:
        assert "submodule pointer where a file should be" in json.dumps(row["details"])


def test_a_gitlink_at_a_cmake_path_in_a_real_repository(build) -> None:
    cmake = next(p for p in BARE if p.endswith("kernel_ingestor_engine/CMakeLists.txt"))
    repo = build(Scenario(base=BARE, head=(Change("noop", edits=()),)))
    store = Repo(str(repo.path))
    head = store[b"refs/heads/head"]
    items = [(x.path, b"1" * 40, GITLINK) if x.path == cmake.encode() else
             (x.path, x.sha, x.mode)
             for x in iter_tree_contents(store.object_store, head.tree)]
    commit = Commit()
    commit.tree = commit_tree(store.object_store, items)
    commit.parents = [head.id]
    commit.author = commit.committer = b"t <t@example.com>"
    commit.commit_time = commit.author_time = commit.commit_timezone = commit.author_timezone = 0
    commit.message = b"a submodule where the build file was"
    store.object_store.add_object(commit)
    store.refs[b"refs/heads/gitlink"] = commit.id
    code, out, err = _shown(repo.path, base="base", head="gitlink")
    assert code in (1, 2), err
    doc = json.loads(out)
    assert doc["verdict"]["line"] not in SAFE
    rows = [r for r in doc["rows"] if r["subject"] == cmake]
    assert rows and {r["status"] for r in rows} == {"changed"}
    assert "submodule pointer where a file should be" in json.dumps(rows)


# --- the work tree -----------------------------------------------------------------------

@pytest.fixture
def checkout(build):
    """A checkout of the base with the builder's argument added in the work tree."""
    repo = build(Scenario(base=BARE, head=(Change("noop", edits=()),)), checkout=True)
    files = {e.GFX950_DENSE: BARE[e.GFX950_DENSE]}
    e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")(files)
    (repo.path / e.GFX950_DENSE).write_bytes(files[e.GFX950_DENSE])
    return repo


@pytest.mark.parametrize("how", [HOW])
def test_an_unreadable_work_tree_file_is_named(checkout, monkeypatch, how) -> None:
    target = checkout.path / PACK
    target.write_bytes(target.read_bytes() + b"\n// touched\n")
    if ROOT:
        real = worktree_module.blob_from_path_and_stat

        def denied(fs_path, st, *args):
            if os.fsdecode(fs_path) == str(target):
                raise PermissionError(13, "Permission denied", str(target))
            return real(fs_path, st, *args)

        monkeypatch.setattr(worktree_module, "blob_from_path_and_stat", denied)
    else:
        target.chmod(0)
    try:
        code, out, err = _shown(checkout.path, worktree=True)
    finally:
        target.chmod(0o644)
    assert code in (1, 2), err
    doc, rows = _pack_row(out)
    assert doc["verdict"]["line"] not in SAFE
    assert rows and {r["status"] for r in rows} <= {"changed", "mismatch"}
    assert "Permission denied" in json.dumps(rows)


def test_special_files_are_skipped_unread_with_a_note(checkout, tmp_path) -> None:
    """FIFO, socket and (as root) a device node, untracked: a FIFO opened for reading blocks
    until a writer comes, so the report runs as a subprocess under a timeout."""
    os.mkfifo(checkout.path / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(checkout.path / "sock"))
    expected = {"work-tree file pipe": "a FIFO", "work-tree file sock": "a socket"}
    if ROOT:  # mknod needs CAP_MKNOD
        os.mknod(checkout.path / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        expected["work-tree file null"] = "a character device"
    try:
        done = subprocess.run([sys.executable, "-m", "impact", "report", "--repo",
                               str(checkout.path), "--worktree", "--format", "json"],
                              capture_output=True, text=True, timeout=120)
    finally:
        sock.close()
    assert done.returncode in (1, 2), done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"]["line"] not in SAFE  # the builder edit still counts
    skipped = {s["what"]: s["reason"] for s in doc["coverage"]["skipped"]}
    for what, kind in expected.items():
        assert skipped.get(what, "").startswith(kind), (what, skipped)


def test_a_tracked_file_replaced_by_a_fifo_is_changed_and_named(build, tmp_path) -> None:
    """The only change: a tracked pack file is now a FIFO. dulwich's unstaged scan skips it;
    it must still read as changed (never NONE) and be named, and never be opened."""
    repo = build(Scenario(base=BARE, head=(Change("noop", edits=()),)), checkout=True)
    target = repo.path / PACK
    target.unlink()
    os.mkfifo(target)
    done = subprocess.run([sys.executable, "-m", "impact", "report", "--repo",
                           str(repo.path), "--worktree", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (1, 2), done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"]["line"] not in SAFE
    named = [r for r in doc["rows"] if r["status"] in ("changed", "mismatch")
             and any(s["file"] == PACK for s in r["sides"])]
    assert named and "a FIFO" in json.dumps(doc)


def test_a_symlink_loop_in_the_work_tree_is_read_as_a_link(checkout) -> None:
    os.symlink("loop-b", checkout.path / "loop-a")
    os.symlink("loop-a", checkout.path / "loop-b")
    code, out, err = _shown(checkout.path, worktree=True)
    assert code in (1, 2), err
    assert json.loads(out)["verdict"]["line"] not in SAFE


def test_a_file_that_vanishes_between_listing_and_reading(checkout, monkeypatch) -> None:
    doomed = checkout.path / "notes.txt"
    doomed.write_text("gone before it is read\n")
    real = worktree_module.blob_from_path_and_stat

    def vanish(fs_path, st, *args):
        if os.fsdecode(fs_path) == str(doomed):
            doomed.unlink()
        return real(fs_path, st, *args)

    monkeypatch.setattr(worktree_module, "blob_from_path_and_stat", vanish)
    code, out, err = _shown(checkout.path, worktree=True)
    assert code in (1, 2), err
    doc = json.loads(out)
    assert not doomed.exists()
    assert "notes.txt" not in json.dumps(doc["rows"])
