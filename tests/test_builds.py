"""The builds domain (impact/graph/builds.py), what it puts on the surface, and the
`extension-build` check: a module's identity and sources come from the build, a file a
build compiles is on the op surface wherever it lies, and a build-file edit that changes
the GPU code (sources, archs, flags) needs a device, beside its lane row.

In memory throughout (tests/harness.py): the fixture trees with the build files a test
needs added."""

from __future__ import annotations

import pytest
from harness import report, rows_naming, run, scenario

from impact import shortcuts
from impact.extract import FactCache
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.git import Snapshot
from impact.graph import BuildsGraph, ExtensionModule
from impact.kinds import BuildFile, BuildGap
from impact.surface import BadSurfaceMap, builtin_map, parse_surface_map

GRADLIB_CU = "gradlib/csrc/hipbsolgemm.cu"
JIT = "aiter/jit/optCompilerConfig.json"
GRADLIB = """#include <torch/extension.h>

torch::Tensor hipb_mm(const torch::Tensor& mat1, const torch::Tensor& mat2) {
  return mat1.matmul(mat2);  // the library call
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("hipb_mm", &hipb_mm, "gemm"); }
"""
FA_SETUP = """import os
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension

VERSION = "2.6.0"
cc_flag = []
for arch in os.getenv("FLASH_ATTN_CUDA_ARCHS", "80;90").split(";"):
    cc_flag += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]

setup(
    name="flash_attn",
    version=VERSION,
    ext_modules=[CUDAExtension(
        name="flash_attn_2_cuda",
        sources=["csrc/flash_attn/flash_api.cpp"],
        extra_compile_args={"nvcc": ["-O3"] + cc_flag},
    )],
)
"""
HOPPER_SETUP = """from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension
import glob

cc_flag = ["-gencode", "arch=compute_90a,code=sm_90a"]
setup(ext_modules=[CUDAExtension(
    name="flashattn_hopper_cuda",
    sources=["flash_api.cpp"] + glob.glob("instantiations/*_sm90.cu"),
    extra_compile_args={"nvcc": cc_flag},
)])
"""


def aiter_with_gradlib() -> dict[str, bytes]:
    files = tree_files("aiter_tree")
    files[GRADLIB_CU] = GRADLIB.encode()
    text = files[JIT].decode().replace(
        '{\n  "module_activation"',
        '{\n  "module_hipbsolgemm": {"srcs": ["f\'{AITER_GRADLIB_DIR}/csrc/hipbsolgemm.cu\'"]},'
        '\n  "module_activation"', 1)
    files[JIT] = text.encode()
    return files


def fa_with_builds() -> dict[str, bytes]:
    files = tree_files("flash_attention_tree")
    files["setup.py"] = FA_SETUP.encode()
    files["hopper/setup.py"] = HOPPER_SETUP.encode()
    files["hopper/instantiations/flash_fwd_hdim64_sm90.cu"] = b"// hdim 64\n"
    files["hopper/instantiations/flash_fwd_hdim64_sm80.cu"] = b"// not globbed\n"
    return files


def builds(files: dict[str, bytes], name: str) -> BuildsGraph:
    return BuildsGraph(Snapshot.from_files(files), FactCache(builtin_map(name)))


# --- the builds domain ---------------------------------------------------------------------

def test_each_build_entry_is_a_typed_record() -> None:
    graph = builds(fa_with_builds(), "flash-attention")
    entries = {e.name: e for e in graph.entries()}
    assert sorted(entries) == ["flash_attn_2_cuda", "flashattn_hopper_cuda"]
    fa2, fa3 = entries["flash_attn_2_cuda"], entries["flashattn_hopper_cuda"]
    assert isinstance(fa2, ExtensionModule) and fa2.build == BuildFile.SETUP_PY
    assert fa2.where == "setup.py:13" and fa2.archs == {"sm_80", "sm_90"}
    assert fa3.sources == {"hopper/flash_api.cpp",
                           "hopper/instantiations/flash_fwd_hdim64_sm90.cu"}
    assert fa3.patterns == ("hopper/instantiations/*_sm90.cu",)
    assert fa3.archs == {"sm_90a"} and graph.readable


