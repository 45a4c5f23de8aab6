"""What reports read through, as one object: the facts parsed in memory, the tree indexes,
the symbol graphs' networkx domains and the persistent fact store. A Session owns one
(impact/session.py) and makes it active while a report runs, so that what is made without
being handed caches (a FactCache, a tree index: the graph's, the emitter's rules') reads
through it.

Maintainers: holds no cache of its own, only which Caches are active (a context
variable; none active means fresh caches for whoever asks). Parses nothing and imports no
extractor: impact/extract.py reads and fills `facts`, impact/index.py `indexes`; a warm
emit that reads no file must not import impact.extract.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from impact.index import IndexMemo, memo_in_use

if TYPE_CHECKING:
    from impact.facts import Fact
    from impact.factstore import FactStore

FactKey = tuple[str, str, str]
"""(surface map sha, path, blob id): what a file's facts are a function of."""


@dataclass
class Caches:
    """The persistent fact store (None: memory only), the facts parsed in memory by
    `FactKey`, the tree indexes (impact/index.py) and the networkx domains of the symbol
    graphs by (map sha, tree id) (impact/graph/symbols.py, which bounds them), kept for
    as long as the Session that owns them lives. The facts have a bound past which they
    start afresh."""

    store: FactStore | None = None
    facts: dict[FactKey, list[Fact]] = field(default_factory=dict)
    indexes: IndexMemo = field(default_factory=IndexMemo)
    graphs: dict[tuple[str, str], Any] = field(default_factory=dict)

    FACTS_LIMIT = 200_000

    @contextmanager
    def active(self) -> Iterator[Caches]:
        """Within the block, a FactCache or tree index made without caches of its own uses
        these."""
        token = _ACTIVE.set(self)
        try:
            with memo_in_use(self.indexes):
                yield self
        finally:
            _ACTIVE.reset(token)


_ACTIVE: ContextVar[Caches | None] = ContextVar("impact.caches.active", default=None)


def active_caches() -> Caches | None:
    """The Caches of the report that is running, if any."""
    return _ACTIVE.get()
