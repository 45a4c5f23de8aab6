"""The persistent fact cache: a report reads the same with the cache cold, warm or off.

Every scenario of tests/test_verdicts.py and the binding scenarios of
tests/test_check_bindings.py run through `impact.api.report` five times (each time in a
fresh Session, so nothing is in memory): filling an empty cache, reading its facts back
(its stored report removed), reading its stored report back, with no cache, and with no
cache on the full path; the kernel-argument table of tests/test_check_kernargs.py runs the
same way. The outputs must be the same bytes, the warm and stored runs must call no
extractor and the stored run must compute no report (the others call an extractor for
every file they need; what a parser returns is memoised for the test run). Then: damaged
entries, concurrent writers, the size bound and a cache folder that cannot be written
(`impact cache info|clear` and the default folder: tests/test_cache_cli.py).
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import test_check_bindings as bindings
import test_check_kernargs as kernargs
import test_verdicts as verdicts
from harness import as_json
from memory import tree_with

from impact import api, extract, shortcuts
from impact import document as report_module
from impact.caches import Caches
from impact.errors import ImpactError
from impact.extract import FactCache
from impact.factstore import FactStore, entry_key, extractor_version, version_of
from impact.fixtures import BuiltRepository, Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files, tree_files
from impact.git import Snapshot
from impact.kinds import FactKind
from impact.reportstore import REPORTS_FOLDER
from impact.session import Session
from impact.surface import load_surface_map

ROOT = Path(__file__).resolve().parents[1]
REAL_REPORT = api.report


# --- how a report is run three ways -----------------------------------------------------

# What each extractor returned for one (extractor, path, content, map), kept for the
# session: the cold and uncached runs still take every fact through the extractor call, the
# JSON round trip and the store, but a parser's deterministic output is computed once.
_PARSED: dict[tuple[Any, ...], list[Any]] = {}


def _count_parses(monkeypatch: pytest.MonkeyPatch, *, memo: bool = False) -> list[str]:
    """Wrap every extractor so each call is recorded (and, with `memo`, each distinct
    parse done once per session)."""
    parsed: list[str] = []

    def wrap(real: Callable[..., Any]) -> Callable[..., Any]:
        def extractor(path: str, source: bytes, surface: Any) -> list[Any]:
            parsed.append(path)
            if not memo:
                return real(path, source, surface)
            key = (real, path, source, surface.sha256)
            if key not in _PARSED:
                _PARSED[key] = real(path, source, surface)
            return list(_PARSED[key])
        return extractor

    for table in (extract.EXTRACTORS, extract.KIND_EXTRACTORS):
        for name, real in list(table.items()):
            monkeypatch.setitem(table, name, wrap(real))
    return parsed


class ThreeWays:
    """Stands in for `impact.api.report` (what the tests' harness calls): runs the report
    with a fresh cache, again with the facts it filled (its stored report removed), again
    with the report it stored, with no cache, and with no cache on the full path
    (IMPACT_FULL_PATH: none of the report's shortcuts, impact/shortcuts.py), each in a
    Session of its own; requires the same exit code, JSON bytes and stderr from all five
    (or the same refusal), then gives the first run's report (or refusal), as the test
    expects of `api.report`."""

    def __init__(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.tmp_path, self.capsys = tmp_path, capsys
        self.calls = 0

    def __call__(self, repo: str, **options: Any) -> api.Report:
        self.calls += 1
        folder = self.tmp_path / f"cache{self.calls}"
        runs, first = {}, None
        for mode in ("cold", "warm", "stored", "off", "full"):
            if mode == "warm":  # the facts are read back, the report is computed again
                shutil.rmtree(folder / REPORTS_FOLDER, ignore_errors=True)
            with pytest.MonkeyPatch.context() as patch:
                parsed = _count_parses(patch, memo=True)
                if mode == "stored":  # the report itself is read back: no check runs
                    patch.setattr(report_module, "build_report", _not_called)
                # `full` takes none of the report's shortcuts.
                if mode == "full":
                    patch.setenv(shortcuts.ENV, "1")
                else:
                    patch.delenv(shortcuts.ENV, raising=False)
                # A Session of its own: the facts in memory and the tree index start empty.
                session = (Session(use_cache=False) if mode in ("off", "full")
                           else Session(folder))
                try:
                    found: api.Report | ImpactError = REAL_REPORT(
                        repo, **{**options, "session": session})
                    said = (found.exit_code, found.render("json"))
                except ImpactError as exc:
                    found, said = exc, (exc.exit_code, str(exc))
            runs[mode] = (*said, self.capsys.readouterr().err)
            first = first or found
            if mode in ("warm", "stored"):
                assert parsed == [], f"the {mode} run parsed {parsed}"
        assert (runs["cold"] == runs["warm"] == runs["stored"] == runs["off"]
                == runs["full"]), (repo, options)
        sys.stderr.write(runs["cold"][2])
        if isinstance(first, ImpactError):
            raise first
        return first


def _not_called(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a stored report was computed again")


def _cases(module: Any) -> Iterator[Any]:
    """Each test of `module` that runs the command line, with each of its parameter sets."""
    for name, func in sorted(vars(module).items()):
        if not (name.startswith("test_") and callable(func)):
            continue
        if "report(" not in inspect.getsource(func) and "main(" not in inspect.getsource(func):
            continue
        if set(inspect.signature(func).parameters) - {"build", "capsys"} - _param_names(func):
            continue  # needs a fixture of its own (monkeypatch): a library-level test
        marks = [m for m in getattr(func, "pytestmark", []) if m.name == "parametrize"]
        if not marks:
            yield pytest.param(func, {}, id=f"{module.__name__}::{name}")
            continue
        (mark,) = marks
        names = mark.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        for i, values in enumerate(mark.args[1]):
            values = values if len(names) > 1 else (values,)
            yield pytest.param(func, dict(zip(names, values, strict=True)),
                               id=f"{module.__name__}::{name}[{i}]")


def _param_names(func: Callable[..., Any]) -> set[str]:
    found: set[str] = set()
    for mark in getattr(func, "pytestmark", []):
        if mark.name == "parametrize":
            names = mark.args[0]
            found |= {n.strip() for n in names.split(",")} if isinstance(names, str) else set(
                names)
    return found


SCENARIO_TESTS = [*_cases(verdicts), *_cases(bindings)]


@pytest.mark.slow  # five reports of every scenario
@pytest.mark.parametrize(("test", "params"), SCENARIO_TESTS)
def test_scenario_reads_the_same_cold_warm_and_uncached(test, params, build, capsys, tmp_path,
                                                        monkeypatch) -> None:
    three = ThreeWays(tmp_path, capsys)
    monkeypatch.setattr(api, "report", three)
    fixtures = {"build": build, "capsys": capsys}
    wanted = {name: fixtures[name] for name in inspect.signature(test).parameters
              if name in fixtures}
    test(**wanted, **params)  # the scenario's own assertions hold too
    assert three.calls, "the scenario never ran a report"


def test_enough_scenarios_across_the_three_trees() -> None:
    assert len([c for c in SCENARIO_TESTS if "test_verdicts" in c.id]) >= 25
    assert len([c for c in SCENARIO_TESTS if "test_check_bindings" in c.id]) >= 10


@pytest.mark.slow  # five reports of every scenario
@pytest.mark.parametrize(("name", "base", "head"), [c[:3] for c in kernargs.CASES],
                         ids=[c[0] for c in kernargs.CASES])
def test_kernel_argument_scenario_reads_the_same(name, base, head, build, capsys,
                                                  tmp_path) -> None:
    scenario = Scenario(base=tree_with(kernargs.TREE, *base), head=(Change("head", edits=head),))
    repo = build(scenario)
    three = ThreeWays(tmp_path, capsys)
    doc = as_json(three(str(repo.path), base="base", head="head"))
    assert doc["verdict"]["kind"]


# --- damaged and foreign entries ----------------------------------------------------------

BODY_EDIT = e.replace(e.GFX950_DENSE, "return (spec.num_waves * 64, 1, 1)",
                      "return (spec.num_waves * 64 + 0, 1, 1)")


def _run(repo: BuiltRepository, capsys, cache: Path | None) -> tuple[int, str, str]:
    """The JSON report of base -> head over the cache folder `cache` (None: none), in a
    Session of its own: the in-memory caches (facts, tree index) start empty (parses
    memoised for the test session). Its exit code, its JSON and what went to stderr."""
    session = Session(use_cache=False) if cache is None else Session(cache)
    with pytest.MonkeyPatch.context() as patch:
        _count_parses(patch, memo=True)
        found = api.report(repo.path, base="base", head="head", session=session)
    return found.exit_code, found.render("json"), capsys.readouterr().err


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in (folder / "facts").glob("*/*.json"))


Originals = dict[Path, bytes]


def _truncate(path: Path, originals: Originals) -> None:
    path.write_bytes(originals[path][: len(originals[path]) // 2])


def _random(path: Path, originals: Originals) -> None:
    path.write_bytes(os.urandom(300))


def _another_keys(path: Path, originals: Originals) -> None:
    paths = sorted(originals)
    path.write_bytes(originals[paths[(paths.index(path) + 1) % len(paths)]])


def _empty(path: Path, originals: Originals) -> None:
    path.write_bytes(b"")


def _old_extractor(path: Path, originals: Originals) -> None:
    entry = json.loads(originals[path])
    entry["key"]["extractor"] = "0" * 64
    path.write_text(json.dumps(entry))


def _wrong_shape(path: Path, originals: Originals) -> None:
    entry = json.loads(originals[path])
    entry["facts"] = [{"kind": "content", "name": "x", "line": "1", "data": {}}]
    path.write_text(json.dumps(entry))


@pytest.mark.parametrize("damage", [_truncate, _random, _another_keys, _empty, _old_extractor,
                                    _wrong_shape])
def test_a_damaged_entry_is_recomputed_and_the_report_stays_the_same(build, capsys, tmp_path,
                                                                       damage) -> None:
    repo = build(Scenario(base=verdicts.TREE, head=(Change("body", edits=(BODY_EDIT,)),)))
    folder = tmp_path / "cache"
    expected = _run(repo, capsys, folder)
    originals = {path: path.read_bytes() for path in _entries(folder)}
    assert len(originals) > 2
    for path in originals:
        damage(path, originals)
    shutil.rmtree(folder / REPORTS_FOLDER)  # the facts are read, not the stored report
    assert _run(repo, capsys, folder) == expected
    for path, original in originals.items():  # each was written again, whole and its own
        assert path.read_bytes() == original
    assert _run(repo, capsys, folder) == expected


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"null", b'{"key": 1, "facts": []}',
                                 b"\xff\xfe", b'{"key": {}, "facts": [], "more": 1}'])
def test_load_refuses_what_is_not_an_entry_of_its_key(tmp_path, raw) -> None:
    store = FactStore(tmp_path)
    key = store.key("s" * 64, "a.py", "b" * 40)
    store.save(key, "[]")
    assert store.load(key) == []
    store._file(key).write_bytes(raw)
    assert store.load(key) is None


def test_an_entry_is_used_only_under_its_own_key(tmp_path) -> None:
    store = FactStore(tmp_path)
    records = '[{"kind": "content", "name": "a.py", "line": 0, "data": {"digest": "d"}}]'
    key = store.key("s" * 64, "a.py", "b" * 40)
    store.save(key, records)
    for other in (store.key("t" * 64, "a.py", "b" * 40), store.key("s" * 64, "c.py", "b" * 40),
                  store.key("s" * 64, "a.py", "c" * 40),
                  entry_key("0" * 64, "s" * 64, "a.py", "b" * 40)):
        store._file(other).parent.mkdir(parents=True, exist_ok=True)
        store._file(other).write_bytes(store._file(key).read_bytes())
        assert store.load(other) is None
    assert store.load(key) == json.loads(records)


# --- what is cached, and what comes back --------------------------------------------------

def _cold(surface: Any, store: FactStore | None = None) -> FactCache:
    """A fact cache with nothing in memory (caches of its own, as a new Session's)."""
    return FactCache(surface, store, Caches())


def test_loaded_facts_equal_fresh_facts_in_every_fixture_tree(tmp_path, monkeypatch) -> None:
    _count_parses(monkeypatch, memo=True)  # the second extraction reuses the first
    for files, name in ((rocke_tree_files(), "hipdnn"), (tree_files("aiter_tree"), "aiter"),
                        (tree_files("flash_attention_tree"), "flash-attention")):
        snap, surface = Snapshot.from_files(files), load_surface_map(name)
        paths = [p for p in snap if surface.classify(p) is not None]
        fresh = {p: _cold(surface).facts(snap, p) for p in paths}
        store = FactStore(tmp_path / name)
        filled = {p: _cold(surface, store).facts(snap, p) for p in paths}
        loaded = {p: _cold(surface, store).facts(snap, p) for p in paths}
        assert store.hits == len(paths) and store.writes == len(paths)
        assert fresh == filled == loaded
        for path in paths:
            for a, b in zip(fresh[path], loaded[path], strict=True):
                assert type(a.kind) is type(b.kind) is FactKind
                assert json.dumps(a.to_json()) == json.dumps(b.to_json())


def test_a_parse_failure_of_readable_content_is_cached(tmp_path, monkeypatch) -> None:
    path = f"{e.KERNELS}/gfx950/broken.py"
    snap, surface, store = Snapshot.from_files({path: "def (:\n"}), load_surface_map(), \
        FactStore(tmp_path)
    first = _cold(surface, store).facts(snap, path)
    assert [f.kind for f in first] == [FactKind.PARSE_FAILURE]
    parsed = _count_parses(monkeypatch)
    assert _cold(surface, store).facts(snap, path) == first
    assert parsed == [] and store.hits == 1


def test_an_unreadable_blob_is_never_cached(tmp_path) -> None:
    path = e.GFX950_DENSE_PACK
    files = {path: rocke_tree_files()[path]}
    good = Snapshot.from_files(files)
    bad = Snapshot(dict(good), lambda sha: (_ for _ in ()).throw(KeyError(f"{sha} missing")),
                   label="partial")
    surface, store = load_surface_map(), FactStore(tmp_path)
    cache = _cold(surface, store)
    failed = cache.facts(bad, path)
    assert [f.kind for f in failed] == [FactKind.PARSE_FAILURE]
    assert "content not readable" in failed[0].data["reason"]
    assert cache.unreadable_in(bad) == {path: f"{good[path].sha} missing"}
    assert store.writes == 0 and not _entries(tmp_path)
    read = _cold(surface, store).facts(good, path)
    assert FactKind.PARSE_FAILURE not in {f.kind for f in read}
    assert store.writes == 1


def test_the_extractor_version_follows_the_extractor_sources(tmp_path) -> None:
    import shutil

    copy = tmp_path / "impact"
    shutil.copytree(ROOT / "impact", copy, ignore=shutil.ignore_patterns("__pycache__",
                                                                          "fixtures"))
    first = version_of(copy)
    assert first == extractor_version() == version_of(copy)
    for edited in ("python/facts.py", "cpp/scaffold.py", "descriptors/arch.py", "strict.py",
                   "contracts/generic_targets.json", "bindings/schema.py", "dvc.py"):
        original = (copy / edited).read_bytes()
        (copy / edited).write_bytes(original + b"\n")
        assert version_of(copy) != first, edited
        (copy / edited).write_bytes(original)
    (copy / "render" / "words" / "rows.py").write_bytes(b"# not an extractor\n")
    assert version_of(copy) == first


# --- concurrency, size, the subcommand, an unwritable folder ------------------------------

SWAP = e.replace(bindings.ACT, "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
                 "def silu_and_mul(input: Tensor, out: Tensor) -> None: ...")


def test_two_reports_filling_one_cache_at_once_both_succeed(build, capsys, tmp_path) -> None:
    repo = build(Scenario(base=bindings.AITER, head=(Change("swap", edits=(SWAP,)),)))
    folder = tmp_path / "shared"
    argv = [sys.executable, "-m", "impact", "report", "--repo", str(repo.path), "--base",
            "base", "--head", "head", "--format", "json", "--cache-dir", str(folder)]
    procs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
             for _ in range(2)]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert results[0] == results[1]
    code, out, err = results[0]
    assert err == b"" and json.loads(out)["verdict"]["kind"] == "BREAKS"
    assert not list(folder.glob("facts/*/.tmp-*"))
    off = _run(repo, capsys, None)
    warm = _run(repo, capsys, folder)
    assert warm == off == (code, out.decode(), "")


WRITER = """
import sys
from impact.factstore import FactStore
store = FactStore(sys.argv[1])
key = store.key("s" * 64, "a.py", "b" * 40)
for i in range(150):
    store.save(key, sys.argv[2])
"""


def test_concurrent_writers_of_one_entry_never_expose_a_partial_one(tmp_path) -> None:
    records = json.dumps([{"kind": "content", "name": "a.py", "line": 0,
                           "data": {"digest": "d" * 64, "pad": "x" * 20000}}])
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), records],
                                cwd=ROOT) for _ in range(2)]
    store = FactStore(tmp_path)
    key = store.key("s" * 64, "a.py", "b" * 40)
    seen = 0
    while any(w.poll() is None for w in writers):
        found = store.load(key)
        assert found is None or found == json.loads(records)
        seen += found is not None
    assert [w.returncode for w in writers] == [0, 0]
    assert store.load(key) == json.loads(records)
    assert not list(tmp_path.glob("facts/*/.tmp-*"))


