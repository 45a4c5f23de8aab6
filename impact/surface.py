"""The surface map: which paths of a repository are which runtime surface.

Maintainers: loads a map (built in, a file, or `.impact/surface.toml` in the
analysed tree), validates it against `contracts/surface.schema.json`, and
classifies paths with git's wildmatch patterns. It reads no git objects
itself: a repository's own map arrives as a Snapshot.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from dulwich.wildmatch import MalformedPattern, translate

from impact import shortcuts
from impact.errors import ImpactError
from impact.git import Snapshot, Views
from impact.kinds import Language, SurfaceKind, ViewName
from impact.rows import Lane

SURFACE_SCHEMA = "surface.schema.json"
REPOSITORY_MAP = ".impact/surface.toml"
BUILTIN_MAPS = ("hipdnn", "aiter", "flash-attention")
DEFAULT_MAP = "hipdnn"


class BadSurfaceMap(ImpactError):
    """A surface map that is not TOML, does not fit its schema, or holds a bad pattern."""


class NoSurfaceMap(ImpactError):
    """No built-in map's markers are in the analysed tree, and none was given."""


QualifiedName = tuple[str, str]  # (dotted module, name in it)


@dataclass(frozen=True)
class EmitterConventions:
    """Where the emitter's child finds the library's own code in a tree (the map's
    `[conventions.emitter]` table): the source kind it builds, the flavor ladder and its
    environment variable, the enumerators, the producer and its predicate resolvers, the
    lowering it watches. emit/rules.py hands them to the child, which spells none."""

    source_kind: str
    flavor_env: str
    flavor_ladders: tuple[QualifiedName, ...]
    enumerators: tuple[tuple[QualifiedName, str], ...]  # (call, what it returns)
    producer: QualifiedName
    predicate_resolvers: tuple[str, ...]
    builder_prefix: str
    support_predicates: tuple[str, ...]
    lowering: QualifiedName
    lowering_reexports: tuple[str, ...]


@dataclass(frozen=True)
class Conventions:
    """The layout facts of the library a map fits that checks rely on (the map's
    `[conventions]` table): where a dormant engine lives, which code runs after
    lowering, how native packs register, how census files are named, what the emitter
    calls (None: the map has no emitter conventions, and nothing is built). Code reads
    them here and never spells a library's paths or names itself."""

    engine_tree: str = ""
    engine_target: str = ""
    python_backend: str = ""
    after_lowering: tuple[re.Pattern[bytes], ...] = ()
    pack_folder: str = ""
    pack_suffix: str = ""
    pack_table: str = ""
    pack_array: str = ""
    build_file: str = ""
    register_function: re.Pattern[str] | None = None
    census_file: re.Pattern[str] | None = None
    dsl_modules: tuple[str, ...] = ()
    emitter: EmitterConventions | None = None
    # Callables whose first argument's `__call__` receives the remaining arguments
    # (`cute.compile(obj, *args, **kw)` compiles and runs `obj.__call__(*args, **kw)`),
    # and the decorators of such a `__call__` that keep its signature (`cute.jit`).
    call_forwarders: tuple[str, ...] = ()
    signature_decorators: tuple[str, ...] = ()
    # The keywords a forwarder takes itself and does not pass on (`options=`).
    forwarder_keywords: tuple[str, ...] = ()

    def runs_after_lowering(self, path: str) -> bool:
        """Whether `path` is code that runs after lowering (equal IR proves nothing of it)."""
        raw = path.encode()
        return any(rx.fullmatch(raw) for rx in self.after_lowering)


