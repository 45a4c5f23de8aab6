"""The builds domain of a snapshot's graph: which extension modules the repository's build
files produce, and which files each compiles.

Maintainers: reads the facts (through the report's FactCache, so each build file is
parsed once per blob) of the few build files the tree index finds: Python build scripts
(`build-script`, setup.py), CMake files (`build`) and the JIT sources map
(`op-sources-map`, aiter's optCompilerConfig.json); resolves what they declare against
the snapshot (literal paths, folders, glob patterns, a copy the build makes under another
C++ suffix). `PYBIND11_MODULE(<name>, m)` names its file's module directly;
`PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)` takes the module of the build entry compiling
it. A map without a `[builds]` table has no builds domain (no entries, readable).
Holds no networkx graph; `covering_map` widens a map with the files the builds compile.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from difflib import SequenceMatcher
from functools import cached_property
from typing import TYPE_CHECKING

from impact.extract import FactCache
from impact.facts import Fact
from impact.git import Snapshot, Views
from impact.graph.build_records import (
    BuildFileFailure,
    BuildStep,
    ExtensionModule,
    PrebuildEdit,
    Unresolved,
)
from impact.index import TreeIndex
from impact.kinds import BuildFile, BuildGap, FactKind, Language, SurfaceKind
from impact.surface import COMPILED_SUFFIXES, BuildRules, SurfaceMap, literal_folder

if TYPE_CHECKING:
    from impact.caches import Caches

BUILD_KINDS = (SurfaceKind.BUILD_SCRIPT, SurfaceKind.BUILD, SurfaceKind.OP_SOURCES_MAP)
_IMPORTS = ("Import", "ImportFrom")
# The GPU translation units whose removal `removable_unit` may prove inert.
UNIT_SUFFIXES = (".cu", ".cuh", ".hip")
TORCH_EXTENSION_NAME = "TORCH_EXTENSION_NAME"
_PLACEHOLDER = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}/?")


class BuildsGraph:
    """One snapshot's extension modules, read from its build files on first use."""

    def __init__(self, snapshot: Snapshot, cache: FactCache) -> None:
        self.snapshot = snapshot
        self.cache = cache
        self.surface = cache.surface
        self._steps: dict[str, list[Fact]] = {}  # each script's statements, as first asked

    # --- the interface -----------------------------------------------------------------
    def entries(self) -> list[ExtensionModule]:
        """Every extension module a build file declares, by file and line."""
        return list(self._read[0])

    @property
    def readable(self) -> bool:
        """False when a build file could not be read: what it compiles is unknown, and a
        caller fails closed."""
        return not self._read[1]

    def failures(self) -> list[BuildFileFailure]:
        return list(self._read[1])

    def modules_of(self, path: str) -> frozenset[str]:
        """The extension modules `path` is compiled into (empty when no build entry
        compiles it); a file whose `PYBIND11_MODULE` names its module literally is that
        module."""
        literal = self._literal_module(path)
        if literal:
            return frozenset({literal})
        return frozenset(e.name for e in self._by_source.get(path, ()) if e.name)

    def sources_of(self, module: str) -> frozenset[str]:
        """The files every build entry of `module` compiles."""
        return frozenset(p for e in self._read[0] if e.name == module for p in e.sources)

    def declared_in(self, path: str) -> list[ExtensionModule] | BuildFileFailure:
        """The modules the build file `path` declares, or why it could not be read."""
        failure = next((f for f in self._read[1] if f.path == path), None)
        return failure if failure is not None else [e for e in self._read[0] if e.path == path]

    def steps_in(self, path: str) -> tuple[BuildStep, ...] | BuildFileFailure:
        """The statements of the build script `path` in source order (none for a build
        file of another language), or why it could not be read."""
        failure = next((f for f in self._read[1] if f.path == path), None)
        if failure is not None:
            return failure
        if path not in self._steps:
            from impact.builds.steps import script_steps  # a parser: loaded when asked

            try:
                source = self.snapshot.read(path)
            except Exception as exc:  # a missing blob in a partial clone: not read
                return BuildFileFailure(path, f"cannot be read ({type(exc).__name__})")
            self._steps[path] = script_steps(path, source)
        facts = self._steps[path]
        broken = next((f for f in facts if f.kind == FactKind.PARSE_FAILURE), None)
        if broken is not None:
            return BuildFileFailure(path, str(broken.data.get("reason", "")))
        steps = sorted((f for f in facts if f.kind == FactKind.BUILD_STEP),
                       key=lambda f: int(f.name))
        return tuple(BuildStep(
            path=path, index=int(f.name), line=f.line, end=int(f.data["end"]),
            key=str(f.data["key"]), parent=int(f.data["parent"]),
            defines=str(f.data.get("defines", "")), statement=str(f.data["statement"]),
            callees=tuple(f.data["callees"]), binds=tuple(f.data["binds"]),
            reads=tuple(f.data["reads"]), mutates=tuple(f.data["mutates"]),
            paths=tuple(f.data["paths"])) for f in steps)

    def compiles(self, path: str) -> bool:
        """Whether some build entry compiles `path`."""
        return path in self._by_source

    def may_compile(self, path: str) -> bool:
        """Whether `path` is compiled by a build entry, or may be: it could be compiled
        (a C++ suffix) and lies under a build file that could not be read or whose
        sources are not all resolved (fail closed)."""
        if self.compiles(path):
            return True
        if not path.endswith(COMPILED_SUFFIXES):
            return False
        return any(path.startswith(folder) for folder in self._unsure_folders)

    def surely_uncompiled(self, path: str) -> bool:
        """Whether no build of the snapshot compiles `path`, provably: the map has a
        `[builds]` table, some build file declares a module and every build file was read,
        no module's sources are unresolved, none is a JIT build's (what the JIT compiles
        it finds when it runs: folders, generators), no glob pattern of a module matches
        `path`, and no module compiles or may compile it. False whenever unsure."""
        entries = self._read[0]
        if self.surface.builds is None or not self.readable or not entries:
            return False
        for entry in entries:
            if entry.build == BuildFile.JIT_CONFIG or entry.unresolved_in(BuildGap.SOURCES):
                return False
            if any(_glob_regex(p).fullmatch(path) for p in entry.patterns):
                return False
        return not self.may_compile(path)

    def removable_unit(self, path: str) -> bool:
        """Whether removing the GPU translation unit `path` (.cu, .cuh, .hip) changes
        nothing compiled: no build compiles it (`surely_uncompiled`) and no other file of
        the snapshot, on a surface or not, names it (its stem as a word, so its file name
        too: an `#include`, a source list, a JIT `load(sources=...)` would). False
        whenever unsure."""
        if not path.endswith(UNIT_SUFFIXES) or not self.surely_uncompiled(path):
            return False
        stem = posixpath.splitext(posixpath.basename(path))[0]
        index = TreeIndex.of(self.snapshot, self.surface, self.cache.store)
        return not index.files_naming([stem], None) - {path}

    def compiled(self) -> frozenset[str]:
        """Every file some build entry compiles."""
        return frozenset(self._by_source)

    def build_files(self) -> list[str]:
        """The build files this domain reads, sorted."""
        if self.surface.builds is None:
            return []
        index = TreeIndex.of(self.snapshot, self.surface, self.cache.store)
        kinds = {e.kind for e in self.surface.entries}
        found = []
        for kind in BUILD_KINDS:
            if kind in kinds:
                found += [p for p in index.paths(kind) if kind != SurfaceKind.BUILD
                          or self.surface.describe(p).language == Language.CMAKE]
        return sorted(found)

    # --- reading -----------------------------------------------------------------------
    @cached_property
    def _read(self) -> tuple[tuple[ExtensionModule, ...], tuple[BuildFileFailure, ...]]:
        entries: list[ExtensionModule] = []
        failures: list[BuildFileFailure] = []
        for path in self.build_files():
            facts = self.cache.facts(self.snapshot, path)
            broken = next((f for f in facts if f.kind == FactKind.PARSE_FAILURE), None)
            if broken is not None:
                failures.append(BuildFileFailure(path, str(broken.data.get("reason", ""))))
                continue
            kind = self.surface.describe(path).kind
            if kind == SurfaceKind.OP_SOURCES_MAP:
                declared = [self._jit_fact(path, f) for f in facts
                            if f.kind == FactKind.OP_MODULE]
            elif kind == SurfaceKind.BUILD:
                from impact.builds.cmake import cmake_extension_facts

                declared = cmake_extension_facts(path, facts)
            else:
                declared = [f for f in facts if f.kind == FactKind.EXTENSION_MODULE]
            entries += [self._record(path, f) for f in declared]
        entries.sort(key=lambda e: (e.path, e.line, e.name))
        return tuple(entries), tuple(failures)

    @cached_property
    def _by_source(self) -> dict[str, tuple[ExtensionModule, ...]]:
        found: dict[str, list[ExtensionModule]] = {}
        for entry in self._read[0]:
            for source in entry.sources:
                found.setdefault(source, []).append(entry)
        return {path: tuple(entries) for path, entries in found.items()}

    @cached_property
    def _unsure_folders(self) -> tuple[str, ...]:
        folders = {posixpath.dirname(f.path) for f in self._read[1]}
        folders |= {posixpath.dirname(e.path) for e in self._read[0]
                    if e.unresolved_in(BuildGap.SOURCES)}
        return tuple(f"{f}/" if f else "" for f in sorted(folders))

    def _literal_module(self, path: str) -> str | None:
        if path not in self.snapshot or not path.endswith(COMPILED_SUFFIXES):
            return None
        names = {f.name for f in self.cache.facts(self.snapshot, path)
                 if f.kind == FactKind.PYBIND_MODULE}
        literal = sorted(n for n in names if n.isidentifier() and n != TORCH_EXTENSION_NAME)
        return literal[0] if len(literal) == 1 else None

    def _jit_fact(self, path: str, fact: Fact) -> Fact:
        """A JIT sources-map module as an extension-module fact: each source under a
        placeholder the map's `[builds] source_roots` names becomes a repository path;
        one under another placeholder is unresolved. The JIT build's archs come from its
        environment or the machine: it names none."""
        rules = self.surface.builds
        sources, gaps = [], []
        for spelled in fact.data.get("srcs", []):
            text = _unquoted(str(spelled))
            match = _PLACEHOLDER.match(text)
            root = rules.root_of(match.group(1)) if match and rules is not None else None
            if (match and root is None) or "{" in text[match.end() if match else 0:]:
                gaps.append({"what": str(BuildGap.SOURCES), "line": fact.line,
                             "text": str(spelled)[:160]})
                continue
            rest = text[match.end():] if match else text
            sources.append(posixpath.normpath(posixpath.join(root or "", rest)))
        return Fact(FactKind.EXTENSION_MODULE, fact.name, fact.line, {
            "build": str(BuildFile.JIT_CONFIG), "sources": sorted(set(sources)),
            "patterns": [], "external": [], "archs": [], "arch_flags": [],
            "compile_args": [], "gaps": gaps})

    def _record(self, path: str, fact: Fact) -> ExtensionModule:
        data = fact.data
        declared = tuple(str(s) for s in data.get("sources", []))
        patterns = tuple(str(s) for s in data.get("patterns", []))
        files, missing, external = self._resolve(declared, patterns)
        return ExtensionModule(
            name=fact.name, path=path, line=fact.line, build=BuildFile(data["build"]),
            sources=frozenset(files), declared=declared, patterns=patterns,
            missing=tuple(missing),
            external=tuple(sorted({*map(str, data.get("external", [])), *external})),
            archs=frozenset(map(str, data.get("archs", []))),
            arch_flags=frozenset(map(str, data.get("arch_flags", []))),
            compile_args=frozenset(map(str, data.get("compile_args", []))),
            unresolved=tuple(Unresolved(BuildGap(g["what"]), int(g["line"]), str(g["text"]))
                             for g in data.get("gaps", [])),
            hooks=tuple(str(h) for h in data.get("hooks", [])))

    def _resolve(self, declared: Iterable[str], patterns: Iterable[str]
                 ) -> tuple[set[str], list[str], list[str]]:
        """(the snapshot's files the sources name, the declared ones it lacks, those in a
        submodule)."""
        snapshot = self.snapshot
        files: set[str] = set()
        missing: list[str] = []
        external: list[str] = []
        for source in declared:
            if source in snapshot and not snapshot[source].is_submodule:
                files.add(source)
            elif _in_submodule(snapshot, source):
                external.append(source)
            elif snapshot.folder(source) is not None:
                files |= set(snapshot.paths_under(source))
            else:
                copy = _copied_from(snapshot, source)
                files |= copy
                if not copy:
                    missing.append(source)
        for pattern in patterns:
            regex = _glob_regex(pattern)
            files |= {p for p in snapshot.paths_under(literal_folder(pattern))
                      if regex.fullmatch(p)}
        return files, sorted(missing), sorted(external)


