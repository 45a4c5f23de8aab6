"""The bindings family on the aiter-like and flash-attention-like trees: verdict lines."""

from __future__ import annotations

import pytest
from harness import report, scenario

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files

AITER = tree_files("aiter_tree")
FA = tree_files("flash_attention_tree")
ACT = "aiter/ops/activation.py"
MOE = "aiter/ops/moe_sorting.py"
OPS = "csrc/include/rocm_ops.hpp"
ACT_H = "csrc/include/activation.h"
FA_PY = "flash_attn/flash_attn_interface.py"
CUDA = "csrc/flash_attn/flash_api.cpp"
CK = "csrc/flash_attn_ck/flash_api.cpp"
CK_DEF = "csrc/flash_attn_ck/mha_fwd.cpp"
FA3 = "hopper/flash_api.cpp"
FA3_STABLE = "hopper/flash_api_stable.cpp"
FA2_TAIL = "        window_size_left, window_size_right, softcap, return_softmax, None,"
GEN = "        const bool return_softmax,\n        std::optional<at::Generator> gen_)"
GEN_EXTRA = ("        const bool return_softmax,\n        std::optional<at::Generator> gen_,\n"
             "        bool deterministic = false)")
SILU_ARGS = ('          "Activation function used in SwiGLU.",               \\\n'
             '          py::arg("out"),                                      \\\n'
             '          py::arg("input"));')


SILU_STUB = '@compile_ops("module_activation")\ndef silu_and_mul('
SILU_STUB_DEVELOP = '@compile_ops("module_activation", develop=True)\ndef silu_and_mul('
SILU_DECL = "void silu_and_mul(torch::Tensor& out, torch::Tensor& input);"
SILU_DECL_AITER = "void silu_and_mul(aiter_tensor_t& out, aiter_tensor_t& input);"


def kinds(doc: dict) -> set[tuple[str, str]]:
    return {(r["contract"], r["status"]) for r in doc["rows"]}


CASES = [
    # (tree, edits, expected verdict kind, a (contract, status) that must be present)
    ("aiter: a stub loses a parameter its py::arg list keeps", AITER,
     (e.replace(MOE, "    sorted_weight_buf: Tensor,\n", ""),), "BREAKS",
     ("bindings", "mismatch")),
    ("aiter: two same-typed parameters swapped in the stub", AITER,
     (e.replace(ACT, "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
                "def silu_and_mul(input: Tensor, out: Tensor) -> None: ..."),), "BREAKS",
     ("bindings", "mismatch")),
    ("aiter: a default on the stub side only", AITER,
     (e.replace(OPS, 'py::arg("dispatch_policy")   = 0);', 'py::arg("dispatch_policy"));'),),
     "BREAKS", ("bindings", "mismatch")),
    ("aiter: an #if-guarded C++ parameter", AITER,
     (e.replace(ACT_H, "void silu_and_mul(torch::Tensor& out, torch::Tensor& input);",
                "void silu_and_mul(torch::Tensor& out,\n#if defined(ENABLE_SCALE)\n"
                "                  float scale,\n#endif\n"
                "                  torch::Tensor& input);"),),
     "NEEDS-DEVICE", ("bindings", "changed")),
    ("aiter: a consistent change on every side", AITER,
     (e.replace(ACT, "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
                "def silu_and_mul(out: Tensor, input: Tensor, scale: float) -> None: ..."),
      e.replace(OPS, SILU_ARGS, SILU_ARGS[:-2] + ', py::arg("scale"));'),
      e.replace(ACT_H, "void silu_and_mul(torch::Tensor& out, torch::Tensor& input);",
                "void silu_and_mul(torch::Tensor& out, torch::Tensor& input, float scale);"),
      e.replace("csrc/kernels/activation_kernels.cu",
                "void silu_and_mul(torch::Tensor& out, torch::Tensor& input)",
                "void silu_and_mul(torch::Tensor& out, torch::Tensor& input, float scale)"),
      # Callers are copies too: the wrapper that calls the stub passes the new argument.
      e.replace("aiter/dist/utils.py", "silu_and_mul(out, x)", "silu_and_mul(out, x, 1.0)")),
     "NONE", ("bindings", "inert")),
    ("aiter: a comment-only change", AITER,
     (e.replace(ACT, "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
                "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...  # fused"),),
     "NONE", ("surface", "inert")),
    ("FA2: a trailing C++ parameter with a default pybind ignores", FA,
     (e.replace(CUDA, GEN, GEN_EXTRA),), "BREAKS", ("bindings", "mismatch")),
    ("FA2: a fix to the CUDA copy that leaves the CK copy behind", FA,
     (e.replace(CUDA, GEN, GEN_EXTRA.replace(" = false", "")),  # CUDA fixed, CK not
      e.replace(FA_PY, FA2_TAIL, FA2_TAIL + " False,")),
     "BREAKS", ("bindings", "mismatch")),
    ("FA3: the stable registration's schema left behind", FA,
     (e.replace(FA3, "int num_splits=1) -> Tensor[]",
                "int num_splits=1, bool pack_gqa=False) -> Tensor[]"),),
     "BREAKS", ("bindings", "mismatch")),
    # aiter's develop flag is the stub's statement of the tensor type C++ takes.
    ("aiter: a stub turns develop on while C++ still takes torch tensors", AITER,
     (e.replace(ACT, SILU_STUB, SILU_STUB_DEVELOP),), "BREAKS", ("bindings", "mismatch")),
    ("aiter: the declaration moves to aiter_tensor_t, the stub keeps develop off", AITER,
     (e.replace(ACT_H, SILU_DECL, SILU_DECL_AITER),), "BREAKS", ("bindings", "mismatch")),
    ("aiter: develop on and the declarations on aiter_tensor_t together", AITER,
     (e.replace(ACT, SILU_STUB, SILU_STUB_DEVELOP), e.replace(ACT_H, SILU_DECL, SILU_DECL_AITER),
      e.replace("csrc/kernels/activation_kernels.cu",
                "void silu_and_mul(torch::Tensor& out, torch::Tensor& input)",
                "void silu_and_mul(aiter_tensor_t& out, aiter_tensor_t& input)")),
     "NEEDS-DEVICE", ("bindings", "changed")),
]


