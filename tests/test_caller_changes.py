"""Callers that change what they pass to a bound op read `changed` at least (issue 25, B).

Every copy of an op's signature (the stub, the pybind `m.def`, the C++ declaration) may
agree before and after, yet a caller that swaps two tensors, passes another keyword value,
flips a flag, or changes what its body computes before the call runs the kernel on other
arguments. None of these may read `NONE`: the bindings check binds every call at both
revisions and a changed call site, or a changed caller body, is a changed copy.

A call of a stub whose `fc_name` is another name (`layer_norm`, bound as
`layernorm2d_fwd`) read `NONE` whatever it passed until its op's routes were followed
under the stub's symbol and its calls counted as copies of that op.
"""

from __future__ import annotations

import pytest
from harness import report, scenario

from impact.fixtures import edits as e
from impact.fixtures.tree import tree_files

AITER = tree_files("aiter_tree")
FA = tree_files("flash_attention_tree")
UTILS = "aiter/dist/utils.py"
FA_PY = "flash_attn/flash_attn_interface.py"
FA_CALL = ("        q, k, v, None, alibi_slopes, dropout_p, softmax_scale, causal,\n"
           "        window_size_left, window_size_right, softcap, return_softmax, None,\n")
FA_BODY = ("    q, k, v = [maybe_contiguous(x) for x in (q, k, v)]\n"
           "    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.fwd(\n")

CHANGES = {
    # aiter: positional tensors, a keyword's value, a keyword dropped to its default
    "aiter tensors swapped": (AITER, e.replace(UTILS, "silu_and_mul(out, x)",
                                               "silu_and_mul(x, out)")),
    "aiter keyword value": (AITER, e.replace(UTILS, "use_model_sensitive_rmsnorm=0)",
                                             "use_model_sensitive_rmsnorm=1)")),
    "aiter keyword flag value": (AITER, e.replace(UTILS, "dispatch_policy=1,",
                                                  "dispatch_policy=0,")),
    "aiter keyword passed another name": (AITER, e.replace(
        UTILS, "local_expert_mask=mask,", "local_expert_mask=None,")),
    "aiter keyword and positional swapped": (AITER, e.replace(
        UTILS, "bias, eps, x_bias=residual)", "residual, eps, x_bias=bias)")),
    "aiter keyword value to a stub with another fc_name": (AITER, e.replace(
        UTILS, "x_bias=residual)", "x_bias=None)")),
    "aiter tensors swapped by keyword": (AITER, e.replace(
        UTILS, "rms_norm(out, x, weight, epsilon=eps,",
        "rms_norm(out=x, input=out, weight=weight, epsilon=eps,")),
    "aiter tensors swapped in a star": (AITER, e.replace(UTILS, "silu_and_mul(out, x)",
                                                         "silu_and_mul(*(x, out))")),
    "aiter tensors swapped in a double star": (AITER, e.replace(
        UTILS, "silu_and_mul(out, x)", "silu_and_mul(**{'out': x, 'input': out})")),
    "aiter call through an alias": (AITER, e.replace(
        UTILS, "    silu_and_mul(out, x)\n", "    f = silu_and_mul\n    f(x, out)\n")),
    "aiter call through a lambda": (AITER, e.replace(
        UTILS, "    silu_and_mul(out, x)\n",
        "    (lambda a, b: silu_and_mul(b, a))(out, x)\n")),
    "aiter caller default": (AITER, e.replace(UTILS, "unit_size, mask=None):",
                                              "unit_size, mask=1):")),
    # flash-attention: positional tensors swapped, a flag flipped, a flag made constant
    "fa tensors swapped": (FA, e.replace(FA_PY, FA_CALL, FA_CALL.replace(
        "q, k, v, None,", "k, q, v, None,"))),
    "fa flag negated": (FA, e.replace(FA_PY, FA_CALL, FA_CALL.replace(
        "softmax_scale, causal,", "softmax_scale, not causal,"))),
    "fa flag made constant": (FA, e.replace(FA_PY, FA_CALL, FA_CALL.replace(
        "return_softmax, None,", "True, None,"))),
    "fa keyword values swapped in a public caller": (FA, e.replace(
        FA_PY, "        window_size_left=window_size[0],\n"
        "        window_size_right=window_size[1],\n        softcap=softcap,\n"
        "        alibi_slopes=alibi_slopes,\n"
        "        return_softmax=return_attn_probs and dropout_p > 0,\n    )",
        "        window_size_left=window_size[1],\n"
        "        window_size_right=window_size[0],\n        softcap=softcap,\n"
        "        alibi_slopes=alibi_slopes,\n"
        "        return_softmax=return_attn_probs and dropout_p > 0,\n    )")),
    "fa wrapper default flipped": (FA, e.replace(
        FA_PY, "    zero_tensors: bool = False,\n) -> tuple[torch.Tensor, torch.Tensor, "
        "torch.Tensor, torch.Tensor]:\n    q, k, v = [maybe_contiguous(x) for x in (q, k, v)]"
        "\n    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.varlen_fwd(",
        "    zero_tensors: bool = True,\n) -> tuple[torch.Tensor, torch.Tensor, "
        "torch.Tensor, torch.Tensor]:\n    q, k, v = [maybe_contiguous(x) for x in (q, k, v)]"
        "\n    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.varlen_fwd(")),
    # the caller's body, not the call, changes what is passed
    "aiter caller body": (AITER, e.replace(UTILS, "    silu_and_mul(out, x)\n",
                                           "    x = x * 2\n    silu_and_mul(out, x)\n")),
    "aiter caller body after the call": (AITER, e.replace(
        UTILS, "    silu_and_mul(out, x)\n    return out\n",
        "    silu_and_mul(out, x)\n    return x\n")),
    "fa caller body": (FA, e.replace(FA_PY, FA_BODY, FA_BODY.replace(
        "(q, k, v)]\n", "(q, k, v)]\n    softmax_scale = softmax_scale * 2\n"))),
    "fa caller body reorders tensors": (FA, e.replace(FA_PY, FA_BODY, FA_BODY.replace(
        "for x in (q, k, v)]", "for x in (q, v, k)]"))),
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_caller_that_changes_what_it_passes_is_never_none(name: str) -> None:
    tree, edit = CHANGES[name]
    doc = report(scenario(tree, edit))
    assert doc["verdict"]["kind"] in ("NEEDS-DEVICE", "BREAKS"), [
        (r["contract"], r["status"], r["reason"], r["subject"]) for r in doc["rows"]]
    path = UTILS if tree is AITER else FA_PY
    rows = [r for r in doc["rows"] if r["status"] in ("changed", "mismatch")
            and (path in {s["file"] for s in r["sides"]} or r["subject"].endswith(path))]
    assert rows, doc["rows"]


def test_a_call_rewritten_to_bind_the_same_stays_none() -> None:
    """`x_bias=residual` and `residual` in fifth place bind the same parameter of
    `layer_norm` (bound as `layernorm2d_fwd`): judged under that op, consistent, and no
    second row speaks for the stub's own name."""
    doc = report(scenario(AITER, e.replace(UTILS, "x_bias=residual)", "residual)")))
    assert doc["verdict"]["kind"] == "NONE", doc["rows"]
    assert {r["subject"] for r in doc["rows"] if r["contract"] == "bindings"} == {
        "layernorm2d_fwd:consistent"}, doc["rows"]
