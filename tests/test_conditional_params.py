"""A kernel argument under a condition, in tree B's conv family (written in another hand).

Added under a flag in the builder and in every copy under the same condition (the C++
signature's `push_back` under `if(useBias)`, a second `launch()` with the extra argument):
never BREAKS. The reverse, an argument every copy passes that the builder now declares
only under a condition: BREAKS, naming the copy and the builder as file:line.
"""

from __future__ import annotations

import pytest
from harness import report, verdict

from impact.fixtures import Change, Scenario
from impact.fixtures import scenarios_b as sb
from impact.fixtures.edits import replace
from impact.fixtures.tree import tree_files

TREE = tree_files(sb.TREE)
CONV, PACK = sb.CONV, sb.CONV_PACK
LAUNCH = "        return _code.launch(stream, x, w, y, alpha, n, h, wd);\n"

BIAS_EVERYWHERE = (
    replace(CONV, "    waves_per_eu: int = 1\n",
            "    waves_per_eu: int = 1\n    use_bias: bool = False\n"),
    replace(CONV, '    wd = b.param("w", ir.I32)\n', '    wd = b.param("w", ir.I32)\n'
            '    if spec.use_bias:\n        bias = b.param("bias_ptr", ptr, **_RO)\n'),
    replace(PACK, "std::vector<KernelArgument> convFwdKernelSignature()\n",
            "std::vector<KernelArgument> convFwdKernelSignature(bool useBias)\n"),
    replace(PACK, '    args.push_back(int32Arg("w", 36));\n    return args;',
            '    args.push_back(int32Arg("w", 36));\n    if(useBias)\n    {\n'
            '        args.push_back(bufferArg("bias_ptr", 40));\n    }\n    return args;'),
    replace(PACK, "convFwdKernelSignature();\n", "convFwdKernelSignature(_useBias);\n"),
    replace(PACK, LAUNCH, "        if(_useBias)\n        {\n            return _code.launch("
            'stream, x, w, y, alpha, n, h, wd, t.device("B"));\n        }\n' + LAUNCH),
)
W_UNDER_A_CONDITION = (
    replace(CONV, '    wd = b.param("w", ir.I32)\n',
            '    if spec.tile_k != 32:\n        wd = b.param("w", ir.I32)\n'),
)
W_UNDER_A_LOOP = (
    replace(CONV, '    wd = b.param("w", ir.I32)\n',
            '    for _once in (1,):\n        wd = b.param("w", ir.I32)\n'),
)


def _report(edits: tuple) -> dict:
    return report(Scenario(base=TREE, head=(Change("head", edits=edits),)))


def _mismatches(doc: dict) -> list[dict]:
    return [r for r in doc["rows"] if r["status"] == "mismatch" and not r["preexisting"]]


def test_a_parameter_under_a_flag_in_every_copy_never_breaks() -> None:
    doc = _report(BIAS_EVERYWHERE)
    assert _mismatches(doc) == []
    assert verdict(doc) == "NEEDS-DEVICE gfx950"


def test_an_unconditional_slot_made_conditional_on_one_side_breaks() -> None:
    doc = _report(W_UNDER_A_CONDITION)
    assert verdict(doc) == "BREAKS"
    rows = [r for r in _mismatches(doc)
            if r["reason"] == "argument-made-conditional-on-python-side-only"]
    assert {r["subject"].split(":")[0] for r in rows} >= {PACK, sb.CONV_PIN}
    for row in rows:
        named = {s["file"] for s in row["sides"] if isinstance(s["line"], int) and s["line"] > 0}
        assert CONV in named and row["subject"].split(":")[0] in named
        assert row["details"]["param"] == "w" and "tile_k" in row["details"]["guard"]


@pytest.mark.parametrize("edits", [W_UNDER_A_LOOP], ids=["loop"])
def test_a_loop_is_not_read_as_a_condition(edits: tuple) -> None:
    assert not any(r["reason"] == "argument-made-conditional-on-python-side-only"
                   for r in _mismatches(_report(edits)))
