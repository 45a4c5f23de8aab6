"""Shared fixtures: scenarios built on disk as git repositories, or in memory (tests/memory.py).

Must not touch the repository under test: every scenario is written under pytest's
tmp_path, or kept in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import memory
import pytest
from dulwich.repo import Repo

from impact.fixtures import BuiltRepository, Scenario, build_repository
from impact.git import Views
from impact.session import Session
from impact.validate import gpus

SAMPLES = Path(__file__).parent / "data" / "gpu_samples"
"""Recorded GPU samples: the documented test seam that stands in for a device."""


def add_orphan_branch(repo: BuiltRepository, other: BuiltRepository, name: str = "orphan") -> None:
    """Copy `other`'s objects into `repo` and point branch `name` at its unrelated root."""
    source, target = Repo(str(other.path)), Repo(str(repo.path))
    for sha in source.object_store:
        target.object_store.add_object(source.object_store[sha])
    target.refs[f"refs/heads/{name}".encode()] = other.base.encode()


class Build:
    """Builds a scenario: called, as a git repository in a fresh folder (for tests that need
    a merged view, a worktree, real git objects, or a report through the library entry or
    the command line, which read a repository); `in_memory`, as views with no git at all
    (tests/harness.py reports and runs checks on a Scenario that way)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0

    def __call__(self, scenario: Scenario, *, checkout: bool = False) -> BuiltRepository:
        path = self.root / f"repo{self.count}"
        self.count += 1
        return build_repository(scenario, path, checkout=checkout)

    @staticmethod
    def in_memory(scenario: Scenario) -> Views:
        """The scenario's base and head views, built from its files without a repository."""
        return memory.scenario_views(scenario)


@pytest.fixture(autouse=True, scope="session")
def _fact_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory):
    """Reports run by tests (in-process or as subprocesses) keep their fact cache in a
    session folder, never in the real ~/.cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture(autouse=True, scope="session")
def _one_session(_fact_cache_in_tmp: None) -> Iterator[None]:
    """The test run is one Session, in memory only (impact/session.py): a blob is parsed
    once for every test that reads it, as in one long process, and each command a test
    runs shares that memory (`Session.for_command`). A test that counts parses, or reads
    a blob made unreadable, starts cold in a Session of its own (`fresh_session`)."""
    with Session(use_cache=False).active():
        yield


@pytest.fixture
def fresh_session() -> Iterator[Session]:
    """A Session of the test's own, in memory only, current for the length of the test:
    nothing another test parsed or classified is in it."""
    with Session(use_cache=False).active() as session:
        yield session


@pytest.fixture
def build(tmp_path: Path) -> Build:
    """Build a scenario into a fresh folder under tmp_path (or in memory, `in_memory`)."""
    return Build(tmp_path)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Validate's GPU backends replaced by recorded samples of two idle H200s."""
    monkeypatch.setenv(gpus.RECORDED_SAMPLES_ENV, str(SAMPLES / "idle.json"))


@pytest.fixture
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine where every GPU backend fails to load."""
    monkeypatch.delenv(gpus.RECORDED_SAMPLES_ENV, raising=False)
    for name in ("_nvml", "_amdsmi", "_amd_smi_cli", "_rocm_smi"):
        monkeypatch.setattr(gpus, name, lambda n=name: (None, f"{n}: hidden by the test"))
