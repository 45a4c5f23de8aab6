"""Dependency files (requirements, pyproject): a changed pin is left to the DEPS lane.

Maintainers: one file-level row per changed dependency file, through the shared
comparison in `filelevel.py`; nothing here reads blobs or names a library's paths.
"""

from __future__ import annotations

from typing import ClassVar

from impact.checks.filelevel import FileCheck
from impact.kinds import SurfaceKind


class DepsCheck(FileCheck):
    """What it checks:
        Every dependency file a view changes (`requirements.txt`, `pyproject.toml` of the
        rocKE packages, a `setup.py`): did its content change?

    Why a break hurts at run time:
        A dependency pin decides which numpy, LLVM bindings or compiler the packer runs
        with; a new version can change generated code or fail at import with every
        source file unchanged.

    Example:
        Breaks nothing by itself; it is handed to the DEPS lane: `numpy>=1.24,<3` becoming
        `numpy>=2.0,<3` is `changed` on the DEPS lane. A file rewritten with identical
        text is no change at all.

    When it says changed instead:
        Always `changed` when its content changed: a dependency file added or removed, one
        that cannot be read, or any edit of its text.

    Evidence:
        The file at both revisions, and why (added, removed, not understood, content
        differs); the architectures that ship the file's module, else every arch.
    """

    name: ClassVar[str] = "deps"
    # A Python build script (setup.py) is a dependency file too; what its extension
    # modules compile is the `extension-build` check's.
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset({SurfaceKind.DEPS,
                                                            SurfaceKind.BUILD_SCRIPT})
    owns_files: ClassVar[frozenset[SurfaceKind]] = surfaces
