"""The facts of a large change parsed on every core before the checks ask for them.

Why: a report on a change of dozens of large Python or C++ files spends most of its time
parsing them, once at the base and once at the head, one after the other; the checks ask
for them one by one. Parsing is pure (bytes in, facts out), so the files the views
change are parsed up front in child processes, and each child's facts enter the report's
FactCache exactly as a parse of its own would (the same JSON round trip, the same store
entry). Anything that goes wrong in a child — it cannot start, it crashes, it is killed —
only leaves those files to the lazy parse: the report is the same, only slower.

Maintainers: forks (children inherit the map and the imported extractors; a platform
without `fork` parses lazily). Reads each blob in the parent, so a file that cannot be
read is still named by the FactCache when a check asks for it. `IMPACT_JOBS` caps the
children (1: none); a change of fewer than `least` files, or under `least_bytes`, is not
worth a fork.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from impact.caches import FactKey
from impact.extract import FactCache, extracted_json
from impact.git import Snapshot
from impact.surface import SurfaceMap

JOBS_VARIABLE = "IMPACT_JOBS"
_MAX_JOBS = 4
_SURFACE: SurfaceMap | None = None  # the map a forked child parses with


def jobs() -> int:
    """How many children may parse at once: the cores this process may use (at most
    four), or `IMPACT_JOBS`; 1 means parse in this process only."""
    given = os.environ.get(JOBS_VARIABLE, "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, _MAX_JOBS))


def prefetch(cache: FactCache, wanted: Iterable[tuple[Snapshot, str]], *, least: int = 8,
             least_bytes: int = 256_000) -> int:
    """Parse, in child processes, the files of `wanted` whose facts `cache` lacks; returns
    how many it parsed (0 when it parsed none: too few, one core, no `fork`, a failure)."""
    workers = jobs()
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return 0
    todo: dict[FactKey, tuple[dict[str, Any] | None, str, bytes]] = {}
    for snapshot, path in wanted:
        if path not in snapshot:
            continue
        missing = cache.missing(snapshot, path)
        if missing is None or missing[0] in todo:
            continue
        try:
            source = snapshot.read(path)
        except Exception:  # the FactCache names it when a check asks
            continue
        todo[missing[0]] = (missing[1], path, source)
    if len(todo) < least or sum(len(s) for _, _, s in todo.values()) < least_bytes:
        return 0
    # The largest first, so no child is left with one big file at the end.
    keys = sorted(todo, key=lambda k: -len(todo[k][2]))
    global _SURFACE
    _SURFACE = cache.surface
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(keys)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            texts = list(pool.map(_parse, [(todo[k][1], todo[k][2]) for k in keys]))
    except Exception:  # a child that could not start or died: parse lazily instead
        return 0
    finally:
        _SURFACE = None
    for key, text in zip(keys, texts, strict=True):
        cache.accept(key, todo[key][0], text)
    return len(keys)


def _parse(job: tuple[str, bytes]) -> str:
    """In a child: the facts' JSON of one file."""
    assert _SURFACE is not None
    path, source = job
    return extracted_json(path, source, _SURFACE)


__all__ = ["JOBS_VARIABLE", "jobs", "prefetch"]
