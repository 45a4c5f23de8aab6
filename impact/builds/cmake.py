"""The extension modules a CMakeLists.txt declares, read from its `cmake-call` facts.

Maintainers: a pure function of the facts impact/cpp/cmake.py gives (every command in
source order, arguments unquoted); it reads no file. Targets: `pybind11_add_module`,
`nanobind_add_module`, `add_library(name MODULE|SHARED ...)` and
`Python_add_library`/`Python3_add_library(name MODULE|SHARED ...)`, grown by
`target_sources`, renamed by `OUTPUT_NAME`, given archs by `CUDA_ARCHITECTURES` /
`HIP_ARCHITECTURES` (a target property, or `CMAKE_CUDA_ARCHITECTURES`, `GPU_TARGETS`,
`AMDGPU_TARGETS` for the file) and flags by `target_compile_options` (and for the file by
`add_compile_options` and the `*_FLAGS` variables). Variables set by `set`, `list(APPEND)`
and `file(GLOB ...)` are expanded; inside `if()` a `set` adds to what the variable held
(either arm may run); a body of `function()`/`macro()` is not run; anything unresolved
(an unknown variable, a generator expression) is a gap. Paths are read from the file's
folder, as CMake reads them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from impact.builds.archflags import cmake_arch, flag_archs
from impact.builds.pyeval import ROOT
from impact.facts import Fact
from impact.kinds import BuildFile, BuildGap, FactKind

_GLOB = "\x00glob:"
_VARIABLE = re.compile(r"\$\{([A-Za-z0-9_.+-]+)\}")
_TARGET_COMMANDS = {"pybind11_add_module", "nanobind_add_module", "add_library",
                    "python_add_library", "python3_add_library"}
_LIBRARY_KINDS = {"MODULE", "SHARED"}
_OPTIONS = {"MODULE", "SHARED", "STATIC", "OBJECT", "EXCLUDE_FROM_ALL", "NO_EXTRAS",
            "THIN_LTO", "OPT_SIZE", "SYSTEM", "WITHOUT_SOABI", "WITH_SOABI", "NB_STATIC",
            "NB_SHARED", "STABLE_ABI", "NOMINSIZE", "NOSTRIP", "LTO", "PROTECT_STACK",
            "FREE_THREADED", "NB_DOMAIN", "USE_SABI"}
_VISIBILITY = {"PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"}
_ARCH_VARIABLES = {"CMAKE_CUDA_ARCHITECTURES", "CMAKE_HIP_ARCHITECTURES", "GPU_TARGETS",
                   "AMDGPU_TARGETS", "TORCH_CUDA_ARCH_LIST"}
_ARCH_PROPERTIES = {"CUDA_ARCHITECTURES", "HIP_ARCHITECTURES"}


@dataclass
class _Target:
    name: str
    line: int
    sources: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    archs: list[str] = field(default_factory=list)
    gaps: list[dict[str, Any]] = field(default_factory=list)


def cmake_extension_facts(path: str, calls: Iterable[Fact]) -> list[Fact]:
    """One `extension-module` fact per extension target the CMake file at `path`
    declares (data as a setup.py's: sources, patterns, external, archs, arch_flags,
    compile_args, gaps), from the file's `cmake-call` facts in source order."""
    folder = posixpath.join(ROOT, posixpath.dirname(path)).rstrip("/")
    reader = _Reader(folder)
    for call in sorted((c for c in calls if c.kind == FactKind.CMAKE_CALL),
                       key=lambda c: c.line):
        reader.call(call.name, [str(a) for a in call.data.get("arguments", [])], call.line)
    return reader.facts()