def test_a_file_belongs_to_the_module_its_build_compiles() -> None:
    graph = builds(fa_with_builds(), "flash-attention")
    assert graph.modules_of("hopper/flash_api.cpp") == {"flashattn_hopper_cuda"}
    assert graph.modules_of("csrc/flash_attn/flash_api.cpp") == {"flash_attn_2_cuda"}
    assert graph.modules_of("hopper/instantiations/flash_fwd_hdim64_sm80.cu") == frozenset()
    assert graph.sources_of("flash_attn_2_cuda") == {"csrc/flash_attn/flash_api.cpp"}


def test_a_literal_pybind11_module_names_its_module_itself() -> None:
    files = fa_with_builds()
    files["hopper/flash_api.cpp"] = (files["hopper/flash_api.cpp"].decode() +
                                     "\nPYBIND11_MODULE(flash_attn_3_cuda, m) {}\n").encode()
    assert builds(files, "flash-attention").modules_of("hopper/flash_api.cpp") == {
        "flash_attn_3_cuda"}


def test_the_jit_map_places_its_sources_by_the_maps_source_roots() -> None:
    """`f'{AITER_GRADLIB_DIR}/csrc/x.cu'` is gradlib/csrc/x.cu (aiter's map names the
    folder); a placeholder the map does not name is unresolved, never guessed."""
    files = aiter_with_gradlib()
    graph = builds(files, "aiter")
    assert graph.modules_of(GRADLIB_CU) == {"module_hipbsolgemm"}
    assert graph.modules_of("csrc/pybind/activation_pybind.cu") == {"module_activation"}
    files[JIT] = files[JIT].replace(b"AITER_GRADLIB_DIR", b"SOMEWHERE_DIR")
    (entry,) = [x for x in builds(files, "aiter").entries() if x.name == "module_hipbsolgemm"]
    assert entry.sources == frozenset()
    assert [u.what for u in entry.unresolved] == [BuildGap.SOURCES]


def test_a_copy_the_build_makes_and_a_submodule_source() -> None:
    """flash-attention's ROCm build compiles `x.cu`, a copy of `x.cpp` it makes; a source
    inside a submodule is external (its files are not in this repository)."""
    files = fa_with_builds()
    files["setup.py"] = FA_SETUP.replace(
        '"csrc/flash_attn/flash_api.cpp"',
        '"csrc/flash_attn_ck/mha_fwd.cu", "csrc/cutlass/tools/x.cu"').encode()
    snapshot = Snapshot.from_files(files)
    entries = BuildsGraph(snapshot, FactCache(builtin_map("flash-attention"))).entries()
    fa2 = next(x for x in entries if x.name == "flash_attn_2_cuda")
    assert fa2.sources == {"csrc/flash_attn_ck/mha_fwd.cpp"}
    assert fa2.missing == ("csrc/cutlass/tools/x.cu",)


def test_a_build_file_that_cannot_be_read_makes_the_domain_unreadable() -> None:
    files = fa_with_builds()
    files["hopper/setup.py"] = b"setup(ext_modules=[\n"
    graph = builds(files, "flash-attention")
    assert not graph.readable
    assert [f.path for f in graph.failures()] == ["hopper/setup.py"]
    assert graph.may_compile("hopper/new_kernel.cu") and not graph.may_compile("hopper/x.md")


def test_a_map_without_builds_reads_none() -> None:
    assert builds(tree_files("rocke_tree"), "hipdnn").entries() == []


# --- coverage: what the builds compile is on the op surface -------------------------------

