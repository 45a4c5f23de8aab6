"""The architecture a path names, for files no shipped variant reaches."""

from __future__ import annotations

import pytest

from impact.archs import PATH_ARCH as _PATH_ARCH


@pytest.mark.parametrize(("path", "archs"), [
    ("packs/Gfx950ConvFwdNative.cpp", ["gfx950"]),
    ("kernels/gfx90a/x.py", ["gfx90a"]),
    ("kernels/gfx950/attention_dense.py", ["gfx950"]),
    ("kernels/gfx1151/wmma_fmha.py", ["gfx1151"]),
    ("kernels/common/tiling.py", []),
])
def test_path_arch(path: str, archs: list[str]) -> None:
    assert [m.group(0).lower() for m in _PATH_ARCH.finditer(path)] == archs
