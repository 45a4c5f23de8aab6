"""The GPU proof fixture (impact/fixtures/gpu_tree) and its scenario repository
(benchmarks/gpu/scenarios.py), checked on CPU.

The scenario repository builds with one branch per scenario, each touching the files it
was designed to touch; `impact report` gives each scenario the runtime verdict that
benchmarks/gpu/expected.json names; the fixture's Python compiles; its `[[device_tests]]`
name files that exist and select the tests each scenario needs; the bench line format is
the one benchmarks/gpu/README.md documents. The device half (validate) runs on the H200
through benchmarks/gpu/run_all.sh.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from dulwich.repo import Repo
from dulwich.wildmatch import translate
from harness import coded_report, outcome, report
from script_loader import load_script

from impact.errors import EXIT_BREAKS, EXIT_NEEDS_DEVICE, EXIT_NONE

ROOT = Path(__file__).resolve().parents[1]
GPU = ROOT / "benchmarks" / "gpu"
TREE = ROOT / "impact" / "fixtures" / "gpu_tree"
EXPECTED = json.loads((GPU / "expected.json").read_text(encoding="utf-8"))["scenarios"]
MAP_TEXT = (TREE / ".impact" / "surface.toml").read_text(encoding="utf-8")
EXIT_FOR = {"BREAKS": EXIT_BREAKS, "NEEDS-DEVICE": EXIT_NEEDS_DEVICE, "NONE": EXIT_NONE,
            "N/A": EXIT_NONE}


scenarios = load_script(GPU / "scenarios.py", "gpu_scenarios")
NAMES = [s.name for s in scenarios.SCENARIOS]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    where = tmp_path_factory.mktemp("gpu") / "repo"
    return where, scenarios.build(where)


def _changed(repo_path: Path, base: str, head: str) -> set[str]:
    repo = Repo(str(repo_path))
    try:
        old, new = repo[repo[base.encode()].tree], repo[repo[head.encode()].tree]
        return {(new_path or old_path).decode() for (old_path, new_path), _, _
                in repo.object_store.tree_changes(old.id, new.id)}
    finally:
        repo.close()


def _tree_files() -> set[str]:
    return set(scenarios.fixture_files())


# -- the repository --------------------------------------------------------------------------

def test_the_repository_has_base_and_one_branch_per_scenario(built) -> None:
    path, ids = built
    repo = Repo(str(path))
    try:
        heads = {r.decode() for r in repo.refs.as_dict(b"refs/heads")}
        base = repo.get_peeled(b"refs/tags/base").decode()
        for name in NAMES:
            assert repo[ids[name].encode()].parents == [base.encode()]
        assert set(repo[base.encode()].message.decode().splitlines()) == {
            "base: the gpukern fixture"}
    finally:
        repo.close()
    assert heads == {"main", *NAMES}
    assert base == ids["base"]
    assert (path / "csrc" / "binding.cpp").is_file()  # checked out at main


def test_the_build_is_reproducible(built, tmp_path) -> None:
    assert scenarios.build(tmp_path / "again") == built[1]


def test_a_second_build_into_the_same_folder_is_refused(built, capsys) -> None:
    assert scenarios.main(["--out", str(built[0])]) == 2
    assert "is not empty" in capsys.readouterr().err


@pytest.mark.parametrize(("name", "files"), [
    ("swap-args", {"csrc/binding.cpp"}),
    ("slow-kernel", {"csrc/scale_add.cu"}),
    ("consistent", {"gpukern/ops.py", "csrc/binding.cpp", "csrc/ops.h", "csrc/scale_add.cu",
                    "tests/test_scale_add.py"}),
    ("both-fail", {"gpukern/triton_ops.py"}),
    ("no-gpu", {"gpukern/ops.py", "csrc/binding.cpp", "csrc/ops.h", "csrc/scale_add.cu",
                "tests/test_scale_add.py"}),
])
def test_each_scenario_touches_what_it_was_designed_to(built, name, files) -> None:
    path, ids = built
    assert _changed(path, ids["base"], ids[name]) == files


def test_swap_args_swaps_only_the_py_arg_names(built) -> None:
    path, ids = built
    repo = Repo(str(path))
    try:
        def binding(commit: str) -> str:
            tree = repo[repo[commit.encode()].tree]
            csrc = repo[tree[b"csrc"][1]]
            return repo[csrc[b"binding.cpp"][1]].data.decode()
        base, head = binding(ids["base"]), binding(ids["swap-args"])
    finally:
        repo.close()
    assert 'py::arg("x"), py::arg("y"), py::arg("alpha")' in base
    assert 'py::arg("y"), py::arg("x"), py::arg("alpha")' in head
    assert head.replace('py::arg("y"), py::arg("x")', 'py::arg("x"), py::arg("y")') == base


def test_the_known_bad_test_is_in_base(built) -> None:
    path, ids = built
    repo = Repo(str(path))
    try:
        tree = repo[repo[ids["base"].encode()].tree]
        tests = {name.decode() for name in repo[tree[b"tests"][1]]}
    finally:
        repo.close()
    assert {"test_known_bad.py", "test_scale_add.py", "test_softmax.py"} <= tests


# -- impact report -----------------------------------------------------------------------------

def _map_without_device_tests(tmp_path: Path) -> Path:
    """The tree's own map cut before its [[device_tests]] tables: the static verdict must not
    depend on them."""
    cut = MAP_TEXT.index("[[device_tests]]")
    path = tmp_path / "gpukern.surface.toml"
    path.write_text(MAP_TEXT[:cut], encoding="utf-8")
    return path


@pytest.mark.parametrize("name", NAMES)
def test_report_gives_the_expected_runtime_verdict(built, capsys, name) -> None:
    """With the repository's own .impact/surface.toml, device_tests included (needs the
    schema that accepts them)."""
    path, _ = built
    got, out, err = outcome(path, base="base", head=name)
    assert err + capsys.readouterr().err == ""  # no error, no warning
    doc = json.loads(out)
    want = EXPECTED[name]["report"]
    assert doc["surface_map"]["name"] == "gpukern"
    assert doc["surface_map"]["source"].endswith(".impact/surface.toml")
    assert (doc["verdict"]["line"], got) == (want, EXIT_FOR[want.split()[2]])


@pytest.mark.parametrize("name", NAMES)
def test_the_verdict_does_not_depend_on_device_tests(built, tmp_path, name) -> None:
    path, _ = built
    got, doc = coded_report(path, base="base", head=name,
                            surface_map=str(_map_without_device_tests(tmp_path)))
    want = EXPECTED[name]["report"]
    assert (doc["verdict"]["line"], got) == (want, EXIT_FOR[want.split()[2]])


def test_swap_args_breaks_on_the_swapped_binding(built, tmp_path) -> None:
    path, _ = built
    rows = report(path, base="base", head="swap-args",
                  surface_map=str(_map_without_device_tests(tmp_path)))["rows"]
    mismatches = [r for r in rows if r["status"] == "mismatch"]
    assert [(r["contract"], r["reason"]) for r in mismatches] == [
        ("bindings", "call-argument-moved")]
    assert {s["file"] for s in mismatches[0]["sides"]} == {"csrc/binding.cpp", "gpukern/ops.py"}


# -- the fixture itself ------------------------------------------------------------------------

def test_the_fixture_python_compiles() -> None:
    sources = sorted(p for p in TREE.rglob("*.py") if "__pycache__" not in p.parts)
    assert {p.relative_to(TREE).as_posix() for p in sources} >= {
        "gpukern/ops.py", "gpukern/jit.py", "gpukern/triton_ops.py", "bench/bench_ops.py",
        "tests/test_scale_add.py", "tests/test_silu_mul.py", "tests/test_softmax.py",
        "tests/test_known_bad.py"}
    for source in sources:
        compile(source.read_text(encoding="utf-8"), str(source), "exec")


def test_stubs_binding_and_declarations_agree_at_base() -> None:
    """The three restatements of each op's argument list, as written at base."""
    stubs = dict(re.findall(r"def (\w+)\(([^)]*)\) -> Tensor", (TREE / "gpukern/ops.py")
                            .read_text()))
    binds = dict(re.findall(r'm\.def\("(\w+)", &\w+,((?:\s*py::arg\("\w+"\),?)+)\)',
                            (TREE / "csrc/binding.cpp").read_text()))
    decls = dict(re.findall(r"at::Tensor (\w+)\(([^)]*)\);", (TREE / "csrc/ops.h").read_text()))
    assert set(stubs) == set(binds) == set(decls) == {"scale_add", "silu_mul"}
    for op in stubs:
        stub = [p.split(":")[0].strip() for p in stubs[op].split(",")]
        bound = re.findall(r'py::arg\("(\w+)"\)', binds[op])
        declared = [p.split()[-1].lstrip("&") for p in decls[op].split(",")]
        assert stub == bound == declared, op
    sources = json.loads((TREE / "gpukern/sources.json").read_text())["gpukern_C"]["srcs"]
    assert all((TREE / s).is_file() for s in sources)