def test_a_compiled_file_outside_the_map_is_on_the_op_surface() -> None:
    """aiter's gradlib/csrc/*.cu lie outside every map pattern; optCompilerConfig.json
    compiles them into module_hipbsolgemm, so their edit is an op-cpp change."""
    doc = report(scenario(aiter_with_gradlib(),
                          e.replace(GRADLIB_CU, "return mat1.matmul(mat2);",
                                    "return mat2.matmul(mat1);")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"
    rows = rows_naming(doc, GRADLIB_CU)
    assert rows and all(r["status"] == "changed" for r in rows), rows
    assert doc["views"][0]["surfaces"] == [{"kind": "op-cpp", "lane": "IMPACT",
                                            "path": GRADLIB_CU}]


def test_a_comment_edit_of_a_compiled_file_is_inert() -> None:
    doc = report(scenario(aiter_with_gradlib(),
                          e.replace(GRADLIB_CU, "// the library call", "// the BLAS call")))
    assert doc["verdict"]["kind"] == "NONE"


def test_a_file_no_build_compiles_stays_outside() -> None:
    files = aiter_with_gradlib()
    files["gradlib/csrc/unused.cu"] = b"int unused() { return 0; }\n"
    doc = report(scenario(files, e.replace("gradlib/csrc/unused.cu", "0", "1")))
    assert doc["verdict"]["kind"] == "N/A"


def test_a_file_the_head_stops_compiling_is_still_judged() -> None:
    """The base's builds count too: dropping the module from the map does not take its
    file off the surface in the same change."""
    doc = report(scenario(aiter_with_gradlib(),
                          e.replace(GRADLIB_CU, "mat1.matmul(mat2)", "mat2.matmul(mat1)"),
                          e.replace(JIT, "hipbsolgemm.cu", "other.cu")))
    assert rows_naming(doc, GRADLIB_CU), doc["rows"]


def test_an_unreadable_build_file_covers_what_it_may_compile() -> None:
    """Fail closed: with hopper/setup.py unreadable at the head, a new .cu beside it may
    be compiled: it is not N/A."""
    files = fa_with_builds()
    files["tools/setup.py"] = b"x = 1\n"
    files["tools/k.cu"] = b"int k() { return 0; }\n"

    def broken(tree: dict[str, bytes]) -> None:
        tree["tools/setup.py"] = b"ext_modules = [\n"
    doc = report(scenario(files, broken, e.replace("tools/k.cu", "0", "1")))
    assert rows_naming(doc, "tools/k.cu"), doc["rows"]
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


# --- build-file edits ----------------------------------------------------------------------

def extension_rows(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["contract"] == "extension-build"]


def test_an_arch_list_edit_needs_a_device_with_the_archs_the_build_names() -> None:
    doc = report(scenario(fa_with_builds(), e.replace("setup.py", '"80;90"', '"80;90;100"')))
    (row,) = extension_rows(doc)
    assert row["status"] == "changed" and row["lane"] == "IMPACT"
    assert row["archs"] == ["sm_100", "sm_80", "sm_90"]
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"
    assert doc["verdict"]["archs"] == ["sm_100", "sm_80", "sm_90"]
    assert doc["verdict"]["other_lanes"] == ["DEPS"]  # its lane row stays


def test_a_version_bump_stays_in_its_lane() -> None:
    doc = report(scenario(fa_with_builds(), e.replace("setup.py", '"2.6.0"', '"2.7.0"'),
                          e.replace("hopper/setup.py", "from setuptools",
                                    "# FA3\nfrom setuptools")))
    assert extension_rows(doc) == []
    assert doc["verdict"]["kind"] == "N/A" and doc["verdict"]["other_lanes"] == ["DEPS"]


@pytest.mark.parametrize(("path", "old", "new", "parts"), [
    ("hopper/setup.py", '["flash_api.cpp"]', '["flash_api.cpp", "combine.cu"]', ["sources"]),
    ("hopper/setup.py", "compute_90a,code=sm_90a", "compute_100a,code=sm_100a", ["archs", "flags"]),
    ("setup.py", '["-O3"]', '["-O2"]', ["flags"]),
    ("setup.py", 'name="flash_attn_2_cuda"', 'name="flash_attn_2_gpu"', ["name"]),
])
def test_what_moved_in_a_declaration(path: str, old: str, new: str, parts: list[str]) -> None:
    (row,) = extension_rows(report(scenario(fa_with_builds(), e.replace(path, old, new))))
    assert row["details"]["parts"] == parts
    assert row["evidence"], row


def test_a_jit_map_edit_of_the_sources_needs_a_device_on_every_arch() -> None:
    """The JIT build names no arch (GPU_ARCHS or the machine decides): every arch."""
    doc = report(scenario(aiter_with_gradlib(), e.replace(
        JIT, '"csrc/pybind/norm_pybind.cu"', '"csrc/pybind/norm_pybind.cu", "csrc/kernels/n.cu"')))
    (row,) = extension_rows(doc)
    assert row["archs"] == ["all-archs"] and row["details"]["modules"] == ["module_norm"]


def test_a_build_file_that_stops_parsing_is_changed() -> None:
    def broken(tree: dict[str, bytes]) -> None:
        tree["hopper/setup.py"] += b"\nsetup(\n"
    (row,) = extension_rows(report(scenario(fa_with_builds(), broken)))
    assert (row["status"], row["reason"]) == ("changed", "build-file-not-read")


def test_a_cmake_module_edit_needs_a_device() -> None:
    files = fa_with_builds()
    files["ext/CMakeLists.txt"] = (b"set(CMAKE_CUDA_ARCHITECTURES 90a)\n"
                                   b"pybind11_add_module(_ext api.cpp)\n")
    files["ext/api.cpp"] = b"int f() { return 0; }\n"
    doc = report(scenario(files, e.replace("ext/CMakeLists.txt", "api.cpp)", "api.cpp k.cu)")))
    (row,) = extension_rows(doc)
    assert row["archs"] == ["sm_90a"] and row["details"]["parts"] == ["sources"]


# --- archs by path pattern ------------------------------------------------------------------

@pytest.mark.parametrize(("path", "archs"), [
    ("hopper/flash_fwd_kernel_sm90.h", ("sm_90a",)),
    ("hopper/instantiations/flash_fwd_hdim64_sm80.cu", ("sm_80",)),
    ("hopper/flash_api.cpp", ("sm_100a", "sm_80", "sm_90a")),
    ("flash_attn/cute/flash_fwd_sm100.py", ("sm_100",)),
    ("csrc/flash_attn/flash_api.cpp", None),
])
def test_the_flash_attention_map_names_archs_by_path(path: str, archs: tuple | None) -> None:
    found = builtin_map("flash-attention").archs_named(path)
    assert (tuple(sorted(found)) if found else None) == archs


def test_a_hopper_row_names_the_archs_fa3_compiles() -> None:
    doc = report(scenario(fa_with_builds(), e.append(
        "hopper/flash_api.cpp", "\nint helper() { return 1; }\n")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"
    assert "sm_90a" in doc["verdict"]["archs"] and "all-archs" not in doc["verdict"]["archs"]


MAP = """schema_version = 1
name = "mine"
markers = ["src/x.cpp"]
[[surface]]
kind = "op-cpp"
lane = "IMPACT"
language = "cpp"
patterns = ["src/**"]
"""


@pytest.mark.parametrize(("extra", "says"), [
    ('[[archs]]\npatterns = ["src/**"]\n', "archs"),
    ('[[archs]]\npatterns = ["src/[z"]\narchs = ["sm_90a"]\n', "archs/0: bad pattern"),
    ('[[archs]]\npatterns = ["src/**"]\narchs = []\n', "archs/0/archs"),
    ('[builds]\ncompiled_kind = "op-python"\n', "builds/compiled_kind: op-python"),
    ('[builds]\ncompiled = "op-cpp"\n', "builds"),
])
def test_a_bad_archs_or_builds_field_is_a_clear_error(extra: str, says: str) -> None:
    with pytest.raises(BadSurfaceMap) as refused:
        parse_surface_map((MAP + extra).encode(), "file:mine.toml")
    assert says in str(refused.value), str(refused.value)


def test_a_map_names_archs_by_the_first_rule_that_matches() -> None:
    surface = parse_surface_map((MAP + '[[archs]]\npatterns = ["src/sm90/**"]\n'
                                 'archs = ["sm_90a"]\n[[archs]]\npatterns = ["src/**"]\n'
                                 'archs = ["sm_80", "sm_90a"]\n').encode(), "file:mine.toml")
    assert surface.archs_named("src/sm90/k.cu") == ("sm_90a",)
    assert surface.archs_named("src/k.cu") == ("sm_80", "sm_90a")
    assert surface.archs_named("docs/k.md") is None


# --- the shortcuts read the same -------------------------------------------------------------

@pytest.mark.parametrize("edit", [
    e.replace(GRADLIB_CU, "return mat1.matmul(mat2);", "return mat2.matmul(mat1);"),
    e.append("docs/notes.md", "notes\n"),
    e.append("tools/other.cu", "int other() { return 0; }\n"),
], ids=["compiled-outside-the-map", "outside-every-surface", "compilable-but-not-compiled"])
def test_the_builds_read_the_same_with_and_without_the_shortcuts(edit) -> None:
    """Without IMPACT_FULL_PATH the builds are read only when a changed path is on a
    surface or could be compiled; the report is byte-identical either way."""
    found = []
    for full in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            if full:
                patch.setenv(shortcuts.ENV, "1")
            else:
                patch.delenv(shortcuts.ENV, raising=False)
            found.append(run(scenario(aiter_with_gradlib(), edit)).render("json"))
    assert found[0] == found[1]


def test_a_flag_that_changes_no_code_stays_in_its_lane() -> None:
    """flash-attention's `--threads` value and its fatbin compression change no kernel."""
    doc = report(scenario(fa_with_builds(), e.replace(
        "setup.py", '["-O3"]', '["-O3", "--threads", "4", "-Xfatbin", "-compress-all"]')))
    assert extension_rows(doc) == [] and doc["verdict"]["kind"] == "N/A"


def test_an_edit_of_a_build_hook_every_module_is_compiled_through_needs_a_device() -> None:
    """FA3's hopper/setup.py patches torch's ninja writer in: changing the compiler its
    rules call changes how every kernel is built, though no flag list moved."""
    hooked = HOPPER_SETUP + ('\nimport torch.utils.cpp_extension\n\n'
                             'def _write_ninja_file(path, rules):\n'
                             '    return [r.replace("$nvcc", "$nvcc") for r in rules]\n\n'
                             'torch.utils.cpp_extension._write_ninja_file = _write_ninja_file\n')
    files = fa_with_builds()
    files["hopper/setup.py"] = hooked.encode()
    doc = report(scenario(files, e.replace("hopper/setup.py", 'replace("$nvcc", "$nvcc")',
                                           'replace("$nvcc", "$nvcc_from_env")')))
    (row,) = extension_rows(doc)
    assert row["details"]["parts"] == ["flags"] and row["archs"] == ["sm_90a"]
    assert [h["step"] for h in row["evidence"]] == ["module-hook-changed"]


def test_a_binding_the_builds_compile_is_a_counterpart_of_the_stub_a_change_edits() -> None:
    """Only the stub changes, yet the gradlib binding it reaches (outside the map's
    patterns, compiled by the JIT map) is compared with it: the extra parameter of the
    stub is not in the binding's argument list, so the change breaks."""
    files = aiter_with_gradlib()
    files["aiter/ops/gradlib.py"] = (
        b'"""gradlib stubs (module_hipbsolgemm)."""\n\nfrom torch import Tensor\n\n'
        b'from aiter.jit.core import compile_ops\n\n\n'
        b'@compile_ops("module_hipbsolgemm")\n'
        b'def hipb_mm(mat1: Tensor, mat2: Tensor) -> Tensor: ...\n')
    doc = report(scenario(files, e.replace("aiter/ops/gradlib.py", "mat2: Tensor)",
                                           "mat2: Tensor, bias: Tensor)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert any(s["file"] == GRADLIB_CU for r in doc["rows"] if r["status"] == "mismatch"
               for s in r["sides"]), doc["rows"]


# --- a removed GPU translation unit ---------------------------------------------------------

UNIT = "csrc/flash_attn/src/flash_fwd_hdim224_fp16_sm80.cu"
INSTANTIATION = b"""#include "flash_fwd_launch_template.h"

template<>
void run_mha_fwd_<cutlass::half_t, 224, false>(Flash_fwd_params &params, cudaStream_t stream) {
    run_mha_fwd_hdim224<cutlass::half_t, false>(params, stream);
}
"""


def fa_with_unit(**replaced: str) -> dict[str, bytes]:
    """The flash-attention fixture with its builds and one instantiation file no build
    lists; `replaced` rewrites setup.py (old text -> new text, by keyword index)."""
    files = fa_with_builds()
    files[UNIT] = INSTANTIATION
    text = FA_SETUP
    for old, new in replaced.values():
        text = text.replace(old, new)
    files["setup.py"] = text.encode()
    return files


def removed(tree: dict[str, bytes]) -> None:
    del tree[UNIT]


def unit_rows(doc: dict) -> list[dict]:
    return rows_naming(doc, UNIT)


def test_a_removed_unit_no_build_compiles_and_no_file_names_is_inert() -> None:
    """flash-attention 36dddb89: the hdim224 instantiations setup.py no longer listed."""
    doc = report(scenario(fa_with_unit(), removed))
    (row,) = unit_rows(doc)
    assert (row["status"], row["reason"]) == ("inert", "unbuilt-unit-removed")
    assert doc["verdict"]["kind"] == "NONE"


@pytest.mark.parametrize("setup", [
    # the build lists it
    {"listed": ('["csrc/flash_attn/flash_api.cpp"]',
                f'["csrc/flash_attn/flash_api.cpp", "{UNIT}"]')},
    # a glob of the build matches it
    {"glob": ('["csrc/flash_attn/flash_api.cpp"]',
              '["csrc/flash_attn/flash_api.cpp"] + glob.glob("csrc/flash_attn/src/*.cu")'),
     "import": ("import os\n", "import glob\nimport os\n")},
    # the build lists a folder that holds it
    {"folder": ('["csrc/flash_attn/flash_api.cpp"]',
                '["csrc/flash_attn/flash_api.cpp", "csrc/flash_attn/src"]')},
    # its sources come from a function the reader does not follow
    {"unresolved": ('["csrc/flash_attn/flash_api.cpp"]', "kernel_sources()")},
])
def test_a_removed_unit_a_build_may_compile_is_changed(setup: dict) -> None:
    doc = report(scenario(fa_with_unit(**setup), removed))
    (row,) = unit_rows(doc)
    assert row["status"] == "changed", row
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


@pytest.mark.parametrize(("path", "text"), [
    ("csrc/flash_attn/src/flash_fwd_launch_all.cu",
     b'#include "flash_fwd_hdim224_fp16_sm80.cu"\n'),
    ("flash_attn/jit.py", b'load("x", sources=["flash_fwd_hdim224_fp16_sm80.cu"])\n'),
    ("docs/kernels.txt", b"flash_fwd_hdim224_fp16_sm80 is kept for hdim 224\n"),
])
def test_a_removed_unit_another_file_names_is_changed(path: str, text: bytes) -> None:
    """Any file of the base that names the unit may include or compile it: not proven."""
    files = fa_with_unit()
    files[path] = text
    (row,) = unit_rows(report(scenario(files, removed)))
    assert (row["status"], row["reason"]) == ("changed", "surface-file-removed")


def test_a_removed_unit_with_an_unreadable_build_file_is_changed() -> None:
    files = fa_with_unit()
    files["hopper/setup.py"] = b"setup(ext_modules=[\n"
    (row,) = unit_rows(report(scenario(files, removed)))
    assert (row["status"], row["reason"]) == ("changed", "surface-file-removed")


def test_a_removed_unit_under_a_jit_build_is_changed() -> None:
    """aiter's JIT compiles what it finds when it runs (folders, generators): a unit its
    sources map does not list is not proven unbuilt."""
    files = aiter_with_gradlib()
    unit = "csrc/kernels/unlisted_kernel.cu"
    files[unit] = b"__global__ void k() {}\n"

    def gone(tree: dict[str, bytes]) -> None:
        del tree[unit]
    (row,) = rows_naming(report(scenario(files, gone)), unit)
    assert (row["status"], row["reason"]) == ("changed", "surface-file-removed")


def test_a_removed_unit_with_no_build_read_is_changed() -> None:
    files = fa_with_unit()
    del files["setup.py"], files["hopper/setup.py"]
    (row,) = unit_rows(report(scenario(files, removed)))
    assert row["status"] == "changed"


def test_a_removed_host_file_no_build_compiles_stays_changed() -> None:
    """Only GPU translation units (.cu, .cuh, .hip) are judged so."""
    files = fa_with_unit()
    host = "csrc/flash_attn/src/unused_host.cpp"
    files[host] = b"int unused() { return 0; }\n"

    def gone(tree: dict[str, bytes]) -> None:
        del tree[host]
    (row,) = rows_naming(report(scenario(files, gone)), host)
    assert row["status"] == "changed"
