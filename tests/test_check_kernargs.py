"""The kernargs check on scenario repositories built from the synthetic rocKE tree."""

from __future__ import annotations

import pytest
from harness import by_subject, check_rows
from memory import tree_with

from impact.checks import charged as charge
from impact.checks.kernargs import KernargsCheck
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import open_views
from impact.rows import Row, Status

# The AOT catalog family restates the gfx950 list a further time; its own tests live in
# tests/test_verdicts.py, so these tables stay about the packs, pins and launch() calls.
TREE = {p: c for p, c in rocke_tree_files().items() if "/rocke/aot_catalog/" not in p}
PIN = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
       "TestGfx950AttentionDenseSignature.cpp")
UNIFIED_PACK = f"{e.PACKS}/Gfx950UnifiedAttentionNative.cpp"
TILED_PACK = f"{e.PACKS}/Gfx950AttentionTiled2dNative.cpp"
TILED = f"{e.KERNELS}/gfx950/attention_tiled_2d.py"

LIST = f"{e.GFX950_DENSE_PACK}:attentionDenseKernelSignature"
LAUNCH = f"{e.GFX950_DENSE_PACK}:launch:launcher"
PIN_LIST = f"{PIN}:pythonAbi.expected"
REDUCE = f"{UNIFIED_PACK}:unifiedAttentionReduceSignature"
SEGMENT = f"{UNIFIED_PACK}:unifiedAttentionSegmentSignature"
TILED_LIST = f"{TILED_PACK}:attentionTiled2dKernelSignature.args"

M, C, INERT = Status.MISMATCH, Status.CHANGED, Status.INERT


def after(name: str, type_name: str = "I32") -> str:
    return f'    {name} = b.param("{name}", {type_name})\n'


def three_always_params() -> tuple[e.Edit, ...]:
    return (
        e.add_builder_param(e.GFX950_DENSE, "a1", "I32"),
        e.add_builder_param(e.GFX950_DENSE, "a2", "I32", after=after("a1")),
        e.add_builder_param(e.GFX950_DENSE, "a3", "I32", after=after("a2")),
    )


def everywhere(name: str, type_name: str = "I32", *, launch: str = "dropoutSeed",
               size: int = 4) -> tuple[e.Edit, ...]:
    """One always-argument added to the gfx950 builder and to every copy of its list."""
    return (
        e.add_builder_param(e.GFX950_DENSE, name, type_name),
        e.add_pack_argument(e.GFX950_DENSE_PACK, name, size=size),
        e.add_pack_argument(PIN, name, size=size),
        e.add_launch_argument(e.GFX950_DENSE_PACK, launch),
    )


CONDITIONAL = e.insert_after(
    e.GFX950_DENSE, '        extras["block_table_stride"] = b.param("block_table_stride", I32)\n',
    '    if spec.use_alibi:\n'
    '        extras["alibi_slopes"] = b.param("alibi_slopes", PtrType(F32), readonly=True)\n')
# The pointee type changes; the argument stays a global_buffer of 8 bytes.
POINTEE = e.replace(e.GFX950_DENSE, '\n    q = b.param("q_ptr", PtrType(elem)',
                    '\n    q = b.param("q_ptr", PtrType(F16)')
MODULE_TYPE = e.insert_after(e.GFX950_DENSE, "NEG_BIG = -1.0e30\n", "SEED_T = I64\n")
LOCAL_BINDING = e.replace(
    e.GFX950_DENSE, "    elem = _elem_type(spec)\n    b = IRBuilder(spec.kernel_name())\n"
    '    q = b.param("q_ptr"',
    "    elem = _elem_type(spec)\n    seed_t = I32\n    b = IRBuilder(spec.kernel_name())\n"
    '    q = b.param("q_ptr"')
# The always-argument `batch` becomes guarded by a flag: only the guard changes.
BATCH_GUARDED = e.replace(
    e.GFX950_DENSE, '    batch = b.param("batch", I32)\n',
    '    batch = None\n    if spec.batched:\n        batch = b.param("batch", I32)\n')
REDUCE_RENAMED = e.replace(UNIFIED_PACK, '{"by_value", 4, 40, "num_seqs"},',
                           '{"by_value", 4, 40, "num_sequences"},')
