"""The literal-ends guard in front of each surface regex never changes what matches."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from impact.surface import BUILTIN_MAPS, builtin_map, literal_ends

MAPS = [builtin_map(name) for name in BUILTIN_MAPS]
ENTRIES = [entry for surface in MAPS for entry in surface.entries]
PIECES = sorted({piece for entry in ENTRIES for pattern in entry.patterns
                 for piece in re.split(r"[*?\[\]]+", pattern) if piece}
                | {"a", "b.py", "x.cpp", "CMakeLists.txt", "", "/"})


def _regex_only(entry, path: str) -> bool:
    return any(rx.fullmatch(path.encode()) for rx in entry.regexes)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_guarded_match_equals_the_regex(pieces: list[str]) -> None:
    path = "".join(pieces).strip("/").replace("//", "/")
    for entry in ENTRIES:
        assert entry.matches(path) == _regex_only(entry, path), (entry.kind, path)


def test_every_builtin_path_of_the_fixture_tree_classifies_as_before() -> None:
    from impact.fixtures.tree import rocke_tree_files

    surface = builtin_map("hipdnn")
    for path in rocke_tree_files():
        for entry in surface.entries:
            assert entry.matches(path) == _regex_only(entry, path), (entry.kind, path)


def test_literal_ends() -> None:
    assert literal_ends("**/*.dvc") == ("", ".dvc")
    assert literal_ends("**/CMakeLists.txt") == ("", "CMakeLists.txt")  # also at the top
    assert literal_ends("a/[bc]/d") == ("a/", "d")
    assert literal_ends("exact/file.py") == ("exact/file.py", "exact/file.py")
