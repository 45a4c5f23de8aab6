"""CUDA and HIP sources are read with tree-sitter-cuda: `.cu`, `.cuh`, `.hip` and headers
whose text is CUDA-flavoured state the same binding facts as their C++ spelling, with no
parse failure; an op file the change did not touch is a counterpart, never `changed`; a
file even the CUDA grammar cannot read where bindings are spelled stays fail-closed
(tests/test_cpp_unsure.py covers a broken declaration elsewhere)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from harness import charged_rows, report, scenario
from memory import tree_with

from impact import factstore, reportstore
from impact.bindings import extract_binding_cpp_facts
from impact.cpp import extract_cpp_facts
from impact.cpp.scaffold import CPP, CUDA, grammar_for
from impact.facts import Fact
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.kinds import FactKind

ROOT = Path(__file__).resolve().parent.parent
AITER = tree_files("aiter_tree")

# A CUDA source as flash-attention's and aiter's are written: device helpers, kernels with
# launch bounds and shared memory, `<<<...>>>` launches, and a pybind module with py::args.
CUDA_SOURCE = b'''#include <torch/extension.h>
namespace py = pybind11;

template <typename T>
__device__ __forceinline__ T silu(T x) { return x / (T(1) + expf(-x)); }

__host__ __device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

template <typename T, int kBlock>
__global__ void __launch_bounds__(kBlock) act_kernel(T* __restrict__ out, const T* in, int n) {
  __shared__ float tile[kBlock];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? static_cast<float>(in[i]) : 0.f;
  __syncthreads();
  if (i < n) out[i] = silu(static_cast<T>(tile[threadIdx.x]));
}

void act_and_mul(torch::Tensor& out, const torch::Tensor& input, double scale = 1.0) {
  const int n = static_cast<int>(input.numel());
  dim3 grid(ceil_div(n, 256)), block(256);
  auto stream = at::cuda::getCurrentCUDAStream();
  act_kernel<float, 256><<<grid, block, 0, stream>>>(out.data_ptr<float>(),
                                                      input.data_ptr<float>(), n);
  act_kernel<float, 256><<<ceil_div(n, 256), 256>>>(out.data_ptr<float>(),
                                                     input.data_ptr<float>(), n);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("act_and_mul", &act_and_mul, "silu(x) * y", py::arg("out"), py::arg("input"),
        py::arg("scale") = 1.0);
}
'''


def _cpp_spelling(cuda: bytes) -> bytes:
    """The same source as plain C++ would spell it, on the same lines: CUDA's declaration
    specifiers and `__launch_bounds__(...)` dropped, each `<<<...>>>` launch configuration
    dropped (a plain call is left)."""
    text = re.sub(rb"__launch_bounds__\([^)]*\)\s*", b"", cuda)
    text = re.sub(rb"__(?:global|device|host|forceinline)__\s*", b"", text)
    text = re.sub(rb"__shared__\s*", b"", text)
    return re.sub(rb"<<<[^>]*>>>", b"", text)


def _stated(facts: list[Fact]) -> list[dict]:
    """The facts but the whole-file digests (they hash node types, which the two grammars
    name differently: a file is only ever compared with itself under one grammar)."""
    return [f.to_json() for f in facts if f.kind != FactKind.CONTENT]


def _failures(facts: list[Fact]) -> list[Fact]:
    return [f for f in facts if f.kind == FactKind.PARSE_FAILURE]


# -- facts -----------------------------------------------------------------------------------


def test_a_cuda_source_states_the_binding_facts_of_its_cpp_spelling() -> None:
    cuda = extract_binding_cpp_facts("csrc/act.cu", CUDA_SOURCE)
    cpp = extract_binding_cpp_facts("csrc/act.cpp", _cpp_spelling(CUDA_SOURCE))
    assert not _failures(cuda), _failures(cuda)
    assert not _failures(cpp), _failures(cpp)
    by_kind = {(f.kind, f.name): f for f in cuda}
    binding = by_kind[FactKind.PYBIND_DEF, "act_and_mul"].data
    assert binding["function"] == "act_and_mul"
    assert [(a["name"], a["default"]) for a in binding["args"]] == [
        ("out", None), ("input", None), ("scale", "1.0")]
    kernel = by_kind[FactKind.CPP_FUNCTION, "act_kernel"].data
    assert [p["name"] for p in kernel["params"]] == ["out", "in", "n"]
    assert {FactKind.CPP_FUNCTION} <= {k for k, n in by_kind if n in ("silu", "ceil_div")}
    host = by_kind[FactKind.CPP_FUNCTION, "act_and_mul"].data
    assert [(p["name"], p["default"]) for p in host["params"]] == [
        ("out", None), ("input", None), ("scale", "1.0")]
    # Every fact but the file names and digests is the .cpp spelling's.
    assert _stated(cuda) == [
        {**f, "name": f["name"].replace("act.cpp", "act.cu")} for f in _stated(cpp)]


def test_the_cpp_grammar_leaves_the_cuda_kernels_unread() -> None:
    """Why the CUDA grammar is needed: tree-sitter-cpp rejects the kernels, so their
    declarations are unsure regions, their parameter lists no fact."""
    facts = extract_binding_cpp_facts("csrc/act.cu", CUDA_SOURCE, grammar=CPP)
    content = next(f for f in facts if f.kind == FactKind.CONTENT)
    assert "act_kernel" in {n for r in content.data["unsure"] for n in r["names"]}
    assert "act_kernel" not in {f.name for f in facts if f.kind == FactKind.CPP_FUNCTION}


# A header of device helpers and the host declarations a binding names (aiter's
# csrc/include/*.h, flash-attention's hopper/*.h): a `.h` only its text marks as CUDA.
CUDA_HEADER = b'''#pragma once
#include <torch/extension.h>

template <typename T>
struct Vec { T x, y; };

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  return v;
}

template <typename T>
__host__ __device__ constexpr T div_up(T a, T b) { return (a + b - 1) / b; }

extern __shared__ char smem[];

namespace aiter {
void rms_norm(torch::Tensor& out, torch::Tensor& input, double epsilon, int mode = 0);
}
'''


def test_a_cuda_flavoured_header_is_read_with_the_cuda_grammar() -> None:
    assert grammar_for("csrc/include/norm.h", CUDA_HEADER) is CUDA
    assert grammar_for("csrc/include/plain.h", b"void f(int x);\n") is CPP
    assert grammar_for("csrc/include/launch.hpp", b"void g() { k<<<1, 2>>>(); }\n") is CUDA
    facts = extract_binding_cpp_facts("csrc/include/norm.h", CUDA_HEADER)
    assert not _failures(facts), _failures(facts)
    decl = next(f for f in facts if f.kind == FactKind.CPP_FUNCTION and f.name == "rms_norm")
    assert decl.data["qualified"] == "aiter::rms_norm"
    assert [(p["name"], p["default"]) for p in decl.data["params"]] == [
        ("out", None), ("input", None), ("epsilon", None), ("mode", "0")]
    assert _stated(facts) == _stated(
        extract_binding_cpp_facts("csrc/include/norm.h", _cpp_spelling(CUDA_HEADER),
                                  grammar=CPP))


# A hipified source as ROCm trees write it: HIP's runtime, launch bounds, both launches.
HIP_SOURCE = b'''#include <hip/hip_runtime.h>

__global__ void __launch_bounds__(256) scale_kernel(float* out, const float* in, float s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * s;
}

extern "C" int scale_launch(float* out, const float* in, float s, int n, hipStream_t stream) {
  hipLaunchKernelGGL(scale_kernel, dim3((n + 255) / 256), dim3(256), 0, stream, out, in, s, n);
  scale_kernel<<<dim3((n + 255) / 256), dim3(256), 0, stream>>>(out, in, s, n);
  return static_cast<int>(hipGetLastError());
}
'''


def test_a_hip_source_parses_for_both_extractors() -> None:
    path = "src/engines/kernel_ingestor_engine/descriptors/hip/scale/scale.hip"
    binding = extract_binding_cpp_facts(path, HIP_SOURCE)
    assert not _failures(binding), _failures(binding)
    entry = next(f for f in binding if f.kind == FactKind.CPP_FUNCTION
                 and f.name == "scale_launch")
    assert entry.data["extern_c"] and [p["name"] for p in entry.data["params"]] == [
        "out", "in", "s", "n", "stream"]
    hipdnn = extract_cpp_facts(path, HIP_SOURCE)
    assert not _failures(hipdnn), _failures(hipdnn)
    # Parsed, a comment edit is provably layout: the content digest does not move.
    commented = HIP_SOURCE.replace(b"  return", b"  // the launch's status\n  return")
    assert ([f for f in extract_cpp_facts(path, commented) if f.kind == FactKind.CONTENT]
            == [f for f in hipdnn if f.kind == FactKind.CONTENT])


def test_a_file_the_cuda_grammar_cannot_read_names_the_cuda_syntax_error() -> None:
    """A declaration that does not parse and spells binding syntax hides bindings: the
    whole file is unread."""
    broken = b"struct __align__(16) RankData { py::handle owner; };\n" + CUDA_SOURCE
    failures = _failures(extract_binding_cpp_facts("csrc/kernels/ar.cu", broken))
    assert [f.data["reason"] for f in failures] == ["CUDA syntax error"]
    assert failures[0].line == 1


def test_the_fact_cache_and_report_store_follow_every_grammars_version() -> None:
    """A cached fact parsed by another grammar (or another version of one) is never
    served: each tree-sitter grammar the scaffold imports is in both stores' versions."""
    scaffold = (ROOT / "impact" / "cpp" / "scaffold.py").read_text()
    grammars = {m.replace("_", "-") for m in re.findall(r"^import (tree_sitter_\w+)$",
                                                        scaffold, re.M)}
    assert "tree-sitter-cuda" in grammars
    assert grammars <= set(factstore._DISTRIBUTIONS)
    assert grammars <= set(reportstore._DEPENDENCIES)


