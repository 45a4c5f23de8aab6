"""The plan: device_runs name only the tests and bench commands a surface map's
[[device_tests]] name, never guessed; a test the head tree lacks is named, not emitted."""

from __future__ import annotations

import jsonschema
import pytest

from impact.contracts import load_schema
from impact.document import device_runs
from impact.errors import BadUsage
from impact.git import Snapshot
from impact.reasons import Reason
from impact.rows import Role, Row, Side, Status
from impact.surface import BadSurfaceMap, builtin_map, parse_surface_map
from impact.validate.run import plan_package

BASE_MAP = b'schema_version = 1\nname = "x"\n[[surface]]\nkind = "op"\nlane = "IMPACT"\n' \
           b'language = "python"\npatterns = ["a/**"]\n'
RUN_SCHEMA = load_schema("report.schema.json")["properties"]["device_runs"]


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
    base = BASE_MAP
    with pytest.raises(BadSurfaceMap, match="device_tests"):
        parse_surface_map(base + b'[[device_tests]]\ntests = ["t.py"]\n', "test")
    with pytest.raises(BadSurfaceMap, match="bad pattern"):
        parse_surface_map(base + b'[[device_tests]]\npaths = ["a/[z"]\n', "test")


def test_an_entry_may_name_its_package() -> None:
    named = parse_surface_map(BASE_MAP + b'[[device_tests]]\npaths = ["a/*.py"]\n'
                              b'tests = ["t.py"]\npackage = "alib.core"\n', "test")
    bare = parse_surface_map(BASE_MAP + b'[[device_tests]]\npaths = ["a/*.py"]\n', "test")
    assert named.device_tests[0].package == "alib.core"
    assert bare.device_tests[0].package is None


@pytest.mark.parametrize("value", [b"3", b'["alib"]', b'"a-lib"', b'""', b'"alib."'])
def test_a_package_that_is_no_module_name_is_refused(value: bytes) -> None:
    with pytest.raises(BadSurfaceMap, match="device_tests/0/package"):
        parse_surface_map(BASE_MAP + b'[[device_tests]]\npaths = ["a/*.py"]\npackage = '
                          + value + b"\n", "test")


def test_runs_carry_the_packages_of_the_entries_that_named_their_tests() -> None:
    head = Snapshot.from_files({"aiter/ops/norm.py": "", "op_tests/test_norm.py": ""})
    [run] = device_runs([_row("aiter/ops/norm.py")], builtin_map("aiter"), head)
    assert run["packages"] == ["aiter"]
    [none] = device_runs([_row("csrc/kernels/x.cu")], builtin_map("aiter"),
                         Snapshot.from_files({"csrc/kernels/x.cu": ""}))
    assert none["packages"] == []  # no entry matched: no package claimed
    jsonschema.validate([run, none], RUN_SCHEMA)


def test_a_run_merged_from_several_entries_lists_each_package_once() -> None:
    files = {"hopper/flash_api.cpp": "", "hopper/test_flash_attn.py": "",
             "csrc/flash_attn/flash_api.cpp": "", "flash_attn/flash_attn_interface.py": "",
             "tests/test_flash_attn.py": ""}
    rows = [_row(f) for f in ("hopper/flash_api.cpp", "csrc/flash_attn/flash_api.cpp",
                              "flash_attn/flash_attn_interface.py")]
    [run] = device_runs(rows, builtin_map("flash-attention"), Snapshot.from_files(files))
    assert run["packages"] == ["flash_attn", "flash_attn_interface"]
    jsonschema.validate([run], RUN_SCHEMA)


def test_hipdnn_names_no_package() -> None:
    test = "src/tests/TestDense.cpp"
    head = Snapshot.from_files({test: "", "kernels/dense.py": ""})
    [run] = device_runs([_row("kernels/dense.py", device_test=test)], builtin_map("hipdnn"),
                        head)
    assert run["tests"] == [test] and run["packages"] == []


def test_a_run_without_packages_breaks_the_report_schema() -> None:
    [run] = device_runs([_row("csrc/kernels/x.cu")], builtin_map("aiter"),
                        Snapshot.from_files({"csrc/kernels/x.cu": ""}))
    del run["packages"]
    with pytest.raises(jsonschema.ValidationError, match="packages"):
        jsonschema.validate([run], RUN_SCHEMA)


def _plan_with(*packages: list[str]) -> dict:
    return {"device_runs": [{"packages": p} for p in packages]}


def test_plan_package_takes_the_one_package_of_the_plan() -> None:
    assert plan_package(_plan_with(["pkg"], [], ["pkg"]), None)[0] == "pkg"
    assert plan_package(_plan_with(["pkg"]), "other") == ("other", "--package")
    assert plan_package(_plan_with([]), None)[0] is None
    assert plan_package(None, None)[0] is None
    with pytest.raises(BadUsage, match="several packages"):
        plan_package(_plan_with(["a"], ["b"]), None)
