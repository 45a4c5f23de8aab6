"""The build readers (impact/builds): the extension modules a setup.py or a CMakeLists.txt
declares, in the spellings the real builds use, and what they leave unresolved.

Each setup.py below is a small script in one of the shapes flash-attention's setup.py
(2024 and 2026), hopper/setup.py and aiter's gradlib/setup.py take; none is copied."""

from __future__ import annotations

from typing import Any

import pytest

from impact.builds.archflags import changes_code, cmake_arch, flag_archs, torch_arch
from impact.builds.cmake import cmake_extension_facts
from impact.builds.setup_py import extract_setup_facts
from impact.cpp import extract_cmake_facts
from impact.facts import CONTENT, PARSE_FAILURE
from impact.kinds import FactKind

HEAD = "import os\nimport glob\nfrom pathlib import Path\n" \
       "from torch.utils.cpp_extension import CUDAExtension, CppExtension\n" \
       "this_dir = os.path.dirname(os.path.abspath(__file__))\n"


def modules(text: str, path: str = "setup.py") -> dict[str, dict[str, Any]]:
    """Module name -> its fact's data (the last declaration of a name wins)."""
    facts = extract_setup_facts(path, (HEAD + text).encode())
    assert not [f for f in facts if f.kind == PARSE_FAILURE], facts
    return {f.name: dict(f.data) for f in facts if f.kind == FactKind.EXTENSION_MODULE}


def one(text: str, path: str = "setup.py") -> dict[str, Any]:
    found = modules(text, path)
    assert len(found) == 1, found
    return next(iter(found.values()))


def gaps(data: dict[str, Any], what: str) -> list[str]:
    return [g["text"] for g in data["gaps"] if g["what"] == what]


# --- names and sources ---------------------------------------------------------------------

SOURCES = [
    ("a literal list, read from the script's folder",
     'CUDAExtension(name="m", sources=["api.cpp", "k/a.cu"])', "hopper/setup.py",
     ["hopper/api.cpp", "hopper/k/a.cu"], []),
    ("os.path.join with the script's folder",
     'CUDAExtension("m", [os.path.join(this_dir, "csrc", "a.cu")])', "setup.py",
     ["csrc/a.cu"], []),
    ("pathlib's / and a parent folder",
     'CUDAExtension("m", [str(Path(this_dir).parent / "csrc" / "a.cu")])', "sub/setup.py",
     ["csrc/a.cu"], []),
    ("a list grown by +, append, extend and +=",
     's = ["a.cu"] + ["b.cu"]\ns.append("c.cu")\ns.extend(["d.cu"])\ns += ["e.cu"]\n'
     'CUDAExtension("m", s)', "setup.py", ["a.cu", "b.cu", "c.cu", "d.cu", "e.cu"], []),
    ("both arms of a condition the script cannot settle",
     'SKIP = os.getenv("SKIP_B", "FALSE") == "TRUE"\ns = ["a.cu"]\nif not SKIP:\n'
     '    s += ["b.cu"]\nelse:\n    s = ["c.cu"]\nCUDAExtension("m", s)', "setup.py",
     ["a.cu", "b.cu", "c.cu"], []),
    ("a comprehension over literal lists, an f-string, a filter",
     'D = ["bf16"] + (["fp16"] if os.getenv("NO_FP16") != "1" else [])\n'
     'import itertools\n'
     's = [f"inst/k_{h}_{d}{p}.cu" for h, d, p in itertools.product([64, 128], D, ["", "_p"])'
     ' if not (p and h == 64)]\nCUDAExtension("m", s)', "setup.py",
     ["inst/k_128_bf16.cu", "inst/k_128_bf16_p.cu", "inst/k_128_fp16.cu",
      "inst/k_128_fp16_p.cu", "inst/k_64_bf16.cu", "inst/k_64_fp16.cu"], []),
    ("a list a function of the script returns",
     'def sources():\n    out = ["a.cu"]\n    out.append("b.cu")\n    return out\n'
     'CUDAExtension("m", sources())', "setup.py", ["a.cu", "b.cu"], []),
    ("glob patterns are kept for the tree (recursive only where asked)",
     'CUDAExtension("m", glob.glob("csrc/*.cu") + glob.glob("k/**/*.cu", recursive=True)'
     ' + glob.glob("x/**/*.cu"))', "setup.py", [], ["csrc/*.cu", "k/**/*.cu", "x/*/*.cu"]),
]


