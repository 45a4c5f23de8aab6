"""The records of the graph's builds domain (impact/graph/builds.py): each extension module
a build file declares, resolved against one snapshot.

Maintainers: frozen data only (and which compile flags change code, impact/builds/
archflags.py); what a record holds is decided in builds.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from impact.builds.archflags import changes_code
from impact.kinds import BuildFile, BuildGap


@dataclass(frozen=True)
class Unresolved:
    """A piece of a declaration its reader could not resolve: which part, where, and the
    text as written (a consumer fails closed on it)."""

    what: BuildGap
    line: int
    text: str


@dataclass(frozen=True)
class ExtensionModule:
    """One extension module a build produces. `name` is the importable module
    (`flash_attn_2_cuda`, `flash_attn_3._C`, `module_hipbsolgemm`); "" when the build file
    does not name it statically (its `unresolved` says so). `path:line` is where it is
    declared. `sources` are the snapshot's files it compiles (literal sources, folders,
    glob matches, and a copy the build makes of a file under another C++ suffix);
    `declared` and `patterns` are what the build file writes, `missing` the declared
    sources the snapshot lacks (generated at build time), `external` the sources outside
    the repository or inside a submodule. `archs` are the GPU architectures its flags name
    (empty: the build names none, so the toolchain, the environment or the machine picks:
    every arch); `arch_flags` and `compile_args` as spelled; `hooks` the build hooks its
    build script installs (a patched ninja writer), as `name:digest`."""

    name: str
    path: str
    line: int
    build: BuildFile
    sources: frozenset[str]
    declared: tuple[str, ...]
    patterns: tuple[str, ...]
    missing: tuple[str, ...]
    external: tuple[str, ...]
    archs: frozenset[str]
    arch_flags: frozenset[str]
    compile_args: frozenset[str]
    unresolved: tuple[Unresolved, ...]
    hooks: tuple[str, ...] = ()  # the build hooks it is compiled through, `name:digest`

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def code_flags(self) -> frozenset[str]:
        """The compile arguments that may change the code it ships (not `--threads 4`,
        a warning or the fatbin's compression: impact/builds/archflags.py)."""
        return frozenset(f for f in self.compile_args if changes_code(f))

    def unresolved_in(self, what: BuildGap) -> tuple[Unresolved, ...]:
        return tuple(u for u in self.unresolved if u.what == what)

    @property
    def shape(self) -> tuple[object, ...]:
        """What an edit of its build file can change of the GPU code it ships: its name, the
        sources as declared, the arch list and flags, the compile arguments that change
        code, the build hooks it is compiled through, and the text of what stayed
        unresolved (lines left out: moving a declaration changes nothing)."""
        return (self.name, self.declared, self.patterns, self.external,
                tuple(sorted(self.archs)), tuple(sorted(self.arch_flags)),
                tuple(sorted(self.code_flags)), self.hooks,
                tuple(sorted((str(u.what), u.text) for u in self.unresolved)))


@dataclass(frozen=True)
class BuildStep:
    """One statement of a build script (impact/builds/steps.py): its lines, its `key`
    (layout-blind, and naming the blocks it lies in: an equal key is the same statement in
    the same place), the step it lies under (`parent`, -1 at the top), the function or
    class it `defines` ("" for any other statement), its `statement` kind (the `ast`
    class: `If`, `Assign`, `Import`), the dotted `callees` it calls, the names it
    `binds` and `reads`, those whose methods it calls (`mutates`), and its path-like
    literals."""

    path: str
    index: int
    line: int
    end: int
    key: str
    parent: int
    defines: str
    statement: str
    callees: tuple[str, ...]
    binds: tuple[str, ...]
    reads: tuple[str, ...]
    mutates: tuple[str, ...]
    paths: tuple[str, ...]


@dataclass(frozen=True)
class PrebuildEdit:
    """A build-script statement an edit touched that prebuilds or copies GPU code: the
    step at the revision that holds it (`at_base`: the base's, removed or replaced), the
    callee it reaches (the map's prebuild function, a function of the script that calls
    one, or the call whose path names a source root; "" for none), the name it binds that
    a prebuild statement reads (`name`, "" when it prebuilds itself) and the source root
    its path literal names (`root`, "" for none)."""

    step: BuildStep
    at_base: bool
    callee: str
    name: str = ""
    root: str = ""


@dataclass(frozen=True)
class BuildFileFailure:
    """A build file that could not be read (it does not parse, or its blob is missing):
    what it compiles is unknown."""

    path: str
    reason: str


__all__ = ["BuildFileFailure", "BuildStep", "ExtensionModule", "PrebuildEdit", "Unresolved"]