@dataclass(frozen=True)
class SurfaceEntry:
    """One kind of surface: the patterns that select it and the lane that owns it."""

    kind: SurfaceKind | str
    lane: Lane
    language: Language
    patterns: tuple[str, ...]
    regexes: tuple[re.Pattern[bytes], ...]
    description: str = ""

    @cached_property
    def _guarded(self) -> tuple[tuple[str, str, re.Pattern[bytes]], ...]:
        """Each regex with the literal start and end its pattern requires: a cheap test
        that rules most paths out before the regex runs (a tree holds 100,000 paths)."""
        return tuple((*literal_ends(p), rx) for p, rx in zip(self.patterns, self.regexes,
                                                              strict=True))

    def matches(self, path: str) -> bool:
        for prefix, suffix, rx in self._guarded:
            if path.startswith(prefix) and path.endswith(suffix) and rx.fullmatch(
                    path.encode()):
                return True
        return False


_SPECIAL = re.compile(r"[*?\[\]\\]")


def literal_ends(pattern: str) -> tuple[str, str]:
    """The literal text a wildmatch pattern's matches must start and end with: what comes
    before its first and after its last special character (`**/x` also matches a
    top-level `x`, so a suffix loses its leading slash)."""
    specials = [m.start() for m in _SPECIAL.finditer(pattern)]
    if not specials:
        return pattern, pattern
    return pattern[:specials[0]], pattern[specials[-1] + 1:].removeprefix("/")


def literal_folder(pattern: str) -> str:
    """The deepest folder every match of `pattern` lies under ('' for the whole tree): its
    literal start cut at the last '/', so a walk of that folder alone finds every match."""
    return literal_ends(pattern)[0].rpartition("/")[0]


@dataclass(frozen=True)
class DeviceTests:
    """One `[[device_tests]]` entry: the device tests and bench commands the map names for
    changed files matching `paths`. `{stem}` in a target is the matched file's name without
    its suffix, `{op}` the same without a leading `test_`, `{device_test}` the test a
    profile names for the row (hipDNN); nothing else is ever filled in or guessed. A bench
    command is a shell line (impact validate runs it with the shell): a value filled into
    it is one shell word, quoted, since a file name can hold `;`, `$(...)` or quotes.
    `package` is the importable package the tests exercise, when the map names one: it
    reaches the report's device_runs so `impact validate` can prove which tree it imports."""

    index: int
    paths: tuple[str, ...]
    regexes: tuple[re.Pattern[bytes], ...]
    tests: tuple[str, ...]
    bench: tuple[str, ...]
    package: str | None = None

    def matches(self, path: str) -> str | None:
        """The first pattern `path` matches, or None."""
        return next((p for p, rx in zip(self.paths, self.regexes, strict=True)
                     if rx.fullmatch(path.encode())), None)

    def fill(self, path: str, device_test: str = "") -> tuple[list[str], list[str]]:
        """The entry's tests and bench commands for a matched `path` (a target naming
        `{device_test}` is dropped when the row has none)."""
        stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
        values = {"stem": stem, "op": stem.removeprefix("test_"), "device_test": device_test}

        def filled(templates: tuple[str, ...], shell: bool) -> list[str]:
            out = []
            for template in templates:
                if "{device_test}" in template and not device_test:
                    continue
                text = template
                for key, value in values.items():
                    text = text.replace("{" + key + "}", shlex.quote(value) if shell else value)
                out.append(text)
            return out

        return filled(self.tests, False), filled(self.bench, True)


@dataclass(frozen=True)
class ArchRule:
    """One `[[archs]]` entry: the GPU architectures a changed file matching `patterns`
    reaches, as the map names them (`hopper/** -> sm_90a`); the first rule that matches
    decides (impact/archs.py reads it before falling back to every arch)."""

    index: int
    patterns: tuple[str, ...]
    regexes: tuple[re.Pattern[bytes], ...]
    archs: tuple[str, ...]

    def matches(self, path: str) -> bool:
        raw = path.encode()
        return any(rx.fullmatch(raw) for rx in self.regexes)