def prebuild_edits(path: str, old: Sequence[BuildStep], new: Sequence[BuildStep],
                   rules: BuildRules) -> list[PrebuildEdit]:
    """The statements of the build script `path` that an edit touched (a step whose key
    the other revision does not hold in the same order, by a sequence diff of the keys:
    a comment or layout edit touches none) and that prebuild or copy GPU code, by
    `prebuild_reach` at the revision that holds them."""
    if not rules.prebuild_functions and not any(root for _, root in rules.source_roots):
        return []
    matcher = SequenceMatcher(None, [s.key for s in old], [s.key for s in new],
                              autojunk=False)
    kept_old: set[int] = set()
    kept_new: set[int] = set()
    for block in matcher.get_matching_blocks():
        kept_old |= set(range(block.a, block.a + block.size))
        kept_new |= set(range(block.b, block.b + block.size))
    edits: list[PrebuildEdit] = []
    for steps, kept, at_base in ((old, kept_old, True), (new, kept_new, False)):
        touched = [s for at, s in enumerate(steps) if at not in kept]
        if not touched:
            continue
        reach = prebuild_reach(path, steps, rules)
        edits += [PrebuildEdit(s, at_base, *reach[s.index]) for s in touched
                  if s.index in reach]
    return edits


def prebuild_reach(path: str, steps: Sequence[BuildStep], rules: BuildRules
                   ) -> dict[int, tuple[str, str, str]]:
    """Which statements of one revision of a build script prebuild or copy GPU code, as
    step index -> (callee, name, root), the `PrebuildEdit` fields: one that calls a
    prebuild function of the map, or a function of the script whose body does (or passes
    that function on: `executor.map(build_one, ...)`); one that binds a name such a
    statement, or a block holding one, reads (the `exclude_ops` list a
    `get_args_of_build(..., exclude=exclude_ops)` call reads, or changes it through a
    method: `exclude_ops.append(m)`), followed back to what that reads in turn, and every
    statement of a function of the script whose result is so read (`exclude_ops =
    get_exclude_ops()`); and one whose path literal (taken from the script's folder)
    names a source root of the map (`shutil.copytree("gradlib", ...)`)."""
    folder = posixpath.dirname(path)
    by_index = {s.index: s for s in steps}

    def ancestors(step: BuildStep) -> Iterable[BuildStep]:
        at = by_index.get(step.parent)
        while at is not None:
            yield at
            at = by_index.get(at.parent)

    reach: dict[int, tuple[str, str, str]] = {}
    for step in steps:
        callee = next((c for c in step.callees if rules.prebuilds(c)), None)
        if callee is not None:
            reach[step.index] = (callee, "", "")
    local: dict[str, str] = {}  # a function of the script -> the prebuild callee it reaches
    grown = True
    while grown:
        grown = False
        for index, (callee, _, _) in list(reach.items()):
            for holder in ancestors(by_index[index]):
                if holder.defines and holder.defines not in local:
                    local[holder.defines] = callee
                    grown = True
        for step in steps:
            hit = next((n for n in (*step.callees, *step.reads) if n in local), None)
            if step.index not in reach and hit is not None:
                reach[step.index] = (hit, "", "")
                grown = True
    fed: dict[str, str] = {}  # a name a prebuild statement reads -> the callee
    # The script's own variables (an import binds a module): a method call on one may
    # change it (`exclude_ops.append(m)`), one on a module does not bind it.
    modules = {n for s in steps if s.statement in _IMPORTS for n in s.binds}
    variables = {n for s in steps if s.statement not in _IMPORTS for n in s.binds} - modules
    children: dict[int, list[BuildStep]] = {}
    for step in steps:
        children.setdefault(step.parent, []).append(step)

    def feed(step: BuildStep, callee: str) -> None:
        for holder in (step, *ancestors(step)):
            for name in holder.reads:
                fed.setdefault(name, callee)

    def descendants(step: BuildStep) -> Iterable[BuildStep]:
        for inner in children.get(step.index, []):
            yield inner
            yield from descendants(inner)

    for index, (callee, _, _) in list(reach.items()):
        feed(by_index[index], callee)
    whole: set[int] = set()  # the functions of the script whose result feeds a prebuild
    grown = True
    while grown:
        grown = False
        for step in steps:
            written = (*step.binds, *(n for n in step.mutates if n in variables))
            name = next((n for n in written if n in fed), None)
            if step.index not in reach and name is not None:
                reach[step.index] = (fed[name], name, "")
                feed(step, fed[name])
                grown = True
            if step.defines in fed and step.index not in whole:
                # what it returns feeds the prebuild: its whole body does
                whole.add(step.index)
                grown = True
                for inner in descendants(step):
                    if inner.index not in reach:
                        reach[inner.index] = (fed[step.defines], step.defines, "")
                        feed(inner, fed[step.defines])
    for step in steps:
        root = next((r for p in step.paths
                     if (r := rules.root_named(_from_folder(folder, p))) is not None), None)
        if step.index not in reach and root is not None:
            reach[step.index] = (step.callees[0] if step.callees else "", "", root)
    return reach


