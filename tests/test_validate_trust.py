"""`impact validate` against a hostile head (issue 25, "validate runs the head's code
unconfined"): the head's tests and the package they import run confined, with a minimal
environment, the base's harness and results read from a channel they cannot write.

Each head is the broken `add` of tests/test_validate_end_to_end.py (a test that passes on
base fails on head: BLOCK) plus code that tries to hide the break or to reach past its
scratch folder. Run with recorded GPU samples (the documented seam), so the stages after
the claim run on the CPU. Where this system refuses the mount namespace the tests that
need it are skipped, naming what the jail reported.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_validate_end_to_end import BASE, BROKEN, CONSISTENT, SAMPLES, _repo

from emit.jail import SANDBOX
from impact.fixtures import Change, Scenario, build_repository
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.validate import gpus
from impact.validate.run import Options, validate

ROOT = Path(__file__).resolve().parents[1]


def _validate(tmp_path: Path, repo, **options) -> dict:
    out = tmp_path / "validation_report.json"
    validate(Options(repo=str(repo.path), base=repo.base, head=repo.head,
                     tests=["tests/test_add.py"], bench=[], package="pkg", output=str(out),
                     samples=1, interval=0, lock_dir=str(tmp_path / "locks"), timeout=120,
                     **options))
    return json.loads(out.read_text())


@functools.cache
def _jail_confines() -> tuple[bool, str]:
    """Whether the jail (emit/sandbox.py) gets a mount namespace on this system, asked of
    the jail itself: (granted, what it reported)."""
    status_r, status_w = os.pipe()
    config = {"parent": os.getpid(), "status_fd": status_w, "namespaces": True,
              "limits": {}, "hide": [], "cwd": "/", "read_only": [], "keep": []}
    try:
        subprocess.run([sys.executable, "-I", "-S", "-B", str(SANDBOX), "run",
                        json.dumps(config), "--", sys.executable, "-I", "-S", "-c", "pass"],
                       capture_output=True, timeout=60, pass_fds=(status_w,))
    finally:
        os.close(status_w)
    with os.fdopen(status_r, "rb") as handle:
        line = handle.readline()
    try:
        record = json.loads(line)
    except ValueError:
        return False, "the jail reported nothing"
    return bool(record.get("mount")), str(record.get("detail"))


def _require_confined(doc: dict) -> None:
    """Skip where this system refuses the jail its mount namespace (the report then says
    how little it confined); where the jail gets it, the tests must have been confined."""
    granted, detail = _jail_confines()
    if not granted:
        isolation = doc["environment"]["isolation"]
        pytest.skip(f"this system refuses the jail a mount namespace ({detail}): validate's "
                    f"tests ran {isolation['level']} ({isolation['reason']}); the report "
                    "says so")


def _blocked(doc: dict) -> bool:
    return doc["verdict"] == "BLOCK" and any(
        f["severity"] == "blocker" and "passes on base and fails on head" in f["detail"]
        for f in doc["findings"])


# --- the harness comes from the base --------------------------------------------------------

PASS_EVERYTHING = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""


def test_a_head_conftest_that_turns_failures_into_passes_is_not_run(tmp_path: Path,
                                                                    recorded) -> None:
    repo = _repo(tmp_path, {**BROKEN, "conftest.py": PASS_EVERYTHING,
                            "tests/conftest.py": PASS_EVERYTHING})
    doc = _validate(tmp_path, repo)
    assert _blocked(doc), doc["findings"]
    notes = [f["detail"] for f in doc["findings"] if f["severity"] == "note"]
    assert any(n.startswith("tests/conftest.py is a harness file the change edits")
               for n in notes), notes


@pytest.mark.slow  # validate runs pytest on base and head
def test_a_root_sitecustomize_cannot_swap_the_package(tmp_path: Path, recorded) -> None:
    """A head `sitecustomize.py` (first on the path) that hands the tests a correct `pkg`."""
    swap = ("import sys, types\nfake = types.ModuleType('pkg')\nfake.__version__ = '1.0'\n"
            "fake.add = lambda a, b: a + b\nfake.COST_US = 10.0\nsys.modules['pkg'] = fake\n")
    doc = _validate(tmp_path, _repo(tmp_path, {**BROKEN, "sitecustomize.py": swap}))
    assert _blocked(doc), doc["findings"]
    assert doc["runtime_identity"]["module_path"].startswith(doc["repo"]["head_dir"])


@pytest.mark.slow  # validate runs pytest on base and head
def test_a_pytest_config_of_the_head_is_not_read(tmp_path: Path, recorded) -> None:
    """A head pytest.ini that deselects the failing test (or loads its own plugin)."""
    ini = "[pytest]\naddopts = --deselect tests/test_add.py::test_add\n"
    doc = _validate(tmp_path, _repo(tmp_path, {**BROKEN, "pytest.ini": ini}))
    assert _blocked(doc), doc["findings"]


@pytest.mark.slow  # validate runs pytest on base and head
def test_a_head_edited_test_is_never_the_only_evidence(tmp_path: Path, recorded) -> None:
    """The head breaks `add` and edits the test's expected value so that it passes."""
    edited = ("from pkg import add\n\ndef test_add():\n    assert add(1, 2) == -1\n\n"
              "def test_zero():\n    assert add(0, 0) == 0\n")
    doc = _validate(tmp_path, _repo(tmp_path, {**BROKEN, "tests/test_add.py": edited}))
    correctness = doc["stages"]["correctness"]
    assert correctness["status"] != "pass", correctness
    assert "never the only evidence" in correctness["reason"]
    assert any(f["detail"].startswith("tests/test_add.py is a test file the change edits")
               for f in doc["findings"])
    assert doc["verdict"] != "PASS"


