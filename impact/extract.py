"""Facts of a snapshot's files: pick the extractor by the surface map, cache by blob id.

Maintainers: no parsing here, only dispatch. A file whose language has no
extractor yet gets a parse-failure fact saying so, so later stages treat it
as not understood (changed), never as safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from impact.cpp import extract_cmake_facts, extract_cpp_facts
from impact.facts import Fact, parse_failure
from impact.git import Snapshot
from impact.python import extract_python_facts
from impact.surface import SurfaceMap

Extractor = Callable[[str, bytes], list[Fact]]

EXTRACTORS: dict[str, Extractor] = {
    "python": extract_python_facts,
    "cpp": extract_cpp_facts,
    "cmake": extract_cmake_facts,
}


class FactCache:
    """Facts keyed by (language, blob id): a blob is parsed once per run, whatever views hold it."""

    def __init__(self) -> None:
        self._facts: dict[tuple[str, str], list[Fact]] = {}

    def facts(self, snapshot: Snapshot, path: str, language: str) -> list[Fact]:
        key = (language, snapshot[path].sha)
        if key not in self._facts:
            extractor = EXTRACTORS.get(language)
            if extractor is None:
                found = [parse_failure(path, f"no {language} extractor yet: not understood")]
            else:
                found = extractor(path, snapshot.read(path))
            self._facts[key] = found
        return self._facts[key]


def snapshot_facts(snapshot: Snapshot, paths: Iterable[str], surface: SurfaceMap,
                   cache: FactCache | None = None) -> dict[str, list[Fact]]:
    """Path -> its facts, for each path present in `snapshot`."""
    cache = cache or FactCache()
    return {path: cache.facts(snapshot, path, surface.describe(path).language)
            for path in sorted(set(paths)) if path in snapshot}