def _from_folder(folder: str, literal: str) -> str:
    """A path literal of a build script as a repository path (the script runs in its own
    folder); an absolute one, or one that leaves the repository, is no repository path."""
    if literal.startswith("/"):
        return ""
    joined = posixpath.normpath(posixpath.join(folder, literal))
    return "" if joined.startswith("..") or joined == "." else joined


def _unquoted(spelled: str) -> str:
    text = spelled.strip()
    if text[:2] in ("f'", 'f"'):
        text = text[1:]
    return text.strip("'\"")


def _in_submodule(snapshot: Snapshot, path: str) -> bool:
    parts = path.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        if prefix in snapshot and snapshot[prefix].is_submodule:
            return True
    return False


def _copied_from(snapshot: Snapshot, source: str) -> set[str]:
    """The file a build copies to `source` before compiling it, when the snapshot lacks
    `source` but holds it under another C++ suffix beside it (flash-attention's ROCm build
    compiles `mha_fwd.cu`, a copy of `mha_fwd.cpp`)."""
    stem, suffix = posixpath.splitext(source)
    if suffix not in COMPILED_SUFFIXES:
        return set()
    return {stem + other for other in COMPILED_SUFFIXES
            if other != suffix and stem + other in snapshot}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob pattern (Python's, with `**` recursive) as a regular expression over paths."""
    out = []
    at = 0
    while at < len(pattern):
        if pattern.startswith("**/", at):
            out.append("(?:.*/)?")
            at += 3
        elif pattern.startswith("**", at):
            out.append(".*")
            at += 2
        elif pattern[at] == "*":
            out.append("[^/]*")
            at += 1
        elif pattern[at] == "?":
            out.append("[^/]")
            at += 1
        elif pattern[at] == "[" and "]" in pattern[at + 1:]:
            end = pattern.index("]", at + 1)
            body = pattern[at + 1:end].replace("\\", "\\\\")
            out.append("[^" + body[1:] + "]" if body.startswith("!") else "[" + body + "]")
            at = end + 1
        else:
            out.append(re.escape(pattern[at]))
            at += 1
    return re.compile("".join(out))


def covering_map(views: Views, surface: SurfaceMap, caches: Caches | None = None
                 ) -> SurfaceMap:
    """`surface` widened by every file a build entry of the base, the head or the merged
    tree compiles (and, failing closed, every changed file one may compile), when the map
    has a `[builds]` compiled kind and the change touches a surface or a file a build could
    compile (`SurfaceMap.builds_matter`); else `surface` itself, with no build file read."""
    changed = {p for view in views.views for p in (*view.diff.paths, *view.conflicts)}
    if not surface.builds_matter(changed):
        return surface
    cache = FactCache(surface, caches=caches)
    merged = [v.new for v in views.views if v.new is not None]
    snapshots: list[Snapshot] = []
    for snapshot in (views.base, views.head, *merged):
        if snapshot is not None and all(snapshot is not s for s in snapshots):
            snapshots.append(snapshot)
    compiled: set[str] = set()
    for snapshot in snapshots:
        builds = BuildsGraph(snapshot, cache)
        compiled |= builds.compiled()
        compiled |= {p for p in changed if surface.classify(p) is None and builds.may_compile(p)}
    return surface.covering(compiled)
