"""Python facts: each fact kind on small inline sources and on the rocKE fixture kernels."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impact.facts import PARSE_FAILURE, Fact
from impact.python import extract_python_facts, module_name_for, package_name_for
from impact.python.facts import INTERNAL_ERROR

TREE = Path(__file__).resolve().parents[1] / "impact" / "fixtures" / "rocke_tree"
ROOT = "dnn-providers/hip-kernel-provider/rocke/library"
KERNELS = f"{ROOT}/kernels"
FIXTURES = [
    f"{KERNELS}/gfx950/attention_dense.py",
    f"{KERNELS}/gfx950/attention_tiled_2d.py",
    f"{KERNELS}/gfx950/unified_attention.py",
    f"{KERNELS}/common/__init__.py",
]


def facts_of(source: str, path: str = "mod.py", **kwargs) -> list[Fact]:
    return extract_python_facts(path, textwrap.dedent(source).encode(), **kwargs)


def of_kind(facts: list[Fact], kind: str) -> list[Fact]:
    return [fact for fact in facts if fact.kind == kind]


def one(facts: list[Fact], kind: str, name: str) -> Fact:
    found = [fact for fact in facts if fact.kind == kind and fact.name == name]
    assert len(found) == 1, (kind, name, found)
    return found[0]


def fixture_facts(rel: str) -> list[Fact]:
    path = f"{TREE}/{rel}"
    return extract_python_facts(
        rel, Path(path).read_bytes(), package=package_name_for(rel, [ROOT])
    )


# -- function -----------------------------------------------------------------------------

NESTING = """
import x

def top(a, /, b: int = 1, *args, c, d=2, **kw) -> str:
    def inner():
        pass
    return inner

if x.flag:
    def twice():
        return 1
else:
    def twice():
        return 2

try:
    def in_try():
        pass
except ImportError:
    pass

with x.ctx():
    def in_with():
        pass

for i in range(3):
    def in_for():
        pass

class C(Base, metaclass=M):
    @staticmethod
    def method(self):
        pass