@dataclass(frozen=True)
class BuildRules:
    """The map's `[builds]` table: which surface kind a file takes when a build entry
    (setup.py, CMake, the JIT config) compiles it into an extension module and no pattern
    classifies it (`compiled_kind`; None: such files stay outside), and the folder each
    placeholder of the JIT config's sources names (`source_roots`: `AITER_CSRC_DIR` ->
    `csrc`), and the functions a build script calls to compile GPU code when it is run
    (`prebuild_functions`: aiter's setup.py prebuilds JIT modules with
    `core.build_module`). Read by the graph's builds domain (impact/graph/builds.py)."""

    compiled_kind: SurfaceKind | str | None = None
    source_roots: tuple[tuple[str, str], ...] = ()
    prebuild_functions: tuple[str, ...] = ()

    def root_of(self, placeholder: str) -> str | None:
        return dict(self.source_roots).get(placeholder)

    def prebuilds(self, callee: str) -> bool:
        """Whether the dotted `callee` is one of `prebuild_functions`: an entry with a dot
        is matched against the whole dotted name (`core.build_module`), one without
        against its last part (`build_module` is `core.build_module` and `build_module`)."""
        last = callee.rpartition(".")[2]
        return any(callee == name if "." in name else last == name
                   for name in self.prebuild_functions)

    def root_named(self, path: str) -> str | None:
        """The source root a repository path names: one it lies under, is, or holds (a
        copy of `3rdparty` copies `3rdparty/composable_kernel`); an empty root (the
        repository itself) is never named."""
        for _, root in self.source_roots:
            if root and (path == root or path.startswith(root + "/")
                         or root.startswith(path + "/")):
                return root
        return None