@pytest.mark.parametrize(("case", "code", "path", "literal", "patterns"), SOURCES,
                         ids=[c[0] for c in SOURCES])
def test_sources_in_every_spelling(case: str, code: str, path: str, literal: list[str],
                                   patterns: list[str]) -> None:
    data = one(code, path)
    assert (data["sources"], data["patterns"]) == (literal, patterns)
    assert not gaps(data, "sources"), data["gaps"]


def test_a_name_from_a_variable_or_an_f_string() -> None:
    found = modules('PACKAGE = "flash_attn_3"\n'
                    'CUDAExtension(name=f"{PACKAGE}._C", sources=["a.cu"])\n'
                    'N = "fused"\nCppExtension(N, ["b.cpp"])')
    assert sorted(found) == ["flash_attn_3._C", "fused"]


def test_a_source_outside_the_repository_is_external_not_a_repository_path() -> None:
    data = one('CUDAExtension("m", ["a.cu", "/opt/rocm/lib/x.cpp", "../../y.cu"])',
               "sub/setup.py")
    assert data["sources"] == ["sub/a.cu"]
    assert data["external"] == ["/opt/rocm/lib/x.cpp", "/y.cu"]


UNRESOLVED = [
    ("sources from a call impact does not follow", 'CUDAExtension("m", find_sources())',
     "sources", "find_sources()"),
    ("a source list read from a file", 'CUDAExtension("m", open("list.txt").read().split())',
     "sources", "open('list.txt')"),
    ("a name computed at build time", 'CUDAExtension(name=compute_name(), sources=["a.cu"])',
     "name", "compute_name()"),
]


@pytest.mark.parametrize(("case", "code", "what", "text"), UNRESOLVED,
                         ids=[c[0] for c in UNRESOLVED])
def test_what_cannot_be_resolved_is_recorded_never_dropped(case: str, code: str, what: str,
                                                            text: str) -> None:
    """Fail closed: the unresolved piece is named (what, line, text); a module whose name
    is unknown is still declared (as "")."""
    data = one(code)
    assert any(text in t for t in gaps(data, what)), data["gaps"]
    assert all(g["line"] > 0 for g in data["gaps"])


# --- archs -------------------------------------------------------------------------------

