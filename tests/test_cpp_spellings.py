"""Every spelling C++ allows for one KernelArgument list and one launch() call reads as
the same fact (issue 11, points 1 and 2): one table row per spelling. What is truly
dynamic stays unread, and the fact names the construct and its line."""

from __future__ import annotations

import pytest

from impact.cpp.facts import extract_cpp_facts
from impact.graph import abbreviates, name_forms, same_name
from impact.kinds import FactKind
from impact.surface import builtin_map

GB, BV = "global_buffer", "by_value"
# The list every spelling below states: two pointers, then an f32 and an i32 scalar.
ABI = [(GB, 8, "q_ptr"), (GB, 8, "k_ptr"), (BV, 4, "scale"), (BV, 4, "batch")]


def lists(source: str) -> dict[str, dict]:
    facts = extract_cpp_facts("x.cpp", source.encode())
    assert not [f for f in facts if f.kind == FactKind.PARSE_FAILURE], facts
    return {f.name: {**f.data, "line": f.line} for f in facts
            if f.kind == FactKind.KERNEL_ARGUMENT_LIST}


def read(source: str, name: str) -> list[tuple]:
    found = lists(source)
    assert name in found, sorted(found)
    data = found[name]
    assert data["dynamic"] is False, data["unread"]
    return [(e["kind"], e["size"], e["name"]) for e in data["entries"]]


def sig(body: str, prelude: str = "") -> str:
    return f"{prelude}\nstd::vector<KernelArgument> sig()\n{{\n{body}\n}}\n"


RETURNED = sig('    return {{"global_buffer", 8, 0, "q_ptr"}, {"global_buffer", 8, 8, "k_ptr"},\n'
               '            {"by_value", 4, 16, "scale"}, {"by_value", 4, 20, "batch"}};')

