"""Snapshot diffs on in-memory trees: no repository needed."""

from __future__ import annotations

import pytest

from impact.git import Snapshot, diff_snapshots

CASES = [
    # (old files, new files, added, removed, modified, renamed)
    ({"a": "1"}, {"a": "1"}, (), (), (), ()),
    ({"a": "1"}, {"a": "2"}, (), (), ("a",), ()),
    ({"a": "1"}, {}, (), ("a",), (), ()),
    ({}, {"a": "1"}, ("a",), (), (), ()),
    ({"a": "1"}, {"b": "1"}, (), (), (), (("a", "b"),)),
    ({"a": "1"}, {"b": "1x"}, ("b",), ("a",), (), ()),
    ({"a": "1", "b": "1"}, {"c": "1", "d": "1"}, (), (), (), (("a", "c"), ("b", "d"))),
    ({"a": "1", "b": "1"}, {"a": "1", "c": "1"}, (), (), (), (("b", "c"),)),
]


@pytest.mark.parametrize(("old", "new", "added", "removed", "modified", "renamed"), CASES)
def test_diff(old, new, added, removed, modified, renamed) -> None:
    diff = diff_snapshots(Snapshot.from_files(old), Snapshot.from_files(new))
    assert (diff.added, diff.removed, diff.modified, diff.renamed) == (
        added, removed, modified, renamed)
    assert bool(diff) == bool(added or removed or modified or renamed)


def test_snapshot_reads_content_lazily() -> None:
    calls: list[str] = []
    snap = Snapshot.from_files({"x.py": b"print(1)\n"})
    reader_snap = Snapshot(dict(snap), lambda sha: calls.append(sha) or b"print(1)\n", label="t")
    assert calls == []
    assert reader_snap.read("x.py") == b"print(1)\n"
    assert calls == [snap["x.py"].sha]


def test_diff_paths_include_both_names_of_a_rename() -> None:
    diff = diff_snapshots(Snapshot.from_files({"a": "1", "m": "x"}),
                          Snapshot.from_files({"b": "1", "m": "y"}))
    assert diff.paths == ("a", "b", "m")
