"""`impact validate` puts each side on the import path the way its project installs:
the map's python_roots (a `src/` layout), else the project's own packaging built into a
folder of that side's own (pip, no index, no build isolation), else the tree's root.

The built package here uses an in-tree PEP 517 backend of a few lines (`backend.py`), so
the build needs neither setuptools nor an index; it writes the package into the wheel
with a marker line, which proves the tests ran the built copy, not the tree's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from impact.contracts import load_schema
from impact.fixtures.scenario import Change, Scenario, build_repository
from impact.validate import install, logtail
from impact.validate.run import Options, validate

SAMPLES = Path(__file__).parent / "data" / "gpu_samples"

SRC_MAP = """schema_version = 1
name = "srclayout"
python_roots = ["src"]
[[surface]]
kind = "tiny-op"
lane = "IMPACT"
language = "python"
patterns = ["src/pkg/*.py"]

[[device_tests]]
paths = ["src/pkg/*.py"]
tests = ["tests/test_add.py"]
package = "pkg"
"""

TEST = ("from pkg import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\n"
        "def test_built():\n    import pkg\n    assert pkg.BUILT == EXPECT_BUILT\n")

SRC_BASE = {
    ".impact/surface.toml": SRC_MAP,
    "src/pkg/__init__.py": "BUILT = False\nfrom pkg.add import add\n",
    "src/pkg/add.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": TEST.replace("EXPECT_BUILT", "False"),
}

BACKEND = '''"""A PEP 517 backend of this test: src/pkg into a wheel, marked as built."""
import base64, hashlib, os, zipfile

NAME, VERSION = "pkg", "1.0"


def _files():
    for folder, _, names in os.walk("src/pkg"):
        if "__init__.py" not in names:  # as setuptools' find with namespaces = false
            continue
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                data = open(path, "rb").read()
                if name == "__init__.py":
                    data = data.replace(b"BUILT = False", b"BUILT = True")
                yield os.path.relpath(path, "src"), data


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    if os.environ.get("PKG_FAIL_BUILD") or os.path.exists("BROKEN_BUILD"):
        raise SystemExit("the build of pkg failed on purpose")
    info = f"{NAME}-{VERSION}.dist-info"
    files = dict(_files())
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n".encode())
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\\nGenerator: test\\n"
                              b"Root-Is-Purelib: true\\nTag: py3-none-any\\n")
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = ("\\n".join(record) + "\\n").encode()
    wheel = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as out:
        for path, data in files.items():
            out.writestr(path, data)
    return wheel
'''

PYPROJECT = ('[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
             '[project]\nname = "pkg"\nversion = "1.0"\n')

BUILT_BASE = {
    "pyproject.toml": PYPROJECT,
    "backend.py": BACKEND,
    "src/pkg/__init__.py": "BUILT = False\nfrom pkg.add import add\n",
    "src/pkg/add.py": "def add(a, b):\n    return a + b\n",
    "tests/test_add.py": TEST.replace("EXPECT_BUILT", "True"),
}

BROKEN_ADD = {"src/pkg/add.py": "def add(a, b):\n    return a - b\n"}
SAME_ADD = {"src/pkg/add.py": "def add(a, b):\n    return b + a\n"}


def _validate(tmp_path: Path, base: dict, head: dict, delete: tuple[str, ...] = (),
              **extra) -> dict:
    change = Change("head", write=head, delete=delete)
    repo = build_repository(Scenario(base=base, head=(change,)), tmp_path / "repo")
    out = tmp_path / "validation_report.json"
    validate(Options(repo=str(repo.path), base=repo.base, head=repo.head,
                     tests=["tests/test_add.py"], package="pkg", output=str(out), samples=2,
                     interval=0, lock_dir=str(tmp_path / "locks"), timeout=120, **extra))
    document = json.loads(out.read_text())
    jsonschema.Draft202012Validator(load_schema("validation_report.schema.json")).validate(
        document)
    return document


def test_a_failed_builds_first_errors_are_quoted_with_its_end(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("\n".join(["csrc/a.cu(12): error: no instance of constructor"]
                             + [f"line {i}" for i in range(100)]) + "\n")
    tail = logtail.tail(log)
    assert tail[0].startswith("csrc/a.cu(12): error") and tail[-1] == "line 99"
    assert len(tail) == 2 + logtail.TAIL_LINES


def test_a_log_that_is_a_link_is_named_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("token\n")
    (tmp_path / "install.log").symlink_to(secret)
    [line] = logtail.tail(tmp_path / "install.log")
    assert line.startswith("(the log could not be read") and "token" not in line


def test_the_modules_a_build_left_out_are_named(tmp_path: Path) -> None:
    for path in ("tree/src/pkg/__init__.py", "tree/src/pkg/ops/__init__.py",
                 "tree/src/pkg/ops/extra/emb.py", "site/pkg/__init__.py",
                 "site/pkg/ops/__init__.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    missing, total = install.unshipped_modules(tmp_path / "tree", tmp_path / "site", "pkg")
    assert (missing, total) == (["ops/extra/emb.py"], 3)
    assert install.unshipped_modules(tmp_path / "tree", tmp_path / "site", "other") == ([], 0)


def test_the_plan_prefers_named_roots_then_packaging_then_the_tree(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    assert install.plan(tmp_path, ("src",)).how == install.How.ROOTS
    assert install.plan(tmp_path, (".",)).how == install.How.TREE
    (tmp_path / "setup.py").write_text("")
    assert install.plan(tmp_path, (".",)).how == install.How.BUILD
    assert install.plan(tmp_path, ("src",)).how == install.How.ROOTS
    assert install.plan(tmp_path, ("src",), install.Choice.BUILD).how == install.How.BUILD
    (tmp_path / "setup.py").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 99\n")
    assert install.plan(tmp_path, ()).how == install.How.TREE  # no [build-system]


def test_a_src_layout_is_found_through_the_maps_python_roots(tmp_path: Path,
                                                            recorded) -> None:
    doc = _validate(tmp_path, SRC_BASE, BROKEN_ADD)
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "pass", compat["reason"]
    assert compat["detail"]["install"]["python_roots"] == ["src"]
    assert "surface.toml" in compat["detail"]["install"]["python_roots_source"]
    for side in ("base", "head"):
        assert compat["detail"]["install"][side]["how"] == "python-roots"
        origin = Path(compat["detail"]["origins"][side])
        assert origin == Path(doc["repo"][f"{side}_dir"]).resolve() / "src/pkg/__init__.py"
    assert doc["verdict"] == "BLOCK"  # the head's add is wrong, and the tests ran it


def test_without_the_root_a_src_layout_does_not_resolve(tmp_path: Path, recorded) -> None:
    base = {**SRC_BASE, ".impact/surface.toml": SRC_MAP.replace('python_roots = ["src"]\n', "")}
    doc = _validate(tmp_path, base, BROKEN_ADD)
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "fail"
    assert "python_roots" in compat["reason"] and "--install build" in compat["reason"]
    assert doc["verdict"] == "INCONCLUSIVE"


def test_the_python_root_flag_wins_over_the_map(tmp_path: Path, recorded) -> None:
    doc = _validate(tmp_path, SRC_BASE, SAME_ADD, python_roots=("nowhere",))
    compat = doc["stages"]["runtime_compat"]
    assert compat["detail"]["install"]["python_roots_source"] == "--python-root"
    assert compat["status"] == "fail" and "nowhere" in compat["reason"]


@pytest.mark.slow  # pip builds both sides
def test_a_project_is_built_with_its_own_packaging_and_its_build_runs(tmp_path: Path,
                                                                     recorded) -> None:
    doc = _validate(tmp_path, BUILT_BASE, BROKEN_ADD)
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "pass", compat["reason"]
    for side in ("base", "head"):
        done = compat["detail"]["install"][side]
        assert done["how"] == "build" and done["ok"], done
        assert "--no-index" in done["command"] and "--no-build-isolation" in done["command"]
        site = Path(doc["repo"][f"{side}_dir"]).parent / "site"
        assert Path(compat["detail"]["origins"][side]) == site.resolve() / "pkg/__init__.py"
    head = doc["stages"]["correctness"]["detail"]["head"][0]
    base = doc["stages"]["correctness"]["detail"]["base"][0]
    # test_built passes on both sides: the tests imported the built copy (BUILT = True)
    assert (base["stats"]["tests"], base["stats"]["failures"]) == (2, 0)
    assert (head["stats"]["tests"], head["stats"]["failures"]) == (2, 1)  # test_add: a - b
    assert doc["verdict"] == "BLOCK"


@pytest.mark.slow  # pip builds both sides
def test_a_head_that_does_not_build_is_blocked_and_says_so(tmp_path: Path, recorded) -> None:
    doc = _validate(tmp_path, BUILT_BASE, {"BROKEN_BUILD": "", **SAME_ADD})
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "fail"
    head = compat["detail"]["install"]["head"]
    assert not head["ok"] and head["error"].startswith("the build exited")
    assert any("failed on purpose" in line for line in head["log_tail"])
    assert compat["detail"]["install"]["base"]["ok"]
    [blocker] = [f for f in doc["findings"] if f["severity"] == "blocker"]
    assert blocker["stage"] == "runtime_compat" and "head could not be installed" in \
        blocker["detail"]
    assert doc["verdict"] == "BLOCK"


@pytest.mark.slow  # pip builds both sides
def test_a_base_that_does_not_build_is_inconclusive_not_blamed(tmp_path: Path,
                                                              recorded) -> None:
    base = {**BUILT_BASE, "BROKEN_BUILD": ""}
    doc = _validate(tmp_path, base, SAME_ADD, delete=("BROKEN_BUILD",))
    compat = doc["stages"]["runtime_compat"]
    assert not compat["detail"]["install"]["base"]["ok"]
    assert compat["detail"]["install"]["head"]["ok"]
    assert doc["findings"] == [] and doc["verdict"] == "INCONCLUSIVE"


def test_env_reaches_the_build(tmp_path: Path, recorded) -> None:
    doc = _validate(tmp_path, BUILT_BASE, SAME_ADD, env={"PKG_FAIL_BUILD": "1"})
    installs = doc["stages"]["runtime_compat"]["detail"]["install"]
    assert not installs["base"]["ok"] and not installs["head"]["ok"]
    # neither side builds here: a fact of this machine, not blamed on the change
    assert doc["findings"] == [] and doc["verdict"] == "INCONCLUSIVE"


def test_without_a_gpu_nothing_is_built(tmp_path: Path, no_gpu) -> None:
    doc = _validate(tmp_path, {**BUILT_BASE, "BROKEN_BUILD": ""}, SAME_ADD)
    compat = doc["stages"]["runtime_compat"]
    assert compat["status"] == "skip" and "no GPU" in compat["reason"]
    assert compat["detail"]["install"]["base"]["skipped"]  # not built, so not failed
    assert doc["degraded_mode"] == "NO_GPU" and doc["verdict"] == "INCONCLUSIVE"


def test_without_a_gpu_the_cli_says_what_to_add(tmp_path: Path) -> None:
    repo = build_repository(Scenario(base=SRC_BASE, head=(Change("head", write=SAME_ADD),)),
                            tmp_path / "repo")
    out = tmp_path / "v.json"
    env = {"PATH": "/usr/bin:/bin", "IMPACT_GPU_SAMPLES": str(SAMPLES / "idle.json"),
           "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "impact", "validate", "--repo", str(repo.path),
                           "--base", repo.base, "--head", repo.head, "--package", "pkg",
                           "--test", "tests/test_add.py", "--samples", "1", "--interval", "0",
                           "--lock-dir", str(tmp_path), "-o", str(out)],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("Validation: INCONCLUSIVE")
    assert "perf is skip" in done.stdout and "add `bench = [" in done.stdout
    assert "--bench CMD" in done.stdout


LEFT_OUT = {"src/pkg/extra/emb.py": "def emb():\n    return 1\n",
            "src/pkg/__init__.py": "BUILT = False\nfrom pkg.add import add\n"
                                   "from pkg.extra.emb import emb\n"}


@pytest.mark.slow  # pip builds both sides
def test_a_build_that_leaves_out_a_module_says_so_and_blames_no_one(tmp_path: Path,
                                                                    recorded) -> None:
    doc = _validate(tmp_path, {**BUILT_BASE, **LEFT_OUT}, SAME_ADD)
    install_detail = doc["stages"]["runtime_compat"]["detail"]["install"]
    for side in ("base", "head"):
        assert install_detail[side]["unshipped"] == ["extra/emb.py"]
        run = doc["stages"]["correctness"]["detail"][side][0]
        assert any("No module named 'pkg.extra'" in line for line in run["log_tail"]), run
    notes = [f["detail"] for f in doc["findings"] if f["severity"] == "note"]
    assert len(notes) == 2 and all("leaves out 1 of the tree's 3" in n for n in notes)
    assert not [f for f in doc["findings"] if f["severity"] == "blocker"]
    assert doc["verdict"] == "INCONCLUSIVE"


@pytest.mark.slow  # pip builds both sides
def test_a_head_whose_build_drops_a_module_is_blocked(tmp_path: Path, recorded) -> None:
    base = {**BUILT_BASE, "src/pkg/extra/__init__.py": "", **LEFT_OUT}
    doc = _validate(tmp_path, base, SAME_ADD, delete=("src/pkg/extra/__init__.py",))
    [blocker] = [f for f in doc["findings"] if f["severity"] == "blocker"]
    assert "no longer ships 1 module(s)" in blocker["detail"], blocker
    assert "extra/emb.py" in blocker["detail"] and doc["verdict"] == "BLOCK"
