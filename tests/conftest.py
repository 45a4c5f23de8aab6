"""Shared fixtures: scenario repositories built on disk with the fixture builder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.repo import Repo

from impact.fixtures import BuiltRepository, Scenario, build_repository

Build = Callable[..., BuiltRepository]


def add_orphan_branch(repo: BuiltRepository, other: BuiltRepository, name: str = "orphan") -> None:
    """Copy `other`'s objects into `repo` and point branch `name` at its unrelated root."""
    source, target = Repo(str(other.path)), Repo(str(repo.path))
    for sha in source.object_store:
        target.object_store.add_object(source.object_store[sha])
    target.refs[f"refs/heads/{name}".encode()] = other.base.encode()


@pytest.fixture
def build(tmp_path: Path) -> Build:
    """Build a scenario into a fresh folder under tmp_path; returns the BuiltRepository."""
    counter = iter(range(1000))

    def _build(scenario: Scenario, *, checkout: bool = False) -> BuiltRepository:
        return build_repository(scenario, tmp_path / f"repo{next(counter)}", checkout=checkout)

    return _build