@dataclass(frozen=True)
class SurfaceMap:
    """A validated map, with where it came from so a report can name it. A map that
    `covering` widened with the files the builds compile holds them in `compiled`, and
    the digest of the map as written in `source_sha256` (its own `sha256`, which keys the
    tree indexes, names the widening too)."""

    name: str
    source: str
    sha256: str
    entries: tuple[SurfaceEntry, ...]
    python_roots: tuple[str, ...]
    include_roots: tuple[str, ...]
    descriptor_roots: tuple[str, ...] = ()
    markers: tuple[re.Pattern[bytes], ...] = ()
    marker_patterns: tuple[str, ...] = ()
    # Paths no surface holds whatever the entries' patterns say (tests, benchmarks).
    exclude: tuple[re.Pattern[bytes], ...] = ()
    all_archs: str = "all-archs"
    reason: str = ""
    conventions: Conventions = Conventions()
    device_tests: tuple[DeviceTests, ...] = ()
    arch_rules: tuple[ArchRule, ...] = ()
    builds: BuildRules | None = None
    compiled: frozenset[str] = frozenset()
    source_sha256: str = ""
    widens: SurfaceMap | None = None  # the map as written, for a map `covering` widened

    @property
    def written_sha256(self) -> str:
        """The sha256 of the map's bytes (what a report names), widened or not."""
        return self.source_sha256 or self.sha256

    def facts_key(self, path: str) -> str:
        """What a file's facts are keyed by besides its path and blob: the map as written,
        except for a file only the widening classifies (its extractor is the widening's)."""
        return self.sha256 if path in self.compiled else self.written_sha256

    def archs_named(self, path: str) -> tuple[str, ...] | None:
        """The archs the first `[[archs]]` rule matching `path` names, or None."""
        return next((rule.archs for rule in self.arch_rules if rule.matches(path)), None)

    def builds_matter(self, changed: Iterable[str]) -> bool:
        """Whether widening this map by what the builds compile can change a report on
        the `changed` paths: the map has a `[builds]` compiled kind and a changed path is
        on a surface (the files the builds compile are then its counterparts: a binding in
        aiter's gradlib/csrc/ is a copy of the stub a change edits) or could be compiled
        (with IMPACT_FULL_PATH=1, whenever the map has one). Decided without reading a
        file."""
        if self.builds is None or self.builds.compiled_kind is None:
            return False
        return not shortcuts.enabled() or any(
            self.classify(p) is not None or p.endswith(COMPILED_SUFFIXES) for p in changed)

    def covering(self, paths: Iterable[str]) -> SurfaceMap:
        """This map widened by the files `paths` (those a build compiles into an extension
        module) that no pattern classifies: they take the `[builds]` compiled kind, with
        that kind's lane and language. The same map when there are none (or it has no
        compiled kind)."""
        rules = self.builds
        kind = rules.compiled_kind if rules is not None else None
        like = next((e for e in self.entries if e.kind == kind), None)
        added = sorted({p for p in paths if self.classify(p) is None} - self.compiled)
        if like is None or not added:
            return self
        every = sorted(self.compiled | set(added))
        entry = SurfaceEntry(like.kind, like.lane, like.language,
                             tuple(_SPECIAL.sub(lambda m: "\\" + m.group(0), p) for p in added),
                             tuple(re.compile(re.escape(p.encode())) for p in added),
                             "compiled by a build entry")
        digest = hashlib.sha256("\n".join([self.written_sha256, *every]).encode()).hexdigest()
        return replace(self, entries=(*self.entries, entry), compiled=frozenset(every),
                       sha256=digest, source_sha256=self.written_sha256,
                       widens=self.widens or self)

    def marker_in(self, tree: Snapshot) -> str | None:
        """The first path of `tree` (sorted) that one of the map's markers matches; each
        marker looks only under its literal folder, not through the whole tree."""
        firsts = (next((p for p in tree.paths_under(literal_folder(pattern))
                        if rx.fullmatch(p.encode())), None)
                  for pattern, rx in zip(self.marker_patterns, self.markers, strict=True))
        return min((p for p in firsts if p is not None), default=None)

    def excluded(self, path: str) -> bool:
        """Whether the map's `exclude` patterns leave `path` off every surface."""
        raw = path.encode()
        return any(rx.fullmatch(raw) for rx in self.exclude)

    def classify(self, path: str) -> SurfaceEntry | None:
        """The first entry whose pattern matches `path`; None when it is outside every
        surface (or excluded)."""
        if self.exclude and self.excluded(path):
            return None
        return next((entry for entry in self.entries if entry.matches(path)), None)

    def describe(self, path: str) -> PathSurface:
        """Kind, lane and language of `path`; outside every surface the language is guessed
        from the suffix, so `impact facts` can still show what a parser sees."""
        entry = self.classify(path)
        if entry is not None:
            return PathSurface(entry.kind, entry.lane, entry.language)
        return PathSurface(OUTSIDE, Lane.NONE, _language_by_suffix(path))


OUTSIDE = SurfaceKind.OUTSIDE
COMPILED_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".hip", ".cuh", ".h", ".hpp", ".hxx",
                     ".inl", ".inc")
"""What a build entry can compile, or a copy it compiles can be made from."""
_SUFFIX_LANGUAGES = (
    ((".py",), Language.PYTHON),
    ((".cpp", ".hpp", ".h", ".cc", ".cxx", ".hip", ".cu", ".cuh"), Language.CPP),
    (("CMakeLists.txt", ".cmake"), Language.CMAKE),
)


def _language_by_suffix(path: str) -> Language:
    return next((lang for ends, lang in _SUFFIX_LANGUAGES if path.endswith(ends)),
                Language.TEXT)


@dataclass(frozen=True)
class PathSurface:
    """What the map says of one path."""

    kind: SurfaceKind | str
    lane: Lane
    language: Language


def schema_problems(doc: dict[str, Any]) -> list[str]:
    """Where `doc` (a parsed map) does not fit `surface.schema.json`, one line each."""
    import jsonschema

    from impact.contracts import load_schema

    validator = jsonschema.Draft202012Validator(load_schema(SURFACE_SCHEMA))
    return [
        f"{'/'.join(str(p) for p in err.absolute_path) or '(top)'}: {err.message}"
        for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.path)))
    ]