# (test id, source, list name)
LIST_SPELLINGS = [
    ("element_braces_untyped", RETURNED, "sig"),
    ("element_braces_typed", sig(
        '    return {KernelArgument{"global_buffer", 8, 0, "q_ptr"},\n'
        '            KernelArgument{"global_buffer", 8, 8, "k_ptr"},\n'
        '            KernelArgument{"by_value", 4, 16, "scale"},\n'
        '            KernelArgument{"by_value", 4, 20, "batch"}};'), "sig"),
    ("element_constructor_call", sig(
        '    return {KernelArgument("global_buffer", 8, 0, "q_ptr"),\n'
        '            KernelArgument("global_buffer", 8, 8, "k_ptr"),\n'
        '            hip::KernelArgument("by_value", 4, 16, "scale"),\n'
        '            KernelArgument("by_value", 4, 20, "batch")};'), "sig"),
    ("element_designated_initialisers", sig(
        '    return {{.kind = "global_buffer", .size = 8, .offset = 0, .name = "q_ptr"},\n'
        '            {.kind = "global_buffer", .size = 8, .offset = 8, .name = "k_ptr"},\n'
        '            KernelArgument{.kind = "by_value", .size = 4, .name = "scale"},\n'
        '            {.name = "batch", .kind = "by_value", .size = 4, .offset = 20}};'), "sig"),
    ("kind_qualified_argkind", sig(
        '    return {{ArgKind::global_buffer, 8, 0, "q_ptr"},\n'
        '            {ArgKind::global_buffer, 8, 8, "k_ptr"},\n'
        '            {ArgKind::by_value, 4, 16, "scale"}, {ArgKind::by_value, 4, 20, "batch"}};'),
     "sig"),
    ("kind_qualified_kernelargkind_camel", sig(
        '    return {{KernelArgKind::GlobalBuffer, 8, 0, "q_ptr"},\n'
        '            {hip::KernelArgKind::kGlobalBuffer, 8, 8, "k_ptr"},\n'
        '            {KernelArgKind::BY_VALUE, 4, 16, "scale"},\n'
        '            {KernelArgKind::ByValue, 4, 20, "batch"}};'), "sig"),
    ("kind_using_alias", sig(
        '    using AK = hip::ArgKind;\n'
        '    return {{AK::global_buffer, 8, 0, "q_ptr"}, {AK::global_buffer, 8, 8, "k_ptr"},\n'
        '            {AK::by_value, 4, 16, "scale"}, {AK::by_value, 4, 20, "batch"}};'), "sig"),
    ("kind_using_enum", sig(
        '    using enum ArgKind;\n'
        '    return {{global_buffer, 8, 0, "q_ptr"}, {global_buffer, 8, 8, "k_ptr"},\n'
        '            {by_value, 4, 16, "scale"}, {by_value, 4, 20, "batch"}};'), "sig"),
    ("kind_named_constant", sig(
        '    return {{kBuf, 8, 0, "q_ptr"}, {kBuf, 8, 8, "k_ptr"},\n'
        '            {kVal, 4, 16, "scale"}, {kVal, 4, 20, "batch"}};',
        'constexpr auto kBuf = ArgKind::global_buffer;\n'
        'constexpr const char* kVal = "by_value";'), "sig"),
    ("size_sizeof_types", sig(
        '    return {{"global_buffer", sizeof(void*), 0, "q_ptr"},\n'
        '            {"global_buffer", sizeof(const half*), 8, "k_ptr"},\n'
        '            {"by_value", sizeof(float), 16, "scale"},\n'
        '            {"by_value", sizeof(std::int32_t), 20, "batch"}};'), "sig"),
    ("size_namespace_constexpr", sig(
        '    return {{"global_buffer", PTR_SIZE, 0, "q_ptr"}, {"global_buffer", PTR_SIZE, 8, '
        '"k_ptr"},\n            {"by_value", detail::F32_SIZE, 16, "scale"},\n'
        '            {"by_value", I32_SIZE, 20, "batch"}};',
        'namespace detail { static constexpr std::uint32_t F32_SIZE = 4; }\n'
        'constexpr std::size_t PTR_SIZE = 8;\nconst int I32_SIZE{4};'), "sig"),
    ("size_function_constexpr_static_cast_sizeof", sig(
        '    constexpr auto PTR = static_cast<uint32_t>(sizeof(void*));\n'
        '    constexpr auto I32 = static_cast<uint32_t>(sizeof(int32_t));\n'
        '    const auto F32 = uint32_t(sizeof(float));\n'
        '    return {KernelArgument{"global_buffer", PTR, 0, "q_ptr"},\n'
        '            KernelArgument{"global_buffer", PTR, 8, "k_ptr"},\n'
        '            KernelArgument{"by_value", F32, 32, "scale"},\n'
        '            KernelArgument{"by_value", I32, 36, "batch"}};'), "sig"),
    ("size_constexpr_auto_sizeof_pointer", sig(
        '    return {{"global_buffer", kPtr, 0, "q_ptr"}, {"global_buffer", kPtr, kPtr, '
        '"k_ptr"},\n            {"by_value", kI32, 2 * kPtr, "scale"},\n'
        '            {"by_value", (kI32), 2 * kPtr + kI32, "batch"}};',
        'constexpr auto kPtr = sizeof(void*);\nstatic constexpr auto kI32 = sizeof(float);'),
     "sig"),
    ("name_named_constant", sig(
        '    return {{"global_buffer", 8, 0, Q_NAME}, {"global_buffer", 8, 8, "k_ptr"},\n'
        '            {"by_value", 4, 16, std::string(SCALE)}, {"by_value", 4, 20, "batch"}};',
        'constexpr std::string_view Q_NAME = "q_ptr";\nconstexpr const char* SCALE = "scale";'),
     "sig"),
    ("list_static_const_vector",
     'static const std::vector<KernelArgument> kSignature = {\n'
     '    {"global_buffer", 8, 0, "q_ptr"}, {"global_buffer", 8, 8, "k_ptr"},\n'
     '    {"by_value", 4, 16, "scale"}, {"by_value", 4, 20, "batch"}};\n', "kSignature"),
    ("list_std_array_double_braces",
     'constexpr std::array<KernelArgument, 4> kArgs{{\n'
     '    {"global_buffer", 8, 0, "q_ptr"}, {"global_buffer", 8, 8, "k_ptr"},\n'
     '    {"by_value", 4, 16, "scale"}, {"by_value", 4, 20, "batch"}}};\n', "kArgs"),
    ("list_c_array",
     'const KernelArgument kArgs[4] = {\n'
     '    {"global_buffer", 8, 0, "q_ptr"}, {"global_buffer", 8, 8, "k_ptr"},\n'
     '    {"by_value", 4, 16, "scale"}, {"by_value", 4, 20, "batch"}};\n', "kArgs"),
    ("list_local_returned_by_name", sig(
        '    const std::vector<KernelArgument> args{{"global_buffer", 8, 0, "q_ptr"},\n'
        '        {"global_buffer", 8, 8, "k_ptr"}, {"by_value", 4, 16, "scale"},\n'
        '        {"by_value", 4, 20, "batch"}};\n    return args;'), "sig.args"),
    ("list_auto_compound_literal", sig(
        '    auto args = std::vector<KernelArgument>{{"global_buffer", 8, 0, "q_ptr"},\n'
        '        {"global_buffer", 8, 8, "k_ptr"}, {"by_value", 4, 16, "scale"},\n'
        '        {"by_value", 4, 20, "batch"}};\n    return args;'), "sig.args"),
    ("list_push_back_sequence", sig(
        '    std::vector<KernelArgument> args;\n    args.reserve(4);\n'
        '    args.push_back({"global_buffer", 8, 0, "q_ptr"});\n'
        '    args.push_back(KernelArgument{"global_buffer", 8, 8, "k_ptr"});\n'
        '    args.emplace_back("by_value", 4, 16, "scale");\n'
        '    args.emplace_back(KernelArgument{ArgKind::by_value, 4, 20, "batch"});\n'
        '    return args;'), "sig.args"),
    ("list_helper_returning_list", sig(
        '    return pointers();',
        'std::vector<KernelArgument> pointers()\n{\n'
        '    return {{"global_buffer", 8, 0, "q_ptr"}, {"global_buffer", 8, 8, "k_ptr"},\n'
        '            {"by_value", 4, 16, "scale"}, {"by_value", 4, 20, "batch"}};\n}'), "sig"),
    ("list_c_array_of_a_local_record", (
        'namespace {\nstruct Pinned\n{\n    const char* kind;\n    int size;\n'
        '    const char* name;\n};\n'
        'const Pinned kAbi[] = {\n'
        '    {"global_buffer", 8, "q_ptr"}, {"global_buffer", 8, "k_ptr"},\n'
        '    {"by_value", 4, "scale"}, {"by_value", 4, "batch"},\n};\n}\n'), "kAbi"),
    ("list_vector_of_a_local_record_reordered_fields", (
        'struct Row { std::string name; ArgKind kind; uint32_t offset; uint32_t size; };\n'
        'static const std::vector<Row> kRows = {\n'
        '    {"q_ptr", ArgKind::global_buffer, 0, 8}, Row{"k_ptr", ArgKind::global_buffer, 8, 8},\n'
        '    Row("scale", ArgKind::by_value, 16, 4), {"batch", ArgKind::by_value, 20, 4}};\n'),
     "kRows"),
    ("list_local_record_in_a_function", sig(
        '    const std::array<Pinned, 4> rows{{{"global_buffer", 8, "q_ptr"},\n'
        '        {"global_buffer", 8, "k_ptr"}, {"by_value", 4, "scale"},\n'
        '        {"by_value", 4, "batch"}}};\n    (void)rows;\n'
        '    return {{"global_buffer", 8, 0, "q_ptr"}, {"global_buffer", 8, 8, "k_ptr"},\n'
        '            {"by_value", 4, 16, "scale"}, {"by_value", 4, 20, "batch"}};',
        'struct Pinned { const char* kind; int size; const char* name; };'), "sig.rows"),
    ("element_helper_calls", sig(
        '    return {buffer("q_ptr"), buffer("k_ptr", 8), scalar4("scale"), scalar4("batch")};',
        'constexpr uint32_t kPtr = sizeof(void*);\n'
        'KernelArgument buffer(const char* name, uint32_t offset = 0)\n'
        '{\n    return KernelArgument{ArgKind::global_buffer, kPtr, offset, name};\n}\n'
        'inline KernelArgument scalar4(std::string_view name)\n'
        '{\n    return {"by_value", 4, 0, name};\n}'), "sig"),
]


