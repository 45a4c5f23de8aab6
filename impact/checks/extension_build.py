"""Build files whose edit changes the GPU code an extension module ships.

Maintainers: compares the records of the graph's builds domain (impact/graph/builds.py:
each extension module a setup.py, CMakeLists.txt or JIT sources map declares) of every
changed build file at both revisions, and reads no fact. The build file's own lane row
(DEPS for a setup.py, BUILD for CMake) is the `deps`/`build` check's; this one adds the
runtime row, and one for a setup.py's statements that prebuild or copy GPU code
(`prebuild_edits`). Applies to maps with a `[builds]` table only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import ClassVar

from impact.checks.check import Check, Scope
from impact.graph import BuildFileFailure, BuildStep, ExtensionModule, PrebuildEdit, prebuild_edits
from impact.kinds import BuildGap, Language, SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status

_SAMPLE = 6  # how many added or removed items a hop names


class ExtensionBuildCheck(Check):
    """What it checks:
        Every build file a view changes that declares extension modules (a `setup.py`'s
        `CUDAExtension`/`CppExtension` calls, a CMake `pybind11_add_module` or
        `add_library(... MODULE)`, a JIT sources map's modules): did the modules it
        declares, the sources they compile, their arch lists (`-gencode`, `--offload-arch`,
        `CUDA_ARCHITECTURES`), their compile flags or the build hooks they are compiled
        through (a ninja writer the script patches in) change? And, where the map names
        `[builds] prebuild_functions` or `source_roots`, did an edit touch a setup.py
        statement that compiles GPU code while the script runs (a call of a prebuild
        function, or of the script's own function that makes one; a statement binding a
        name such a call or its block reads) or that names a source root (a copy of it
        into the package)?

    Why a break hurts at run time:
        The build decides which GPU code ships: a dropped `-gencode arch=compute_90a`
        leaves Hopper without its kernels, a source dropped from the list leaves an op
        unregistered, a flag changes what every kernel computes; the Python and C++ copies
        all still agree, so no other contract sees it.

    Example:
        Changes: `cc_flag += ["-gencode", "arch=compute_100a,code=sm_100a"]` added to the
        FA3 build reads `changed` with the archs the build names (`sm_100a, sm_80,
        sm_90a`). Does not: bumping the version string, a comment, or a flag that changes
        no generated code (`--threads 4`, a warning, the fatbin's compression) in the same
        setup.py leaves every module as it was: only the DEPS lane row. With aiter's
        map, a new `elif PREBUILD_KERNELS == 2:` branch with its own `exclude_ops` list
        for `core.get_args_of_build`, or `shutil.copytree("gradlib", ...)` added, reads
        `changed` on every arch; its version or classifiers edited does not.

    When it says changed instead:
        Always `changed` when a module's declaration moved; also when the build file
        cannot be read at either revision (which GPU code it builds is unknown). What a
        reader could not resolve (a source list from a function it does not follow, an
        arch from the environment) is part of the declaration: an edit of it counts.
        Statements are compared layout-blind and by the blocks they lie in: one moved into
        another block is touched. A script that does not parse is judged by its
        `build-file-not-read` row alone.

    Evidence:
        The build file at both revisions, at the line of each module that moved; a hop per
        module and part (added, removed, sources, archs, flags, unresolved); the archs
        both revisions' declarations name, or every arch when one names none. A
        prebuild row: each touched statement at its revision and line, named by the
        callee it reaches, with the name or source root that ties it there; the archs
        the map gives the path.
    """

    name: ClassVar[str] = "extension-build"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.BUILD_SCRIPT, SurfaceKind.BUILD, SurfaceKind.OP_SOURCES_MAP})

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx = scope.ctx
        if ctx.surface.builds is None:
            return
        for path in scope.own_paths:
            what = ctx.surface.describe(path)
            if what.kind not in self.surfaces or (
                    what.kind == SurfaceKind.BUILD and what.language != Language.CMAKE):
                continue
            old = ctx.graph(scope.old).builds.declared_in(path) if path in scope.old else []
            new = ctx.graph(scope.new).builds.declared_in(path) if path in scope.new else []
            if isinstance(old, BuildFileFailure) or isinstance(new, BuildFileFailure):
                yield _unread(scope, path, old, new)
                continue
            row = _moved(scope, path, old, new)
            if row is not None:
                yield row
            if what.kind == SurfaceKind.BUILD_SCRIPT:
                row = _prebuild(scope, path)
                if row is not None:
                    yield row


def _prebuild(scope: Scope, path: str) -> Row | None:
    """The row of a build script whose edit touched a statement that prebuilds or copies
    GPU code (`prebuild_edits`), or None; a script unreadable at either revision keeps
    the module comparison's row alone."""
    rules = scope.ctx.surface.builds
    assert rules is not None
    steps: list[tuple[BuildStep, ...]] = []
    for snap in (scope.old, scope.new):
        found = scope.ctx.graph(snap).builds.steps_in(path) if path in snap else ()
        if isinstance(found, BuildFileFailure):
            return None
        steps.append(found)
    edits = prebuild_edits(path, steps[0], steps[1], rules)
    if not edits:
        return None
    edits.sort(key=lambda e: (e.step.line, e.at_base, e.callee, e.name, e.root))
    sides = tuple(sorted({Side(path, e.step.line, _revision(scope, e), Role.CHANGED,
                               e.callee) for e in edits}))
    hops = tuple(_prebuild_hop(scope, e) for e in edits[:_SAMPLE * 2])
    callees = sorted({e.callee for e in edits if e.callee})
    return scope.row(f"{path}#prebuild", Status.CHANGED, Reason.PREBUILD_STEP_CHANGED,
                     archs=scope.archs_for(path), sides=sides, evidence=hops,
                     details={"count": len(edits), "callees": callees or ["?"]})


def _revision(scope: Scope, edit: PrebuildEdit) -> ViewName:
    return ViewName.BASE if edit.at_base else scope.view.name


def _prebuild_hop(scope: Scope, edit: PrebuildEdit) -> Hop:
    revision = str(_revision(scope, edit))
    callee = edit.callee or "no call"
    if edit.root:
        return Hop.of(edit.step.path, edit.step.line, Step.SOURCE_ROOT_NAMED_EDITED,
                      revision=revision, root=edit.root, callee=callee)
    if edit.name:
        return Hop.of(edit.step.path, edit.step.line, Step.PREBUILD_INPUT_EDITED,
                      revision=revision, name=edit.name, callee=callee)
    return Hop.of(edit.step.path, edit.step.line, Step.PREBUILD_CALL_EDITED,
                  revision=revision, callee=callee)


def _unread(scope: Scope, path: str, old: list[ExtensionModule] | BuildFileFailure,
            new: list[ExtensionModule] | BuildFileFailure) -> Row:
    failure = new if isinstance(new, BuildFileFailure) else old
    assert isinstance(failure, BuildFileFailure)
    revision = scope.view.name if isinstance(new, BuildFileFailure) else ViewName.BASE
    sides = tuple(Side(path, 0, label, Role.CHANGED)
                  for label, snap in ((ViewName.BASE, scope.old), (scope.view.name, scope.new))
                  if path in snap)
    return scope.row(path, Status.CHANGED, Reason.BUILD_FILE_NOT_READ,
                     archs=(scope.ctx.surface.all_archs,), sides=sides,
                     details={"revision": str(revision), "failure": failure.reason})


def _moved(scope: Scope, path: str, old: list[ExtensionModule],
           new: list[ExtensionModule]) -> Row | None:
    """The row of a build file whose modules' declarations differ, or None. A declaration
    the other revision holds alike (name and shape) did not move, however many others
    of its name did (flash-attention's CUDA and ROCm builds both name flash_attn_2_cuda)."""
    before, after = _unmatched(old, new), _unmatched(new, old)
    moved = sorted({e.name for e in (*before, *after)})
    if not moved:
        return None
    hops: list[Hop] = []
    parts: set[BuildGap] = set()
    for name in moved:
        was = [e for e in before if e.name == name]
        now = [e for e in after if e.name == name]
        found, changed = _hops(name, was, now)
        hops += found
        parts |= changed
    every = scope.ctx.surface.all_archs
    archs = {a for e in (*before, *after) for a in e.archs}
    if any(not e.archs or e.unresolved_in(BuildGap.ARCHS) for e in (*before, *after)):
        archs.add(every)
    sides = tuple(sorted({Side(path, e.line, ViewName.BASE, Role.CHANGED, e.name)
                          for e in before} |
                         {Side(path, e.line, scope.view.name, Role.CHANGED, e.name)
                          for e in after}))
    return scope.row(path, Status.CHANGED, Reason.EXTENSION_BUILD_CHANGED,
                     archs=tuple(sorted(archs)), sides=sides, evidence=tuple(hops),
                     details={"modules": [n or "?" for n in moved],
                              "parts": sorted(str(p) for p in parts)})


def _unmatched(these: list[ExtensionModule], others: list[ExtensionModule]
               ) -> list[ExtensionModule]:
    """The declarations of `these` that `others` do not hold alike, one for one."""
    left = Counter(e.shape for e in others)
    out = []
    for entry in these:
        if left[entry.shape]:
            left[entry.shape] -= 1
        else:
            out.append(entry)
    return out


def _hops(name: str, was: list[ExtensionModule], now: list[ExtensionModule]
          ) -> tuple[list[Hop], set[BuildGap]]:
    """What moved in one module's declarations, a hop each, and which parts moved."""
    shown = name or "?"
    if not now:
        return [Hop.of(e.path, e.line, Step.MODULE_NO_LONGER_DECLARED, module=shown)
                for e in was], {BuildGap.NAME}
    if not was:
        return [Hop.of(e.path, e.line, Step.MODULE_DECLARED, module=shown,
                       archs=sorted(e.archs), count=len(e.sources)) for e in now], {BuildGap.NAME}
    at = now[0]
    hops: list[Hop] = []
    parts: set[BuildGap] = set()

    def union(entries: list[ExtensionModule], attribute: str) -> set[str]:
        return {v for e in entries for v in getattr(e, attribute)}

    comparisons = (
        (BuildGap.SOURCES, Step.MODULE_SOURCES_CHANGED,
         lambda es: union(es, "declared") | union(es, "patterns") | union(es, "external")),
        (BuildGap.ARCHS, Step.MODULE_ARCHS_CHANGED,
         lambda es: union(es, "archs") | union(es, "arch_flags")),
        (BuildGap.FLAGS, Step.MODULE_FLAGS_CHANGED, lambda es: union(es, "code_flags")),
        (BuildGap.FLAGS, Step.MODULE_HOOK_CHANGED,
         lambda es: {h.partition(":")[0] + " (" + h.partition(":")[2][:12] + ")"
                     for e in es for h in e.hooks}),
        (None, Step.MODULE_UNRESOLVED_CHANGED,
         lambda es: {f"{u.what}: {u.text}" for e in es for u in e.unresolved}),
    )
    for part, step, of in comparisons:
        before, after = of(was), of(now)
        if before != after:
            added, removed = sorted(after - before), sorted(before - after)
            # What stayed unresolved belongs to the part it was found in.
            parts |= {part} if part is not None else {
                u.what for e in (*was, *now) for u in e.unresolved
                if f"{u.what}: {u.text}" in {*added, *removed}}
            hops.append(Hop.of(at.path, at.line, step, module=shown,
                               added=added[:_SAMPLE], removed=removed[:_SAMPLE],
                               added_count=len(added), removed_count=len(removed)))
    if not hops:  # the same parts, in another number of declarations
        hops.append(Hop.of(at.path, at.line, Step.MODULE_DECLARED, module=shown,
                           archs=sorted(at.archs), count=len(at.sources)))
        parts.add(BuildGap.NAME)
    return hops, parts