REDUCE_DROPPED = e.replace(UNIFIED_PACK, '        {"global_buffer", 8, 24, "seq_lens"},\n', "")
PIN_SCALE_SIZE = e.replace(PIN, '{"by_value", 4, 32, "scale"},', '{"by_value", 8, 32, "scale"},')
PIN_PTR_SIZE = e.replace(PIN, '{"global_buffer", 8, 8, "k_ptr"},',
                         '{"global_buffer", 4, 8, "k_ptr"},')
PIN_SWAPPED = e.replace(
    PIN, '        {"by_value", 4, 36, "batch"},\n        {"by_value", 4, 40, "seqlen_q"},\n',
    '        {"by_value", 4, 36, "seqlen_q"},\n        {"by_value", 4, 40, "batch"},\n')
MODULE_SEED = (MODULE_TYPE, *everywhere("seed", "SEED_T"))
LOCAL_SEED = (LOCAL_BINDING, *everywhere("seed", "seed_t"))
TILED_DYNAMIC = (
    e.replace(TILED_PACK, '    return {\n        {"global_buffer", 8, 0, "q_ptr"},',
              '    std::vector<KernelArgument> args = {\n'
              '        {"global_buffer", 8, 0, "q_ptr"},'),
    # Grown in a loop over runtime data: truly dynamic (a plain push_back is read).
    e.replace(TILED_PACK, '        {"global_buffer", 8, 56, "alibi_slopes"},\n    };\n',
              '    };\n    for(const auto& extra : optionalArguments())\n'
              "        args.push_back(extra);\n"
              "    return args;\n"),
)


def rows_for(build, head: tuple[e.Edit, ...], *, base: tuple[e.Edit, ...] = (),
             target: tuple[e.Edit, ...] = ()) -> list[Row]:
    """The kernargs rows of `head` on the fixture tree with `base` applied (in memory), or
    of `head` merged onto `target`."""
    change = Scenario(base=tree_with(TREE, *base), head=(Change("head", edits=head),),
                      target=(Change("target", edits=target),) if target else ())
    if target:  # a merged view needs git's three-way merge: build the repository
        repo = build(change)
        source = open_views(repo.path, base="base", head="head", target_tip="target")
    else:
        source = change
    rows = check_rows(KernargsCheck(), source)
    assert all(r.contract == "kernargs" for r in rows)
    return rows


# (name, base edits, head edits, expected {subject: status}; subjects not named get no row
# unless `exact` is False)
CASES = [
    ("three always-arguments on the Python side only", (), three_always_params(),
     {LIST: M, PIN_LIST: M, LAUNCH: M}),
    ("one argument added everywhere", (), everywhere("dropout_seed"),
     {LIST: C, PIN_LIST: C, LAUNCH: C}),
    ("conditional argument the copies leave out", (), (CONDITIONAL,),
     {LIST: C, PIN_LIST: C, LAUNCH: C}),
    ("only which arguments are conditional changes", (), (BATCH_GUARDED,),
     {LIST: C, PIN_LIST: C, LAUNCH: C}),
    ("type held in a module variable is resolved: I64 is not by_value/4", (), MODULE_SEED,
     {LIST: M, PIN_LIST: M, LAUNCH: C}),
    ("type held in a function variable cannot be resolved", (), LOCAL_SEED,
     {LIST: C, PIN_LIST: C, LAUNCH: C}),
    ("pointee type changes, argument list does not", (), (POINTEE,),
     {LIST: INERT, PIN_LIST: INERT, LAUNCH: INERT}),
    ("launch() loses an argument", (), (e.drop_launch_argument(e.GFX950_DENSE_PACK,
                                                               "seqlenKv"),),
     {LAUNCH: M}),
    ("test pin orders two scalars differently", (), (PIN_SWAPPED,), {PIN_LIST: M}),
    ("test pin gives a pointer a non-pointer size", (), (PIN_PTR_SIZE,), {PIN_LIST: M}),
    ("reduce list renames an entry", (), (REDUCE_RENAMED,), {REDUCE: M}),
    ("reduce list drops an entry", (), (REDUCE_DROPPED,), {REDUCE: M}),
    ("comment edit in the builder", (), (e.edit_comment(e.GFX950_DENSE),), {}),
    ("dynamic list, only the builder changes", TILED_DYNAMIC,
     (e.add_builder_param(TILED, "dropout_seed", "I32"),),
     {TILED_LIST: C, f"{TILED_PACK}:launch:launcher": M}),
]


