"""Generated headers and what generates them (flatbuffers schemas, flatc flags).

Maintainers: one file-level row per changed file of the generated-header family,
through the shared comparison in `filelevel.py`; facts only, no blob reads.
"""

from __future__ import annotations

from typing import ClassVar

from impact.checks.check import Scope
from impact.checks.filelevel import FileCheck, Judge, Verdict, same_content
from impact.facts import Fact
from impact.kinds import SurfaceKind
from impact.reasons import Reason
from impact.rows import Status
from impact.surface import PathSurface

_SOURCES = frozenset({SurfaceKind.FLATBUFFERS_SCHEMA, SurfaceKind.FLATC_FLAGS})


class GeneratedHeaderCheck(FileCheck):
    """What it checks:
        Every flatc `*_generated.h` header, `.fbs` schema and `flatc_flags.txt` a view
        changes, and whether an edited generated header came with its schema or flags.

    Why a break hurts at run time:
        The generated headers fix the serialized layout plugins and the loader agree on;
        a hand edit the schema does not carry is lost (or diverges) at the next
        regeneration, and a schema change moves every field offset a reader relies on.

    Example:
        Breaks nothing by itself: a schema edit with its regenerated header is `changed`
        (a device run must read the new layout). A generated header edited while its
        schema and flags stay as they were is `changed` and says so; a comment-only edit
        of a schema is `inert`.

    When it says changed instead:
        A file added or removed, one that cannot be read at either revision, any content
        change, and a `*_generated.h` edited without its schema or `flatc_flags.txt`.

    Evidence:
        The file at both revisions, and why (content differs, generated header edited
        without its schema or flags, not understood, added, removed); the architectures
        that ship the file's module, else every arch.
    """

    name: ClassVar[str] = "generated-header"
    surfaces: ClassVar[frozenset[SurfaceKind]] = (
        frozenset({SurfaceKind.GENERATED_HEADER}) | _SOURCES)
    owns_files: ClassVar[frozenset[SurfaceKind]] = surfaces

    def judge(self, scope: Scope, path: str, what: PathSurface) -> Judge | None:
        if what.kind != SurfaceKind.GENERATED_HEADER:
            return None

        def judge(old: list[Fact], new: list[Fact]) -> Verdict | None:
            if same_content(scope.ctx, old, new) or _regenerated(scope):
                return None
            return Verdict(Status.CHANGED, Reason.GENERATED_HEADER_WITHOUT_SOURCE, {})
        return judge


def _regenerated(scope: Scope) -> bool:
    """Whether the view changes a source the headers are generated from."""
    return any(scope.ctx.surface.describe(p).kind in _SOURCES for p in scope.view.diff.paths)