# --- what the head's code can reach -----------------------------------------------------

FORGE_FACTS = """
import json as _json
import shutil as _shutil
from pathlib import Path as _Path

_root = _Path({cache!r})
_shutil.rmtree(_root / "reports", ignore_errors=True)
_entries = list((_root / "facts").rglob("*.json"))
for _entry in _entries:
    _data = _json.loads(_entry.read_text())
    _data["facts"] = []
    _entry.write_text(_json.dumps(_data))
if not _entries:
    raise FileNotFoundError(_root)
"""

HOSTILE = """
import atexit as _atexit, json as _json, os as _os, sys as _sys
from pathlib import Path as _Path

_seen = {{}}


def _try(what, action):
    try:
        action()
        _seen[what] = "ok"
    except BaseException as exc:
        _seen[what] = type(exc).__name__


def _write(path, text="forged"):
    _Path(path).write_text(text)


def _forge_results():
    passed = ('<testsuites><testsuite name="pytest" tests="2">'
              '<testcase classname="tests.test_add" name="test_add"/>'
              '<testcase classname="tests.test_add" name="test_zero"/></testsuite></testsuites>')
    for arg in _sys.argv:
        if arg.startswith("--junitxml="):
            _write(arg.split("=", 1)[1], passed)
    logs = _Path(_os.environ["HOME"]).parent.parent / "logs"
    for name in ("head-tests_test_add_py.results", "head-tests_test_add_py.xml"):
        _write(logs / name, passed)


def _hook():
    for folder in _os.environ.get("PYTHONPATH", "").split(_os.pathsep):
        if (_Path(folder) / "sitecustomize.py").is_file() and "src" not in folder:
            _write(_Path(folder) / "sitecustomize.py", "raise SystemExit('forged hook')\\n")


_try("home", lambda: _write({home!r}))
_try("facts", lambda: exec({forge!r}, {{}}))
_try("hook", _hook)
_seen["env"] = {{k: v for k, v in _os.environ.items()}}
_Path("seen.json").write_text(_json.dumps(_seen))  # in its tree, its working folder
_atexit.register(lambda: _try("results", _forge_results))
"""


