"""DVC pointers: an edited pointer names other data, so it is always `changed`.

Maintainers: one file-level row per changed `.dvc` pointer, through the shared
comparison in `filelevel.py`; its facts come from the DVC extractor, never raw text.
"""

from __future__ import annotations

from typing import ClassVar

from impact.checks.check import Scope
from impact.checks.filelevel import FileCheck, Judge, Verdict
from impact.facts import Fact
from impact.kinds import SurfaceKind
from impact.reasons import Reason
from impact.rows import Status
from impact.surface import PathSurface


def _pointer_moved(_old: list[Fact], _new: list[Fact]) -> Verdict:
    """An understood pointer that changed at all names other data (its digest or path)."""
    return Verdict(Status.CHANGED, Reason.DATA_POINTER_CHANGED, {})


class DvcCheck(FileCheck):
    """What it checks:
        Every `.dvc` pointer a view changes: the reference bundles and catalogs the tests
        and packer read, named by content hash.

    Why a break hurts at run time:
        The pointer is a stand-in for data the tool cannot see: a new md5 means new
        reference outputs or a new catalog, so a test can pass against different answers
        or a kernel can ship built from other inputs.

    Example:
        Breaks nothing by itself, but is never `inert`: a pointer whose `md5` changed is
        `changed` (a device run must show the new data still matches). A pointer left as
        it was gives no row.

    When it says changed instead:
        Always `changed`: any edit to a pointer (its data changed), a pointer added or
        removed, or one that cannot be read at either revision.

    Evidence:
        The pointer at both revisions, and why (data pointer changed, added, removed, not
        understood); the architectures that ship the file's module, else every arch.
    """

    name: ClassVar[str] = "dvc"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset({SurfaceKind.DVC_POINTER})
    owns_files: ClassVar[frozenset[SurfaceKind]] = surfaces

    def judge(self, scope: Scope, path: str, what: PathSurface) -> Judge:
        return _pointer_moved