def parse_surface_map(data: bytes, source: str, *, shipped: bool = False) -> SurfaceMap:
    """Validate and compile a map; every problem in it is named at once. A map `shipped`
    in impact/contracts is not checked against its schema again at each run (a test
    checks every shipped map; jsonschema then loads only for a map a user wrote)."""
    where = f"surface map {source}"
    fix = "correct the map (its schema is impact/contracts/surface.schema.json)"
    try:
        doc: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadSurfaceMap(f"{where} is not valid TOML ({exc})", fix) from None
    problems = [] if shipped and shortcuts.enabled() else schema_problems(doc)
    entries: list[SurfaceEntry] = []
    markers: list[re.Pattern[bytes]] = []
    if not problems:
        for pattern in doc.get("markers", []):
            try:
                markers.append(re.compile(translate(pattern.encode())))
            except (MalformedPattern, re.error) as exc:
                problems.append(f"markers: bad pattern {pattern!r} ({exc})")
        exclude: list[re.Pattern[bytes]] = []
        for pattern in doc.get("exclude", []):
            try:
                exclude.append(re.compile(translate(pattern.encode())))
            except (MalformedPattern, re.error) as exc:
                problems.append(f"exclude: bad pattern {pattern!r} ({exc})")
        for index, item in enumerate(doc["surface"]):
            regexes = []
            for pattern in item["patterns"]:
                try:
                    regexes.append(re.compile(translate(pattern.encode())))
                except (MalformedPattern, re.error) as exc:
                    problems.append(f"surface/{index}: bad pattern {pattern!r} ({exc})")
            entries.append(SurfaceEntry(_kind(item["kind"]), Lane(item["lane"]),
                                        Language(item["language"]),
                                        tuple(item["patterns"]), tuple(regexes),
                                        item.get("description", "")))
        conventions = _conventions(doc.get("conventions", {}), problems)
        device_tests = _device_tests(doc.get("device_tests", []), problems)
        arch_rules = _arch_rules(doc.get("archs", []), problems)
        builds = _builds(doc.get("builds"), {e.kind for e in entries}, problems)
    if problems:
        raise BadSurfaceMap(f"{where} is malformed: {'; '.join(problems)}", fix)
    return SurfaceMap(
        name=doc["name"],
        source=source,
        sha256=hashlib.sha256(data).hexdigest(),
        entries=tuple(entries),
        python_roots=tuple(doc.get("python_roots", ())),
        include_roots=tuple(doc.get("include_roots", ())),
        descriptor_roots=tuple(doc.get("descriptor_roots", ())),
        markers=tuple(markers),
        marker_patterns=tuple(doc.get("markers", [])),
        exclude=tuple(exclude),
        all_archs=doc.get("all_archs", "all-archs"),
        conventions=conventions,
        device_tests=device_tests,
        arch_rules=arch_rules,
        builds=builds,
    )


def _arch_rules(items: list[dict[str, Any]], problems: list[str]) -> tuple[ArchRule, ...]:
    """The `[[archs]]` entries compiled; bad patterns are added to `problems`."""
    out = []
    for index, item in enumerate(items):
        regexes = []
        for pattern in item["patterns"]:
            try:
                regexes.append(re.compile(translate(pattern.encode())))
            except (MalformedPattern, re.error) as exc:
                problems.append(f"archs/{index}: bad pattern {pattern!r} ({exc})")
        out.append(ArchRule(index, tuple(item["patterns"]), tuple(regexes),
                            tuple(item["archs"])))
    return tuple(out)


def _builds(table: dict[str, Any] | None, kinds: set[SurfaceKind | str],
            problems: list[str]) -> BuildRules | None:
    """The `[builds]` table; a compiled kind the map has no surface of is a problem."""
    if table is None:
        return None
    kind = _kind(table["compiled_kind"]) if "compiled_kind" in table else None
    if kind is not None and kind not in kinds:
        problems.append(f"builds/compiled_kind: {kind!s} is no surface kind of this map "
                        f"(one of {', '.join(sorted(str(k) for k in kinds))})")
    roots = tuple(sorted((str(k), str(v).strip("/"))
                         for k, v in table.get("source_roots", {}).items()))
    prebuild = tuple(sorted({str(n) for n in table.get("prebuild_functions", [])}))
    return BuildRules(kind, roots, prebuild)


