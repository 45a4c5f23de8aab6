"""The symbol-string domain of a snapshot's graph: the native symbol strings descriptor
files name and the `constexpr` strings C++ files declare.

Maintainers: reads only the files a question names, through the report's own FactCache
(not the cache a shared graph was built with), so that each report records the files it
could not read; holds no networkx graph.
"""

from __future__ import annotations

from collections.abc import Iterable

from impact.extract import FactCache
from impact.git import Snapshot
from impact.graph.records import SymbolString
from impact.kinds import FactKind


class SymbolStrings:
    """One snapshot's symbol strings, file by file as asked."""

    def __init__(self, snapshot: Snapshot, cache: FactCache) -> None:
        self.snapshot = snapshot
        self.cache = cache

    def symbol_names(self, paths: Iterable[str]) -> list[SymbolString]:
        """The native symbol strings the descriptor files `paths` name."""
        snapshot, cache = self.snapshot, self.cache
        return sorted(
            SymbolString(fact.name, path, fact.line, str(fact.data.get("role", "")))
            for path in paths if path in snapshot
            for fact in cache.facts(snapshot, path) if fact.kind == FactKind.SYMBOL)

    def symbol_declarations(self, paths: Iterable[str]) -> list[SymbolString]:
        """The `constexpr` strings the C++ files `paths` declare."""
        snapshot, cache = self.snapshot, self.cache
        return sorted(
            SymbolString(str(fact.data.get("value")), path, fact.line, fact.name)
            for path in paths if path in snapshot
            for fact in cache.facts(snapshot, path)
            if fact.kind == FactKind.CONSTEXPR_STRING)