@pytest.mark.parametrize(("name", "base", "head", "expected"), CASES, ids=[c[0] for c in CASES])
def test_kernargs_table(build, name, base, head, expected) -> None:
    rows = rows_for(build, head, base=base)
    assert by_subject(rows) == expected
    for row in rows:
        assert charge(row).preexisting is False
        assert row.archs


def test_python_only_arguments_are_charged_to_the_change(build) -> None:
    rows = rows_for(build, three_always_params())
    charged = {r.subject for r in rows if r.status == M and not charge(r).preexisting}
    assert {LIST, PIN_LIST} <= charged
    pin = next(r for r in rows if r.subject == PIN_LIST)
    roles = {s.file: s.role for s in pin.sides}
    assert roles == {PIN: "counterpart", e.GFX950_DENSE: "changed"}


def test_merged_view_race_is_a_mismatch_in_merged_only(build) -> None:
    target = (e.add_pack_argument(e.GFX950_DENSE_PACK, "window_left", after="q_ptr"),)
    rows = rows_for(build, everywhere("dropout_seed"), target=target)
    assert M not in by_subject(rows, "head").values()
    merged = by_subject(rows, "merged")
    assert merged[LIST] == M
    assert merged[PIN_LIST] == C and merged[LAUNCH] == C
    assert not any(charge(r).preexisting for r in rows)


def test_conditional_argument_is_changed_not_mismatch(build) -> None:
    rows = rows_for(build, (CONDITIONAL,))
    assert rows and {r.status for r in rows} == {C}


def test_reduce_list_is_compared_with_the_reduce_builder(build) -> None:
    rows = rows_for(build, (REDUCE_RENAMED,))
    (row,) = rows
    assert row.subject == REDUCE and row.status == M
    assert row.details["builder"].endswith(":build_unified_attention_reduce")
    assert SEGMENT not in by_subject(rows)


def test_unchanged_tree_has_no_rows(build) -> None:
    assert rows_for(build, (e.edit_comment(e.GFX950_DENSE),)) == []


@pytest.mark.parametrize("head", [(e.touch_dvc(),), (e.edit_comment(e.GFX950_DENSE),)],
                         ids=["change elsewhere", "comment in the builder file"])
def test_mismatch_the_base_already_had_is_preexisting(build, head) -> None:
    rows = rows_for(build, head, base=(PIN_SCALE_SIZE,))
    assert [(r.subject, r.status, charge(r).preexisting) for r in rows] == [(PIN_LIST, M, True)]


def test_dynamic_list_is_not_compared(build) -> None:
    rows = rows_for(build, (e.add_builder_param(TILED, "dropout_seed", "I32"),),
                    base=TILED_DYNAMIC)
    row = next(r for r in rows if r.subject == TILED_LIST)
    assert row.status == C and row.details["compared"] is False


def test_docstring_has_every_heading() -> None:
    doc = KernargsCheck.__doc__ or ""
    for heading in ("What it checks:", "Why a break hurts at run time:", "Example:",
                    "When it says changed instead:", "Evidence:"):
        assert heading in doc
    assert KernargsCheck.name == "kernargs"


# ------------------------------------------------- every list spelling, checked (issue 11)

DENSE_NAMES = [("global_buffer", "q_ptr"), ("global_buffer", "k_ptr"), ("global_buffer", "v_ptr"),
               ("global_buffer", "o_ptr"), ("by_value", "scale"), ("by_value", "batch"),
               ("by_value", "seqlen_q"), ("by_value", "seqlen_kv")]
LITERAL_LIST = (
    "std::vector<KernelArgument> attentionDenseKernelSignature()\n{\n    return {\n"
    + "".join(f'        {{"{k}", {8 if k == "global_buffer" else 4}, {i * 4 + min(i, 4) * 4}, '
              f'"{n}"}},\n' for i, (k, n) in enumerate(DENSE_NAMES))
    + "    };\n}\n")


def _size(kind: str) -> str:
    return "PTR" if kind == "global_buffer" else "I32"