@pytest.mark.parametrize(("source", "name"), [c[1:] for c in LIST_SPELLINGS],
                         ids=[c[0] for c in LIST_SPELLINGS])
def test_list_spelling_reads_the_same_abi(source: str, name: str) -> None:
    assert read(source, name) == ABI


def test_helpers_a_list_is_built_from_are_not_lists_of_their_own() -> None:
    source = LIST_SPELLINGS[[c[0] for c in LIST_SPELLINGS].index(
        "list_helper_returning_list")][1]
    assert set(lists(source)) == {"sig"}


def test_element_constants_reused_without_names() -> None:
    """The real signature pin's spelling: two element constants, names left empty."""
    source = sig('    const KernelArgument buffer{BUFFER_KIND, POINTER_BYTES, 0, ""};\n'
                 '    const KernelArgument scalar{BY_VALUE_KIND, SCALAR_BYTES, 0, ""};\n'
                 '    return {buffer, buffer, scalar, scalar};',
                 'constexpr const char* BUFFER_KIND = "global_buffer";\n'
                 'constexpr const char* BY_VALUE_KIND = "by_value";\n'
                 'constexpr uint32_t POINTER_BYTES = 8;\nconstexpr uint32_t SCALAR_BYTES = 4;')
    assert read(source, "sig") == [(GB, 8, ""), (GB, 8, ""), (BV, 4, ""), (BV, 4, "")]