def test_the_fixture_tests_skip_without_cuda() -> None:
    for test in sorted((TREE / "tests").glob("test_*.py")):
        assert "pytest.mark.skipif(not torch.cuda.is_available()" in test.read_text(), test.name


def _device_tests() -> list[dict]:
    return tomllib.loads(MAP_TEXT)["device_tests"]


def _selected(changed: set[str]) -> tuple[set[str], set[str]]:
    """Tests and bench commands the map names for `changed` files (each entry whose
    patterns match a changed path; `{stem}` filled from that path)."""
    tests: set[str] = set()
    bench: set[str] = set()
    for entry in _device_tests():
        rxs = [re.compile(translate(p.encode())) for p in entry["paths"]]
        for path in changed:
            if any(rx.match(path.encode()) for rx in rxs):
                stem = Path(path).stem
                tests |= {t.replace("{stem}", stem) for t in entry["tests"]}
                bench |= set(entry["bench"])
    return tests, bench


def test_every_device_test_entry_names_real_files() -> None:
    files = _tree_files()
    for entry in _device_tests():
        # No `package`: the H200 reports are bound to this map's scenario commits, and
        # run_all.sh names the package (--package gpukern) instead.
        assert set(entry) == {"paths", "tests", "bench"}
        for pattern in entry["paths"]:
            rx = re.compile(translate(pattern.encode()))
            matched = [f for f in files if rx.match(f.encode())]
            assert matched, pattern
            for path in matched:
                for target in entry["tests"]:
                    assert target.replace("{stem}", Path(path).stem) in files, (pattern, target)
        for command in entry["bench"]:
            assert command.split()[1] in files