"""


@pytest.mark.parametrize(
    ("name", "scope"),
    [
        ("top", []),
        ("top.<locals>.inner", []),
        ("in_try", ["try"]),
        ("in_with", ["with x.ctx()"]),
        ("in_for", ["for i in range(3)"]),
        ("C.method", []),
    ],
)
def test_function_found_wherever_defined(name: str, scope: list[str]) -> None:
    assert one(facts_of(NESTING), "function", name).data["scope"] == scope


def test_function_defined_twice_under_if_else() -> None:
    twice = [f for f in of_kind(facts_of(NESTING), "function") if f.name == "twice"]
    assert [f.line for f in twice] == [10, 13]
    assert [f.data["scope"] for f in twice] == [["if x.flag"], ["else of if x.flag"]]
    assert twice[0].data["digest"] != twice[1].data["digest"]


def test_function_params_returns_decorators() -> None:
    facts = facts_of(NESTING)
    top = one(facts, "function", "top")
    assert top.data["params"] == [
        {"name": "a", "kind": "positional", "default": None, "annotation": None},
        {"name": "b", "kind": "positional", "default": "1", "annotation": "int"},
        {"name": "args", "kind": "var-positional", "default": None, "annotation": None},
        {"name": "c", "kind": "keyword-only", "default": None, "annotation": None},
        {"name": "d", "kind": "keyword-only", "default": "2", "annotation": None},
        {"name": "kw", "kind": "var-keyword", "default": None, "annotation": None},
    ]
    assert top.data["returns"] == "str"
    assert one(facts, "function", "C.method").data["decorators"] == ["staticmethod"]
    assert one(facts, "class", "C").data["bases"] == ["Base", "metaclass=M"]


# -- digests ------------------------------------------------------------------------------

BASE_BODY = '''
def f(spec):
    """Doc."""
    x = g(spec.a, spec.b)
    if x:
        return x
    return 0

class K:
    """Doc."""
    a = 1
'''


@pytest.mark.parametrize(
    ("edited", "same"),
    [
        (BASE_BODY.replace('"""Doc."""', '"""Other words."""'), True),
        (BASE_BODY.replace('    """Doc."""\n', ""), True),
        (BASE_BODY.replace("x = g(", "# note\n    x = g(  # why\n        "), True),
        (BASE_BODY.replace("spec.a, spec.b", "spec.a,\n          spec.b"), True),
        (BASE_BODY.replace("return 0", "return  0   "), True),
        (BASE_BODY.replace("return 0", "return 1"), False),
        (BASE_BODY.replace("spec.a, spec.b", "spec.b, spec.a"), False),
        (BASE_BODY.replace("        return x\n    return 0", "        return x\n        return 0"),
         False),
        (BASE_BODY.replace("a = 1", "a = 2"), False),
    ],
)
def test_digest_ignores_layout_only(edited: str, same: bool) -> None:
    before, after = facts_of(BASE_BODY), facts_of(edited)
    kind, name = ("class", "K") if "a = 2" in edited else ("function", "f")
    equal = one(before, kind, name).data["digest"] == one(after, kind, name).data["digest"]
    assert equal == same
    klass = [one(facts, "class", "K").data["digest"] for facts in (before, after)]
    assert (klass[0] == klass[1]) == ("a = 2" not in edited)


# -- assignment ---------------------------------------------------------------------------


def test_assignments_at_module_level_only() -> None:
    facts = facts_of(
        """
        A = 1  # one
        B: int = (2 +
                   3)
        if cond:
            C = "x" * 500
        try:
            D = 1
        except E:
            D = 2
        def f():
            local = 1
        """
    )
    names = [f.name for f in of_kind(facts, "assignment")]
    assert names == ["A", "B", "C", "D", "D"]
    assert one(facts, "assignment", "B").data["value_digest"] == one(
        facts_of("B = (2 + 3)"), "assignment", "B"
    ).data["value_digest"]
    assert len(one(facts, "assignment", "C").data["value"]) <= 200
    assert one(facts, "assignment", "A").data["value"] == "1"


# -- imports and re-exports -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "package", "name", "data"),
    [
        ("import a.b as m", None, "m",
         {"module": "a.b", "name": None, "alias": "m", "level": 0, "star": False}),
        ("import a.b", None, "a.b",
         {"module": "a.b", "name": None, "alias": None, "level": 0, "star": False}),
        ("from a import b as c", None, "c",
         {"module": "a", "name": "b", "alias": "c", "level": 0, "star": False}),
        ("from .tiling import ceil_div", None, "ceil_div",
         {"module": ".tiling", "name": "ceil_div", "alias": None, "level": 1, "star": False}),
        ("from .tiling import ceil_div", "kernels.common", "ceil_div",
         {"module": "kernels.common.tiling", "name": "ceil_div", "alias": None, "level": 1,
          "star": False}),
        ("from ..common import x", "kernels.gfx950", "x",
         {"module": "kernels.common", "name": "x", "alias": None, "level": 2, "star": False}),
        ("from . import y", "kernels", "y",
         {"module": "kernels", "name": "y", "alias": None, "level": 1, "star": False}),
        ("from m import *", None, "*",
         {"module": "m", "name": "*", "alias": None, "level": 0, "star": True}),
    ],
)
def test_import_table(source: str, package: str | None, name: str, data: dict) -> None:
    # Module-level imports belong to no function.
    expected = {**data, "function": None}
    assert dict(one(facts_of(source, package=package), "import", name).data) == expected


def test_function_local_import_is_bound_to_its_function() -> None:
    facts = facts_of("def pack():\n    from rocke.helpers import compile as rc\n"
                     "    return rc.compile_kernel\n")
    data = one(facts, "import", "rc").data
    assert data["module"] == "rocke.helpers" and data["name"] == "compile"
    assert data["function"] == "pack"


def test_reexport_through_common_init() -> None:
    facts = fixture_facts(f"{KERNELS}/common/__init__.py")
    exports = {f.name: f.data["module"] for f in of_kind(facts, "re-export")}
    assert exports == {n: "kernels.common.tiling" for n in ["ceil_div", "is_pow2", "round_up"]}


def test_no_reexport_outside_init() -> None:
    assert of_kind(facts_of("from .tiling import ceil_div", package="p"), "re-export") == []


@pytest.mark.parametrize(
    ("path", "roots", "module", "package"),
    [
        (f"{KERNELS}/common/__init__.py", [ROOT], "kernels.common", "kernels.common"),
        (f"{KERNELS}/gfx950/unified_attention.py", [ROOT], "kernels.gfx950.unified_attention",
         "kernels.gfx950"),
        ("lib/a.py", ["other", "lib"], "a", None),
        ("lib/a.py", ["."], "lib.a", "lib"),
        ("lib/a.txt", ["lib"], None, None),
        ("x/a.py", ["lib"], None, None),
    ],
)
def test_module_name_for(path: str, roots: list[str], module: str | None, package) -> None:
    assert module_name_for(path, roots) == module
    assert package_name_for(path, roots) == package


# -- params and guards ----------------------------------------------------------------------

GUARDS = """
def build(spec, b):
    a = b.param("plain", I32)
    if spec.x:
        b.param("in_if", F32, noalias=True)
    if spec.y:
        b.param("then", I32)
    else:
        b.param("otherwise", I32)
    if spec.p:
        if spec.q:
            b.param("nested", I32)
    with b.scope("s"):
        b.param("in_with", I32)
    try:
        b.param("in_try", I32)
    except E:
        pass
    if True:
        b.param("if_true", I32)
    for i in range(n):
        b.param("looped", I32)
    if spec.y:
        pass
    elif spec.z:
        b.param("elif", I32)
    b.param(name_var, I32)
    def helper():
        b.param("inner", I32)
