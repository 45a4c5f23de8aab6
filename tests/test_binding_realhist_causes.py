"""The causes of wrong verdicts found on the real histories of aiter and flash-attention,
each on the small in-repo trees (reported in memory: tests/harness.py): identity and scope of
a pairing, exact charging, callers as copies, content beyond the stated facts, map
completeness, and parsing only what the change reaches."""

from __future__ import annotations

from harness import charged_rows, report, scenario
from memory import tree_with

from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files

AITER = tree_files("aiter_tree")
NORM = "aiter/ops/norm.py"
NORM_H = "csrc/include/norm.h"
OPS = "csrc/include/rocm_ops.hpp"
UTILS = "aiter/dist/utils.py"
RMS_STUB = "    epsilon: float,\n    use_model_sensitive_rmsnorm: int = 0,\n) -> None: ...\n\n\n" \
           '@compile_ops("module_norm", fc_name="layernorm2d_fwd")'
RMS_ARGS = ('          py::arg("epsilon"),                                  \\\n'
            '          py::arg("use_model_sensitive_rmsnorm") = 0);         \\\n'
            '    m.def("layernorm2d_fwd",')
RMS_DECL = "              double epsilon,\n              int use_model_sensitive_rmsnorm);"
POSITIONAL_CALLER = "\n\ndef rms_norm_positional(out, x, weight, eps):\n" \
                    "    rms_norm(out, x, weight, eps, 0)\n    return out\n"


def insert_scale() -> tuple[e.Edit, ...]:
    """`scale` inserted before the defaulted `use_model_sensitive_rmsnorm` on every side:
    stub, py::arg list and C++ declaration agree with each other."""
    return (
        e.replace(NORM, RMS_STUB, RMS_STUB.replace(
            "    use_model_sensitive_rmsnorm", "    scale: float = 1.0,\n"
            "    use_model_sensitive_rmsnorm")),
        e.replace(OPS, RMS_ARGS, RMS_ARGS.replace(
            '          py::arg("use_model_sensitive_rmsnorm")',
            '          py::arg("scale") = 1.0,                              \\\n'
            '          py::arg("use_model_sensitive_rmsnorm")')),
        e.replace(NORM_H, RMS_DECL, RMS_DECL.replace(
            "              int use", "              double scale,\n              int use")),
    )


def test_an_insertion_that_shifts_a_positional_caller_breaks() -> None:
    base = tree_with(AITER, e.append(UTILS, POSITIONAL_CALLER))
    doc = report(scenario(base, *insert_scale()))
    rows = charged_rows(doc, "mismatch")
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    moved = [r for r in rows if r["reason"] == "call-argument-moved"]
    assert moved, rows
    # The unchanged call's last value, 0, now lands on the inserted `scale` of the stub
    # and of the py::arg list, while `use_model_sensitive_rmsnorm` is still a parameter.
    assert {r["details"]["layer"] for r in moved} == {"stub", "py::arg list"}
    assert all(r["details"]["moves"] == "0: use_model_sensitive_rmsnorm -> scale"
               for r in moved)
    shifted = next(r for r in moved if r["details"]["layer"] == "stub")
    assert {s["file"] for s in shifted["sides"]} == {NORM, UTILS}
    # The caller did not move; the stub did, and its base form is shown beside it.
    assert {(s["file"], s["role"], s["revision"]) for s in shifted["sides"]} == {
        (NORM, "changed", "head"), (UTILS, "counterpart", "head"),
        (NORM, "counterpart", "base")}


def test_the_same_insertion_with_the_caller_updated_does_not_break() -> None:
    base = tree_with(AITER, e.append(UTILS, POSITIONAL_CALLER))
    doc = report(scenario(base, *insert_scale(),
                 e.replace(UTILS, "rms_norm(out, x, weight, eps, 0)",
                           "rms_norm(out, x, weight, eps, 1.0, 0)")))
    assert doc["verdict"]["kind"] != "BREAKS", doc["rows"]
    assert not charged_rows(doc, "mismatch")


def test_a_caller_that_no_longer_fits_the_stub_breaks() -> None:
    drop = e.replace(NORM, RMS_STUB, RMS_STUB.replace(
        "    use_model_sensitive_rmsnorm: int = 0,\n", ""))
    doc = report(scenario(AITER, drop,
                 e.replace(OPS, RMS_ARGS, RMS_ARGS.replace(
                     '          py::arg("epsilon"),                                  \\\n'
                     '          py::arg("use_model_sensitive_rmsnorm") = 0);',
                     '          py::arg("epsilon"));')),
                 e.replace(NORM_H, RMS_DECL, "              double epsilon);")))
    # utils.rms_norm_into still passes use_model_sensitive_rmsnorm=0 by keyword.
    failed = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "call-does-not-bind"]
    assert any(r["details"]["refusal"] == "unknown-keyword"
               and r["details"]["name"] == "use_model_sensitive_rmsnorm" for r in failed), failed


def test_a_mismatch_on_untouched_copies_stays_preexisting() -> None:
    """The base already has layer_norm's default on one side; the change touches the same
    files for rms_norm only, consistently: layer_norm's row is not the change's."""
    base = tree_with(AITER, e.replace(OPS, 'py::arg("x_bias") = std::nullopt);',
                                  'py::arg("x_bias"));'))
    doc = report(scenario(base, *insert_scale()))
    layer = [r for r in charged_rows(doc, "mismatch") if "layernorm2d_fwd" in r["subject"]]
    assert not layer, layer
    assert doc["verdict"]["kind"] != "BREAKS", doc["rows"]


