"""Build files (CMake): a changed build file is left to the BUILD lane, never silent.

Maintainers: one file-level row per changed build file, through the shared comparison
in `filelevel.py`; nothing here reads blobs or names a library's paths.
"""

from __future__ import annotations

from typing import ClassVar

from impact.checks.filelevel import FileCheck
from impact.kinds import SurfaceKind


class BuildCheck(FileCheck):
    """What it checks:
        Every build file a view changes (`CMakeLists.txt`, `*.cmake`, `*.cmake.in`): did
        its content change, and can the tool read it at both revisions?

    Why a break hurts at run time:
        A build file decides what is compiled, linked and packaged: which sources a
        library holds, which flags build its kernels, which targets ship. An edit can
        drop a pack from the archive or change codegen with every source unchanged.

    Example:
        Breaks nothing by itself; it is handed to the BUILD lane: adding
        `target_compile_options(hip_kernel_provider_impl PRIVATE -O2)` is `changed` on the
        BUILD lane. A comment-only or whitespace-only edit is `inert`.

    When it says changed instead:
        Always `changed` when its content changed: a build file added or removed, one that
        cannot be read at either revision, or any edit beyond comments and layout.

    Evidence:
        The file at both revisions, and why (added, removed, not understood, content
        differs); the architectures that ship the file's module, else every arch.
    """

    name: ClassVar[str] = "build"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset({SurfaceKind.BUILD})
    owns_files: ClassVar[frozenset[SurfaceKind]] = surfaces