"""


@pytest.mark.parametrize(
    ("param", "index", "guard"),
    [
        ("plain", 0, "always"),
        ("in_if", 1, "spec.x"),
        ("then", 2, "spec.y"),
        ("otherwise", 3, "not (spec.y)"),
        ("nested", 4, "spec.p and spec.q"),
        ("in_with", 5, "always"),
        ("in_try", 6, "always"),
        ("if_true", 7, "always"),
        ("looped", 8, "loop: i in range(n)"),
        ("elif", 9, "not (spec.y) and spec.z"),
    ],
)
def test_param_guard_forms(param: str, index: int, guard: str) -> None:
    fact = one(facts_of(GUARDS), "param", f"build:{param}")
    data = fact.data
    assert (data["index"], data["guard"], data["function"]) == (index, guard, "build")


def test_param_type_attrs_and_nested_owner() -> None:
    facts = facts_of(GUARDS)
    in_if = one(facts, "param", "build:in_if").data
    assert (in_if["type"], in_if["attrs"]) == ("F32", {"noalias": "True"})
    assert len(of_kind(facts, "param")) == 11  # ten in build, none for the non-literal name
    assert one(facts, "param", "build.<locals>.helper:inner").data["index"] == 0


# -- fixtures -------------------------------------------------------------------------------

DENSE = f"{KERNELS}/gfx950/attention_dense.py"
TILED = f"{KERNELS}/gfx950/attention_tiled_2d.py"
UNIFIED = f"{KERNELS}/gfx950/unified_attention.py"


@pytest.mark.parametrize(
    ("rel", "function", "expected"),
    [
        (DENSE, "build_attention_dense", [
            ("q_ptr", "always"), ("k_ptr", "always"), ("v_ptr", "always"), ("o_ptr", "always"),
            ("scale", "always"), ("batch", "always"), ("seqlen_q", "always"),
            ("seqlen_kv", "always"), ("sink_ptr", "spec.use_sinks"),
            ("cu_seqlens_q", "spec.varlen"), ("cu_seqlens_kv", "spec.varlen"),
            ("block_tables", "spec.paged"), ("kv_lens", "spec.paged"),
            ("block_table_stride", "spec.paged"),
        ]),
        (DENSE, "_build_attention_dense_persistent", [
            ("q_ptr", "always"), ("k_ptr", "always"), ("v_ptr", "always"), ("o_ptr", "always"),
            ("scale", "always"), ("sink_ptr", "spec.use_sinks"),
        ]),
        (TILED, "build_attention_tiled_2d", [
            (name, "always") for name in ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "sink_ptr",
                                          "scale", "seqlen_q", "seqlen_kv", "alibi_slopes"]
        ]),
        (UNIFIED, "build_unified_attention_reduce", [
            (name, "always") for name in ["segm_output", "segm_max", "segm_expsum", "seq_lens",
                                          "o_ptr", "num_seqs"]
        ]),
    ],
)
def test_fixture_builder_params(rel: str, function: str, expected: list) -> None:
    params = [f for f in of_kind(fixture_facts(rel), "param") if f.data["function"] == function]
    assert [(f.data["param"], f.data["guard"]) for f in params] == expected
    assert [f.data["index"] for f in params] == list(range(len(expected)))


def test_fixture_param_type_and_attrs() -> None:
    q = one(fixture_facts(DENSE), "param", "build_attention_dense:q_ptr").data
    assert q["type"] == "PtrType(elem)"
    assert q["attrs"] == {"noalias": "True", "readonly": "True", "align": "16"}


@pytest.mark.parametrize(
    ("rel", "function", "expected"),
    [
        (DENSE, "attention_dense_signature", [
            ("ptr", "q_ptr", None, "always"), ("ptr", "k_ptr", None, "always"),
            ("ptr", "v_ptr", None, "always"), ("ptr", "o_ptr", None, "always"),
            ("scalar", "scale", "F32", "always"),
            ("scalar", "batch", "I32", "_has_shape_params(spec)"),
            ("scalar", "seqlen_q", "I32", "_has_shape_params(spec)"),
            ("scalar", "seqlen_kv", "I32", "_has_shape_params(spec)"),
            ("ptr", "sink_ptr", None, "spec.use_sinks"),
            ("ptr", "cu_seqlens_q", None, "spec.varlen"),
            ("ptr", "cu_seqlens_kv", None, "spec.varlen"),
            ("ptr", "block_tables", None, "spec.paged"),
            ("ptr", "kv_lens", None, "spec.paged"),
            ("scalar", "block_table_stride", "I32", "spec.paged"),
        ]),
        (UNIFIED, "unified_attention_reduce_signature", [
            ("ptr", "segm_output", None, "always"), ("ptr", "segm_max", None, "always"),
            ("ptr", "segm_expsum", None, "always"), ("ptr", "seq_lens", None, "always"),
            ("ptr", "o_ptr", None, "always"), ("scalar", "num_seqs", "I32", "always"),
        ]),
    ],
)
def test_fixture_signature_builders(rel: str, function: str, expected: list) -> None:
    entries = one(fixture_facts(rel), "signature-builder", function).data["entries"]
    assert [(e["method"], e["name"], e["type"], e["guard"]) for e in entries] == expected


def test_signature_builder_returned_chain() -> None:
    facts = facts_of(
        """
        def sig(spec):
            return SignatureBuilder().ptr("a").scalar("n", I32).build()
        """
    )
    entries = one(facts, "signature-builder", "sig").data["entries"]
    assert [(e["method"], e["name"]) for e in entries] == [("ptr", "a"), ("scalar", "n")]


QUALIFIED = """
def sig(spec):
    b = dsl.ir.SignatureBuilder()
    b.ptr("a")
    return dsl.ir.KernelModule([build_a(spec)])
