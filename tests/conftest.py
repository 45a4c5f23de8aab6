"""Shared fixtures: scenario repositories built on disk with the fixture builder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from impact.fixtures import BuiltRepository, Scenario, build_repository

Build = Callable[..., BuiltRepository]


@pytest.fixture
def build(tmp_path: Path) -> Build:
    """Build a scenario into a fresh folder under tmp_path; returns the BuiltRepository."""
    counter = iter(range(1000))

    def _build(scenario: Scenario, *, checkout: bool = False) -> BuiltRepository:
        return build_repository(scenario, tmp_path / f"repo{next(counter)}", checkout=checkout)

    return _build