def test_a_modified_copy_of_a_list_is_a_neighbour_not_a_copy() -> None:
    """`auto s = pythonAbi(); s.pop_back();` states a neighbouring ABI on purpose (a
    signature test's refusal cases): it is no copy of the ABI, and its source stays one."""
    source = (sig('    return {{"global_buffer", 8, 0, "q"}, {"by_value", 4, 8, "n"}};')
              + "void refused()\n{\n    auto s = sig();\n    s.pop_back();\n"
              "    auto t = sig();\n    t.at(1) = KernelArgument{\"by_value\", 8, 8, \"n\"};\n}\n")
    found = lists(source)
    assert set(found) == {"sig"}
    assert found["sig"]["dynamic"] is False and len(found["sig"]["entries"]) == 2


def test_entries_keep_the_line_of_their_element() -> None:
    data = lists(RETURNED)["sig"]
    assert [e["line"] for e in data["entries"]] == [4, 4, 5, 5]
    assert data["entries"][3]["offset"] == 20


def test_sizes_of_scalar_types() -> None:
    types = {"int32_t": 4, "uint32_t": 4, "float": 4, "int64_t": 8, "double": 8, "half": 2,
             "bf16": 2, "hip_bfloat16": 2, "float*": 8, "const void*": 8}
    body = ", ".join(f'{{"by_value", sizeof({t}), 0, "a{i}"}}' for i, t in enumerate(types))
    data = lists(sig(f"    return {{{body}}};"))["sig"]
    assert [e["size"] for e in data["entries"]] == list(types.values())


# (test id, source, list name, the construct the fact names, its line)
DYNAMIC = [
    ("dynamic_loop_over_runtime_data", sig(
        '    std::vector<KernelArgument> args;\n'
        '    for(const auto& name : runtimeNames())\n'
        '        args.push_back({"global_buffer", 8, 0, name});\n    return args;'),
     "sig.args", "push_back in a loop", 6),
    ("dynamic_push_back_under_condition", (
        'std::vector<KernelArgument> sig(bool sinks)\n{\n'
        '    std::vector<KernelArgument> args = {{"global_buffer", 8, 0, "q_ptr"}};\n'
        '    if(sinks)\n        args.push_back({"global_buffer", 8, 8, "sink_ptr"});\n'
        '    return args;\n}\n'), "sig.args", "push_back in a condition", 5),
    ("dynamic_value_from_parameter", (
        'std::vector<KernelArgument> sig(uint32_t n)\n{\n'
        '    return {{"by_value", n, 0, "x"}};\n}\n'), "sig", "size n", 3),
    ("dynamic_unknown_helper", sig('    return {{"global_buffer", 8, 0, "q"}, makeArg(2)};'),
     "sig", "call to makeArg()", 4),
]