"""


def test_qualified_spelling_needs_its_dsl_module() -> None:
    facts = facts_of(QUALIFIED, dsl_modules=["dsl.ir"])
    entries = one(facts, "signature-builder", "sig").data["entries"]
    assert [(e["method"], e["name"]) for e in entries] == [("ptr", "a")]
    kernels = one(facts, "kernel-module", "sig").data["kernels"]
    assert [k["kernel"] for k in kernels] == ["build_a(spec)"]
    bare = facts_of(QUALIFIED)
    assert not of_kind(bare, "signature-builder") and not of_kind(bare, "kernel-module")


def test_fixture_kernel_module() -> None:
    facts = fixture_facts(UNIFIED)
    assert [f.name for f in of_kind(facts, "kernel-module")] == ["build_unified_attention"]
    kernels = one(facts, "kernel-module", "build_unified_attention").data["kernels"]
    assert [(k["name"], k["kernel"]) for k in kernels] == [
        ("segment", "build_unified_attention_segment(spec, arch=arch)"),
        ("reduce", "build_unified_attention_reduce(spec.reduce_spec(), arch=arch)"),
    ]


def test_kernel_module_from_list() -> None:
    facts = facts_of("def m(s):\n    return KernelModule([build_a(s), build_b(s)])\n")
    kernels = one(facts, "kernel-module", "m").data["kernels"]
    assert [k["kernel"] for k in kernels] == ["build_a(s)", "build_b(s)"]


def test_reads() -> None:
    facts = facts_of(
        """
        import a.b as m
        def f(spec, k=DEFAULT):
            x = m.f(spec.block_m, key=1)
            y = None
            def g():
                return hidden
            return x
        """
    )
    assert one(facts, "reads", "f").data["names"] == [
        "DEFAULT", "m", "m.f", "spec", "spec.block_m", "x",
    ]
    assert one(facts, "reads", "f.<locals>.g").data["names"] == ["hidden"]


def test_fixture_reads_follow_imports() -> None:
    facts = fixture_facts(UNIFIED)
    names = one(facts, "reads", "max_segments_for").data["names"]
    assert "ceil_div" in names and "spec.tile_n" in names


@pytest.mark.parametrize("rel", FIXTURES)
def test_fixtures_parse_cleanly_and_are_json_ready(rel: str) -> None:
    facts = fixture_facts(rel)
    assert facts and not of_kind(facts, PARSE_FAILURE)
    assert facts == sorted(facts, key=Fact.sort_key)
    json.dumps([f.to_json() for f in facts])
    functions = {f.name for f in of_kind(facts, "function")}
    assert functions == {f.name for f in of_kind(facts, "reads")}


# -- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        b"def f(:\n    pass\n",
        b"x = = 1\n",
        b"\xff\xfe not utf8 \x80",
        b"if x:\npass\n",
        b"x = " + b"(" * 3000 + b")" * 3000,  # deeper than Python's tokenizer allows
        b"x = " + b"-" * 5000 + b"1",  # deep recursion
    ],
)
def test_unreadable_file_is_one_parse_failure(source: bytes) -> None:
    facts = extract_python_facts("bad.py", source)
    assert len(facts) == 1
    assert facts[0].kind == PARSE_FAILURE and facts[0].name == "bad.py"
    assert not facts[0].data["reason"].startswith(INTERNAL_ERROR)


FIXTURE_SOURCES = [(TREE / rel).read_text() for rel in FIXTURES]


@st.composite
def mangled_fixture(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(FIXTURE_SOURCES))
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        else:
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
    return text


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.text(), mangled_fixture(), st.binary()))
def test_never_raises(source: str | bytes) -> None:
    data = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    facts = extract_python_facts("gen/__init__.py", data, package="gen")
    assert isinstance(facts, list) and all(isinstance(f, Fact) for f in facts)
    for fact in facts:
        json.dumps(fact.to_json())
        if fact.kind == PARSE_FAILURE:
            assert len(facts) == 1
            assert not fact.data["reason"].startswith(INTERNAL_ERROR), fact.data["reason"]


@pytest.mark.parametrize(("body", "placed", "unread"), [
    # literal names, one call each: placed, nothing unread
    ('q = b.param("q", F32)\n    k = b.param("k", F32)', ["q", "k"], []),
    # a name that is not a literal, or a call per element of a comprehension: not placed
    ('q, k = [b.param(n, F32) for n in ("q", "k")]', [], [False]),
    ('q, k = (b.param("q", F32) for _ in range(1)), 0', [], [False]),
    ('name = "q"\n    q = b.param(name, F32)', [], [False]),
])
def test_param_calls_the_reader_cannot_place(body: str, placed: list[str],
                                             unread: list[bool]) -> None:
    """A `b.param` whose place in the argument list the reader cannot settle is a
    `param-unread` fact, never a `param` fact guessed into the list."""
    facts = facts_of(f"def build(spec):\n    b = IRBuilder('k')\n    {body}\n"
                     "    return b.build()\n")
    assert [f.data["param"] for f in facts if f.kind == "param"] == placed
    assert [f.data["placed"] for f in facts if f.kind == "param-unread"] == unread


def test_param_on_a_builder_passed_in_is_marked() -> None:
    """A helper declaring arguments on the caller's builder: placed in its own list, and
    marked `passed_in` so the graph keeps its callers' lists from being compared."""
    facts = facts_of("def _inputs(b, elem):\n    return b.param('q', PtrType(elem))\n")
    assert [f.data["param"] for f in facts if f.kind == "param"] == ["q"]
    (mark,) = [f for f in facts if f.kind == "param-unread"]
    assert mark.data["passed_in"] and mark.data["placed"]


