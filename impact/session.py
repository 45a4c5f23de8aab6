"""A Session: what the reports run through it share, for as long as it lives.

Why: a report reads facts, tree indexes and stored documents that another report of the
same trees can reuse. A Session owns all of them: the three stores of the cache folder
(the facts of parsed files, stored reports, built variants; none with `use_cache=False`)
and the in-memory caches (`impact.caches.Caches`: the facts parsed, the tree indexes
with the folders they classified, and the symbol graphs' networkx domains per tree).
Nothing of this lives in a module: two Sessions share nothing but what their cache
folders hold, unless one is made to share the other's memory (`memory_of`, as each
command of the command line shares the memory of the Session it runs in, if any), so a
test that wants a cold start makes a new Session. What is one report's own (the files it
could not read, the graphs' per-question domains, the merged view's head part) lives in
that report's `CheckContext`, which gets its caches from here.

Maintainers: opens nothing until asked; a store is made when a report first needs it, in
the order the command line always made them (the fact store when a report starts, the
emit store when the emitter runs, the report store at the look-up), so a folder that
cannot be written is warned about as before. Imports no parser, check or schema library.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING

from impact.factstore import FactStore, Usage, default_cache_dir

if TYPE_CHECKING:
    from emit.cache import EmitStore
    from impact.caches import Caches
    from impact.reportstore import ReportStore


_CURRENT: ContextVar[Session | None] = ContextVar("impact.session.current", default=None)


def current_session() -> Session | None:
    """The Session made active here (`Session.active()`), if any: the library entry's
    functions run in it when they are handed none."""
    return _CURRENT.get()


class Session:
    """The caches of as many reports as are run through it.

    `cache_dir` is the cache folder (None: `$XDG_CACHE_HOME/impact`, else
    `~/.cache/impact`, as `--cache-dir` is); `use_cache=False` reads and writes nothing
    there (as `--no-cache`), the in-memory caches still being shared. With `memory_of`,
    the facts and tree indexes in memory are that Session's (its stores stay its own)."""

    def __init__(self, cache_dir: str | os.PathLike[str] | None = None, *,
                 use_cache: bool = True, memory_of: Session | None = None) -> None:
        from impact.caches import Caches  # the git reader: when a Session is made

        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_cache = use_cache
        self.caches: Caches = Caches() if memory_of is None else Caches(
            facts=memory_of.caches.facts, indexes=memory_of.caches.indexes)
        self._fact_store: FactStore | None = None
        self._report_store: ReportStore | None = None
        self._emit_store: EmitStore | None = None

    @classmethod
    def for_command(cls, cache_dir: str | os.PathLike[str] | None = None, *,
                    use_cache: bool = True) -> Session:
        """The Session of one command (a command line, a hook run, an Action step): its
        stores as its options say, its memory the current Session's when one is active
        (a test run, a caller's loop), so that commands run in one process parse a blob
        once; else a memory of its own, as one process."""
        return cls(cache_dir, use_cache=use_cache, memory_of=current_session())

    def __repr__(self) -> str:
        where = str(self.cache_dir) if self.use_cache else "no cache"
        return f"Session({where})"

    @property
    def cache_dir(self) -> Path:
        """The cache folder (the default one is looked up when first asked for)."""
        if self._cache_dir is None:
            self._cache_dir = default_cache_dir()
        return self._cache_dir

    @property
    def fact_store(self) -> FactStore | None:
        """The facts of parsed files, `<cache>/facts` (None: no cache)."""
        if self.use_cache and self._fact_store is None:
            self._fact_store = FactStore(self.cache_dir)
        return self._fact_store

    @property
    def report_store(self) -> ReportStore | None:
        """Stored report documents, `<cache>/reports` (None: no cache)."""
        if self.use_cache and self._report_store is None:
            from impact.reportstore import ReportStore

            self._report_store = ReportStore(self.cache_dir)
        return self._report_store

    @property
    def emit_store(self) -> EmitStore | None:
        """The emitter's built variants, `<cache>/emit` (None: no cache)."""
        if self.use_cache and self._emit_store is None:
            from emit.cache import EmitStore

            self._emit_store = EmitStore(self.cache_dir)
        return self._emit_store

    @contextmanager
    def active(self) -> Iterator[Session]:
        """Within the block this is the current Session (`current_session`), and whatever
        reads facts or tree indexes without being handed caches (the graph, the emitter's
        rules) reads this Session's, through its fact store; after it, the fact store
        keeps its size bound."""
        self.caches.store = self.fact_store
        token = _CURRENT.set(self)
        try:
            with self.caches.active():
                yield self
        finally:
            _CURRENT.reset(token)
            if self._fact_store is not None:
                self._fact_store.close()

    def _stores(self) -> tuple[tuple[str, FactStore], ...]:
        """The three stores of the cache folder, looked at without creating it."""
        from emit.cache import EmitStore
        from impact.reportstore import ReportStore

        folder = self.cache_dir
        return (("facts", FactStore(folder, create=False)),
                ("emit", EmitStore(folder, create=False)),
                ("reports", ReportStore(folder, create=False)))

    def cache_usage(self) -> list[tuple[str, Usage]]:
        """Each store of the cache folder (facts, emit, reports) with its entries and size."""
        return [(name, store.usage()) for name, store in self._stores()]

    def clear_cache(self) -> list[tuple[str, Usage]]:
        """Delete every entry of every store of the cache folder; what each held."""
        return [(name, store.clear()) for name, store in self._stores()]
