"""Binding facts: compile_ops stubs, extension calls, fake twins, pybind/TORCH_LIBRARY
registrations, C++ parameter lists, schema strings and the module → sources map."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact.bindings import (
    SchemaError,
    extract_binding_cpp_facts,
    extract_binding_python_facts,
    extract_sources_map_facts,
    parse_schema,
)
from impact.facts import Fact


def _of(facts: list[Fact], kind: str) -> dict[str, Fact]:
    return {f.name: f for f in facts if f.kind == kind}


def _kinds(facts: list[Fact]) -> list[str]:
    return [f.kind for f in facts]


# -- Python ----------------------------------------------------------------------------------

AITER_STUB = b'''
import torch
from torch import Tensor
from ..jit.core import compile_ops
import aiter


@compile_ops("module_moe_asm", fc_name="fmoe_g1u1")
def fmoe_g1u1(
    out: Tensor,
    input: Tensor,
    topk: int = 2,
    *,
    activation: Optional[str] = None,
) -> None: ...


@aiter.jit.core.compile_ops("module_ctypes", ffi_type="ctypes")
def raw_entry(a, /, b, *args, **kwargs): ...


def not_a_stub(x): ...
'''

FA2_INTERFACE = b'''
import torch
import math
if USE_TRITON_ROCM:
    from .flash_attn_triton_amd import interface_fa as flash_attn_gpu
else:
    import flash_attn_2_cuda as flash_attn_gpu
import flash_attn_3._C
flash_attn_3_gpu = torch.ops.flash_attn_3


def _flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal):
    out, lse, p, rng = flash_attn_gpu.fwd(
        q, k, v, None, alibi_slopes, dropout_p, softmax_scale, causal=causal, gen=None,
    )
    math.sqrt(2.0)
    torch.empty_like(q)
    return out


def _v3(q, *rest, **extra):
    flash_attn_3_gpu.fwd(q, *rest)
    torch.ops.xformers.efficient_attention_forward.default(q, **extra)


torch.ops.flash_attn_3.bwd(1, 2)


@torch.library.register_fake("flash_attn::_flash_attn_forward")
def _flash_attn_forward_fake(q: torch.Tensor, dropout_p: float, causal: bool = False):
    return torch.empty_like(q)


@_torch_register_fake_wrapper("flash_attn::_flash_attn_backward")
def _bwd_fake(dout, q): ...


@_v3.register_fake
def _v3_fake(q): ...
'''


def test_compile_ops_stub() -> None:
    stubs = _of(extract_binding_python_facts("aiter/ops/moe.py", AITER_STUB), "op-stub")
    assert sorted(stubs) == ["fmoe_g1u1", "raw_entry"]
    moe = stubs["fmoe_g1u1"].data
    assert (moe["module"], moe["fc_name"], moe["ffi_type"], moe["symbol"]) == (
        "module_moe_asm", "fmoe_g1u1", None, "fmoe_g1u1")
    assert moe["params"] == [
        {"name": "out", "kind": "positional", "default": None, "annotation": "Tensor"},
        {"name": "input", "kind": "positional", "default": None, "annotation": "Tensor"},
        {"name": "topk", "kind": "positional", "default": "2", "annotation": "int"},
        {"name": "activation", "kind": "keyword-only", "default": "None",
         "annotation": "Optional[str]"},
    ]
    assert moe["line"] == stubs["fmoe_g1u1"].line == 9
    raw = stubs["raw_entry"].data
    assert (raw["module"], raw["ffi_type"], raw["symbol"]) == ("module_ctypes", "ctypes",
                                                              "raw_entry")
    assert [(p["name"], p["kind"]) for p in raw["params"]] == [
        ("a", "positional"), ("b", "positional"), ("args", "var-positional"),
        ("kwargs", "var-keyword")]


@pytest.mark.parametrize(
    ("line", "op", "receiver", "function", "positional", "keywords"),
    [
        (13, "fwd", ".flash_attn_triton_amd.interface_fa", "_flash_attn_forward", 7,
         ["causal", "gen"]),
        (22, "fwd", "torch.ops.flash_attn_3", "_v3", -1, []),
        (23, "efficient_attention_forward", "torch.ops.xformers", "_v3", 1, ["**"]),
        (26, "bwd", "torch.ops.flash_attn_3", None, 2, []),
    ],
)
def test_op_calls(line: int, op: str, receiver: str, function: str | None, positional: int,
                  keywords: list[str]) -> None:
    facts = extract_binding_python_facts("flash_attn/flash_attn_interface.py", FA2_INTERFACE)
    calls = {f.line: f for f in facts if f.kind == "op-call"}
    assert sorted(calls) == [13, 22, 23, 26]  # no math.sqrt, no torch.empty_like
    fact = calls[line]
    assert fact.name == op
    assert fact.data["receiver"] == receiver
    assert fact.data["function"] == function
    assert fact.data["positional"] == positional
    assert fact.data["keywords"] == keywords


def test_op_call_names_every_module_one_alias_may_hold() -> None:
    facts = extract_binding_python_facts("fa.py", FA2_INTERFACE)
    call = next(f for f in facts if f.kind == "op-call" and f.line == 13)
    assert call.data["receivers"] == [".flash_attn_triton_amd.interface_fa", "flash_attn_2_cuda"]


def test_fake_twins() -> None:
    twins = _of(extract_binding_python_facts("fa.py", FA2_INTERFACE), "fake-twin")
    assert sorted(twins) == ["_flash_attn_backward", "_flash_attn_forward", "_v3"]
    forward = twins["_flash_attn_forward"].data
    assert forward["namespace"] == "flash_attn"
    assert forward["function"] == "_flash_attn_forward_fake"
    assert [(p["name"], p["default"]) for p in forward["params"]] == [
        ("q", None), ("dropout_p", None), ("causal", "False")]
    assert twins["_v3"].data["namespace"] is None


def test_python_content_fact_is_blind_to_comments() -> None:
    base = extract_binding_python_facts("a.py", AITER_STUB)
    head = extract_binding_python_facts("a.py", AITER_STUB.replace(b"\n\n\n", b"\n# c\n\n"))
    assert [f for f in base if f.kind == "content"] == [f for f in head if f.kind == "content"]


@pytest.mark.parametrize("source", [b"def f(:\n    pass\n", b"\xff\xfe", b"(" * 600])
def test_unparsable_python_is_one_parse_failure(source: bytes) -> None:
    facts = extract_binding_python_facts("bad.py", source)
    assert _kinds(facts) == ["parse-failure"]


# -- C++ -------------------------------------------------------------------------------------

AITER_PYBIND = rb'''
#include "moe_op.h"
#define MOE_OP_PYBIND                                                        \
    m.def("fmoe_g1u1",                                                       \
          &aiter::fmoe_g1u1,                                                 \
          py::arg("out"),                                                    \
          py::arg("input"),                                                  \
          py::arg("topk") = 2,                                               \
          py::arg("activation") = std::nullopt,                              \
          "fused moe");                                                      \
    m.def("topk_softmax", &topk_softmax, "topk_softmax");
#define FWD_PYBIND(NAME) m.def(#NAME "_fwd", &NAME##_fwd);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)
{
    MOE_OP_PYBIND;
    m.def("direct", &ns::direct_fn, py::arg("x"), py::arg("y").noconvert() = 1.5f);
    m.def("lambda", [](int x) { return x; }, "doc");
}
'''

FA2_API = rb'''
std::vector<at::Tensor>
mha_fwd(at::Tensor &q,
        const at::Tensor &k,
        std::optional<at::Tensor> &out_,
        const float p_dropout,
        const bool return_softmax,
        std::optional<at::Generator> gen_);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.doc() = "FlashAttention";
    m.def("fwd", &FLASH_NAMESPACE::mha_fwd, "Forward pass");
}
'''

FA3_API = rb'''
TORCH_LIBRARY(flash_attn_3, m) {
    m.def("fwd("
          "Tensor q,"
          "Tensor(a!)? out=None,"
          "int window_size_left=-1,"
          "*, float softcap=0.0,"
          "str mode=\"mean\") -> Tensor[]");
    m.def("get_scheduler_metadata(int batch_size, int[] seqlens=[1, 2]) -> Tensor");
    m.def("broken(Tensor q,, int x) -> Tensor");
    m.impl("fwd", TORCH_BOX(&mha_fwd));
    m.impl("get_scheduler_metadata", &flash::mha_fwd_get_scheduler_metadata);
}

TORCH_LIBRARY_FRAGMENT(xformers, m) {
    m.def(TORCH_SELECTIVE_SCHEMA("xformers::efficient_attention_forward(Tensor q) -> Tensor"));
}

TORCH_LIBRARY_IMPL(xformers, CUDA, m) {
    m.impl(TORCH_SELECTIVE_NAME("xformers::efficient_attention_forward"), TORCH_FN(eff_fwd));
}

void boxed_mha_fwd(StableIValue* stack, uint64_t num_args, uint64_t num_outputs) {
    auto q = to<Tensor>(stack[0]);
    auto out = to<std::optional<Tensor>>(stack[1]);
    auto softcap = to<double>(stack[32]);
    stack[0] = from(q);
}
'''

FLASHINFER_DECL = rb'''
#pragma once
namespace flashinfer {
void BatchDecodeWithPagedKVCacheRun(at::Tensor float_workspace_buffer,
                                    at::Tensor q,
#ifdef ENABLE_FP8
                                    at::Tensor scale,
#endif
#if ADDITIONAL_PARAMS
                                    double rope_scale = 1.0,
#else
                                    double rope_theta,
#endif
                                    int64_t cuda_stream);
}
extern "C" {
int aiter_fmha_ctypes(void* q_ptr, int64_t seqlen, float scale);
}
extern "C" int plain_c(void);
'''


def test_pybind_defs_with_and_without_py_arg() -> None:
    facts = extract_binding_cpp_facts("csrc/pybind/moe_pybind.cu", AITER_PYBIND)
    defs = _of(facts, "pybind-def")
    assert sorted(defs) == ["direct", "fmoe_g1u1", "lambda", "topk_softmax"]
    moe = defs["fmoe_g1u1"]
    assert (moe.line, moe.data["macro"], moe.data["function"]) == (4, "MOE_OP_PYBIND",
                                                                   "fmoe_g1u1")
    assert moe.data["args"] == [
        {"name": "out", "has_default": False, "default": None},
        {"name": "input", "has_default": False, "default": None},
        {"name": "topk", "has_default": True, "default": "2"},
        {"name": "activation", "has_default": True, "default": "std::nullopt"},
    ]
    assert defs["topk_softmax"].data["args"] is None
    assert defs["topk_softmax"].line == 11
    assert defs["direct"].data["args"][1] == {"name": "y", "has_default": True,
                                              "default": "1.5f"}
    assert "macro" not in defs["direct"].data
    assert defs["lambda"].data["function"] is None


def test_macro_token_pasting_is_unreadable_not_silent() -> None:
    facts = extract_binding_cpp_facts("csrc/include/rocm_ops.hpp", AITER_PYBIND)
    unreadable = [f for f in facts if f.kind == "binding-unreadable"]
    assert len(unreadable) == 1
    assert unreadable[0].line == 12
    assert unreadable[0].data["macro"] == "FWD_PYBIND"
    assert "##" in unreadable[0].data["text"]
    assert "parse-failure" not in _kinds(facts)


def test_fa2_positional_pybind_and_declaration() -> None:
    facts = extract_binding_cpp_facts("csrc/flash_attn/flash_api.cpp", FA2_API)
    fwd = _of(facts, "pybind-def")["fwd"]
    assert {k: fwd.data[k] for k in ("function", "args", "line")} == {
        "function": "mha_fwd", "args": None, "line": 12}
    decl = _of(facts, "cpp-function")["mha_fwd"]
    assert decl.data["is_definition"] is False
    assert [(p["type"], p["name"]) for p in decl.data["params"]] == [
        ("at::Tensor&", "q"), ("const at::Tensor&", "k"),
        ("std::optional<at::Tensor>&", "out_"), ("const float", "p_dropout"),
        ("const bool", "return_softmax"), ("std::optional<at::Generator>", "gen_")]
    assert "content" in _kinds(facts)


def test_torch_library_schemas() -> None:
    facts = extract_binding_cpp_facts("hopper/flash_api.cpp", FA3_API)
    schemas = _of(facts, "schema-def")
    assert sorted(schemas) == ["efficient_attention_forward", "fwd", "get_scheduler_metadata"]
    fwd = schemas["fwd"].data
    assert fwd["namespace"] == "flash_attn_3"
    assert fwd["schema"]["returns"] == "Tensor[]"
    assert fwd["schema"]["args"] == [
        {"name": "q", "type": "Tensor", "default": None, "kw_only": False},
        {"name": "out", "type": "Tensor(a!)?", "default": "None", "kw_only": False},
        {"name": "window_size_left", "type": "int", "default": "-1", "kw_only": False},
        {"name": "softcap", "type": "float", "default": "0.0", "kw_only": True},
        {"name": "mode", "type": "str", "default": '"mean"', "kw_only": True},
    ]
    assert fwd["raw"].startswith("fwd(Tensor q,Tensor(a!)?")
    assert schemas["efficient_attention_forward"].data["namespace"] == "xformers"
    broken = [f for f in facts if f.kind == "binding-unreadable"]
    assert [f.name for f in broken] == ["broken"]
    assert broken[0].data["reason"].startswith("bad schema")


def test_torch_impls_and_boxed_reads() -> None:
    facts = extract_binding_cpp_facts("hopper/flash_api_stable.cpp", FA3_API)
    impls = _of(facts, "torch-impl")
    assert impls["fwd"].data == {"function": "mha_fwd", "namespace": "flash_attn_3",
                                 "dispatch": None}
    assert impls["get_scheduler_metadata"].data["function"] == "mha_fwd_get_scheduler_metadata"
    assert impls["efficient_attention_forward"].data == {
        "function": "eff_fwd", "namespace": "xformers", "dispatch": "CUDA"}
    boxed = _of(facts, "boxed-read")["boxed_mha_fwd"]
    assert boxed.data == {"max_index": 32, "count": 3}  # the write to stack[0] is no read
    assert "cpp-function" not in {f.kind for f in facts if f.name.startswith("TORCH_")}


def test_if_guarded_parameters_are_conditional() -> None:
    facts = extract_binding_cpp_facts("csrc/flashinfer_ops.cu", FLASHINFER_DECL)
    assert "parse-failure" not in _kinds(facts)
    run = _of(facts, "cpp-function")["BatchDecodeWithPagedKVCacheRun"]
    assert run.data["qualified"] == "flashinfer::BatchDecodeWithPagedKVCacheRun"
    assert [(p["name"], p["conditional"], p["default"]) for p in run.data["params"]] == [
        ("float_workspace_buffer", None, None),
        ("q", None, None),
        ("scale", "defined(ENABLE_FP8)", None),
        ("rope_scale", "ADDITIONAL_PARAMS", "1.0"),
        ("cuda_stream", None, None),
    ]
    assert run.data["dropped_branches"] == ["ADDITIONAL_PARAMS"]


def test_extern_c_functions() -> None:
    functions = _of(extract_binding_cpp_facts("csrc/ctypes.cu", FLASHINFER_DECL),
                    "cpp-function")
    entry = functions["aiter_fmha_ctypes"].data
    assert entry["extern_c"] is True
    assert [p["type"] for p in entry["params"]] == ["void*", "int64_t", "float"]
    assert functions["plain_c"].data == {"qualified": "plain_c", "params": [],
                                         "is_definition": False, "extern_c": True}
    assert functions["BatchDecodeWithPagedKVCacheRun"].data["extern_c"] is False


def test_cpp_definition_is_a_definition() -> None:
    facts = extract_binding_cpp_facts("mha_fwd.cpp", b"int add(int a, int b = 1) { return a; }")
    add = _of(facts, "cpp-function")["add"]
    assert add.data["is_definition"] is True
    assert add.data["params"][1] == {"type": "int", "name": "b", "default": "1",
                                     "conditional": None}


def test_cpp_content_fact_is_blind_to_comments() -> None:
    base = extract_binding_cpp_facts("a.cpp", FA2_API)
    head = extract_binding_cpp_facts("a.cpp", FA2_API.replace(b"{\n", b"{ // note\n"))
    assert [f for f in base if f.kind == "content"] == [f for f in head if f.kind == "content"]


@pytest.mark.parametrize("source", [b"int f( {\n", b"\xff\xfe", b"m.def(\"x\", &f"])
def test_unparsable_cpp_reports_parse_failure(source: bytes) -> None:
    facts = extract_binding_cpp_facts("bad.cpp", source)
    assert "parse-failure" in _kinds(facts)
    assert "content" not in _kinds(facts)


# -- schema strings --------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("schema", "name", "args", "returns"),
    [
        ("f() -> ()", "f", [], "()"),
        ("ns::f.out(Tensor q, *, Tensor(a!) out) -> Tensor(a!)", "ns::f.out",
         [("q", "Tensor", None, False), ("out", "Tensor(a!)", None, True)], "Tensor(a!)"),
        ("f(Tensor? k=None, int[] s=[1, -2], float e=-1e-3, bool b=True) -> Tensor[]", "f",
         [("k", "Tensor?", "None", False), ("s", "int[]", "[1, -2]", False),
          ("e", "float", "-1e-3", False), ("b", "bool", "True", False)], "Tensor[]"),
        ("f(str mode='sum', Tensor(a!)[] outs, int[2] pad=[0, 0]) -> (Tensor, Tensor)", "f",
         [("mode", "str", "'sum'", False), ("outs", "Tensor(a!)[]", None, False),
          ("pad", "int[2]", "[0, 0]", False)], "(Tensor, Tensor)"),
        ("  f ( SymInt[]? size = None ) -> Tensor  ", "f",
         [("size", "SymInt[]?", "None", False)], "Tensor"),
    ],
)
def test_parse_schema(schema: str, name: str, args: list[tuple[str, str, str | None, bool]],
                      returns: str) -> None:
    parsed = parse_schema(schema)
    assert parsed["name"] == name
    assert [(a["name"], a["type"], a["default"], a["kw_only"]) for a in parsed["args"]] == args
    assert parsed["returns"] == returns


@pytest.mark.parametrize(
    "schema",
    [
        "",
        "f(Tensor q)",  # no returns
        "f(Tensor q) ->",
        "f(Tensor q,) -> Tensor",
        "f(Tensor) -> Tensor",  # no name
        "f(Tensor q, Tensor q) -> Tensor",
        "f(*, *, int x) -> Tensor",
        "f(int x=) -> Tensor",
        "f(int x=[1, 2) -> Tensor",
        "f(str s=\"open) -> Tensor",
        "f(Tensor(a! q) -> Tensor",
        "f(int[x] q) -> Tensor",
        "f(int x=1 2) -> Tensor",
        "1f(int x) -> Tensor",
        "f(int x) -> (Tensor",
    ],
)
def test_parse_schema_rejects(schema: str) -> None:
    with pytest.raises(SchemaError):
        parse_schema(schema)


# -- module → sources map --------------------------------------------------------------------

def test_sources_map() -> None:
    config = {
        "module_moe_asm": {"srcs": ["f'{AITER_CSRC_DIR}/pybind/moe_pybind.cu'"], "flags": []},
        "module_ctypes": {"srcs": []},
    }
    facts = extract_sources_map_facts("aiter/jit/optCompilerConfig.json",
                                      json.dumps(config, indent=4).encode())
    modules = _of(facts, "op-module")
    assert modules["module_moe_asm"].data["srcs"] == [
        "f'{AITER_CSRC_DIR}/pybind/moe_pybind.cu'"]
    # The part a repository path ends with, for pairing a stub with its module's files.
    assert modules["module_moe_asm"].data["files"] == ["pybind/moe_pybind.cu"]
    assert modules["module_moe_asm"].line == 2
    assert modules["module_ctypes"].data["srcs"] == []
    relaid = extract_sources_map_facts("aiter/jit/optCompilerConfig.json",
                                       json.dumps(config).encode())
    assert [f for f in facts if f.kind == "content"] == [f for f in relaid if f.kind == "content"]


@pytest.mark.parametrize(
    ("source", "kinds"),
    [
        (b"{", ["parse-failure"]),
        (b"[1, 2]", ["parse-failure"]),
        (b"\xff", ["parse-failure"]),
        (b'{"a": {"srcs": ["x.cu"]},\n "b": {"srcs": "y.cu"}}', ["op-module", "parse-failure"]),
    ],
)
def test_malformed_sources_map(source: bytes, kinds: list[str]) -> None:
    assert _kinds(extract_sources_map_facts("c.json", source)) == kinds


# -- never raise -----------------------------------------------------------------------------

_PIECES = [AITER_STUB, FA2_INTERFACE, AITER_PYBIND, FA2_API, FA3_API, FLASHINFER_DECL,
           b"#if X\n", b"#endif\n", b"#else\n", b"\\\n", b"(", b")", b"{", b"}", b'"', b"##",
           b'm.def("', b"stack[", b"TORCH_LIBRARY(x, m) {", b"@compile_ops(", b"\xff"]


@st.composite
def _mangled(draw: st.DrawFn) -> bytes:
    base = draw(st.sampled_from(_PIECES[:6]))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(base)))
        if draw(st.booleans()):
            base = base[:at] + draw(st.sampled_from(_PIECES[6:])) + base[at:]
        else:
            base = base[:at] + base[at + draw(st.integers(1, 40)):]
    return base


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.binary(max_size=300), _mangled(), st.text(max_size=200).map(str.encode)))
def test_extractors_never_raise(source: bytes) -> None:
    for extract in (extract_binding_python_facts, extract_binding_cpp_facts,
                    extract_sources_map_facts):
        facts = extract("fuzz", source)
        assert facts, extract.__name__
        for fact in facts:
            json.dumps(fact.to_json())
            reason = str(fact.data.get("reason", "")) if fact.kind == "parse-failure" else ""
            assert "error:" not in reason or reason.startswith("syntax error"), reason
    with contextlib.suppress(SchemaError):
        parse_schema(source.decode("utf-8", "replace"))


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="abTensor?[]()!*,=-> '\"0123456789:.", max_size=60))
def test_parse_schema_raises_only_schema_error(text: str) -> None:
    with contextlib.suppress(SchemaError):
        parsed = parse_schema(text)
        assert parsed["returns"] and all(a["name"] for a in parsed["args"])
