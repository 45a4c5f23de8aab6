"""Prefetch parses a change's files in child processes: the facts are those a lazy parse
gives, a child that fails leaves the files to the lazy parse, one core or IMPACT_JOBS=1
forks nothing, and the report is the same either way."""

from __future__ import annotations

import os

import memory
import pytest
from harness import scenario

from impact import prefetch as prefetching
from impact.caches import Caches
from impact.document import build_report
from impact.extract import FactCache
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.git import Snapshot
from impact.surface import builtin_map

AITER = tree_files("aiter_tree")
MAP = builtin_map("aiter")
PARSED = sorted(p for p in AITER if p.endswith((".py", ".cu", ".h", ".hpp", ".json")))


def _wanted(snapshot: Snapshot) -> list[tuple[Snapshot, str]]:
    return [(snapshot, path) for path in PARSED]


@pytest.fixture(autouse=True)
def _two_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(prefetching.JOBS_VARIABLE, "2")


def test_prefetched_facts_are_the_lazy_parse_s() -> None:
    snapshot = Snapshot.from_files(AITER)
    fetched = FactCache(MAP, caches=Caches())
    assert prefetching.prefetch(fetched, _wanted(snapshot), least=1, least_bytes=0) > 0
    lazy = FactCache(MAP, caches=Caches())
    for path in PARSED:
        assert fetched.facts(snapshot, path) == lazy.facts(snapshot, path), path
    # Everything is held now: a second prefetch has nothing to parse.
    assert prefetching.prefetch(fetched, _wanted(snapshot), least=1, least_bytes=0) == 0


def test_a_small_change_or_one_job_forks_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = Snapshot.from_files(AITER)
    assert prefetching.prefetch(FactCache(MAP, caches=Caches()), _wanted(snapshot)) == 0
    monkeypatch.setenv(prefetching.JOBS_VARIABLE, "1")
    assert prefetching.jobs() == 1
    assert prefetching.prefetch(FactCache(MAP, caches=Caches()), _wanted(snapshot),
                                least=1, least_bytes=0) == 0


def _dies(_job: tuple[str, bytes]) -> str:
    os._exit(3)  # a child killed mid-parse


def _raises(_job: tuple[str, bytes]) -> str:
    raise MemoryError


@pytest.mark.parametrize("child", [_dies, _raises], ids=["dies", "raises"])
def test_a_child_that_fails_leaves_the_files_to_the_lazy_parse(
        child: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prefetching, "_parse", child)
    snapshot = Snapshot.from_files(AITER)
    cache = FactCache(MAP, caches=Caches())
    assert prefetching.prefetch(cache, _wanted(snapshot), least=1, least_bytes=0) == 0
    assert all(cache.missing(snapshot, path) is not None for path in PARSED)
    lazy = FactCache(MAP, caches=Caches())
    assert cache.facts(snapshot, PARSED[0]) == lazy.facts(snapshot, PARSED[0])


def test_the_report_is_the_same_with_and_without_children(
        monkeypatch: pytest.MonkeyPatch) -> None:
    views = memory.scenario_views(scenario(AITER, e.replace(
        "aiter/ops/activation.py", "def gelu_and_mul(out: Tensor, input: Tensor)",
        "def gelu_and_mul(out: Tensor, input: Tensor = None)")))
    calls: list[int] = []
    real = prefetching.prefetch

    def eager(cache: FactCache, wanted: object, **_: object) -> int:
        calls.append(real(cache, wanted, least=1, least_bytes=0))  # type: ignore[arg-type]
        return calls[-1]

    monkeypatch.setattr("impact.document.prefetch", eager)
    forked = build_report(views, {}, MAP, caches=Caches())
    assert calls and calls[0] > 0
    monkeypatch.setenv(prefetching.JOBS_VARIABLE, "1")
    alone = build_report(views, {}, MAP, caches=Caches())
    assert calls[1] == 0
    assert forked == alone