def _spelled(spelling: str, drop: str | None = None) -> str:
    """attentionDenseKernelSignature() in one spelling (`drop`: an entry left out)."""
    entries = [(k, n) for k, n in DENSE_NAMES if n != drop]
    consts = ("    constexpr auto PTR = static_cast<uint32_t>(sizeof(void*));\n"
              "    constexpr auto I32 = static_cast<uint32_t>(sizeof(int32_t));\n")
    head = "std::vector<KernelArgument> attentionDenseKernelSignature()\n{\n"
    if spelling == "typed_braces_constexpr_sizes":
        items = ",\n            ".join(f'KernelArgument{{"{k}", {_size(k)}, 0, "{n}"}}'
                                       for k, n in entries)
        return f"{head}{consts}    return {{{items}}};\n}}\n"
    if spelling == "constructor_call_qualified_enum":
        items = ",\n            ".join(f'KernelArgument(ArgKind::{k}, {_size(k)}, 0, "{n}")'
                                       for k, n in entries)
        return f"{head}{consts}    return {{{items}}};\n}}\n"
    if spelling == "designated_using_enum":
        items = ",\n            ".join(
            f'{{.kind = {k}, .size = sizeof({"void*" if k == "global_buffer" else "float"}), '
            f'.offset = 0, .name = "{n}"}}' for k, n in entries)
        return f"{head}    using enum ArgKind;\n    return {{{items}}};\n}}\n"
    if spelling == "push_back_sequence":
        items = "".join(f'    args.push_back({{"{k}", {_size(k)}, 0, "{n}"}});\n'
                        for k, n in entries)
        return (f"{head}{consts}    std::vector<KernelArgument> args;\n{items}"
                "    return args;\n}\n")
    if spelling == "element_helpers":
        items = ", ".join(f'{"buffer" if k == "global_buffer" else "scalar4"}("{n}")'
                          for k, n in entries)
        return ("KernelArgument buffer(const char* name)\n{\n"
                "    return {ArgKind::global_buffer, sizeof(void*), 0, name};\n}\n"
                "KernelArgument scalar4(const char* name)\n{\n"
                '    return KernelArgument{"by_value", 4, 0, name};\n}\n'
                f"{head}    return {{{items}}};\n}}\n")
    if spelling == "static_const_vector":
        enum = {"global_buffer": "GlobalBuffer", "by_value": "ByValue"}
        items = ",\n    ".join(f'{{KernelArgKind::{enum[k]}'
                               f', {8 if k == "global_buffer" else 4}, 0, "{n}"}}'
                               for k, n in entries)
        return (f"static const std::vector<KernelArgument> kDenseSignature = {{\n    {items}}};\n"
                f"{head}    return kDenseSignature;\n}}\n")
    raise AssertionError(spelling)


SPELLINGS = ["typed_braces_constexpr_sizes", "constructor_call_qualified_enum",
             "designated_using_enum", "push_back_sequence", "element_helpers",
             "static_const_vector"]


def spelled(spelling: str, drop: str | None = None) -> e.Edit:
    return e.replace(e.GFX950_DENSE_PACK, LITERAL_LIST, _spelled(spelling, drop))


def test_the_literal_list_anchor_is_the_fixture_list() -> None:
    assert LITERAL_LIST in TREE[e.GFX950_DENSE_PACK].decode()


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_each_list_spelling_reads_consistent(build, spelling) -> None:
    rows = rows_for(build, (e.edit_comment(e.GFX950_DENSE),), base=(spelled(spelling),))
    assert [r for r in rows if r.status == M] == []


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("kind", ["builder gains an argument", "list drops an entry"])
def test_a_break_through_each_list_spelling_is_a_mismatch(build, spelling, kind) -> None:
    head = ((e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),)
            if kind == "builder gains an argument" else (spelled(spelling, drop="batch"),))
    base = (spelled(spelling),)
    if kind == "list drops an entry":  # the head's edit replaces the base's spelling
        head = (e.replace(e.GFX950_DENSE_PACK, _spelled(spelling), _spelled(spelling, "batch")),)
    rows = rows_for(build, head, base=base)
    lists = [r for r in rows if r.status == M and r.details["site"] == "list"
             and r.sides[0].file == e.GFX950_DENSE_PACK]
    assert lists, [(r.subject, r.status, r.reason) for r in rows]
    for row in lists:
        assert not charge(row).preexisting
        files = {(s.file, s.line > 0) for s in row.sides}
        assert files == {(e.GFX950_DENSE_PACK, True), (e.GFX950_DENSE, True)}