@pytest.mark.parametrize(("name", "tests"), [
    ("swap-args", {"tests/test_scale_add.py", "tests/test_silu_mul.py"}),
    ("slow-kernel", {"tests/test_scale_add.py"}),
    ("consistent", {"tests/test_scale_add.py", "tests/test_silu_mul.py"}),
    ("both-fail", {"tests/test_softmax.py", "tests/test_known_bad.py"}),
])
def test_the_map_selects_the_tests_each_scenario_needs(built, name, tests) -> None:
    path, ids = built
    changed = _changed(path, ids["base"], ids[name]) - {"tests/test_scale_add.py"}
    selected, bench = _selected(changed)
    assert selected == tests
    assert bench and all(c.startswith("python bench/bench_ops.py") for c in bench)


# -- expected.json and the README -------------------------------------------------------------

def test_expected_covers_every_scenario_once() -> None:
    assert list(EXPECTED) == NAMES
    for scenario in scenarios.SCENARIOS:
        entry = EXPECTED[scenario.name]
        assert entry["gpu"] is scenario.gpu
        assert entry["report"].startswith("Runtime impact: ")
        assert entry["validate"] in {"PASS", "BLOCK", "NEEDS_WORK", "INCONCLUSIVE"}
        assert entry["report_reason"] and entry["validate_reason"]


def test_the_readme_documents_the_bench_line_format() -> None:
    readme = (GPU / "README.md").read_text(encoding="utf-8")
    lines = re.findall(r'^\{"label": .*\}$', readme, re.M)
    assert lines
    bench = (TREE / "bench" / "bench_ops.py").read_text(encoding="utf-8")
    assert 'f"{op}|{\'x\'.join(map(str, shape))}|{dtype}"' in bench
    for line in lines:
        row = json.loads(line)
        assert set(row) == {"label", "us"} and isinstance(row["us"], float)
        op, shape, dtype = row["label"].split("|")
        assert re.fullmatch(r"\d+(x\d+)*", shape) and dtype in {"fp32", "fp16", "bf16"}
        assert f'"{op}"' in bench
