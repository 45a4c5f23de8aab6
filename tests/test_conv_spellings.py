"""Spellings of a kernel-argument break in tree B's conv family (another hand's tree).

Each case is a base tree and a head edit where the copies plainly disagree; each reads
BREAKS with the builder and the C++ copy both named as file:line. A loop over literal
names is unrolled (exact, not a guess); a refactor into that loop has no mismatch.
"""

from __future__ import annotations

import pytest
from harness import report, verdict

from impact.fixtures import Change, Scenario
from impact.fixtures import scenarios_b as sb
from impact.fixtures.edits import replace
from impact.fixtures.tree import tree_files

TREE = tree_files(sb.TREE)
CONV, PACK, PIN = sb.CONV, sb.CONV_PACK, sb.CONV_PIN
LAUNCH = "        return _code.launch(stream, x, w, y, alpha, n, h, wd);\n"
WD = '    wd = b.param("w", ir.I32)\n'
LIST_W = '    args.push_back(int32Arg("w", 36));\n'
PIN_W = '        ing::KernelArgument(ing::KernelArgKind::by_value, 4, 36, "w"),\n'
SHAPE = '    n = b.param("n", ir.I32)\n    h = b.param("h", ir.I32)\n' + WD
LOOPED = ('    ext = []\n    for dim in ("n", "h", "w"):\n'
          '        ext.append(b.param(dim, ir.I32))\n    n, h, wd = ext[0], ext[1], ext[2]\n')
BIAS_LAUNCH = '        return _code.launch(stream, x, w, y, alpha, n, h, wd, t.device("B"));\n'
HALF = '    args.emplace_back(KernelArgKind::by_value, 2, 40, "beta");\n'


def apply(files: dict, edits: tuple) -> dict:
    files = dict(files)
    for edit in edits:
        edit(files)
    return files


# A half-width scalar (F16, 2 bytes) in every copy.
BETA = (replace(CONV, WD, WD + '    beta = b.param("beta", ir.F16)\n'),
        replace(PACK, LIST_W, LIST_W + HALF),
        replace(PIN, PIN_W, PIN_W + '        ing::KernelArgument(ing::KernelArgKind::by_value, '
                '2, 40, "beta"),\n'),
        replace(PACK, LAUNCH, "        const std::uint16_t beta = 0;\n"
                "        return _code.launch(stream, x, w, y, alpha, n, h, wd, beta);\n"))
# A bias pointer the builder always declares, in every copy.
BIAS = (replace(CONV, WD, WD + '    bias = b.param("bias_ptr", ptr, **_RO)\n'),
        replace(PACK, LIST_W, LIST_W + '    args.push_back(bufferArg("bias_ptr", 40));\n'),
        replace(PIN, PIN_W, PIN_W + '        ing::KernelArgument('
                'ing::KernelArgKind::global_buffer, 8, 40, "bias_ptr"),\n'),
        replace(PACK, LAUNCH, BIAS_LAUNCH))
# The extents' type through a module-level name the builder reads.
LEN = (replace(CONV, '_RO = {"noalias": True, "readonly": True}\n',
               '_RO = {"noalias": True, "readonly": True}\nLEN_T = ir.I32\n'),
       replace(CONV, SHAPE, SHAPE.replace("ir.I32", "LEN_T")))
LOOP = (replace(CONV, SHAPE, LOOPED),)
DIMS = '    for dim in ("n", "h", "w"):'

CASES = {
    "builder loop refactor": (TREE, LOOP),
    "a loop of extents gains a name": (
        apply(TREE, LOOP), (replace(CONV, DIMS, DIMS.replace('"w")', '"w", "c")')),)),
    "a loop of extents swaps two": (
        apply(TREE, LOOP), (replace(CONV, DIMS, DIMS.replace('"h", "w"', '"w", "h"')),)),
    "make_tuple with two values swapped": (TREE, (replace(
        PACK, LAUNCH, "        return _code.launch(stream, std::make_tuple(x, w, y, alpha, n, "
        "wd, h));\n"),)),
    "a make_tuple variable with two values swapped": (TREE, (replace(
        PACK, LAUNCH, "        auto packed = std::make_tuple(x, w, y, alpha, n, wd, h);\n"
        "        return _code.launch(stream, packed);\n"),)),
    "a launch omitting a slot when the feature is unused": (apply(TREE, BIAS), (replace(
        PACK, BIAS_LAUNCH, '        if(t.has("B"))\n        {\n    ' + BIAS_LAUNCH
        + "        }\n" + LAUNCH),)),
    "a half-width scalar dropped from the pack": (apply(TREE, BETA),
                                                  (replace(PACK, HALF, ""),)),
    "a length type widened through a module variable": (
        apply(TREE, LEN), (replace(CONV, "LEN_T = ir.I32\n", "LEN_T = ir.I64\n"),)),
    "the builder gains a parameter no copy has": (
        TREE, (replace(CONV, WD, WD + '    beta = b.param("beta", ir.F32)\n'),)),
}


@pytest.mark.parametrize("name", [n for n in CASES if n != "builder loop refactor"])
def test_each_spelling_breaks_naming_both_sides(name: str) -> None:
    base, head = CASES[name]
    doc = report(Scenario(base=base, head=(Change("head", edits=head),)))
    assert verdict(doc) == "BREAKS"
    assert any(r["status"] == "mismatch" and not r["preexisting"]
               and {CONV, PACK} <= {s["file"] for s in r["sides"] if s["line"]}
               for r in doc["rows"]), name


def test_a_refactor_into_a_literal_loop_has_no_mismatch() -> None:
    base, head = CASES["builder loop refactor"]
    doc = report(Scenario(base=base, head=(Change("head", edits=head),)))
    assert not [r for r in doc["rows"] if r["status"] == "mismatch"]
