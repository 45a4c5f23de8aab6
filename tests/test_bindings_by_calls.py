"""Bindings judged by the calls they break (issue 24): every concrete call bound as Python,
pybind11 and torch's dispatcher would bind it, at the base and at the head. A difference no
call reaches is not BREAKS; a change in which calls bind is never NONE; a value that lands
on another parameter, a call that fails to bind, a literal of another kind is BREAKS."""

from __future__ import annotations

import pytest
from harness import charged_rows, report, scenario
from memory import tree_with

from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files
from impact.graph import LayerParam, Signature, pybind_signature, takes
from impact.graph.binding_records import PyArg
from impact.graph.call_binding import POSITIONAL, Shape, bind
from impact.kinds import ValueKind
from impact.reasons import Refusal
from impact.render.words.rows import reason_text

AITER = tree_files("aiter_tree")
FA = tree_files("flash_attention_tree")
ACT = "aiter/ops/activation.py"
OPS = "csrc/include/rocm_ops.hpp"
ACT_H = "csrc/include/activation.h"
NORM = "aiter/ops/norm.py"
FA_PY = "flash_attn/flash_attn_interface.py"
CUDA = "csrc/flash_attn/flash_api.cpp"
FWD_DEF = 'm.def("fwd", &FLASH_NAMESPACE::mha_fwd, "Forward pass");'
GELU_ARGS = ('          "Activation function used in GELU.",                 \\\n'
             '          py::arg("out"),                                      \\\n'
             '          py::arg("input"));')


def reasons(doc: dict, status: str | None = None) -> set[str]:
    return {r["reason"] for r in doc["rows"] if r["contract"] == "bindings"
            and (status is None or r["status"] == status) and not r.get("preexisting")}


# -- aiter: defaults on one side -------------------------------------------------------------

def test_a_default_only_the_py_arg_list_has_breaks_no_call() -> None:
    """Every call passes `input` (the stub requires it): a py::arg default for it changes
    no call's binding."""
    doc = report(scenario(AITER, e.replace(OPS, GELU_ARGS, GELU_ARGS.replace(
        'py::arg("input"));', 'py::arg("input") = torch::Tensor());'))))
    assert doc["verdict"]["kind"] != "BREAKS", doc["rows"]
    assert not charged_rows(doc, "mismatch")


