"""Every changed surface file: did its content change, and can the tool understand it?"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from impact.checks.base import CheckContext
from impact.git import View
from impact.rows import Lane, Row, Side, Status

_CONTRACT_BY_KIND = {
    "build": "build",
    "deps": "deps",
    "dvc-pointer": "dvc",
    "generated-header": "generated-header",
    "flatbuffers-schema": "generated-header",
    "flatc-flags": "generated-header",
    "sdk-header": "sdk-header",
    "ingestor-sdk-header": "sdk-header",
    "generic-target": "sdk-header",
}
_REGENERATES = ("flatbuffers-schema", "flatc-flags")
_INCLUDE_ROOTS = ("ingestor-sdk-header", "ingestor-pack", "ingestor-engine")
# Kinds whose contract a dedicated check judges from understood facts: an edit the tool
# understands is settled there, not by this file-level row.
JUDGED_ELSEWHERE = {"op-python": "bindings", "op-cpp": "bindings", "op-sources-map": "bindings"}
# The CMake target of rocKE's C++ lowering engine, and how the packer pins the Python one.
ROCKE_ENGINE_TARGET = "rocke_engine"
PYTHON_BACKEND_PIN = 'backend="python"'
ROCKE_TREE = "dnn-providers/hip-kernel-provider/rocke/"


class SurfaceCheck:
    """What it checks:
        Every path a view changes that lies on the runtime surface (rocKE and packer
        Python, native packs and engine sources, descriptors, test pins, profiles,
        generated and SDK headers, build and dependency files, .dvc pointers).

    Why a break hurts at run time:
        A surface file feeds what a GPU runs; an edit to it can change a kernel, its launch
        or its selection even when every hand-kept copy still agrees.

    Example:
        Breaks nothing by itself, but settles the rest: a body edit of a builder is
        `changed` (a device run must show the kernel still computes the right answer);
        a comment-only, whitespace-only or docstring-only edit is `inert`.

    When it says changed instead:
        A file that does not parse (at either revision), a file whose kind the tool has
        no extractor for, an added or removed surface file, a .dvc pointer edit, and a
        flatc `*_generated.h` edited without its schema or `flatc_flags.txt`. Two kinds
        can read inert although their content changed: a plugin SDK header outside the
        include closure of the ingestor SDK headers and packs (no row at all), and a
        rocKE C++ engine source while no build file outside rocKE names the engine's
        target and the packer pins the Python backend (no shipped kernel is built by it).

    Evidence:
        The file at both revisions; the reason (content digest differs, parse failure,
        added, removed); the architectures that ship the file's module.
    """

    name: ClassVar[str] = "surface"

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            regenerated = any(
                ctx.surface.describe(p).kind in _REGENERATES for p in view.diff.paths)
            for path in view.diff.paths:
                what = ctx.surface.describe(path)
                if what.kind == "outside":
                    continue
                if what.kind == "sdk-header" and not self._in_include_closure(ctx, view, path):
                    continue
                yield self._row(ctx, view, path, what.kind, what.lane, regenerated)

    @staticmethod
    def _in_include_closure(ctx: CheckContext, view: View, path: str) -> bool:
        """Whether the ingestor SDK headers or the packs include `path`, at either side."""
        for snapshot in (view.old, view.new):
            if snapshot is None:
                continue
            roots = [p for p in snapshot if ctx.surface.describe(p).kind in _INCLUDE_ROOTS]
            if path in ctx.graph(snapshot).include_closure(roots):
                return True
        return False

    @staticmethod
    def _engine_dormant(ctx: CheckContext, view: View) -> str | None:
        """Why rocKE's C++ engine builds no shipped kernel at the view's new revision, or
        None when something outside rocKE builds it or the packer does not pin Python."""
        new = view.new
        assert new is not None
        for path in new:
            what = ctx.surface.describe(path).kind
            if (what == "build" and not path.startswith(ROCKE_TREE)
                    and ROCKE_ENGINE_TARGET in new.read(path).decode("utf-8", "replace")):
                return None
        pinned = [p for p in new if ctx.surface.describe(p).kind == "hkp-pack"
                  and PYTHON_BACKEND_PIN in new.read(p).decode("utf-8", "replace")]
        if not pinned:
            return None
        return (f"no build file outside rocKE names {ROCKE_ENGINE_TARGET} and the packer "
                f"pins the Python backend ({pinned[0]})")

    def _row(self, ctx: CheckContext, view: View, path: str, kind: str, lane: str,
             regenerated: bool) -> Row:
        assert view.new is not None
        old, new = view.old, view.new
        contract = _CONTRACT_BY_KIND.get(kind, self.name)
        archs = ctx.archs_for(path, old, new)
        sides = tuple(
            Side(path, 0, label, "changed")
            for label, snap in (("base", old), (view.name, new)) if path in snap)

        def row(status: Status, reason: str) -> Row:
            return Row(contract=contract, view=view.name, subject=path, status=status,
                       reason=reason, lane=Lane(lane), archs=archs, sides=sides,
                       details={"surface": kind})

        dormant = self._engine_dormant(ctx, view) if kind == "rocke-engine" else None
        if path not in old:
            if dormant is not None:
                return row(Status.INERT, f"rocKE C++ engine file added while {dormant}")
            return row(Status.CHANGED, "surface file added")
        if path not in new:
            if dormant is not None:
                return row(Status.INERT, f"rocKE C++ engine file removed while {dormant}")
            return row(Status.CHANGED, "surface file removed")
        old_facts, new_facts = ctx.facts(old, path), ctx.facts(new, path)
        broken_new, broken_old = ctx.parse_failure(new_facts), ctx.parse_failure(old_facts)
        if broken_new is not None:
            reason = broken_new.data.get("reason", "")
            return row(Status.CHANGED, f"file cannot be understood: {reason}")
        if broken_old is not None:
            return row(Status.CHANGED, "file could not be understood at the base")
        if kind == "dvc-pointer":
            return row(Status.CHANGED, "data pointer changed: the data it names changed")
        if ctx.content(old_facts) == ctx.content(new_facts):
            return row(Status.INERT, "only comments, docstrings or layout changed")
        if kind in JUDGED_ELSEWHERE:
            if _stated(old_facts) != _stated(new_facts):
                return row(Status.INERT, f"what it states changed; the "
                                         f"{JUDGED_ELSEWHERE[kind]} check compares every copy")
            return row(Status.CHANGED, "code beyond what the bindings state changed "
                                       "(a body or an implementation)")
        if dormant is not None:
            return row(Status.INERT, f"rocKE C++ engine changed while {dormant}")
        if kind == "generated-header" and not regenerated:
            return row(Status.CHANGED, "generated header edited without its schema or flags")
        return row(Status.CHANGED, "content changed")


def _stated(facts: list) -> list:
    """What a file states for the check that judges it: its facts without line numbers
    and without the whole-file digest."""
    return sorted((f.kind, f.name, repr(sorted((k, repr(v)) for k, v in f.data.items()
                                                if k != "line")))
                  for f in facts if f.kind != "content")