def test_the_size_bound_evicts_the_least_recently_used(tmp_path) -> None:
    store = FactStore(tmp_path, limit=60_000)
    pad = json.dumps([{"kind": "content", "name": "x", "line": 0, "data": {"p": "x" * 1000}}])
    keys = [store.key("s" * 64, f"f{i}.py", "b" * 40) for i in range(100)]
    now = time.time()
    for i, key in enumerate(keys):
        store.save(key, pad)
        os.utime(store._file(key), (now - 10_000 + i, now - 10_000 + i))
    store.close()
    usage = store.usage()
    assert usage.size <= 60_000 and 0 < usage.entries < 100
    assert store.load(keys[-1]) is not None  # the newest stays
    assert store.load(keys[0]) is None  # the oldest went


def test_a_hit_refreshes_an_old_entry_so_it_outlives_unread_ones(tmp_path) -> None:
    store = FactStore(tmp_path, limit=10**9)
    key = store.key("s" * 64, "a.py", "b" * 40)
    store.save(key, "[]")
    os.utime(store._file(key), (1, 1))
    assert store.load(key) == []
    assert store._file(key).stat().st_mtime > 1


@pytest.mark.parametrize("how", ["under-a-file", "shards-blocked"])
def test_an_unwritable_cache_warns_once_and_the_report_succeeds(build, capsys, tmp_path,
                                                                how) -> None:
    repo = build(Scenario(base=verdicts.TREE, head=(Change("body", edits=(BODY_EDIT,)),)))
    (tmp_path / "file").write_text("not a folder\n")
    folder = tmp_path / "file" / "cache"
    if how == "shards-blocked":  # the folder exists, but no entry can be written in it
        folder = tmp_path / "blocked"
        (folder / "facts").mkdir(parents=True)
        for i in range(256):
            (folder / "facts" / f"{i:02x}").write_text("")
    code, out, err = _run(repo, capsys, folder)
    assert (code, out) == _run(repo, capsys, None)[:2]
    assert json.loads(out)["verdict"]["kind"] == "NEEDS-DEVICE"
    assert err.count("impact: warning: the fact cache is off") == 1, err
    assert len(err.splitlines()) == 1