@pytest.mark.parametrize(("title", "base", "edits", "verdict", "row"), CASES,
                         ids=[c[0] for c in CASES])
def test_binding_scenarios(build, title, base, edits, verdict, row) -> None:
    doc = report(build(scenario(base, *edits)), commit="head")
    assert doc["verdict"]["kind"] == verdict, (title, doc["rows"])
    assert row in kinds(doc), (title, doc["rows"])
    assert doc["surface_map"]["name"] in ("aiter", "flash-attention")


def test_changed_rows_read_all_archs(build) -> None:
    doc = report(build(scenario(AITER, *CASES[3][2])), commit="head")
    assert doc["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE all-archs"


def test_a_binding_the_parser_cannot_read_is_changed(build) -> None:
    macro = "\n#define PASTE_PYBIND(NAME) m.def(#NAME, &aiter::NAME##_fwd);\n"
    doc = report(build(scenario(AITER, e.append(OPS, macro))), commit="head")
    assert ("bindings", "changed") in kinds(doc)
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


def test_map_is_picked_by_markers_and_named(build) -> None:
    doc = report(build(scenario(FA, e.append("README.md", "x\n"))), commit="head")
    assert doc["surface_map"]["name"] == "flash-attention"
    assert "flash_attn" in doc["surface_map"]["reason"] or "hopper" in doc["surface_map"]["reason"]


def test_only_the_change_and_what_restates_it_is_parsed(build, monkeypatch,
                                                        fresh_session) -> None:
    from impact.checks import CheckContext, run_checks
    from impact.extract import KIND_EXTRACTORS
    from impact.surface import load_surface_map

    parsed: list[str] = []
    for kind in ("op-python", "op-cpp"):
        real = KIND_EXTRACTORS[kind]
        monkeypatch.setitem(KIND_EXTRACTORS, kind,
                            lambda p, s, m, real=real: parsed.append(p) or real(p, s, m))
    edit = e.replace(ACT, "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
                     "def silu_and_mul(input: Tensor, out: Tensor) -> None: ...")
    views = build.in_memory(Scenario(base=AITER, head=(Change("swap", edits=(edit,)),)))
    rows = run_checks(CheckContext(views, load_surface_map(None, views.head)))
    assert any(r.status == "mismatch" for r in rows)
    op_files = [p for p in AITER if p.startswith(("aiter/", "csrc/")) and p.endswith(
        (".py", ".h", ".hpp", ".cu"))]
    assert ACT in parsed and OPS in parsed
    assert "aiter/ops/norm.py" not in parsed and len(set(parsed)) < len(op_files)


def test_a_missing_blob_is_a_changed_row_not_a_crash(build, fresh_session) -> None:
    from impact.checks import CheckContext, run_checks
    from impact.errors import ShallowHistory
    from impact.git import Snapshot, open_views
    from impact.surface import load_surface_map

    edit = e.replace(ACT, "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
                     "def silu_and_mul(input: Tensor, out: Tensor) -> None: ...")
    repo = build(Scenario(base=AITER, head=(Change("swap", edits=(edit,)),)))
    views = open_views(repo.path, commit="head")
    missing = views.head[OPS].sha

    def reader(sha: str) -> bytes:
        if sha == missing:
            raise ShallowHistory(f"object {sha} is missing", "fetch it")
        return views.repository.read_blob(sha)

    for view in views.views:  # both sides lose the pybind header's blob
        object.__setattr__(view, "new", Snapshot(dict(view.new), reader, label="head"))
        object.__setattr__(view, "old", Snapshot(dict(view.old), reader, label="base"))

    rows = run_checks(CheckContext(views, load_surface_map("aiter")))
    assert any(r.status == "changed" and OPS in r.files for r in rows)
    # What the unreadable copy might bind is never called missing.
    assert not any(r.status == "mismatch" and r.subject.endswith(":unbound") for r in rows)


def test_a_stub_removed_while_its_binding_stays(build) -> None:
    drop = (e.replace(ACT, '@compile_ops("module_activation")\n'
                      'def gelu_and_mul(out: Tensor, input: Tensor) -> None: ...\n', ""),
            e.replace("aiter/__init__.py", "    gelu_and_mul,\n", ""),
            e.replace("aiter/__init__.py", '    "gelu_and_mul",\n', ""))
    doc = report(build(scenario(AITER, *drop)), commit="head")
    rows = [r for r in doc["rows"] if r["subject"] == "gelu_and_mul:python-missing"]
    assert rows and rows[0]["status"] == "mismatch" and doc["verdict"]["kind"] == "BREAKS"


def test_a_kernel_body_edit_is_not_judged_by_the_bindings(build) -> None:
    kernel = "csrc/kernels/activation_kernels.cu"
    text = AITER[kernel].decode()
    body_line = next(line for line in text.splitlines() if line.strip().startswith("(void)")
                     or "TORCH_CHECK" in line)
    edit = e.replace(kernel, body_line, body_line + "\n    ;")
    doc = report(build(scenario(AITER, edit)), commit="head")
    assert doc["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE all-archs"
    assert ("surface", "changed") in kinds(doc)


def _abi_rows(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["reason"] == "tensor-abi-differs"]


def test_the_tensor_abi_mismatch_names_the_stub_and_the_declaration(build) -> None:
    edit = e.replace(ACT, SILU_STUB, SILU_STUB_DEVELOP)
    doc = report(build(scenario(AITER, edit)), commit="head")
    (row,) = _abi_rows(doc)
    sides = {(s["file"], s["line"]) for s in row["sides"]}
    assert sides == {(ACT, 9), (ACT_H, 7)}, row["sides"]
    assert not row["preexisting"] and row["status"] == "mismatch"
    assert "develop=True" in row["says"] and "aiter_tensor_t" in row["says"]


@pytest.mark.parametrize("edits", [
    # A flag that is not a literal: nothing is concluded from it.
    (e.replace(ACT, SILU_STUB, '@compile_ops("module_activation", develop=DEVELOP)\n'
                               'def silu_and_mul('),),
    # A declaration that takes both kinds: which one the tensors reach is not stated.
    (e.replace(ACT, SILU_STUB, SILU_STUB_DEVELOP),
     e.replace(ACT_H, SILU_DECL, "void silu_and_mul(aiter_tensor_t& out, torch::Tensor& input);")),
], ids=["develop-not-a-literal", "both-tensor-kinds"])
def test_no_tensor_abi_mismatch_where_the_flag_or_the_types_say_nothing(build, edits) -> None:
    doc = report(build(scenario(AITER, *edits)), commit="head")
    assert _abi_rows(doc) == [], doc["rows"]
    assert doc["verdict"]["kind"] != "NONE"