class _Reader:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.vars: dict[str, str] = {"CMAKE_CURRENT_SOURCE_DIR": folder,
                                     "CMAKE_CURRENT_LIST_DIR": folder,
                                     "CMAKE_SOURCE_DIR": ROOT, "PROJECT_SOURCE_DIR": ROOT}
        self.targets: dict[str, _Target] = {}
        self.file_flags: list[str] = []
        self.file_archs: list[str] = []
        self.depth = 0
        self.skipping = 0

    def call(self, name: str, raw: list[str], line: int) -> None:
        if name in ("function", "macro"):
            self.skipping += 1
        elif name in ("endfunction", "endmacro"):
            self.skipping = max(0, self.skipping - 1)
        if self.skipping:
            return
        if name in ("if", "foreach", "while"):
            self.depth += 1
        elif name in ("endif", "endforeach", "endwhile"):
            self.depth = max(0, self.depth - 1)
        elif name == "project":
            self.vars["PROJECT_SOURCE_DIR"] = self.folder
        elif name == "set" and raw:
            self.assign(raw[0], self.values(_until(raw[1:], {"CACHE", "PARENT_SCOPE"})))
        elif name == "list" and len(raw) >= 2 and raw[0].upper() in ("APPEND", "PREPEND"):
            self.assign(raw[1], self.values(raw[2:]), add=True)
        elif name == "file" and len(raw) >= 3 and raw[0].upper() in ("GLOB", "GLOB_RECURSE"):
            self.glob(raw, line)
        elif name in _TARGET_COMMANDS and raw:
            self.target(name, raw, line)
        elif name == "target_sources" and raw and raw[0] in self.targets:
            self.targets[raw[0]].sources += [v for v in self.values(raw[1:])
                                             if v not in _VISIBILITY]
        elif name == "target_compile_options" and raw and raw[0] in self.targets:
            self.targets[raw[0]].flags += [v for v in self.values(raw[1:])
                                           if v not in _VISIBILITY]
        elif name == "add_compile_options":
            self.file_flags += self.values(raw)
        elif name == "set_target_properties":
            self.properties(raw, line)
        elif name == "set_property" and len(raw) >= 2 and raw[0].upper() == "TARGET":
            self.property(raw[1:], line)

    def assign(self, variable: str, values: list[str], add: bool = False) -> None:
        held = self.vars.get(variable)
        if (add or self.depth) and held:
            values = [*held.split(";"), *values]
        self.vars[variable] = ";".join(values)
        if variable in _ARCH_VARIABLES:
            self.file_archs += values
        elif variable.endswith("_FLAGS"):
            self.file_flags += [p for v in values for p in v.split()]

    def values(self, raw: list[str]) -> list[str]:
        """The arguments with variables expanded and lists split, as CMake reads them; a
        piece holding an unknown variable or a generator expression is kept as written
        (where it is used, it is a gap)."""
        out: list[str] = []
        for argument in raw:
            text = argument
            for _ in range(8):  # nested references expand from the inside
                expanded = _VARIABLE.sub(lambda m: self.vars.get(m.group(1), m.group(0)), text)
                if expanded == text:
                    break
                text = expanded
            out += [piece for piece in text.split(";") if piece]
        return out

    def glob(self, raw: list[str], line: int) -> None:
        recursive = raw[0].upper() == "GLOB_RECURSE"
        patterns = []
        skip = False
        for value in self.values(raw[2:]):
            if skip:
                skip = False
                continue
            if value in ("LIST_DIRECTORIES", "RELATIVE"):
                skip = True
                continue
            if value in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                continue
            absolute = self.absolute(value)
            if recursive:
                head, tail = posixpath.split(absolute)
                absolute = f"{head}/**/{tail}"
            patterns.append(_GLOB + absolute)
        self.vars[raw[1]] = ";".join(patterns)

    def target(self, command: str, raw: list[str], line: int) -> None:
        name, rest = raw[0], raw[1:]
        if command != "pybind11_add_module" and command != "nanobind_add_module":
            kinds = {r.upper() for r in rest[:1]}
            if not kinds & _LIBRARY_KINDS:
                return  # a static, object or interface library is no importable module
        target = self.targets.setdefault(name, _Target(name, line))
        target.sources += [v for v in self.values(rest) if v.upper() not in _OPTIONS]

    def properties(self, raw: list[str], line: int) -> None:
        if "PROPERTIES" not in raw:
            return
        at = raw.index("PROPERTIES")
        pairs = raw[at + 1:]
        for target in raw[:at]:
            for key, value in zip(pairs[::2], pairs[1::2], strict=False):
                self.property([target, "PROPERTY", key, value], line)

    def property(self, raw: list[str], line: int) -> None:
        target = self.targets.get(raw[0])
        if target is None or "PROPERTY" not in raw:
            return
        at = raw.index("PROPERTY")
        if at + 1 >= len(raw):
            return
        key, values = raw[at + 1], self.values(raw[at + 2:])
        if key == "OUTPUT_NAME" and values:
            target.name = values[0]
        elif key in _ARCH_PROPERTIES:
            target.archs += values

    def absolute(self, path: str) -> str:
        return posixpath.normpath(path if path.startswith("/") else f"{self.folder}/{path}")

    def facts(self) -> list[Fact]:
        out = []
        for target in self.targets.values():
            literal, patterns, external = set(), set(), set()
            gaps = list(target.gaps)
            for source in target.sources:
                if _unresolved(source):
                    gaps.append({"what": str(BuildGap.SOURCES), "line": target.line,
                                 "text": source.removeprefix(_GLOB)[:160]})
                elif source.startswith(_GLOB):
                    where, text = _relative(source[len(_GLOB):])
                    (patterns if where else external).add(text)
                else:
                    where, text = _relative(self.absolute(source))
                    (literal if where else external).add(text)
            flags = [f for f in (*self.file_flags, *target.flags) if not _unresolved(f)]
            gaps += [{"what": str(BuildGap.FLAGS), "line": target.line, "text": f[:160]}
                     for f in (*self.file_flags, *target.flags) if _unresolved(f)]
            archs, spelled, machine = set(), set(), set()
            for flag in flags:
                found, named, local = flag_archs(flag)
                archs |= found
                spelled |= named
                machine |= local
            for value in target.archs or self.file_archs:
                arch = cmake_arch(value)
                if arch is None or _unresolved(value):
                    gaps.append({"what": str(BuildGap.ARCHS), "line": target.line, "text": value})
                else:
                    archs.add(arch)
                    spelled.add(value)
            gaps += [{"what": str(BuildGap.ARCHS), "line": target.line, "text": m} for m in machine]
            out.append(Fact(FactKind.EXTENSION_MODULE, target.name, target.line, {
                "build": str(BuildFile.CMAKE), "sources": sorted(literal),
                "patterns": sorted(patterns), "external": sorted(external), "archs": sorted(archs),
                "arch_flags": sorted(spelled), "compile_args": sorted(set(flags)),
                "gaps": sorted(gaps, key=lambda g: (g["what"], g["line"], g["text"]))}))
        return out


def _unresolved(text: str) -> bool:
    return bool(_VARIABLE.search(text)) or "$<" in text


def _until(values: list[str], stops: set[str]) -> list[str]:
    for at, value in enumerate(values):
        if value in stops:
            return values[:at]
    return values


def _relative(absolute: str) -> tuple[bool, str]:
    normal = posixpath.normpath(absolute)
    if normal.startswith(ROOT + "/"):
        return True, normal[len(ROOT) + 1:]
    return False, normal
