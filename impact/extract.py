"""Facts of a snapshot's files: pick the extractor by the surface map, cache by blob id.

Maintainers: no parsing here, only dispatch. A file whose language has no
extractor yet gets a parse-failure fact saying so, so later stages treat it
as not understood (changed), never as safe. Facts are cached in memory and on disk
(impact/factstore.py) in the `Caches` (impact/caches.py) a Session owns
(impact/session.py): this module keeps no cache of its own. Every
fact handed out has been through the JSON round trip the disk entry makes, so a report
reads the same facts whether they were parsed now or loaded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from impact.caches import Caches, FactKey, active_caches
from impact.facts import CONTENT, PARSE_FAILURE, Fact, content_fact, parse_failure
from impact.factstore import FactStore
from impact.git import Snapshot
from impact.kinds import FactKind, Language, SurfaceKind
from impact.surface import SurfaceMap

# The extractors (and the parsers they load: tree-sitter, yaml, jsonschema) are
# imported when a file is first parsed, never at import: a report that parses nothing
# (a change outside every surface, a warm cache) loads none of them.

Extractor = Callable[[str, bytes, SurfaceMap], list[Fact]]


def _python(path: str, source: bytes, surface: SurfaceMap) -> list[Fact]:
    from impact.python import extract_python_facts, package_name_for

    package = package_name_for(path, list(surface.python_roots))
    return extract_python_facts(path, source, package=package,
                                dsl_modules=surface.conventions.dsl_modules)


def _cpp(path: str, source: bytes, surface: SurfaceMap) -> list[Fact]:
    from impact.cpp import extract_cpp_facts

    return extract_cpp_facts(path, source, pack_array=surface.conventions.pack_array)


def _cmake(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.cpp import extract_cmake_facts

    return extract_cmake_facts(path, source)


def _dvc(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.dvc import extract_dvc_facts

    return extract_dvc_facts(path, source)


def _descriptor(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.descriptors import extract_descriptor_facts

    return extract_descriptor_facts(path, source)


def _aot_family(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.descriptors.aot import extract_aot_family_facts

    return extract_aot_family_facts(path, source)


def _profile(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.descriptors import extract_profile_facts

    return extract_profile_facts(path, source)


def _op_python(path: str, source: bytes, surface: SurfaceMap) -> list[Fact]:
    from impact.bindings import extract_binding_python_facts

    rules = surface.conventions
    return extract_binding_python_facts(path, source, forwarders=rules.call_forwarders,
                                        keeps_signature=rules.signature_decorators,
                                        own_keywords=rules.forwarder_keywords)


def _op_cpp(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.bindings import extract_binding_cpp_facts

    return extract_binding_cpp_facts(path, source)


def _sources_map(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.bindings import extract_sources_map_facts

    return extract_sources_map_facts(path, source)


def _build_script(path: str, source: bytes, _surface: SurfaceMap) -> list[Fact]:
    from impact.builds.setup_py import extract_setup_facts

    return extract_setup_facts(path, source)


EXTRACTORS: dict[str, Extractor] = {
    Language.PYTHON: _python,
    Language.CPP: _cpp,
    Language.CMAKE: _cmake,
    # Plain text (requirements, flag files): nothing to extract but its content digest.
    Language.TEXT: lambda _path, _source, _surface: [],
}

# Surface kinds whose files a general language parser would misread (a .dvc pointer is
# YAML, but not a profile): these pick their extractor before the language does.
KIND_EXTRACTORS: dict[str, Extractor] = {
    SurfaceKind.DVC_POINTER: _dvc,
    SurfaceKind.DESCRIPTOR: _descriptor,
    SurfaceKind.DESCRIPTOR_ELSEWHERE: _descriptor,
    SurfaceKind.AOT_CATALOG: _aot_family,
    SurfaceKind.LAUNCH_SURFACE_PROFILE: _profile,
    SurfaceKind.OP_PYTHON: _op_python,
    SurfaceKind.OP_CPP: _op_cpp,
    SurfaceKind.OP_SOURCES_MAP: _sources_map,
    SurfaceKind.BUILD_SCRIPT: _build_script,
}


@contextmanager
def persistent_facts(store: FactStore | None) -> Iterator[FactStore | None]:
    """Within the block, every FactCache made without a store of its own also reads and
    fills `store` (None: memory only), beside the active caches' memory (a fresh one when
    none is active); the store is closed (its size bound kept) after. For a caller handed
    a store rather than a Session (the emitter's runner)."""
    current = active_caches()
    caches = replace(current, store=store) if current is not None else Caches(store=store)
    try:
        with caches.active():
            yield store
    finally:
        if store is not None:
            store.close()


class FactCache:
    """Facts keyed by (surface map, path, blob id): a file is parsed once per Session,
    however many views or reports hold that same blob, and, with a persistent store, once
    per extractor version. The path is part of the key because facts name their file and
    relative imports resolve against it; the map, because it picks the extractor. What is
    cached lives in `caches` (else the active ones, else fresh ones); which files could
    not be read belongs to this cache alone (one report's)."""

    def __init__(self, surface: SurfaceMap, store: FactStore | None = None,
                 caches: Caches | None = None) -> None:
        caches = caches if caches is not None else active_caches() or Caches()
        self.surface = surface
        self.store = store if store is not None else caches.store
        # id(snapshot) -> (the snapshot, kept so the id stays its own; path -> why)
        self.unreadable: dict[int, tuple[Snapshot, dict[str, str]]] = {}
        self._facts = caches.facts
        if len(self._facts) > caches.FACTS_LIMIT:
            self._facts.clear()

    def facts(self, snapshot: Snapshot, path: str) -> list[Fact]:
        blob = snapshot[path].sha
        # Keyed by the map as written: a widened map (`SurfaceMap.covering`) reads every
        # file it did not widen as the map does, so their facts are shared.
        surface_key = self.surface.facts_key(path)
        key = (surface_key, path, blob)
        found = self._facts.get(key)
        if found is not None:
            return found
        what = self.surface.describe(path)
        extractor = KIND_EXTRACTORS.get(what.kind) or EXTRACTORS.get(what.language)
        stored = self.store.key(surface_key, path, blob) if self.store else None
        try:
            records = self.store.load(stored) if self.store and stored is not None else None
            if records is not None:
                if extractor is not None:
                    # Read as a parse would: a blob this repository cannot read is named
                    # whether or not its facts are on disk, so the cache never changes a report.
                    self._read(snapshot, path)
                found = self._facts[key] = _from_records(records)
                return found
            fresh = self._extract(snapshot, path, what.kind, what.language, extractor)
        except _Unreadable as exc:  # recorded in `unreadable`, never cached
            return [parse_failure(path, f"content not readable: {exc.why}")]
        return self._keep(key, stored, json.dumps([fact.to_json() for fact in fresh],
                                                  ensure_ascii=False))

    def _keep(self, key: FactKey, stored: dict[str, Any] | None, text: str) -> list[Fact]:
        """Cache the facts whose JSON is `text` (the round trip a disk entry makes)."""
        found = self._facts[key] = _from_records(json.loads(text))
        if self.store and stored is not None:
            self.store.save(stored, text)
        return found

    def missing(self, snapshot: Snapshot, path: str
                ) -> tuple[FactKey, dict[str, Any] | None] | None:
        """The cache key and store key of `path`'s facts when neither memory nor the store
        holds them and an extractor would parse it, else None (impact/prefetch.py asks)."""
        surface_key = self.surface.facts_key(path)
        key = (surface_key, path, snapshot[path].sha)
        if key in self._facts:
            return None
        what = self.surface.describe(path)
        if (KIND_EXTRACTORS.get(what.kind) or EXTRACTORS.get(what.language)) is None:
            return None
        stored = self.store.key(surface_key, path, key[2]) if self.store else None
        if self.store and stored is not None and self.store.holds(stored):
            return None
        return key, stored

    def accept(self, key: FactKey, stored: dict[str, Any] | None, text: str) -> None:
        """Keep facts parsed elsewhere (a prefetch child) as if `facts` had parsed them."""
        if key not in self._facts:
            self._keep(key, stored, text)

    def _read(self, snapshot: Snapshot, path: str) -> bytes:
        """The content of `path`; raises _Unreadable (recorded in `unreadable`) when it
        cannot be read."""
        try:
            return snapshot.read(path)
        except Exception as exc:  # a missing blob in a partial clone, a submodule
            # Not cached: the failure belongs to this snapshot's store, not the blob.
            why = _why(exc)
            self.unreadable.setdefault(id(snapshot), (snapshot, {}))[1][path] = why
            raise _Unreadable(why) from exc

    def _extract(self, snapshot: Snapshot, path: str, kind: str, language: str,
                 extractor: Extractor | None) -> list[Fact]:
        """The facts of `path` as its extractor gives them."""
        if extractor is None:
            return [parse_failure(
                path, f"no extractor for {kind} ({language}) files yet: not understood")]
        from impact.strict import too_large

        source = self._read(snapshot, path)
        refusal = too_large(len(source), language)
        if refusal is not None:  # refused before any parser sees it
            return [parse_failure(path, refusal)]
        found = extractor(path, source, self.surface)
        return _with_content(path, language, source, found)

    def was_unreadable(self, snapshot: Snapshot, path: str) -> bool:
        """Whether reading `path` of `snapshot` through this cache failed."""
        return path in self.unreadable.get(id(snapshot), (None, {}))[1]

    def unreadable_in(self, snapshot: Snapshot) -> dict[str, str]:
        """Path -> why, for each file of `snapshot` whose content could not be read when its
        facts were asked for (a missing or corrupt blob, a gitlink where a file should be)."""
        found: dict[str, str] = {}
        for held, paths in self.unreadable.values():  # the same tree under another label too
            if held is snapshot or (held.tree_id is not None and held.tree_id == snapshot.tree_id):
                for path, why in paths.items():
                    found.setdefault(path, why)
        return found


class _Unreadable(Exception):
    """A file's content could not be read: a fact of this snapshot's store, not the blob."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


_KINDS: dict[str, FactKind] = {kind.value: kind for kind in FactKind}


def _from_records(records: list[dict[str, Any]]) -> list[Fact]:
    """Facts from their JSON records; a kind impact knows is its FactKind member again."""
    return [Fact(_KINDS.get(r["kind"], r["kind"]), r["name"], r["line"], r["data"])
            for r in records]


def _why(exc: Exception) -> str:
    """What a failed read says, without KeyError's quotes around its message."""
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def _data_digest(language: str, source: bytes) -> str:
    """Layout-blind digest of a data file: the parsed value for JSON and YAML (key order and
    whitespace do not count), the text itself otherwise. Source files (Python, C++, CMake)
    bring their own `content` fact, digested from their syntax trees."""
    from impact.strict import load_json, load_yaml

    text = source.decode("utf-8")
    if language == Language.JSON:
        canonical = json.dumps(load_json(text), sort_keys=True)
    elif language == Language.YAML:
        canonical = json.dumps(load_yaml(text), sort_keys=True, default=str)
    else:
        canonical = text
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def extracted_json(path: str, source: bytes, surface: SurfaceMap) -> str:
    """The JSON of the facts `facts` would parse from `source` (for a prefetch child)."""
    from impact.strict import too_large

    what = surface.describe(path)
    extractor = KIND_EXTRACTORS.get(what.kind) or EXTRACTORS.get(what.language)
    assert extractor is not None
    refusal = too_large(len(source), what.language)
    found = [parse_failure(path, refusal)] if refusal is not None else _with_content(
        path, what.language, source, extractor(path, source, surface))
    return json.dumps([fact.to_json() for fact in found], ensure_ascii=False)


def _with_content(path: str, language: str, source: bytes, facts: list[Fact]) -> list[Fact]:
    """Add a `content` fact to an understood file that lacks one."""
    import yaml

    from impact.strict import Refused

    kinds = {fact.kind for fact in facts}
    if CONTENT in kinds or PARSE_FAILURE in kinds:
        return facts
    try:
        digest = _data_digest(language, source)
    except Refused as exc:
        return [*facts, parse_failure(path, f"content could not be read for comparison: "
                                            f"{exc.message}", exc.line)]
    except (UnicodeDecodeError, ValueError, RecursionError, yaml.YAMLError):
        return [*facts, parse_failure(path, "content could not be read for comparison")]
    return [*facts, content_fact(path, digest)]


def snapshot_facts(snapshot: Snapshot, paths: Iterable[str],
                   cache: FactCache) -> dict[str, list[Fact]]:
    """Path -> its facts, for each path present in `snapshot`."""
    return {path: cache.facts(snapshot, path) for path in sorted(set(paths)) if path in snapshot}
