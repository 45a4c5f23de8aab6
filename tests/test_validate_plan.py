"""The plan: device_runs name only the tests and bench commands a surface map's
[[device_tests]] name, never guessed; a test the head tree lacks is named, not emitted."""

from __future__ import annotations

import pytest

from impact.git import Snapshot
from impact.reasons import Reason
from impact.report import device_runs
from impact.rows import Role, Row, Side, Status
from impact.surface import BadSurfaceMap, builtin_map, parse_surface_map


def _row(file: str, status: Status = Status.CHANGED, device_test: str = "") -> Row:
    return Row("surface", "head", file, status, Reason.CONTENT_CHANGED, archs=("gfx950",),
               sides=(Side(file, 1, "head", Role.CHANGED),), device_test=device_test)


def test_aiter_names_the_ops_own_test_when_the_head_has_it() -> None:
    head = Snapshot.from_files({"aiter/ops/activation.py": "", "aiter/ops/norm.py": "",
                                "op_tests/test_activation.py": ""})
    runs = device_runs([_row("aiter/ops/activation.py"), _row("aiter/ops/norm.py")],
                       builtin_map("aiter"), head)
    [run] = runs
    assert run["tests"] == ["op_tests/test_activation.py"] and run["bench"] == []
    assert "aiter device_tests[0] 'aiter/ops/*.py' matched aiter/ops/activation.py" in run["basis"]
    assert run["note"] == "not in the head tree, so not emitted: op_tests/test_norm.py"
    assert run["confirms"] == "change"


def test_no_entry_means_the_plan_says_so() -> None:
    [run] = device_runs([_row("csrc/kernels/x.cu")], builtin_map("aiter"),
                        Snapshot.from_files({"csrc/kernels/x.cu": ""}))
    assert run["tests"] == [] and run["basis"] == ""
    assert run["note"] == "the surface map names no device test for csrc/kernels/x.cu"


def test_a_mismatch_is_a_run_that_confirms_the_break() -> None:
    head = Snapshot.from_files({"hopper/test_flash_attn.py": "", "hopper/flash_api.cpp": ""})
    runs = device_runs([_row("hopper/flash_api.cpp", Status.MISMATCH)],
                       builtin_map("flash-attention"), head)
    assert [(r["confirms"], r["tests"]) for r in runs] == [("break", ["hopper/test_flash_attn.py"])]


def test_hipdnn_keeps_the_profiles_own_test() -> None:
    test = "src/tests/TestDense.cpp"
    head = Snapshot.from_files({test: "", "kernels/dense.py": ""})
    [run] = device_runs([_row("kernels/dense.py", device_test=test)], builtin_map("hipdnn"),
                        head)
    assert run["target"] == test and run["tests"] == [test]
    [bare] = device_runs([_row("kernels/dense.py")], builtin_map("hipdnn"), head)
    assert bare["tests"] == [] and "names no device test" in bare["note"]


def test_placeholders_and_bench() -> None:
    surface = parse_surface_map(b"""schema_version = 1
name = "lib"
[[surface]]
kind = "op"
lane = "IMPACT"
language = "python"
patterns = ["lib/**"]
[[device_tests]]
paths = ["lib/ops/*.py", "tests/test_*.py"]
tests = ["tests/test_{op}.py::test_{stem}"]
bench = ["python bench/{op}.py --json"]
""", "test")
    entry = surface.device_tests[0]
    assert entry.fill("tests/test_gemm.py") == (["tests/test_gemm.py::test_test_gemm"],
                                                ["python bench/gemm.py --json"])
    assert entry.matches("lib/ops/gemm.py") == "lib/ops/*.py" and not entry.matches("lib/x.py")


def test_a_bad_device_tests_table_is_refused() -> None:
    base = b'schema_version = 1\nname = "x"\n[[surface]]\nkind = "op"\nlane = "IMPACT"\n' \
           b'language = "python"\npatterns = ["a/**"]\n'
    with pytest.raises(BadSurfaceMap, match="device_tests"):
        parse_surface_map(base + b'[[device_tests]]\ntests = ["t.py"]\n', "test")
    with pytest.raises(BadSurfaceMap, match="bad pattern"):
        parse_surface_map(base + b'[[device_tests]]\npaths = ["a/[z"]\n', "test")