@pytest.mark.parametrize(("source", "name", "construct", "line"), [c[1:] for c in DYNAMIC],
                         ids=[c[0] for c in DYNAMIC])
def test_truly_dynamic_lists_name_the_construct(source: str, name: str, construct: str,
                                                line: int) -> None:
    data = lists(source)[name]
    assert data["dynamic"] is True
    assert {"line": line, "construct": construct} in data["unread"]


# ------------------------------------------------------------------------- launch()


def launch(source: str) -> dict:
    facts = extract_cpp_facts("x.cpp", source.encode())
    assert not [f for f in facts if f.kind == FactKind.PARSE_FAILURE], facts
    (fact,) = [f for f in facts if f.kind == FactKind.LAUNCH_CALL]
    return {"name": fact.name, **fact.data}


def args_of(data: dict) -> list[tuple]:
    return [(a["name"], a["kind"], a["size"]) for a in data["kernel_arguments"]]


def dispatch(body: str, prelude: str = "", params: str = "void* stream") -> str:
    return f"{prelude}\nstruct D {{\n  void launch({params}) const\n  {{\n{body}\n  }}\n}};\n"


Q, K = ("q", GB, 8), ("k", GB, 8)
SCALE, BATCH = ("scale", BV, 4), ("batch", BV, 4)

# (test id, source, launch parameters, kernel arguments as (name, kind, size))
LAUNCH_SPELLINGS = [
    ("launch_plain_variadic", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    auto launcher = m_code.makeLauncher(stream);\n'
        '    launcher.launch(q, k, scale, batch);'), [], [Q, K, SCALE, BATCH]),
    ("launch_stream_parameter_first", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    m_kernel.launch(stream, q, k, scale, batch);'), ["stream"], [Q, K, SCALE, BATCH]),
    ("launch_stream_call_first", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    prepared.kernelForStream(handle.getStream())\n'
        '        .launch(handle.getStream(), q, k, scale, batch);'),
     ["handle.getStream()"], [Q, K, SCALE, BATCH]),
    ("launch_typed_stream_other_name", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    m_kernel.launch(queue, q, k, scale, batch);', params="hipStream_t queue"),
     ["queue"], [Q, K, SCALE, BATCH]),
    ("launch_grid_block_shared_stream", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    dim3 grid(1, 2, 3); dim3 blk(64);\n'
        '    m_kernel.launch(grid, blk, sharedMemBytes, stream, q, k, scale, batch);'),
     ["grid", "blk", "sharedMemBytes", "stream"], [Q, K, SCALE, BATCH]),
    ("launch_auto_locals_resolved", dispatch(
        '    auto q = static_cast<const void*>(a);\n'
        '    const auto k = reinterpret_cast<void*>(b);\n'
        '    auto scale = static_cast<float>(s);\n    const auto batch = int32_t(n);\n'
        '    m_kernel.launch(stream, q, k, scale, batch);'), ["stream"], [Q, K, SCALE, BATCH]),
    ("launch_casts_and_members", dispatch(
        '    m_kernel.launch(stream, q.ptr, k.data(), binding.scale,\n'
        '                    static_cast<int32_t>(p.batch));',
        'struct Binding { int64_t q = 0; float scale = 0.0F; };'),
     ["stream"], [Q, K, SCALE, BATCH]),
    ("launch_member_prefixes", dispatch(
        '    m_kernel.launch(stream, m_qPtr, kPtr_, m_scale, m_batch);',
        params="void* stream", prelude=""), ["stream"],
     [("m_qPtr", None, None), ("kPtr_", None, None), ("m_scale", None, None),
      ("m_batch", None, None)]),
    ("launch_packed_struct", dispatch(
        '    Args args{a, b, s, n};\n    m_kernel.launch(stream, args);',
        'struct Args { const void* q; void* k; float scale; int32_t batch; };'),
     ["stream"], [Q, K, SCALE, BATCH]),
    ("launch_make_tuple", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    m_kernel.launch(stream, std::make_tuple(q, k, scale, batch));'),
     ["stream"], [Q, K, SCALE, BATCH]),
    ("launch_tuple_variable", dispatch(
        '    const void* q = a; const void* k = b; const float scale = s; int32_t batch = n;\n'
        '    auto packed = std::tuple<const void*, const void*, float, int32_t>{q, k, scale,'
        ' batch};\n    m_kernel.launch(stream, packed);'), ["stream"], [Q, K, SCALE, BATCH]),
    ("launch_accessor_by_tensor_name", dispatch(
        '    m_kernel.launch(stream, t.device("Q"), t.device("K"), m_scale, m_batch);'),
     ["stream"], [("Q", None, None), ("K", None, None), ("m_scale", None, None),
                  ("m_batch", None, None)]),
]