# ------------------------------------------------ launch(), argument by argument (issue 11)

GFX942_LAUNCH = f"{e.GFX942_DENSE_PACK}:launch:launcher"
LAUNCH_LINE = "        launcher.launch(q, k, v, o, scale, batch, seqlenQ, seqlenKv);\n"


def launch_as(text: str) -> e.Edit:
    return e.replace(e.GFX950_DENSE_PACK, LAUNCH_LINE, text)


def test_swapped_int32_pair_in_launch_names_both_positions(build) -> None:
    rows = rows_for(build, (launch_as(
        "        launcher.launch(q, k, v, o, scale, seqlenQ, batch, seqlenKv);\n"),))
    (row,) = [r for r in rows if r.subject == LAUNCH]
    assert row.status == M and str(row.reason) == "launch-argument-misplaced"
    assert (row.details["position"], row.details["other"]) == (6, 7)
    assert {row.details["argument"], row.details["param"]} == {"seqlenQ", "batch"}
    assert {s.file for s in row.sides} == {e.GFX950_DENSE_PACK, e.GFX950_DENSE}
    assert all(s.line > 0 for s in row.sides)
    assert not charge(row).preexisting


STREAM_FIRST = ("        m_code.kernelForStream(stream)\n            .launch(stream, q, k, v, o, "
                "scale, static_cast<int32_t>(m_batch), seqlenQ, seqlenKv);\n")
STREAM_LAUNCH = f"{e.GFX950_DENSE_PACK}:launch:kernelForStream"


def test_stream_is_a_launch_parameter_not_a_kernel_argument(build) -> None:
    rows = rows_for(build, (e.edit_comment(e.GFX950_DENSE),), base=(launch_as(STREAM_FIRST),))
    assert [r for r in rows if r.status == M] == []
    dropped = STREAM_FIRST.replace(", seqlenKv);", ");")
    rows = rows_for(build, (launch_as(dropped),))
    assert by_subject(rows)[STREAM_LAUNCH] == M


def test_kind_of_a_launch_argument_is_compared(build) -> None:
    rows = rows_for(build, (launch_as(
        "        launcher.launch(q, k, v, o, scale, static_cast<int64_t>(batch), seqlenQ, "
        "seqlenKv);\n"),))
    (row,) = [r for r in rows if r.subject == LAUNCH]
    assert row.status == M and str(row.reason) == "launch-argument-kind-differs"
    assert row.details["position"] == 6 and row.details["size"] == 8


def test_older_pack_without_a_list_compares_launch_with_its_builder(build) -> None:
    drop = e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                     "launcher.launch(q, k, v, o);")
    rows = rows_for(build, (drop,))
    (row,) = [r for r in rows if r.subject == GFX942_LAUNCH]
    assert row.status == M and not charge(row).preexisting
    assert row.details["builder"].endswith("gfx942.attention_dense:build_attention_dense")
    swap = e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                     "launcher.launch(q, v, k, o, scale);")
    (row,) = [r for r in rows_for(build, (swap,)) if r.subject == GFX942_LAUNCH]
    assert row.status == M and (row.details["position"], row.details["other"]) == (2, 3)


def test_truly_dynamic_list_names_its_construct(build) -> None:
    rows = rows_for(build, (e.add_builder_param(TILED, "dropout_seed", "I32"),),
                    base=TILED_DYNAMIC)
    row = next(r for r in rows if r.subject == TILED_LIST)
    assert str(row.reason) == "list-construct-not-read"
    assert row.details["construct"] == "push_back in a loop" and row.details["line"] > 0


# A pin in the real signature test's spelling: two element constants, no names, and
# neighbouring ABIs derived from it on purpose (they are refusal cases, not copies).
FIXTURE_PIN_BODY = TREE[PIN].decode()[TREE[PIN].decode().index(
    "    const std::vector<KernelArgument> expected = {"):TREE[PIN].decode().index(
    "    return expected;\n}\n") + len("    return expected;\n}\n")]