@pytest.mark.parametrize(("body", "type_text"), [
    ("ptr = ir.PtrType(elem)\n    b.param('x', ptr)", "ir.PtrType(elem)"),
    # bound twice, or a parameter of the function: the name as written, left to resolve
    ("ptr = ir.PtrType(elem)\n    ptr = other(elem)\n    b.param('x', ptr)", "ptr"),
    ("b.param('x', elem)", "elem"),
])
def test_a_type_through_a_local_bound_once_is_its_call(body: str, type_text: str) -> None:
    facts = facts_of(f"def build(spec, elem):\n    b = IRBuilder('k')\n    {body}\n")
    assert [f.data["type"] for f in facts if f.kind == "param"] == [type_text]


@pytest.mark.parametrize(("body", "placed"), [
    # one b.param per literal name, nothing that can skip one: unrolled in order
    ('for d in ("n", "h"):\n        out.append(b.param(d, I32))', ["n", "h"]),
    # a condition, a break, a name not literal, two declarations: left unread
    ('for d in ("n", "h"):\n        if d:\n            b.param(d, I32)', []),
    ('for d in ("n", "h"):\n        b.param(d, I32)\n        break', []),
    ('for d in (N, "h"):\n        b.param(d, I32)', []),
    ('for d in ("n", "h"):\n        b.param(d, I32)\n        b.param("x" + d, I32)', []),
])
def test_a_loop_over_literal_names_is_unrolled(body: str, placed: list[str]) -> None:
    facts = facts_of(f"def build(spec):\n    b = IRBuilder('k')\n    out = []\n    {body}\n")
    params = sorted((f for f in facts if f.kind == "param"), key=lambda f: f.data["index"])
    assert [f.data["param"] for f in params] == placed
    assert [f.data["guard"] for f in params] == ["always"] * len(placed)
    assert bool([f for f in facts if f.kind == "param-unread"]) == (not placed)