@pytest.mark.parametrize(("source", "parameters", "expected"),
                         [c[1:] for c in LAUNCH_SPELLINGS], ids=[c[0] for c in LAUNCH_SPELLINGS])
def test_launch_spelling_reads_kernel_arguments(source: str, parameters: list[str],
                                                expected: list[tuple]) -> None:
    data = launch(source)
    assert data["launch_parameters"] == parameters
    assert args_of(data) == expected
    assert len(data["arguments"]) == len(expected)


def test_launch_on_a_call_is_named_by_the_method() -> None:
    data = launch(LAUNCH_SPELLINGS[2][1])
    assert data["name"] == "launch:kernelForStream" and data["receiver"] == "kernelForStream"


@pytest.mark.parametrize(("a", "b"), [
    ("q_ptr", "q"), ("seqlen_q", "seqLenQ"), ("seqlen_kv", "m_seqlenKv"), ("scale", "m_scale"),
    ("k_cache", "kCache"), ("o_ptr", "oPtr"), ("batch", "batch_"), ("num_seqs", "numSeqs"),
    ("q_ptr", "Q"), ("seqlen_q", "SEQLEN_Q"),
])
def test_argument_names_normalise_to_one(a: str, b: str) -> None:
    assert same_name(a, b)


@pytest.mark.parametrize(("a", "b"), [("batch", "seqlen_q"), ("k_cache", "v_cache"),
                                      ("scale", "seqlen_kv"), ("q_ptr", "k_ptr")])
def test_different_argument_names_stay_apart(a: str, b: str) -> None:
    assert not same_name(a, b)
    assert name_forms(a) and name_forms(b)


def test_a_struct_not_shaped_like_an_argument_holds_no_list() -> None:
    source = ('struct Dim { const char* label; int extent; };\n'
              'const Dim kDims[] = {{"n", 4}, {"h", 8}};\n')
    assert lists(source) == {}


@pytest.mark.parametrize(("short", "name"), [
    ("b", "batch"), ("sq", "seqlen_q"), ("skv", "seqlen_kv"), ("seqQ", "seqlen_q"),
    ("m_sq", "seqlen_q"), ("hq", "heads_q"),
])
def test_a_launch_argument_may_abbreviate_a_parameter(short: str, name: str) -> None:
    assert abbreviates(short, name)


@pytest.mark.parametrize(("short", "name"), [
    ("sq", "seqlen_kv"), ("skv", "seqlen_q"), ("s", "seqlen_q"), ("batch", "batch"),
    ("x", "batch"), ("bq", "batch"), ("hq", "num_heads_q"),
])
def test_an_abbreviation_covers_every_word_in_order(short: str, name: str) -> None:
    assert not abbreviates(short, name)


def test_s_packs_rows_in_every_spelling() -> None:
    source = (
        "const IngestorPack s_packs[] = {\n"
        '    {"hipkernel:A", &registerA, true, &resetA},\n'
        '    IngestorPack{"hipkernel:B", registerB, /*owns=*/false, resetB},\n'
        '    {.engineName = "hipkernel:C", .registerFn = &registerC,\n'
        "     .ownsModuleCache = true, .resetFn = &resetC},\n};\n")
    pack_array = builtin_map("hipdnn").conventions.pack_array
    facts = extract_cpp_facts("x.cpp", source.encode(), pack_array=pack_array)
    rows = {f.name: f.data["register"] for f in facts if f.kind == FactKind.PACK_ROW}
    assert rows == {"hipkernel:A": "registerA", "hipkernel:B": "registerB",
                    "hipkernel:C": "registerC"}