def _device_tests(items: list[dict[str, Any]], problems: list[str]) -> tuple[DeviceTests, ...]:
    """The `[[device_tests]]` entries compiled; bad patterns are added to `problems`."""
    out = []
    for index, item in enumerate(items):
        regexes = []
        for pattern in item["paths"]:
            try:
                regexes.append(re.compile(translate(pattern.encode())))
            except (MalformedPattern, re.error) as exc:
                problems.append(f"device_tests/{index}: bad pattern {pattern!r} ({exc})")
        out.append(DeviceTests(index, tuple(item["paths"]), tuple(regexes),
                               tuple(item.get("tests", ())), tuple(item.get("bench", ())),
                               item.get("package")))
    return tuple(out)


def _kind(name: str) -> SurfaceKind | str:
    """impact's own member for a kind it knows; a map's own kind name stays a string."""
    try:
        return SurfaceKind(name)
    except ValueError:
        return name


def _conventions(table: dict[str, Any], problems: list[str]) -> Conventions:
    """The `[conventions]` table compiled; bad patterns are added to `problems`."""
    after: list[re.Pattern[bytes]] = []
    for pattern in table.get("after_lowering", []):
        try:
            after.append(re.compile(translate(pattern.encode())))
        except (MalformedPattern, re.error) as exc:
            problems.append(f"conventions/after_lowering: bad pattern {pattern!r} ({exc})")
    compiled: dict[str, re.Pattern[str] | None] = {}
    for key in ("register_function", "census_file"):
        try:
            compiled[key] = re.compile(table[key]) if key in table else None
        except re.error as exc:
            problems.append(f"conventions/{key}: bad regular expression ({exc})")
            compiled[key] = None
    plain = {k: table[k] for k in ("engine_tree", "engine_target", "python_backend",
                                   "pack_folder", "pack_suffix", "pack_table", "pack_array",
                                   "build_file")
             if k in table}
    if table.get("pack_table") and not table.get("pack_array"):
        # Without the array's name no pack row is read: every pack would read unregistered.
        problems.append("conventions/pack_table: needs conventions.pack_array (the name of "
                        "the registration array it holds)")
    emitter = None
    if "emitter" in table:
        if not (table.get("python_backend") and table.get("dsl_modules")):
            problems.append("conventions/emitter: needs conventions.python_backend and "
                            "conventions.dsl_modules as well")
        emitter = _emitter(table["emitter"])
    return Conventions(after_lowering=tuple(after), dsl_modules=tuple(table.get("dsl_modules", ())),
                       call_forwarders=tuple(table.get("call_forwarders", ())),
                       signature_decorators=tuple(table.get("signature_decorators", ())),
                       forwarder_keywords=tuple(table.get("forwarder_keywords", ())),
                       register_function=compiled["register_function"],
                       census_file=compiled["census_file"], emitter=emitter, **plain)


def _qualified(text: str) -> QualifiedName:
    """`module:name` (the schema's qualified_name) as (module, name)."""
    module, _, name = text.partition(":")
    return module, name


def _emitter(table: dict[str, Any]) -> EmitterConventions:
    """The `[conventions.emitter]` table (its shape checked by the schema)."""
    return EmitterConventions(
        source_kind=table["source_kind"], flavor_env=table["flavor_env"],
        flavor_ladders=tuple(_qualified(t) for t in table["flavor_ladders"]),
        enumerators=tuple((_qualified(e["call"]), e["returns"]) for e in table["enumerators"]),
        producer=_qualified(table["producer"]),
        predicate_resolvers=tuple(table["predicate_resolvers"]),
        builder_prefix=table["builder_prefix"],
        support_predicates=tuple(table["support_predicates"]),
        lowering=_qualified(table["lowering"]),
        lowering_reexports=tuple(table["lowering_reexports"]))