def test_a_blob_the_repository_lost_is_named_even_when_its_facts_are_cached(build, capsys,
                                                                            tmp_path) -> None:
    from dulwich.objects import Blob

    path = e.GFX950_DENSE_PACK
    repo = build(Scenario(base=verdicts.TREE, head=(Change("body", edits=(BODY_EDIT,)),)))
    folder = tmp_path / "cache"
    _run(repo, capsys, folder)  # the pack's facts are now on disk
    sha = Blob.from_string(verdicts.TREE[path]).id.decode()
    (repo.path / ".git" / "objects" / sha[:2] / sha[2:]).unlink()
    # (A stored report answers for the trees it read when they were whole: removed here,
    # so the facts are what is read back.)
    shutil.rmtree(folder / REPORTS_FOLDER)
    warm = _run(repo, capsys, folder)
    assert warm == _run(repo, capsys, None)
    doc = json.loads(warm[1])
    assert any(path in {s["file"] for s in r["sides"]} and r["status"] == "changed"
               and "not readable" in json.dumps(r) for r in doc["rows"]), doc["rows"]


def test_every_package_an_extractor_imports_is_versioned() -> None:
    """A stored fact is served only to the code that made it: every impact module the
    extractors import (those impact/extract.py's functions import, at any depth) lies
    in the sources the extractor version hashes. The build-script reader
    (impact/builds) was once left out, and a changed reader served old setup.py facts."""
    import ast
    from pathlib import Path

    from impact.factstore import extractor_sources

    root = Path(__file__).resolve().parents[1] / "impact"
    covered = set(extractor_sources(root))
    def imported(node: ast.AST) -> list[str]:
        found = []
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom) and inner.module and \
                    inner.module.startswith("impact."):
                parts = inner.module.split(".")[1:]
                found += [c for c in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py")
                          if (root / c).is_file()]
        return found

    # The extractors are imported inside extract.py's functions (one per kind), and
    # read everything they import in turn.
    extract = ast.parse((root / "extract.py").read_text())
    seeds = [m for f in extract.body if isinstance(f, ast.FunctionDef) for m in imported(f)]
    assert any(m.startswith("builds/") for m in seeds), seeds
    seen: set[str] = set()
    todo = list(seeds)
    while todo:
        relative = todo.pop()
        if relative in seen:
            continue
        seen.add(relative)
        todo += imported(ast.parse((root / relative).read_text()))
    missing = sorted(seen - covered)
    assert not missing, missing
