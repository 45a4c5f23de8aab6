"""Every changed runtime-surface file no dedicated file-level contract owns: did its
content change, and can the tool understand it?

Maintainers: the shared comparison lives in `filelevel.py`; this module adds the two
judgements only the surface contract makes (an op file whose stated facts changed is
left to the check that settles its kind; a dormant engine's sources are inert). Which
kinds other checks own or settle it reads from their declarations
(`CheckContext.declarations`), never by importing them. It reads facts and the map's
conventions only: no blob reads, no library paths.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.checks.check import Check, Scope
from impact.checks.filelevel import Absent, Judge, Verdict, file_row, same_content
from impact.facts import Fact
from impact.git import Snapshot
from impact.graph import RenamedAlike, renamed_alike
from impact.kinds import FactKind, SurfaceKind
from impact.reasons import Reason
from impact.rows import Row, Status

# The keyword by which a packer pins the backend it compiles with.
_BACKEND_KEYWORD = "backend"


class SurfaceCheck(Check):
    """What it checks:
        Every path a view changes that lies on the runtime surface (rocKE and packer
        Python, native packs and engine sources, descriptors, test pins, profiles) and
        that no dedicated file-level contract owns: build files go to `build`, dependency
        files to `deps`, .dvc pointers to `dvc`, flatc headers and their sources to
        `generated-header`, plugin SDK headers to `sdk-header`.

    Why a break hurts at run time:
        A surface file feeds what a GPU runs; an edit to it can change a kernel, its launch
        or its selection even when every hand-kept copy still agrees.

    Example:
        Breaks nothing by itself, but settles the rest: a body edit of a builder is
        `changed` (a device run must show the kernel still computes the right answer);
        a comment-only, whitespace-only or docstring-only edit is `inert`.

    When it says changed instead:
        A file that does not parse (at either revision), a file whose kind the tool has
        no extractor for, and an added or removed surface file. One kind can read inert
        although its content changed: an engine C++ source (the map's `engine_tree`)
        while no build file outside that tree names the engine's target
        (`engine_target`) and the packer pins the Python backend (`python_backend`): no
        shipped kernel is built by it. A map without those conventions has no dormant
        engine. A removed GPU translation unit (.cu, .cuh, .hip) reads inert when the
        base built nothing from it: every build file of the base was read, no module's
        sources are unresolved or a JIT build's, no glob of a module matches it, no
        module compiles it, and no other file of the base names it (an `#include`, a
        list, a JIT load); else `changed`. An op Python file whose edit is only
        parameters renamed alike (at the definition and at every call that passes them
        by keyword, in this file and in the callers of other files; no `**` spread or
        other use of the function; not an op stub, whose names the bindings check
        compares) reads inert too.

    Evidence:
        The file at both revisions; the reason (content digest differs, parse failure,
        added, removed); the architectures that ship the file's module.
    """

    name: ClassVar[str] = "surface"
    # Shipped rocKE and packer code: an emit document that builds every family importing
    # the file equal at both revisions proves its edit changed no shipped kernel.
    folds: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.ROCKE_LIBRARY, SurfaceKind.ROCKE_PLATFORM, SurfaceKind.HKP_PACK})

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx, declared = scope.ctx, scope.ctx.declarations
        dormant: dict[str, Any] | None = None
        for path in scope.own_paths:
            what = ctx.surface.describe(path)
            if what.kind == SurfaceKind.OUTSIDE or what.kind in declared.owners:
                continue
            if what.kind == SurfaceKind.ROCKE_ENGINE and dormant is None:
                dormant = engine_dormant(ctx, scope.new) or {}
            quiet = dormant if what.kind == SurfaceKind.ROCKE_ENGINE and dormant else None
            yield file_row(scope, path, what, judge=_judge(ctx, what.kind, quiet,
                                                           declared.settlers,
                                                           _renames(scope, path, what.kind)),
                           absent=_absent(quiet) or _unbuilt(scope, path))


def _renames(scope: Scope, path: str, kind: str) -> Callable[[], RenamedAlike | None]:
    """Whether an op Python file's edit is only parameters renamed alike (asked of the
    graph only when its code changed beyond what the bindings state)."""
    def ask() -> RenamedAlike | None:
        if kind != SurfaceKind.OP_PYTHON:
            return None
        ctx = scope.ctx
        return renamed_alike(ctx.graph(scope.old).bindings, ctx.graph(scope.new).bindings, path)
    return ask


def _judge(ctx: CheckContext, kind: str, dormant: dict[str, Any] | None,
           settlers: Mapping[SurfaceKind, str],
           renamed: Callable[[], RenamedAlike | None] = lambda: None) -> Judge:
    """The surface contract's own say on an understood file whose content changed."""
    def judge(old: list[Fact], new: list[Fact]) -> Verdict | None:
        if same_content(ctx, old, new):
            return None
        if kind in settlers:
            if _stated(old) != _stated(new):
                return Verdict(Status.INERT, Reason.STATED_CHANGED_JUDGED_ELSEWHERE,
                               {"judged_by": settlers[kind]})
            alike = renamed()
            if alike is not None:
                # The same program runs: every call passes the renamed keyword alike.
                return Verdict(Status.INERT, Reason.PARAMETERS_RENAMED_ALIKE, {
                    "renames": "; ".join(f"{r.function}: {r.old} -> {r.new}"
                                         for r in alike.renames),
                    "callers": len(alike.callers)})
            return Verdict(Status.CHANGED, Reason.CODE_BEYOND_BINDINGS_CHANGED, {})
        if dormant is not None:
            return Verdict(Status.INERT, Reason.ENGINE_CHANGED_WHILE_DORMANT, dormant)
        return None
    return judge