def test_pairing_follows_the_qualified_name_not_any_function_of_that_name() -> None:
    internal = ("\nnamespace aiter {\nnamespace internal {\n"
                "void rms_norm(const rms_args& args, const stream_config& s);\n}\n"
                "struct Norm {\n    void rms_norm(int x);\n};\n"
                "void rms_norm(torch::Tensor& out, torch::Tensor& input, "
                "torch::Tensor& weight, double epsilon);\n}\n")
    doc = report(scenario(AITER, e.append(NORM_H, internal)))
    # Another namespace's rms_norm, a member, and a 4-argument overload beside the
    # 5-argument one: none is a second copy that disagrees.
    assert not charged_rows(doc, "mismatch"), doc["rows"]
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE"


def test_a_binding_of_another_extension_is_not_the_stubs() -> None:
    variant = ('#include "rocm_ops.hpp"\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n{\n'
               '    m.def("rms_norm", &aiter::rms_norm_gfx1250, py::arg("out"), '
               'py::arg("input"));\n}\n')

    def add_module(config: dict) -> None:
        config["module_norm_gfx1250"] = {"srcs": ["csrc/pybind/norm_gfx1250_pybind.cu"]}

    doc = report(scenario(AITER,
                 e.append("csrc/pybind/norm_gfx1250_pybind.cu", variant),
                 e.edit_json("aiter/jit/optCompilerConfig.json", add_module)))
    assert not charged_rows(doc, "mismatch"), doc["rows"]


def test_op_names_come_only_from_binding_sites(monkeypatch, fresh_session) -> None:
    """An attribute call through a library import (`cute.input`) is no op: the change
    is judged from its own file, nothing else in Python is parsed, and since the code
    beyond the bindings changed the file reads changed (never NONE)."""
    from impact.extract import KIND_EXTRACTORS

    parsed: list[str] = []
    real = KIND_EXTRACTORS["op-python"]
    monkeypatch.setitem(KIND_EXTRACTORS, "op-python",
                        lambda p, s, m: parsed.append(p) or real(p, s, m))
    helper = e.append(NORM, "\nimport cutlass.cute as cute\n\n\ndef helper(x):\n"
                            "    launch = {'num_warps': 1}\n    return cute.input(x, **launch)\n")
    doc = report(scenario(AITER, helper))
    assert set(parsed) == {NORM}, parsed
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["contract"] == "bindings" and r["reason"] == "code-beyond-bindings-changed"
               for r in doc["rows"])


def test_a_launch_setting_beside_an_unbound_call_is_not_none() -> None:
    """aiter 243bebbe13: a new call (not an op) and a changed launch setting in an op
    file; the stated facts changed, the code beyond them too."""
    launch = e.append(
        NORM, "\nfrom aiter.utility import arch_info\n\n"
              "decode_launch = {'num_warps': 1} if arch_info.get_arch() == 'gfx950' else {}\n")
    doc = report(scenario(AITER, launch))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]


def test_a_comment_fix_in_a_file_the_parser_cannot_read_is_none() -> None:
    kernel = ("// launch helper\n__global__ void k(int* x) { x[0] = 1; }\n"
              "void launch(int* x) { k<<<dim3(1), dim3(64), 0>>>(x); }\n"
              "#define BROKEN(\n")
    base = tree_with(AITER, e.append("csrc/kernels/launch.cuh", kernel))
    doc = report(scenario(base, e.replace("csrc/kernels/launch.cuh", "// launch helper",
                                                "// the launch helper")))
    assert doc["verdict"]["kind"] == "NONE", doc["rows"]
    assert not [r for r in doc["rows"] if r["reason"] == "copy-unreadable"]


def test_an_edit_to_the_unparsed_file_beyond_comments_is_changed() -> None:
    kernel = ("__global__ void k(int* x) { x[0] = 1; }\n"
              "void launch(int* x) { k<<<dim3(1), dim3(64), 0>>>(x); }\n#define BROKEN(\n")
    base = tree_with(AITER, e.append("csrc/kernels/launch.cuh", kernel))
    doc = report(scenario(base, e.replace("csrc/kernels/launch.cuh", "dim3(64)",
                                                "dim3(128)")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]


def test_prebuilt_kernels_and_tuned_configs_are_on_the_surface() -> None:
    base = tree_with(AITER, e.append("hsa/gfx942/fmha_v3_fwd/fwd.co", "\x7fELF-old"),
                 e.append("aiter/configs/tuned_gemm.csv", "M,N,K,kernel\n1,2,3,a\n"))
    prebuilt = e.replace("hsa/gfx942/fmha_v3_fwd/fwd.co", "old", "new")
    doc = report(scenario(base, prebuilt))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE" and "gfx942" in doc["verdict"]["archs"]
    doc = report(scenario(base, e.replace("aiter/configs/tuned_gemm.csv", "1,2,3,a",
                                                "1,2,3,b")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]


def test_a_stub_file_that_stops_parsing_is_changed_not_a_removed_op() -> None:
    """Every stub of an unreadable file disappears from its facts; the bindings it had are
    not 'missing their Python side' (fail closed: changed)."""
    doc = report(scenario(AITER, e.append(NORM, "\ndef broken(:\n")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert not charged_rows(doc, "mismatch")


def test_the_fix_of_a_mismatch_the_base_had_is_changed_not_none() -> None:
    """flash-attention 4a948e9c94: the base's copies disagreed; the change makes them
    agree. Not BREAKS, and not NONE either: calls that failed now run."""
    base = tree_with(AITER, e.replace(NORM_H, RMS_DECL, "              double epsilon);"))
    doc = report(scenario(base, e.replace(NORM_H, "              double epsilon);",
                                                RMS_DECL)))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["reason"] == "mismatch-resolved" for r in charged_rows(doc, "changed"))