# -- reports ---------------------------------------------------------------------------------

KERNELS = "csrc/kernels/activation_kernels.cu"
HEADER = "csrc/include/activation.h"
HIP_LAUNCH = ("    hipLaunchKernelGGL(act_and_mul_kernel<float>,\n"
              "                       grid,\n                       block,\n"
              "                       0,\n                       stream,\n")
# The fixture's kernels as CUDA spells them (`__global__`, `<<<...>>>`), and its header
# with a device helper beside the declarations the bindings name.
AITER_CUDA = tree_with(
    AITER,
    e.replace(KERNELS, "__attribute__((global)) void", "__global__ void"),
    e.replace(KERNELS, HIP_LAUNCH,
              "    act_and_mul_kernel<float><<<grid, block, 0, stream>>>(\n"),
    e.replace(HEADER, "namespace aiter {\n",
              "namespace aiter {\n\n__device__ __forceinline__ float silu(float x)\n"
              "{\n    return x / (1.0f + expf(-x));\n}\n\n"),
)
SILU_DECL = "void silu_and_mul(torch::Tensor& out, torch::Tensor& input);"


def _not_understood(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if "syntax error" in str(r["details"].get("failure", ""))]


def test_a_declaration_in_a_cuda_header_is_compared() -> None:
    doc = report(scenario(AITER_CUDA, e.replace(
        HEADER, SILU_DECL, SILU_DECL.replace("input);", "input, int act);"))))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert not _not_understood(doc), _not_understood(doc)
    broken = charged_rows(doc, "mismatch")
    # The py::arg list no longer fits, and the kernels' definition no longer defines it.
    assert sorted(r["reason"] for r in broken) == [
        "cpp-argument-count-differs", "declaration-without-definition"], broken
    count = next(r for r in broken if r["reason"] == "cpp-argument-count-differs")
    assert {(s["file"], s["role"]) for s in count["sides"]} == {
        (HEADER, "changed"), ("csrc/include/rocm_ops.hpp", "counterpart")}