def test_a_default_only_the_stub_has_breaks_the_calls_that_leave_it_out() -> None:
    """The harmful direction: the stub lets a caller leave `input` out, the py::arg list
    does not; the stub's call without it fails at pybind."""
    doc = report(scenario(AITER, e.replace(
        ACT, "def gelu_and_mul(out: Tensor, input: Tensor)",
        "def gelu_and_mul(out: Tensor, input: Tensor = None)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    failed = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "call-does-not-bind"]
    assert any(r["details"]["refusal"] == "missing" and r["details"]["missing"] == ["input"]
               for r in failed), failed
    text = reason_text(failed[0]["reason"], failed[0]["details"])
    assert "leaves input without a value" in text and "TypeError" in text, text
    assert {s["file"] for r in failed for s in r["sides"]} >= {ACT, OPS}


def test_a_stub_default_against_a_bare_m_def_is_compared() -> None:
    """A binding with no py::arg list takes every C++ parameter by position and ignores C++
    defaults: a stub default there fails every call that leaves the argument out."""
    base = tree_with(AITER, e.replace(OPS, GELU_ARGS,
                                      '          "Activation function used in GELU.");'))
    assert base[OPS] != AITER[OPS]
    doc = report(scenario(base, e.replace(
        ACT, "def gelu_and_mul(out: Tensor, input: Tensor)",
        "def gelu_and_mul(out: Tensor, input: Tensor = None)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    failed = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "call-does-not-bind"]
    assert any(r["details"]["layer"] == "m.def without py::arg" for r in failed), failed


def test_a_difference_the_base_already_had_is_not_the_changes() -> None:
    """layer_norm's stub defaults `x_bias`, its py::arg list does not (at the base); the
    change edits that very stub (another parameter's annotation): the same failure at
    both revisions is pre-existing, not BREAKS, though the stub's copy moved."""
    base = tree_with(AITER, e.replace(OPS, 'py::arg("x_bias") = std::nullopt);',
                                      'py::arg("x_bias"));'))
    retype = e.replace(NORM, "    bias: Tensor,\n    epsilon: float,\n    x_bias",
                       "    bias: Tensor,\n    epsilon: float | int,\n    x_bias")
    doc = report(scenario(base, retype))
    assert doc["verdict"]["kind"] != "BREAKS", doc["rows"]
    pre = [r for r in doc["rows"] if r.get("preexisting") and r["reason"] == "call-does-not-bind"]
    assert pre and all(s["role"] == "counterpart" for r in pre for s in r["sides"]), pre


# -- flash-attention: calls straight into the extension --------------------------------------

def test_a_py_arg_default_that_lets_failing_calls_bind_is_never_none() -> None:
    """A bare m.def whose C++ function takes one more parameter than the call passes fails
    every call; a py::arg list with a default for it makes them run: what runs changed."""
    extra = ("void scale_fwd(at::Tensor& out, const at::Tensor& q, double scale);\n\n"
             "PYBIND11_MODULE(")
    call = ("\n\ndef _scale_forward(out, q):\n"
            "    flash_attn_gpu.scale_fwd(out, q)\n    return out\n")
    base = tree_with(FA, e.replace(CUDA, "PYBIND11_MODULE(", extra),
                     e.replace(CUDA, FWD_DEF, FWD_DEF + '\n    m.def("scale_fwd", &scale_fwd);'),
                     e.append(FA_PY, call))
    doc = report(scenario(base, e.replace(
        CUDA, 'm.def("scale_fwd", &scale_fwd);',
        'm.def("scale_fwd", &scale_fwd, py::arg("out"), py::arg("q"), '
        'py::arg("scale") = 1.0);')))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert "call-now-binds" in reasons(doc, "changed"), doc["rows"]


def test_none_passed_to_a_parameter_that_no_longer_takes_it_breaks() -> None:
    """`fwd(q, k, v, None, ...)`: the fourth parameter turns from an optional tensor into
    a tensor in both backends' declarations; the call still passes None."""
    old = "std::optional<at::Tensor> &out_,       // batch_size x seqlen_q"
    doc = report(scenario(FA, e.replace(CUDA, old, "at::Tensor &out_,       // batch_size")))
    kinds = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "call-value-kind-differs"]
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert kinds and kinds[0]["details"]["value"] == "None", kinds
    assert {s["file"] for s in kinds[0]["sides"]} == {FA_PY, CUDA}


# -- the binding engine itself --------------------------------------------------------------

def _named(*names: str, defaults: tuple[str, ...] = ()) -> Signature:
    site = None
    return Signature("py::arg list", site, tuple(  # type: ignore[arg-type]
        LayerParam(i, n, POSITIONAL, n in defaults) for i, n in enumerate(names)))


def _passed(*texts: str):
    from impact.graph.binding_records import Passed
    return tuple(Passed(t, ValueKind.EXPR) for t in texts)


def test_bind_follows_python_rules() -> None:
    sig = _named("out", "input", "scale", defaults=("scale",))
    ok = bind(Shape(_passed("o", "i"), ()), sig)
    assert ok.failure is None and [p.name for p in ok.defaulted] == ["scale"]
    many = bind(Shape(_passed("o", "i", "s", "x"), ()), sig)
    assert many.refusal == {"refusal": "too-many-positional", "given": 4, "most": 3}
    assert bind(Shape(_passed("o", "i"), (("out", _passed("o")[0]),)), sig).failure \
        == Refusal.GIVEN_TWICE
    assert bind(Shape(_passed("o", "i"), (("alpha", _passed("a")[0]),)), sig).failure \
        == Refusal.UNKNOWN_KEYWORD
    assert bind(Shape(_passed("o"), ()), sig).refusal["missing"] == ("input",)
    # A spread hides what it passes: nothing is missing for sure.
    assert bind(Shape(_passed("o"), (), star=True), sig).failure is None


def test_a_bare_m_def_takes_every_cpp_parameter_by_position() -> None:
    from impact.graph.binding_records import CppFunction, CppParam, PyBinding
    from impact.kinds import FactKind
    key = ("p", "k", "n", "d")
    decl = CppFunction(FactKind.CPP_FUNCTION, "a.cpp", 1, "f", key, key, "f",
                       (CppParam("at::Tensor&", False), CppParam("double", False)), False, False)
    bare = PyBinding(FactKind.PYBIND_DEF, "a.cpp", 2, "f", key, key, "f", "f", None, None)
    sig = pybind_signature(bare, [decl])
    assert sig is not None and [p.name for p in sig.params] == [None, None]
    assert bind(Shape(_passed("t"), (("scale", _passed("s")[0]),)), sig).failure \
        == Refusal.NO_NAMES
    named = PyBinding(FactKind.PYBIND_DEF, "a.cpp", 2, "f", key, key, "f", "f",
                      (PyArg("t", False), PyArg("scale", True, "1.0", kw_only=True)), None)
    sig = pybind_signature(named, [decl])
    assert sig is not None and sig.params[1].type == "double"
    assert bind(Shape(_passed("t", "s"), ()), sig).refusal["most"] == 1


def test_takes_judges_literals_against_cpp_types() -> None:
    assert takes("std::optional<at::Tensor>&", ValueKind.NONE) is True
    assert takes("const at::Tensor&", ValueKind.NONE) is False
    assert takes("const at::Tensor&", ValueKind.FLOAT) is False
    assert takes("double", ValueKind.INT) is True
    assert takes("int64_t", ValueKind.FLOAT) is False
    assert takes("bool", ValueKind.INT) is True
    assert takes("std::string", ValueKind.INT) is False
    assert takes("Tensor?", ValueKind.NONE) is True
    assert takes("MyConfig", ValueKind.INT) is None
    assert takes("const at::Tensor&", ValueKind.EXPR) is None


def test_same_typed_cpp_parameters_swapped_behind_a_bare_m_def_break() -> None:
    """No py::arg list: the C++ declaration's names say which parameter a slot is. Swapping
    two `int`s there moves the unchanged call's values; the same call rewritten to follow
    an inserted parameter moves none."""
    swap = e.replace(CUDA, "        int window_size_left,\n        int window_size_right,",
                     "        int window_size_right,\n        int window_size_left,")
    doc = report(scenario(FA, swap))
    moved = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "call-argument-moved"]
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert moved and "window_size_left" in moved[0]["details"]["moves"], moved
    assert moved[0]["details"]["base_form"] != moved[0]["details"]["head_form"]


FWD_TAIL = ("causal,\n        window_size_left, window_size_right, softcap, return_softmax, None,\n"
            "    )\n    return out, softmax_lse, S_dmask, rng_state\n\n\n"
            '@torch.library.register_fake("flash_attn::_flash_attn_forward")')


def test_a_call_that_passes_another_value_is_never_none() -> None:
    """Every copy agrees before and after, but the call passes 0.0 where it passed
    `softcap`: the kernel runs with other arguments."""
    doc = report(scenario(FA, e.replace(FA_PY, FWD_TAIL, FWD_TAIL.replace(
        "window_size_right, softcap,", "window_size_right, 0.0,"))))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    values = [r for r in doc["rows"] if r["reason"] == "call-passes-other-values"]
    assert values and values[0]["details"]["values"] == "softcap: softcap -> 0.0", values


def test_a_call_added_or_gone_is_never_none() -> None:
    added = "\n\ndef _again(q, k, v):\n    return flash_attn_gpu.fwd(" \
            "q, k, v, None, None, 0.0, 1.0, False, -1, -1, 0.0, False, None)\n"
    doc = report(scenario(FA, e.append(FA_PY, added)))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert "call-added" in reasons(doc, "changed"), doc["rows"]
    doc = report(scenario(tree_with(FA, e.append(FA_PY, added)),
                          e.replace(FA_PY, added, "\n")))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert "call-gone" in reasons(doc, "changed"), doc["rows"]


WRAPPER_HEAD = "def _flash_attn_forward(\n    q: torch.Tensor,\n    k: torch.Tensor,\n"


def test_a_python_wrapper_of_an_extension_is_a_layer_its_callers_bind_to() -> None:
    """`_flash_attn_forward` calls into the extension; a required parameter inserted
    before `k` leaves its caller one value short and shifts the rest: BREAKS, naming the
    wrapper and its caller. The same insertion with a default at the end breaks no call."""
    doc = report(scenario(FA, e.replace(FA_PY, WRAPPER_HEAD, WRAPPER_HEAD.replace(
        "    k: torch.Tensor,\n", "    scale_q: torch.Tensor,\n    k: torch.Tensor,\n"))))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    failed = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "call-does-not-bind"
              and r["details"]["layer"] == "Python function"]
    assert failed and failed[0]["subject"].startswith("_flash_attn_forward|"), failed
    assert failed[0]["details"]["call"] == "the call in flash_attn_func()"
    tail = "    return_softmax: bool,\n) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, " \
           "torch.Tensor]:\n    q, k, v = [maybe_contiguous(x) for x in (q, k, v)]\n" \
           "    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.fwd("
    doc = report(scenario(FA, e.replace(FA_PY, tail, tail.replace(
        "    return_softmax: bool,\n", "    return_softmax: bool,\n    extra: int = 0,\n"))))
    assert not [r for r in charged_rows(doc, "mismatch")
                if r["details"].get("layer") == "Python function"], doc["rows"]


def test_wrappers_are_module_level_functions_that_reach_an_extension() -> None:
    """A module-level function that calls the extension, or one that calls such a
    function of its file, is a wrapper; a method of the same name is not (its callers
    reach it through an object), nor is a function that calls neither."""
    from impact.bindings.python_facts import extract_binding_python_facts

    source = (b"import ext_cuda\n\n"
              b"def _fwd(q, k):\n    return ext_cuda.fwd(q, k)\n\n"
              b"def attn(q, k, scale=1.0):\n    return _fwd(q, k)\n\n"
              b"def helper(x):\n    return x\n\n"
              b"class Comm:\n    def fused(self, x):\n        return ext_cuda.fused(x)\n\n"
              b"def user(q, k):\n    return attn(q, k), helper(q)\n")
    facts = extract_binding_python_facts("pkg/iface.py", source)
    wrappers = {f.name for f in facts if f.kind == "op-wrapper"}
    assert wrappers == {"_fwd", "attn", "user"}
    calls = {(f.name, f.data["receiver"], f.data["function"]) for f in facts
             if f.kind == "op-call"}
    assert ("attn", ".", "user") in calls and ("_fwd", ".", "attn") in calls
    assert not any(name == "helper" for name, _, _ in calls)


def test_a_module_beside_the_caller_shadows_one_of_that_name_elsewhere() -> None:
    """hopper scripts `import flash_attn_interface`: the file beside them, not
    flash_attn/flash_attn_interface.py, is the module they reach."""
    caller = ("hopper/attn_helpers.py",
              "from flash_attn_interface import flash_attn_func\n\n\n"
              "def test_it(q, k, v):\n    flash_attn_func(q, k, v, causal=False)\n")
    base = tree_with(FA, e.append(*caller))
    doc = report(scenario(base, e.replace(caller[0], "causal=False", "causal=True")))
    values = [r for r in doc["rows"] if r["reason"] == "call-passes-other-values"]
    assert values, doc["rows"]
    assert {s["file"] for r in values for s in r["sides"]} == {
        "hopper/attn_helpers.py", "hopper/flash_attn_interface.py"}, values


VARLEN_CALL = ("        alibi_slopes, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, "
               "zero_tensors,")
TYPO = VARLEN_CALL.replace("max_seqlen_k,", "max_seqlen_k")


def test_a_typo_in_one_function_leaves_the_other_calls_of_the_file_judged() -> None:
    """The interface no longer compiles (a comma dropped in the varlen wrapper), and the
    C++ `fwd` gains a parameter without a default: the forward wrapper's call, which
    still parses on its own, fails to bind. BREAKS; the file is also not understood."""
    extra = "        const bool return_softmax,\n        std::optional<at::Generator> gen_,\n" \
            "        bool deterministic)"
    doc = report(scenario(FA, e.replace(FA_PY, VARLEN_CALL, TYPO), e.replace(
        CUDA, "        const bool return_softmax,\n        std::optional<at::Generator> gen_)",
        extra)))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    assert any(r["reason"] == "call-does-not-bind" and r["subject"].startswith("fwd|")
               for r in charged_rows(doc, "mismatch")), doc["rows"]
    # The varlen call, in the statement that does not parse, is unread, not gone.
    assert not [r for r in doc["rows"] if r["reason"] == "call-gone"], doc["rows"]
    assert any(r["contract"] == "surface" and r["files"] == [FA_PY] if "files" in r else
               r["contract"] == "surface" and r["sides"][0]["file"] == FA_PY
               for r in doc["rows"] if r["status"] == "changed"), doc["rows"]


def test_a_problem_in_a_file_the_base_could_not_read_is_changed_not_breaks() -> None:
    """The base's varlen wrapper does not compile and the C++ `varlen_fwd` already takes
    one more parameter; the change fixes the typo: the call now read fails to bind, but
    nothing shows the base's did not (it could not be read): changed."""
    more = "               std::optional<at::Generator> gen_,\n               bool deterministic)"
    base = tree_with(FA, e.replace(FA_PY, VARLEN_CALL, TYPO), e.replace(
        CUDA, "               std::optional<at::Generator> gen_)", more))
    doc = report(scenario(base, e.replace(FA_PY, TYPO, VARLEN_CALL)))
    assert doc["verdict"]["kind"] == "NEEDS-DEVICE", doc["rows"]
    assert any(r["reason"] == "call-does-not-bind" and r["status"] == "changed"
               for r in doc["rows"]), doc["rows"]


def test_an_ater_era_stub_names_its_module_and_sources_in_its_decorator() -> None:
    """aiter's 2024 stubs (package `ater`) spell their build in the decorator: the module
    in `md_name=`, the sources in `srcs=` (f-strings over a folder constant)."""
    from impact.bindings.python_facts import extract_binding_python_facts
    from impact.graph.bindings import Copies, _copy

    source = (b"from ..jit.core import compile_ops, ATER_CSRC_DIR\n"
              b"@compile_ops(srcs=[f'{ATER_CSRC_DIR}/py_itfs_ck/norm_kernels.cu',\n"
              b"                   f'{ATER_CSRC_DIR}/py_itfs_ck/norm_pybind.cu'],\n"
              b"             md_name='norm_module', fc_name='layernorm2d_fwd')\n"
              b"def layer_norm(input, weight, bias, epsilon): ...\n")
    facts = extract_binding_python_facts("ater/ops/norm.py", source)
    stub = next(f for f in facts if f.kind == "op-stub")
    assert stub.data["module"] == "norm_module"
    assert stub.data["sources"] == ["py_itfs_ck/norm_kernels.cu", "py_itfs_ck/norm_pybind.cu"]
    cpp = b'#include <pybind11/pybind11.h>\nvoid layernorm2d_fwd(int a, int b, int c, int d);\n' \
          b'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n    m.def("layernorm2d_fwd", ' \
          b'&layernorm2d_fwd, py::arg("input"), py::arg("weight"), py::arg("bias"), ' \
          b'py::arg("epsilon"));\n}\n'
    from impact.bindings.cpp_facts import extract_binding_cpp_facts
    mine = extract_binding_cpp_facts("csrc/py_itfs_ck/norm_pybind.cu", cpp)
    other = extract_binding_cpp_facts("csrc/other/norm_pybind2.cu", cpp)
    copies = Copies.of([_copy("ater/ops/norm.py", f, ["."]) for f in facts] + [
        _copy("csrc/py_itfs_ck/norm_pybind.cu", f, ["."]) for f in mine] + [
        _copy("csrc/other/norm_pybind2.cu", f, ["."]) for f in other])
    stubs = copies.stubs["layernorm2d_fwd"]
    scoped = copies.scoped(stubs[0], copies.pybind["layernorm2d_fwd"])
    assert [b.path for b in scoped] == ["csrc/py_itfs_ck/norm_pybind.cu"]


def test_a_definition_that_leaves_its_declaration_behind_breaks() -> None:
    """The kernels' definition of silu_and_mul gains a parameter; the header and the
    py::arg list keep two: the declaration the binding compiles against is defined
    nowhere (an undefined symbol when the module loads)."""
    kernels = "csrc/kernels/activation_kernels.cu"
    doc = report(scenario(AITER, e.replace(
        kernels, "void silu_and_mul(torch::Tensor& out, torch::Tensor& input)",
        "void silu_and_mul(torch::Tensor& out, torch::Tensor& input, float scale)")))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    undefined = [r for r in charged_rows(doc, "mismatch")
                 if r["reason"] == "declaration-without-definition"]
    assert undefined and {s["file"] for s in undefined[0]["sides"]} == {ACT_H, kernels}


def test_a_stub_no_binding_serves_names_the_op_its_module_and_the_closest_bound_names() -> None:
    """A stub renamed so that its module binds no op of its name: the finding names the
    op, the module it loads and the bound names closest to it."""
    doc = report(scenario(AITER, e.replace("aiter/ops/norm.py", 'fc_name="layernorm2d_fwd"',
                                           'fc_name="layernorm2d_fw"')))
    assert doc["verdict"]["kind"] == "BREAKS", doc["rows"]
    [row] = [r for r in charged_rows(doc, "mismatch") if r["reason"] == "stub-unbound"]
    assert row["details"]["symbol"] == "layernorm2d_fw"
    assert row["details"]["loads"] == "module_norm"
    assert "layernorm2d_fwd" in row["details"]["closest_bound"].split(", ")
    assert row["says"].startswith("stub 'layernorm2d_fw' finds no binding of that name")
    assert "(it loads module_norm)" in row["says"]


@pytest.mark.parametrize(("prelude", "module"), [
    (b'MD = "module_x_gfx1250"\n', "module_x_gfx1250"),
    (b'MD = "module_x"\nMD = "module_y"\n', None),      # bound twice: no one value
    (b'MD = "module_x"\ndef f():\n    global MD\n    MD = "module_y"\n', None),
    (b"MD = name_of()\n", None),                         # not a literal
])
def test_a_stub_module_named_by_a_constant_reads_as_the_literal(prelude, module) -> None:
    """`@compile_ops(MD_NAME, fc_name=...)` with `MD_NAME = "module_x"` at module level
    names that module, so the stub pairs with that module's binding alone."""
    from impact.bindings.python_facts import extract_binding_python_facts
    from impact.facts import FactKind

    source = prelude + (b"from aiter.jit.core import compile_ops\n\n"
                        b'@compile_ops(MD, fc_name="dispose")\n'
                        b"def dispose_x(_fa: int) -> None: ...\n")
    facts = extract_binding_python_facts("aiter/ops/x.py", source)
    (stub,) = [f for f in facts if f.kind == FactKind.OP_STUB]
    assert stub.data["module"] == module and stub.data["fc_name"] == "dispose"