class HostileValidate:
    """One validate run of a hostile head, after a report that filled impact's cache."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home, self.xdg = root / "home", root / "xdg"
        self.home.mkdir()
        self.cache = self.xdg / "impact"

    def verdict(self) -> str:
        """`impact report` of the other repository, as a later run of the command (its
        fact cache the default one, under XDG_CACHE_HOME)."""
        done = subprocess.run([sys.executable, "-m", "impact", "report", "--repo",
                               str(self.breaking.path), "--base", "base", "--head", "head",
                               "--format", "json"], capture_output=True, text=True,
                              cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
        return json.loads(done.stdout)["verdict"]["kind"]

    def run(self) -> None:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HOME", str(self.home))            # the analyser's own home
            patch.setenv("XDG_CACHE_HOME", str(self.xdg))   # impact's caches live here
            patch.setenv("IMPACT_TEST_TOKEN", "ghp_validate_token_0123456789")
            patch.setenv(gpus.RECORDED_SAMPLES_ENV, str(SAMPLES / "idle.json"))
            # Another repository's break, reported once: its facts are in the cache.
            self.breaking = build_repository(Scenario(base=rocke_tree_files(), head=(
                Change("break", edits=(e.add_pack_argument(e.GFX950_DENSE_PACK, "extra"),)),
            )), self.root / "breaking")
            assert self.verdict() == "BREAKS"
            assert list((self.cache / "facts").rglob("*.json"))
            code = HOSTILE.format(home=str(self.home / "planted"),
                                  forge=FORGE_FACTS.format(cache=str(self.cache)))
            head = {"pkg/add.py": BROKEN["pkg/add.py"] + textwrap.dedent(code)}
            repo = build_repository(Scenario(base=BASE, head=(Change("head", write=head),)),
                                    self.root / "repo")
            out = self.root / "v.json"
            validate(Options(repo=str(repo.path), base=repo.base, head=repo.head,
                             tests=["tests/test_add.py"], bench=["python bench.py"],
                             package="pkg", output=str(out), samples=1, interval=0,
                             lock_dir=str(self.root / "locks"), timeout=120, keep=True))
            self.doc = json.loads(out.read_text())
            self.after = self.verdict()
        self.scratch = Path(self.doc["repo"]["head_dir"]).parents[1]
        self.seen = json.loads((self.scratch / "head" / "src" / "seen.json").read_text())


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Iterator[HostileValidate]:
    run = HostileValidate(tmp_path_factory.mktemp("hostile-validate"))
    run.run()
    yield run


@pytest.mark.slow  # validate runs pytest on base and head
def test_the_hostile_head_ran(hostile) -> None:
    assert set(hostile.seen) >= {"home", "facts", "hook", "env"}


@pytest.mark.slow  # validate runs pytest on base and head
def test_isolation_is_recorded_as_the_jail_reported_it(hostile) -> None:
    isolation = hostile.doc["environment"]["isolation"]
    assert isolation["level"] in ("namespaces", "partial-namespaces", "unconfined")
    assert isolation["level"] != "scratch-folders" and isolation["reason"]
    if isolation["level"] != "namespaces":  # never silently
        assert any(isolation["level"] in f["detail"] for f in hostile.doc["findings"])


@pytest.mark.slow  # validate runs pytest on base and head
def test_the_head_cannot_forge_impacts_fact_cache(hostile) -> None:
    """A forged fact-cache entry would make the other repository's break read NONE."""
    _require_confined(hostile.doc)
    assert hostile.seen["facts"] != "ok"
    assert hostile.after == "BREAKS"


@pytest.mark.slow  # validate runs pytest on base and head
def test_the_head_cannot_write_the_users_home(hostile) -> None:
    _require_confined(hostile.doc)
    assert hostile.seen["home"] != "ok" and not (hostile.home / "planted").exists()


