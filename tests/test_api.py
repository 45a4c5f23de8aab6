"""The public surface: each name in impact.__all__ exists, once, and is in the package map."""

from __future__ import annotations

import impact


def test_public_names_are_exported_once() -> None:
    assert len(impact.__all__) == len(set(impact.__all__))
    for name in impact.__all__:
        assert getattr(impact, name) is not None
        assert name in (impact.__doc__ or "")