ARCHS = [
    ("-gencode pairs appended to a list",
     'cc = []\ncc.append("-gencode")\ncc.append("arch=compute_90a,code=sm_90a")\n'
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": ["-O3"] + cc})',
     ["sm_90a"], []),
    ("-gencode= with a code list; a PTX-only target is a flag, not an arch",
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": '
     '["-gencode=arch=compute_80,code=[sm_80,compute_80]", '
     '"-gencode=arch=compute_90,code=compute_90"]})', ["sm_80"], []),
    ("--offload-arch from a comprehension over a literal list",
     'gpus = ["gfx90a", "gfx942"]\nextra = ["--offload-arch=" + g for g in gpus]\n'
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": ["-O3"] + extra})',
     ["gfx90a", "gfx942"], []),
    ("an arch list fed to gencode f-strings (one value per placeholder name)",
     'cc = []\nfor a in ["80", "90"]:\n'
     '    cc += ["-gencode", f"arch=compute_{a},code=sm_{a}"]\n'
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": cc})', ["sm_80", "sm_90"], []),
    ("an environment variable's default, split, through a function that grows the list",
     'def archs():\n    return os.getenv("CUDA_ARCHS", "80;100").split(";")\n'
     'def add(flags, wanted):\n    if "80" in wanted:\n'
     '        flags += ["-gencode", "arch=compute_80,code=sm_80"]\n'
     '    if "100" in wanted:\n        flags += ["-gencode", "arch=compute_100a,code=sm_100a"]\n'
     'cc = []\nadd(cc, set(archs()))\n'
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": cc})', ["sm_100a", "sm_80"], []),
    ("a machine-dependent or unknown target is unresolved",
     'arch = os.getenv("GPU_ARCHS", "native")\nfound = detect()\n'
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": '
     '[f"--offload-arch={arch}", f"--offload-arch={found}"]})', [], ["native", "offload-arch"]),
    ("a build hook the script installs but never calls names archs for every module",
     'def _write_ninja(flags):\n'
     '    return [f if f != "x" else "arch=compute_80,code=sm_80" for f in flags]\n'
     'import torch.utils.cpp_extension\n'
     'torch.utils.cpp_extension._write_ninja_file = _write_ninja\n'
     'CUDAExtension("m", ["a.cu"], extra_compile_args={"nvcc": '
     '["-gencode", "arch=compute_90a,code=sm_90a"]})', ["sm_80", "sm_90a"], []),
    ("TORCH_CUDA_ARCH_LIST set for the build",
     'os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0a+PTX"\nCUDAExtension("m", ["a.cu"])',
     ["sm_80", "sm_90a"], []),
]


@pytest.mark.parametrize(("case", "code", "archs", "unresolved"), ARCHS,
                         ids=[c[0] for c in ARCHS])
def test_archs_in_every_spelling(case: str, code: str, archs: list[str],
                                 unresolved: list[str]) -> None:
    data = one(code)
    assert data["archs"] == archs
    for text in unresolved:
        assert any(text in t for t in gaps(data, "archs")), data["gaps"]
    if not unresolved:
        assert not gaps(data, "archs"), data["gaps"]


def test_each_build_branch_keeps_its_own_archs() -> None:
    """flash-attention's layout: a CUDA branch and a ROCm branch each build their own
    flag list for a module of the same name; neither takes the other's archs."""
    text = ('IS_ROCM = torch_is_rocm()\nif not IS_ROCM:\n    cc = ["-gencode", '
            '"arch=compute_80,code=sm_80"]\n    CUDAExtension("flash_attn_2_cuda", ["a.cu"], '
            'extra_compile_args={"nvcc": cc})\nelse:\n    cc = ["--offload-arch=gfx942"]\n'
            '    CUDAExtension("flash_attn_2_cuda", ["b.cpp"], extra_compile_args={"nvcc": cc})\n')
    facts = [f for f in extract_setup_facts("setup.py", (HEAD + text).encode())
             if f.kind == FactKind.EXTENSION_MODULE]
    assert [(f.data["sources"], f.data["archs"]) for f in facts] == [
        (["a.cu"], ["sm_80"]), (["b.cpp"], ["gfx942"])]


def test_define_macros_are_compile_flags() -> None:
    data = one('CUDAExtension("m", ["a.cu"], define_macros=[("NDEBUG", None), ("V", "2")])')
    assert data["compile_args"] == ["-DNDEBUG", "-DV=2"]


def test_a_script_python_will_not_compile_is_one_parse_failure() -> None:
    facts = extract_setup_facts("setup.py", b"CUDAExtension(name='m', sources=[\n")
    assert [f.kind for f in facts] == [PARSE_FAILURE]


def test_the_content_digest_is_blind_to_comments_and_layout() -> None:
    def digest(text: str) -> str:
        (found,) = [f.data["digest"] for f in extract_setup_facts("setup.py", text.encode())
                    if f.kind == CONTENT]
        return found

    base = 'VERSION = "1.0"\nsetup(name="x")\n'
    assert digest(base) == digest('# a comment\nVERSION = "1.0"  # pinned\nsetup(\n  name="x")\n')
    assert digest(base) != digest(base.replace("1.0", "1.1"))


def test_a_hostile_script_is_bounded() -> None:
    """A product too large to follow is a gap, not a hang."""
    text = ('import itertools\nR = list(range(60))\n'
            's = [f"{a}{b}{c}.cu" for a, b, c in itertools.product(R, R, R)]\n'
            'CUDAExtension("m", s)')
    data = one(text)
    assert gaps(data, "sources")


# --- the arch flag spellings ---------------------------------------------------------------

@pytest.mark.parametrize(("flag", "archs"), [
    ("-gencode arch=compute_90a,code=sm_90a", {"sm_90a"}),
    ("arch=compute_100f,code=sm_100", {"sm_100"}),
    ("-gencode=arch=compute_80,code=[sm_80,compute_80]", {"sm_80"}),
    ("arch=compute_80,code=compute_80", set()),
    ("-arch=sm_90a", {"sm_90a"}),
    ("--gpu-architecture=sm_80", {"sm_80"}),
    ("--offload-arch=gfx942:xnack+", {"gfx942"}),
    ("--amdgpu-target=gfx90a", {"gfx90a"}),
    ("-O3", set()),
])
def test_flag_archs(flag: str, archs: set[str]) -> None:
    assert flag_archs(flag)[0] == archs


def test_cmake_and_torch_arch_list_entries() -> None:
    assert [cmake_arch(v) for v in ("90a", "80-real", "80-virtual", "gfx942", "native")] == [
        "sm_90a", "sm_80", None, "gfx942", None]
    assert [torch_arch(v) for v in ("8.0", "9.0a", "8.6+PTX", "gfx90a", "x")] == [
        "sm_80", "sm_90a", "sm_86", "gfx90a", None]


# --- CMake -------------------------------------------------------------------------------

def cmake(text: str, path: str = "ext/CMakeLists.txt") -> dict[str, dict[str, Any]]:
    facts = extract_cmake_facts(path, text.encode())
    return {f.name: dict(f.data) for f in cmake_extension_facts(path, facts)}


def test_cmake_targets_their_sources_and_archs() -> None:
    found = cmake(
        'set(CMAKE_CUDA_ARCHITECTURES "80;90a")\n'
        'set(SRCS b.cu c.cu)\nlist(APPEND SRCS d.cu)\n'
        'file(GLOB KERNELS "kernels/*.cu")\nfile(GLOB_RECURSE DEEP deep/*.cu)\n'
        'pybind11_add_module(_ops MODULE api.cpp ${SRCS} ${KERNELS} ${DEEP})\n'
        'target_sources(_ops PRIVATE extra.cu)\n'
        'add_library(helpers STATIC h.cpp)\n'
        'add_library(_plain SHARED p.cpp)\n'
        'set_target_properties(_plain PROPERTIES OUTPUT_NAME plain CUDA_ARCHITECTURES 100a)\n'
        'Python_add_library(_py MODULE WITH_SOABI py.cpp)\n'
        'target_compile_options(_py PRIVATE --offload-arch=gfx942)\n')
    assert sorted(found) == ["_ops", "_py", "plain"]
    ops = found["_ops"]
    assert ops["sources"] == ["ext/api.cpp", "ext/b.cu", "ext/c.cu", "ext/d.cu", "ext/extra.cu"]
    assert ops["patterns"] == ["ext/deep/**/*.cu", "ext/kernels/*.cu"]
    assert ops["archs"] == ["sm_80", "sm_90a"]
    assert found["plain"]["archs"] == ["sm_100a"]
    # the file's CUDA archs, and the HIP target its own options name
    assert found["_py"]["archs"] == ["gfx942", "sm_80", "sm_90a"]


def test_cmake_unknown_variables_are_unresolved_and_function_bodies_are_not_run() -> None:
    found = cmake('if(WITH_X)\n  set(S a.cu)\nelse()\n  set(S b.cu)\nendif()\n'
                  'function(helper)\n  pybind11_add_module(never x.cpp)\nendfunction()\n'
                  'pybind11_add_module(m ${S} ${FROM_PARENT}/y.cu)\n')
    assert sorted(found) == ["m"]
    assert found["m"]["sources"] == ["ext/a.cu", "ext/b.cu"]
    assert [g["text"] for g in found["m"]["gaps"] if g["what"] == "sources"] == [
        "${FROM_PARENT}/y.cu"]


@pytest.mark.parametrize(("flag", "changes"), [
    ("-O3", True), ("-DFLASHATTENTION_DISABLE_BACKWARD", True), ("--use_fast_math", True),
    ("-mllvm", True), ("--ptxas-options=--verbose,--register-usage-level=10", True),
    ("--threads", False), ("4", False), ("--split-compile=4", False), ("-lineinfo", False),
    ("-Wno-deprecated", False), ("--resource-usage", False), ("-Xfatbin", False),
    ("-compress-mode=size", False), ("--ptxas-options=-v", False),
])
def test_which_flags_change_the_code_a_module_ships(flag: str, changes: bool) -> None:
    assert changes_code(flag) is changes


def test_an_extension_class_imported_under_another_name() -> None:
    facts = extract_setup_facts("setup.py", (
        b"from torch.utils.cpp_extension import CUDAExtension as Ext\n"
        b"Ext(name='m', sources=['a.cu'])\n"))
    assert [f.name for f in facts if f.kind == FactKind.EXTENSION_MODULE] == ["m"]


def test_a_script_that_names_no_extension_class_is_not_evaluated() -> None:
    """aiter's own setup.py builds no extension module (its JIT builds them): only its
    content is read (its statements are read apart, on demand: `script_steps`);
    `BuildExtension` is no extension module."""
    facts = extract_setup_facts("setup.py", b"from torch.utils.cpp_extension import "
                                            b"BuildExtension\nsetup(cmdclass={'build_ext': "
                                            b"BuildExtension})\n")
    assert [f.kind for f in facts] == [CONTENT]
