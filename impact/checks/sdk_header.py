"""Plugin SDK headers the ingestor and its packs compile against.

Maintainers: one file-level row per changed SDK header, through the shared comparison
in `filelevel.py`; a plain SDK header counts only inside the include closure of the
ingestor SDK headers and packs, which the graph computes from include facts.
"""

from __future__ import annotations

from typing import ClassVar

from impact.checks.check import Scope
from impact.checks.filelevel import FileCheck
from impact.kinds import SurfaceKind
from impact.surface import PathSurface

_INCLUDE_ROOTS = (SurfaceKind.INGESTOR_SDK_HEADER, SurfaceKind.INGESTOR_PACK,
                  SurfaceKind.INGESTOR_ENGINE)


class SdkHeaderCheck(FileCheck):
    """What it checks:
        Every plugin SDK header a view changes: the ingestor SDK headers, the generic
        target table, and any other SDK header the ingestor SDK headers or the native
        packs include (directly or through other headers), at either revision.

    Why a break hurts at run time:
        The ingestor and its packs are compiled against these headers: a changed struct,
        constant or arch-matching rule changes the loaded plugin's behaviour (which
        kernels match which GPU) without any pack source changing.

    Example:
        Breaks nothing by itself: `ArchMatch.hpp`, which the loader includes, gaining a
        declaration is `changed`. An SDK header nothing in the ingestor includes
        (`Unrelated.hpp`) gives no row at all; a comment-only edit is `inert`.

    When it says changed instead:
        A header added or removed, one that cannot be read at either revision, or any
        change beyond comments and layout. A plain SDK header outside the include
        closure of the ingestor SDK headers and packs reads no row.

    Evidence:
        The header at both revisions, and why (content differs, not understood, added,
        removed); the architectures that ship the file's module, else every arch.
    """

    name: ClassVar[str] = "sdk-header"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.SDK_HEADER, SurfaceKind.INGESTOR_SDK_HEADER, SurfaceKind.GENERIC_TARGET})
    owns_files: ClassVar[frozenset[SurfaceKind]] = surfaces

    def wanted(self, scope: Scope, path: str, what: PathSurface) -> bool:
        """A plain SDK header is the ingestor's only inside its include closure."""
        if what.kind == SurfaceKind.SDK_HEADER:
            return _in_include_closure(scope, path)
        return super().wanted(scope, path, what)


def _in_include_closure(scope: Scope, path: str) -> bool:
    """Whether the ingestor SDK headers or the packs include `path`, at either side."""
    for snapshot in (scope.old, scope.new):
        roots = scope.ctx.paths(snapshot, *_INCLUDE_ROOTS)
        if path in scope.ctx.graph(snapshot).kernels.include_closure(roots):
            return True
    return False