@pytest.mark.slow  # validate runs pytest on base and head
def test_the_identity_hook_is_not_head_writable(hostile) -> None:
    _require_confined(hostile.doc)
    assert hostile.seen["hook"] != "ok"
    hook = (hostile.scratch / "hook" / "sitecustomize.py").read_text()
    assert "forged hook" not in hook and "impact validate" in hook


@pytest.mark.slow  # validate runs pytest on base and head
def test_the_results_are_not_the_heads_to_write(hostile) -> None:
    """The head's code rewrites every results file it can name to all-pass: the break
    is still seen (the results come through a descriptor the parent opened)."""
    _require_confined(hostile.doc)
    assert _blocked(hostile.doc), hostile.doc["findings"]


@pytest.mark.slow  # validate runs pytest on base and head
def test_tests_get_a_minimal_environment(hostile) -> None:
    env = hostile.seen["env"]
    assert "IMPACT_TEST_TOKEN" not in env
    assert env["HOME"] == str(hostile.scratch / "head" / "home")
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TMPDIR"):
        assert env[name].startswith(str(hostile.scratch / "head")), name
    assert str(hostile.xdg) not in json.dumps(env) and str(hostile.home) not in json.dumps(env)


@pytest.mark.slow  # validate runs pytest on base and head
def test_a_clean_head_still_runs_confined(tmp_path: Path, recorded) -> None:
    doc = _validate(tmp_path, _repo(tmp_path, CONSISTENT))
    assert doc["stages"]["correctness"]["status"] == "pass", doc["stages"]["correctness"]
    assert doc["runtime_identity"]["module_path"].startswith(doc["repo"]["head_dir"])


@pytest.mark.slow  # pip builds both sides
def test_a_head_build_backend_runs_confined(tmp_path: Path, recorded, monkeypatch) -> None:
    """The head's own build script (its PEP 517 backend, run by pip) cannot write the
    user's home or impact's cache folder either."""
    from test_validate_install import BACKEND, BUILT_BASE

    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (xdg / "impact").mkdir(parents=True)
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    attack = (f"\nfor _path in ({str(home / 'planted')!r}, {str(xdg / 'impact' / 'forged')!r}):\n"
              "    try:\n        open(_path, 'w').write('x')\n    except OSError:\n        pass\n")
    head = {"backend.py": BACKEND + attack,
            "src/pkg/add.py": "def add(a, b):\n    return a - b\n"}
    repo = build_repository(Scenario(base=BUILT_BASE, head=(Change("head", write=head),)),
                            tmp_path / "repo")
    doc = _validate(tmp_path, repo)
    _require_confined(doc)
    install = doc["stages"]["runtime_compat"]["detail"]["install"]["head"]
    assert install["how"] == "build" and install["ok"], install
    assert not (home / "planted").exists() and not (xdg / "impact" / "forged").exists()
    assert doc["verdict"] == "BLOCK"


@pytest.mark.slow  # pip builds both sides
def test_a_conftest_the_head_build_plants_is_not_run(tmp_path: Path, recorded) -> None:
    """The base's harness is put back after the head's build (which may write into its
    tree) and before each head target: a conftest.py planted there never runs."""
    from test_validate_install import BACKEND, BUILT_BASE

    plant = (f"\nos.makedirs('tests', exist_ok=True)\n"
             f"open('tests/conftest.py', 'w').write({PASS_EVERYTHING!r})\n")
    head = {"backend.py": BACKEND + plant,
            "src/pkg/add.py": "def add(a, b):\n    return a - b\n"}
    repo = build_repository(Scenario(base=BUILT_BASE, head=(Change("head", write=head),)),
                            tmp_path / "repo")
    doc = _validate(tmp_path, repo)
    assert doc["stages"]["runtime_compat"]["detail"]["install"]["head"]["ok"]
    assert _blocked(doc), doc["findings"]
    assert any(f["detail"].startswith("tests/conftest.py was written into the head's tree")
               for f in doc["findings"])