NAMELESS_PIN = (
    '    const KernelArgument buffer{BUFFER_KIND, POINTER_BYTES, 0, ""};\n'
    '    const KernelArgument scalar{BY_VALUE_KIND, SCALAR_BYTES, 0, ""};\n'
    "    return {buffer, buffer, buffer, buffer, scalar, scalar, scalar, scalar};\n}\n\n"
    "std::vector<KernelArgument> persistentAbi()\n{\n    auto signature = pythonAbi();\n"
    "    signature.resize(5);\n    return signature;\n}\n"
    "std::vector<KernelArgument> extraAbi()\n{\n    auto signature = pythonAbi();\n"
    '    signature.push_back(KernelArgument{BY_VALUE_KIND, SCALAR_BYTES, 0, ""});\n'
    "    return signature;\n}\n")
NAMELESS = (
    e.replace(PIN, FIXTURE_PIN_BODY, NAMELESS_PIN),
    e.replace(PIN, "std::vector<KernelArgument> pythonAbi()\n",
              'constexpr const char* BUFFER_KIND = "global_buffer";\n'
              'constexpr const char* BY_VALUE_KIND = "by_value";\n'
              "constexpr uint32_t POINTER_BYTES = 8;\nconstexpr uint32_t SCALAR_BYTES = 4;\n"
              "std::vector<KernelArgument> pythonAbi()\n"),
)
NAMELESS_PIN_LIST = f"{PIN}:pythonAbi"


def test_nameless_pin_reads_consistent_and_pairs_by_kinds_and_sizes(build) -> None:
    rows = rows_for(build, (e.edit_comment(e.GFX950_DENSE),), base=NAMELESS)
    assert [r for r in rows if r.status == M] == []
    rows = rows_for(build, (e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),),
                    base=NAMELESS)
    pin = next(r for r in rows if r.subject == NAMELESS_PIN_LIST)
    assert pin.status == M and not charge(pin).preexisting
    assert {s.file for s in pin.sides} == {PIN, e.GFX950_DENSE}
    # The neighbouring ABIs are not compared as copies (no mismatch is made of them).
    assert not [r for r in rows if r.subject.startswith(f"{PIN}:persistentAbi")
                or r.subject.startswith(f"{PIN}:extraAbi")]


def test_one_buffer_passed_twice_is_not_a_swap_but_is_not_inert(build) -> None:
    rows = rows_for(build, (launch_as(
        "        launcher.launch(q, q, v, o, scale, batch, seqlenQ, seqlenKv);\n"),))
    (row,) = [r for r in rows if r.subject == LAUNCH]
    assert row.status == C


def _keyword_params(files: dict[str, bytes]) -> None:
    """The gfx942 builder's b.param calls with `name=`/`type=` keywords, a type in
    parentheses that change nothing: Python binds them as the positional spelling."""
    e.replace(e.GFX942_DENSE, 'b.param("o_ptr", PtrType(elem),',
              'b.param(name="o_ptr", type=(PtrType(elem)),')(files)
    e.replace(e.GFX942_DENSE, 'b.param("scale", F32)', 'b.param(type=F32, name=("scale"))')(files)


def test_builder_params_by_keyword_read_as_positional(build) -> None:
    # The builder as compared did not move (unread keyword params would drop two).
    assert not [r for r in rows_for(build, (_keyword_params,)) if r.subject == GFX942_LAUNCH]
    swap = e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                     "launcher.launch(q, k, v, scale, o);")
    (row,) = [r for r in rows_for(build, (swap,), base=(_keyword_params,))
              if r.subject == GFX942_LAUNCH]
    assert row.status == M and (row.details["position"], row.details["other"]) == (4, 5)


def test_launch_arguments_that_abbreviate_parameters_are_compared_by_position(build) -> None:
    names = e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                      "launcher.launch(q, k, v, o, sc);")
    swapped = e.replace(e.GFX942_DENSE_PACK, "launcher.launch(q, k, v, o, scale);",
                        "launcher.launch(q, k, v, sc, o);")
    assert not [r for r in rows_for(build, (names,)) if r.status == M]
    (row,) = [r for r in rows_for(build, (swapped,)) if r.subject == GFX942_LAUNCH]
    assert row.status == M and row.details["argument"] == "sc"