def _absent(dormant: dict[str, Any] | None) -> Absent | None:
    """A dormant engine's file added or removed builds no shipped kernel either."""
    if dormant is None:
        return None

    def absent(added: bool) -> Verdict:
        return Verdict(Status.INERT, Reason.ENGINE_ADDED_WHILE_DORMANT if added
                       else Reason.ENGINE_REMOVED_WHILE_DORMANT, dormant)
    return absent


def _unbuilt(scope: Scope, path: str) -> Absent:
    """A removed GPU translation unit that no build of the base compiled and no file of
    the base names: its removal changes nothing compiled (the builds domain decides,
    `removable_unit`, failing closed)."""
    def absent(added: bool) -> Verdict | None:
        if added or not scope.ctx.graph(scope.old).builds.removable_unit(path):
            return None
        return Verdict(Status.INERT, Reason.UNBUILT_UNIT_REMOVED, {})
    return absent


def engine_dormant(ctx: CheckContext, snapshot: Snapshot) -> dict[str, Any] | None:
    """Why the map's engine builds no shipped kernel in `snapshot` (the values of the
    dormant reasons), or None when a build file outside the engine's tree names its
    target, the packer does not pin the Python backend, or the map names no engine."""
    rules = ctx.surface.conventions
    if not (rules.engine_tree and rules.engine_target and rules.python_backend):
        return None
    for path in ctx.paths(snapshot, SurfaceKind.BUILD):
        if path.startswith(rules.engine_tree):
            continue
        facts = ctx.facts(snapshot, path)
        if ctx.parse_failure(facts) is not None:
            return None  # it may name the engine: fail closed
        if any(f.kind == FactKind.CMAKE_CALL
               and rules.engine_target in f.data.get("arguments", ()) for f in facts):
            return None
    pinned = [path for path in ctx.paths(snapshot, SurfaceKind.HKP_PACK)
              if any(f.kind == FactKind.KEYWORD_LITERAL and f.name == _BACKEND_KEYWORD
                     and f.data.get("value") == rules.python_backend
                     for f in ctx.facts(snapshot, path))]
    if not pinned:
        return None
    return {"engine_target": rules.engine_target, "pin": pinned[0]}


def _stated(facts: list[Fact]) -> list:
    """What a file states for the check that judges it: its facts without line numbers
    and without the whole-file digest."""
    return sorted((f.kind, f.name, repr(sorted((k, repr(v)) for k, v in f.data.items()
                                                if k != "line")))
                  for f in facts if f.kind != FactKind.CONTENT)