@pytest.mark.parametrize("edit", [
    e.replace(KERNELS, "block(d < 1024 ? d : 1024)", "block(d < 512 ? d : 512)"),
    e.replace(KERNELS, "<<<grid, block, 0, stream>>>", "<<<grid, block, 256, stream>>>"),
], ids=["kernel-body", "launch-configuration"])
def test_a_kernel_edit_in_a_cuda_source_is_code_beyond_the_bindings(edit: e.Edit) -> None:
    doc = report(scenario(AITER_CUDA, edit))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert not _not_understood(doc), _not_understood(doc)
    assert [r["reason"] for r in charged_rows(doc, "changed")] == [
        "code-beyond-bindings-changed"], doc["rows"]


def test_a_comment_edit_in_a_cuda_source_is_none() -> None:
    doc = report(scenario(AITER_CUDA, e.replace(KERNELS, "namespace aiter {",
                                                "// kernels of module_activation\n"
                                                "namespace aiter {")))
    assert doc["verdict"]["kind"] == "NONE", doc["rows"]


# A related C++ file the change does not touch, which even the CUDA grammar cannot read
# (a macro used as a declaration specifier, as vLLM-derived all-reduce code writes it),
# and whose broken declaration spells pybind: the whole file is unread.
UNREADABLE = "csrc/kernels/activation_extra.cu"
UNREADABLE_TEXT = ("struct __align__(16) RankData { const void* ptrs[8]; py::handle o; };\n\n"
                   "void silu_twice(torch::Tensor& out, torch::Tensor& input)\n"
                   "{\n    aiter::silu_and_mul(out, input);\n}\n")
STUB = "aiter/ops/activation.py"
SILU_STUB = "def silu_and_mul(out: Tensor, input: Tensor) -> None: ..."


def test_an_unread_file_the_change_did_not_touch_is_a_counterpart() -> None:
    base = tree_with(AITER_CUDA, e.append(UNREADABLE, UNREADABLE_TEXT))
    doc = report(scenario(base, e.replace(STUB, SILU_STUB,
                                          SILU_STUB.replace("input: Tensor", "input: Tensor, "
                                                            "scale: float = 1.0"))))
    rows = [r for r in doc["rows"] if r["subject"] == f"unreadable-copy:{UNREADABLE}"]
    assert len(rows) == 1, doc["rows"]
    row = rows[0]
    # Fail closed: the row reads changed and is the change's, charged to what it touched.
    assert row["status"] == "changed" and not row["preexisting"], row
    assert {(s["file"], s["role"]) for s in row["sides"]} == {
        (UNREADABLE, "counterpart"), (STUB, "changed")}
    assert all(s["role"] == "counterpart" for r in doc["rows"] for s in r["sides"]
               if s["file"] == UNREADABLE), doc["rows"]


def test_an_edit_to_a_file_the_cuda_grammar_cannot_read_stays_changed() -> None:
    base = tree_with(AITER_CUDA, e.append(UNREADABLE, UNREADABLE_TEXT))
    doc = report(scenario(base, e.replace(UNREADABLE, "ptrs[8]", "ptrs[16]")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    failing = _not_understood(doc)
    assert failing and all(r["status"] == "changed" and not r["preexisting"]
                           for r in failing), doc["rows"]
    assert {r["details"]["failure"] for r in failing} == {"CUDA syntax error"}