def builtin_map(name: str) -> SurfaceMap:
    """One of the maps shipped in impact/contracts."""
    if name not in BUILTIN_MAPS:
        raise BadSurfaceMap(f"no built-in surface map named '{name}'",
                            f"use one of {', '.join(BUILTIN_MAPS)} or a path to a .toml file")
    # Read through the `impact` package: importing impact.contracts would load jsonschema.
    data = resources.files("impact").joinpath("contracts", f"{name}.surface.toml").read_bytes()
    return parse_surface_map(data, f"builtin:{name}", shipped=True)


def load_surface_map(choice: str | None = None, tree: Snapshot | None = None,
                     *, also: tuple[Snapshot | None, ...] = ()) -> SurfaceMap:
    """The map to use, with the reason it was picked: `choice` (a built-in name or a file
    path); else the tree's own `.impact/surface.toml`; else the built-in map whose markers
    the tree holds, or failing that one of the trees in `also` holds (a tree that fits
    none is an error naming the fix). Without a tree the built-in hipDNN map is used
    (library callers that know their tree).

    The change under review does not configure its own review: a report passes the base
    as `tree`, so a map the head adds or edits is never used to judge that head (the
    edit is itself a `surface-map` row), and `also` (the target tip, then the head) may
    only pick among the built-in maps."""
    if choice:
        if choice in BUILTIN_MAPS:
            return replace(builtin_map(choice), reason="--surface-map")
        path = Path(choice)
        if not path.is_file():
            raise BadSurfaceMap(f"surface map '{choice}' is neither a built-in map nor a file",
                                f"use one of {', '.join(BUILTIN_MAPS)} or a path to a .toml file")
        return replace(parse_surface_map(path.read_bytes(), f"file:{path}"),
                       reason="--surface-map")
    if tree is None:
        return builtin_map(DEFAULT_MAP)
    if REPOSITORY_MAP in tree:
        return replace(parse_surface_map(tree.read(REPOSITORY_MAP), f"repository:{REPOSITORY_MAP}"),
                       reason=f"the repository ships {REPOSITORY_MAP}")
    for where in (tree, *also):
        for name in BUILTIN_MAPS if where is not None else ():
            candidate = builtin_map(name)
            found = candidate.marker_in(where)
            if found is not None:
                reason = f"the {'base ' if where is tree and also else ''}tree holds {found}"
                return replace(candidate, reason=reason)
    raise NoSurfaceMap(
        "no built-in surface map fits this tree (no hipDNN, aiter or flash-attention markers)",
        f"pass --surface-map with one of {', '.join(BUILTIN_MAPS)} or a .toml map, "
        f"or commit one at {REPOSITORY_MAP}")


def map_for_views(choice: str | None, views: Views) -> SurfaceMap:
    """The map a report on `views` uses: `choice`, else the base's own map, else the
    built-in one the base fits (failing that, the merged tree or the head)."""
    merged = views.view(ViewName.MERGED)
    later = (merged.new if merged is not None else None, views.head)
    return load_surface_map(choice, views.base, also=later)


def repository_map(tree: Snapshot) -> SurfaceMap | BadSurfaceMap | None:
    """The map `tree` ships at `.impact/surface.toml`: the map, the error that refuses it
    (unreadable, not TOML, off its schema), or None when the tree ships none."""
    if REPOSITORY_MAP not in tree:
        return None
    try:
        return parse_surface_map(tree.read(REPOSITORY_MAP), f"repository:{REPOSITORY_MAP}")
    except BadSurfaceMap as exc:
        return exc
    except Exception as exc:  # a missing blob, a gitlink: the map cannot be read
        return BadSurfaceMap(f"{REPOSITORY_MAP} cannot be read ({exc})", "fetch the object")
