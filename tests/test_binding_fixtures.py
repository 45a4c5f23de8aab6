"""The synthetic ROCm/aiter and flash-attention trees under impact/fixtures.

Both trees are base commits for binding-contract scenarios, so at base every copy of an
argument list must agree: aiter stubs with their py::arg lists and C++ declarations, FA2
call sites with every backend's mha_* parameter list, FA3 Python calls with both schema
copies, the C++ function and the boxed wrapper's stack reads.  The trees are only parsed
here, never imported.  Anchors that scenario edits target must each occur exactly once.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
import tree_sitter
import tree_sitter_cpp

FIXTURES = Path(__file__).resolve().parents[1] / "impact" / "fixtures"
AITER = FIXTURES / "aiter_tree"
FA = FIXTURES / "flash_attention_tree"
TREES = (AITER, FA)
CPP_SUFFIXES = (".cpp", ".cu", ".h", ".hpp")

PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))

# Files whose tree-sitter parse has ERROR/MISSING nodes, and why.  The errors must stay
# inside the lines from the `#if` to the line after its `#endif`.
PARSE_EXCEPTIONS = {
    "aiter_tree/csrc/include/norm.h": "#if defined(ENABLE_FP8) inside a parameter list",
}

# Binding sites as designed (regex counts over every C++ file of a tree).
EXPECTED_M_DEF = {"aiter_tree": 9, "flash_attention_tree": 6}
EXPECTED_PY_ARG = {"aiter_tree": 40, "flash_attention_tree": 0}
EXPECTED_STUBS = 10  # 9 pybind + 1 ctypes

M_DEF_RE = re.compile(r"\bm\.def\(")
PY_ARG_RE = re.compile(r'py::arg\("(\w+)"\)(\s*=\s*[^,)]+)?')
BINDING_RE = re.compile(r'm\.def\(\s*"(\w+)"\s*,\s*&([\w:]+)(.*?)\);', re.S)
SCHEMA_RE = re.compile(r'm\.def\("(\w+)\((.*)\)\s*->\s*([^"]+)"\);')
STACK_RE = re.compile(r"stack\[(\d+)\]\)")

# Lines scenario edits target; each must occur exactly once in its file.
ANCHORS = {
    "aiter_tree/aiter/ops/activation.py": [
        "def silu_and_mul(out: Tensor, input: Tensor) -> None: ...",
        'fc_name="aiter_silu_and_mul_ctypes", ffi_type="ctypes")',
        "    out_ptr: int, input_ptr: int, num_tokens: int, d: int, stream: int\n",
    ],
    "aiter_tree/aiter/ops/moe_sorting.py": [
        "def moe_sorting_fwd(\n",
        "    sorted_weight_buf: Tensor,\n",
        "    dispatch_policy: int = 0,\n",
        "def moe_sum(input: Tensor, output: Tensor) -> None: ...",
    ],
    "aiter_tree/aiter/ops/norm.py": [
        "def rms_norm(\n",
        '@compile_ops("module_norm", fc_name="layernorm2d_fwd")',
        "    x_bias: Tensor | None = None,\n",
    ],
    "aiter_tree/aiter/dist/utils.py": [
        "    silu_and_mul(out, x)\n",
        "        dispatch_policy=1,\n",
        "    rms_norm(out, x, weight, epsilon=eps, use_model_sensitive_rmsnorm=0)\n",
    ],
    "aiter_tree/aiter/jit/optCompilerConfig.json": ['"module_norm": {'],
    "aiter_tree/csrc/include/rocm_ops.hpp": [
        'py::arg("sorted_weight_buf"),',
        'py::arg("dispatch_policy")   = 0);',
        'py::arg("use_model_sensitive_rmsnorm") = 0);         \\',
        'py::arg("x_bias") = std::nullopt);',
        'm.def("silu_and_mul",',
        "&aiter::silu_and_mul,",
    ],
    "aiter_tree/csrc/pybind/moe_sorting_pybind.cu": [
        'm.def("moe_sum", &aiter::moe_sum, py::arg("input"), py::arg("output"));',
    ],
    "aiter_tree/csrc/include/activation.h": [
        "void silu_and_mul(torch::Tensor& out, torch::Tensor& input);",
    ],
    "aiter_tree/csrc/include/moe_op.h": [
        "                     torch::Tensor& sorted_weight_buf,\n",
        "                     int dispatch_policy                            = 0);",
    ],
    "aiter_tree/csrc/include/norm.h": [
        "#if defined(ENABLE_FP8)\n",
        "                                 std::optional<torch::Tensor> x_scale,\n",
    ],
    "aiter_tree/csrc/include/aiter_ctypes_entry.h": [
        "int aiter_silu_and_mul_ctypes(int64_t out_ptr, int64_t input_ptr, int num_tokens, "
        "int d, int64_t stream);",
    ],
    "aiter_tree/csrc/kernels/activation_kernels.cu": [
        "void silu_and_mul(torch::Tensor& out, torch::Tensor& input)\n{",
    ],
    "flash_attention_tree/flash_attn/flash_attn_interface.py": [
        "    out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.fwd(\n",
        "        q, k, v, None, alibi_slopes, dropout_p, softmax_scale, causal,\n",
        "        window_size_left, window_size_right, softcap, return_softmax, None,\n",
        '@torch.library.register_fake("flash_attn::_flash_attn_forward")',
    ],
    "flash_attention_tree/csrc/flash_attn/flash_api.cpp": [
        'm.def("fwd", &FLASH_NAMESPACE::mha_fwd, "Forward pass");',
        'm.def("varlen_fwd", &FLASH_NAMESPACE::mha_varlen_fwd,',
        "mha_fwd(at::Tensor &q,",
        "        std::optional<at::Generator> gen_)\n{\n    TORCH_CHECK(q.dtype()",
    ],
    "flash_attention_tree/csrc/flash_attn_ck/flash_api.cpp": [
        'm.def("fwd", &mha_fwd, "Forward pass");',
        'm.def("varlen_fwd", &mha_varlen_fwd,',
        "mha_fwd(at::Tensor &q,",
        "\n        std::optional<at::Generator> gen_);",
    ],
    "flash_attention_tree/csrc/flash_attn_ck/mha_fwd.cpp": ["mha_fwd(at::Tensor &q,"],
    "flash_attention_tree/hopper/flash_api.cpp": [
        "int num_splits=1) -> Tensor[]",
        'm.impl("fwd", &mha_fwd);',
        "        int64_t num_splits)\n",
    ],
    "flash_attention_tree/hopper/flash_api_stable.cpp": [
        "int num_splits=1) -> Tensor[]",
        "    auto num_splits = to<int64_t>(stack[11]);",
    ],
    "flash_attention_tree/hopper/flash_attn_interface.py": [
        "    out, softmax_lse = torch.ops.flash_attn_3.fwd(\n",
        "        window_size[0], window_size[1], softcap, num_splits,\n",
    ],
}


def _files(*suffixes: str) -> list[Path]:
    return sorted(
        p for root in TREES for p in root.rglob("*") if p.is_file() and p.name.endswith(suffixes)
    )


def _rel(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def _bad_nodes(node: tree_sitter.Node) -> list[int]:
    found = [node.start_point[0] + 1] if node.is_error or node.is_missing else []
    for child in node.children:
        found.extend(_bad_nodes(child))
    return found


def _split_top(text: str) -> list[str]:
    """Split at commas outside (), <>, [] and string quotes."""
    parts, depth, current, quoted = [], 0, [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "(<[":
            depth += 1
        elif not quoted and ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0 and not quoted:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    tail = "".join(current).strip()
    return [*parts, tail] if tail else parts


def _cpp_param_name(param: str) -> str:
    return re.findall(r"\w+", param.split("=")[0])[-1]


def _strip_cpp(text: str, *, defines: frozenset[str] = frozenset()) -> str:
    """Drop comments, keep `#if defined(X)` blocks whose X is in `defines`."""
    text = re.sub(r"//[^\n]*", "", text)
    kept, keep = [], [True]
    for line in text.splitlines():
        cond = re.match(r"\s*#if\s+defined\((\w+)\)", line)
        if cond:
            keep.append(keep[-1] and cond.group(1) in defines)
        elif re.match(r"\s*#endif", line):
            keep.pop()
        elif keep[-1]:
            kept.append(line)
    return "\n".join(kept)


def _cpp_params(text: str, name: str) -> list[list[str]]:
    """Parameter names of every declaration or definition of `name` in `text`."""
    pattern = re.compile(rf"(?<![\w.:&]){name}\s*\(([^;{{]*?)\)\s*[;{{]", re.S)
    return [[_cpp_param_name(p) for p in _split_top(m.group(1))] for m in pattern.finditer(text)]


def _ts_functions(path: Path) -> dict[str, list[list[str]]]:
    """Function name -> parameter-name lists of every declarator, via tree-sitter."""
    source = path.read_bytes()
    found: dict[str, list[list[str]]] = {}

    def visit(node: tree_sitter.Node) -> None:
        if node.type == "function_declarator":
            name_node = node.child_by_field_name("declarator")
            params = node.child_by_field_name("parameters")
            names = []
            for p in params.named_children:
                if p.type in ("parameter_declaration", "optional_parameter_declaration"):
                    node_ = p.child_by_field_name("declarator") or p
                    text = source[node_.start_byte : node_.end_byte].decode()
                    names.append(re.findall(r"\w+", text)[-1])
            name = source[name_node.start_byte : name_node.end_byte].decode().split("::")[-1]
            found.setdefault(name, []).append(names)
        for child in node.children:
            visit(child)

    visit(PARSER.parse(source).root_node)
    return found


def _bindings(text: str) -> dict[str, tuple[str, list[tuple[str, bool]]]]:
    """m.def name -> (C++ symbol, [(py::arg name, has default)])."""
    text = text.replace("\\\n", "\n")
    out = {}
    for m in BINDING_RE.finditer(text):
        args = [(a.group(1), a.group(2) is not None) for a in PY_ARG_RE.finditer(m.group(3))]
        out[m.group(1)] = (m.group(2), args)
    return out


def _aiter_bindings() -> dict[str, tuple[str, list[tuple[str, bool]], str]]:
    """m.def name -> (symbol, py::args, pybind source that expands or holds it)."""
    macros = {}
    hpp = (AITER / "csrc/include/rocm_ops.hpp").read_text()
    for m in re.finditer(r"#define (\w+_PYBIND)((?:[^\n]*\\\n)*[^\n]*)", hpp):
        macros[m.group(1)] = _bindings(m.group(2))
    out = {}
    for src in sorted((AITER / "csrc/pybind").glob("*_pybind.cu")):
        text = src.read_text()
        body = text[text.index("PYBIND11_MODULE") :]
        rel = src.relative_to(AITER).as_posix()
        for macro in re.findall(r"\b(\w+_PYBIND);", body):
            for name, (sym, args) in macros[macro].items():
                out[name] = (sym, args, rel)
        for name, (sym, args) in _bindings(body).items():
            out[name] = (sym, args, rel)
    return out


def _stubs() -> list[tuple[ast.FunctionDef, dict[str, object], str]]:
    """(function, compile_ops arguments, file) for every decorated stub under aiter/ops."""
    out = []
    for path in sorted((AITER / "aiter/ops").glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "compile_ops":
                    opts: dict[str, object] = {"module": ast.literal_eval(dec.args[0])}
                    opts.update({k.arg: ast.literal_eval(k.value) for k in dec.keywords})
                    out.append((node, opts, path.name))
    return out


def _py_params(fn: ast.FunctionDef) -> list[tuple[str, bool]]:
    args = fn.args.args
    first_default = len(args) - len(fn.args.defaults)
    return [(a.arg, i >= first_default) for i, a in enumerate(args)]


def _calls(path: Path, owner: str) -> dict[str, list[ast.Call]]:
    """Calls `<owner>.<op>(...)` in `path`; `owner` may be dotted (torch.ops.flash_attn_3)."""
    out: dict[str, list[ast.Call]] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and ast.unparse(node.func.value) == owner
        ):
            out.setdefault(node.func.attr, []).append(node)
    return out


# --- every file is well-formed ------------------------------------------------------------


@pytest.mark.parametrize("path", _files(".py"), ids=_rel)
def test_python_compiles(path: Path) -> None:
    compile(path.read_text(), str(path), "exec")


@pytest.mark.parametrize("path", _files(".json"), ids=_rel)
def test_json_loads(path: Path) -> None:
    assert json.loads(path.read_text())


@pytest.mark.parametrize("path", _files(*CPP_SUFFIXES), ids=_rel)
def test_cpp_parses(path: Path) -> None:
    bad = _bad_nodes(PARSER.parse(path.read_bytes()).root_node)
    if _rel(path) not in PARSE_EXCEPTIONS:
        assert bad == [], f"{_rel(path)}: ERROR/MISSING nodes on lines {bad}"
        return
    assert bad, f"{_rel(path)} now parses cleanly: drop it from PARSE_EXCEPTIONS"
    lines = path.read_text().splitlines()
    start = next(i for i, s in enumerate(lines, 1) if s.startswith("#if"))
    end = next(i for i, s in enumerate(lines, 1) if s.startswith("#endif"))
    assert all(start <= line <= end + 1 for line in bad), bad


def test_trees_stay_small() -> None:
    for root in TREES:
        assert len([p for p in root.rglob("*") if p.is_file()]) <= 25


@pytest.mark.parametrize("tree", sorted(EXPECTED_M_DEF))
def test_binding_site_counts(tree: str) -> None:
    texts = [p.read_text() for p in _files(*CPP_SUFFIXES) if _rel(p).startswith(tree + "/")]
    assert sum(len(M_DEF_RE.findall(t)) for t in texts) == EXPECTED_M_DEF[tree]
    assert sum(len(PY_ARG_RE.findall(t)) for t in texts) == EXPECTED_PY_ARG[tree]


@pytest.mark.parametrize("path", sorted(ANCHORS))
def test_anchors_are_unique(path: str) -> None:
    text = (FIXTURES / path).read_text()
    for anchor in ANCHORS[path]:
        assert text.count(anchor) == 1, f"{path}: {anchor!r} occurs {text.count(anchor)} times"


# --- aiter: stubs, py::arg lists, declarations, module map ---------------------------------


def test_aiter_module_map_sources_exist() -> None:
    config = json.loads((AITER / "aiter/jit/optCompilerConfig.json").read_text())
    assert sorted(config) == ["module_activation", "module_moe_sorting", "module_norm"]
    for module in config.values():
        for src in module["srcs"]:
            assert (AITER / src).is_file(), src


def test_aiter_stubs_match_their_bindings() -> None:
    config = json.loads((AITER / "aiter/jit/optCompilerConfig.json").read_text())
    bindings = _aiter_bindings()
    stubs = _stubs()
    assert len(stubs) == EXPECTED_STUBS
    bound = set()
    for fn, opts, file in stubs:
        assert opts["module"] in config, (file, fn.name)
        assert [ast.unparse(s) for s in fn.body] == ["..."], (file, fn.name)
        if opts.get("ffi_type") == "ctypes":
            continue
        symbol = opts.get("fc_name") or fn.name
        assert symbol in bindings, f"{file}:{fn.name} binds {symbol}, which no m.def registers"
        _, args, source = bindings[symbol]
        assert source in config[opts["module"]]["srcs"], (symbol, source)
        assert _py_params(fn) == args, f"{symbol}: stub and py::arg lists differ"
        bound.add(symbol)
    assert bound == set(bindings), "an m.def has no Python stub"


def test_aiter_declarations_match_py_args() -> None:
    headers = "\n".join(
        _strip_cpp(p.read_text(), defines=frozenset({"ENABLE_FP8"}))
        for p in sorted((AITER / "csrc/include").glob("*.h"))
    )
    kernels = _strip_cpp((AITER / "csrc/kernels/activation_kernels.cu").read_text())
    for name, (symbol, args, _) in _aiter_bindings().items():
        fn = symbol.split("::")[-1]
        decls = _cpp_params(headers, fn)
        assert len(decls) == 1, (name, decls)
        assert decls[0] == [a for a, _ in args], name
        for definition in _cpp_params(kernels, fn):
            assert definition == decls[0], name


def test_aiter_ctypes_stub_matches_extern_c() -> None:
    ((fn, opts, _),) = [s for s in _stubs() if s[1].get("ffi_type") == "ctypes"]
    header = _strip_cpp((AITER / "csrc/include/aiter_ctypes_entry.h").read_text())
    assert 'extern "C"' in header
    (decl,) = _cpp_params(header, str(opts["fc_name"]))
    assert [a for a, _ in _py_params(fn)] == decl
    kernels = _strip_cpp((AITER / "csrc/kernels/activation_kernels.cu").read_text())
    assert f'extern "C" int {opts["fc_name"]}(' in kernels
    assert _cpp_params(kernels, str(opts["fc_name"])) == [decl]


def test_aiter_wrappers_call_existing_parameters() -> None:
    stubs = {fn.name: [a for a, _ in _py_params(fn)] for fn, _, _ in _stubs()}
    tree = ast.parse((AITER / "aiter/dist/utils.py").read_text())
    seen = 0
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
        if name in stubs:
            seen += 1
            assert len(call.args) <= len(stubs[name]), name
            assert {k.arg for k in call.keywords} <= set(stubs[name][len(call.args) :]), name
    assert seen == 4


# --- flash-attention: FA2 positional pybind, FA3 schemas ----------------------------------


FA2_BACKENDS = {
    "csrc/flash_attn/flash_api.cpp": ["csrc/flash_attn/flash_api.cpp"],
    "csrc/flash_attn_ck/flash_api.cpp": [
        "csrc/flash_attn_ck/flash_api.cpp",
        "csrc/flash_attn_ck/mha_fwd.cpp",
        "csrc/flash_attn_ck/mha_varlen_fwd.cpp",
    ],
}


def test_fa2_call_sites_match_every_backend() -> None:
    calls = _calls(FA / "flash_attn/flash_attn_interface.py", "flash_attn_gpu")
    assert sorted(calls) == ["fwd", "varlen_fwd"]
    expected = {"fwd": 13, "varlen_fwd": 21}
    reference: dict[str, list[str]] = {}
    for binding_file, sources in FA2_BACKENDS.items():
        bindings = _bindings((FA / binding_file).read_text())
        assert sorted(bindings) == sorted(calls), binding_file
        copies: dict[str, list[list[str]]] = {}
        for src in sources:
            for name, lists in _ts_functions(FA / src).items():
                copies.setdefault(name, []).extend(lists)
        for op, (symbol, args) in bindings.items():
            assert args == [], "FA2 binds positionally: no py::arg"
            fn = symbol.split("::")[-1]
            lists = copies[fn]
            assert len(lists) == (2 if "flash_attn_ck" in binding_file else 1), (op, lists)
            for params in lists:
                assert len(params) == expected[op], (binding_file, fn, params)
                assert params == reference.setdefault(fn, params), (binding_file, fn)
            for call in calls[op]:
                assert not call.keywords and len(call.args) == expected[op], op


def test_fa2_fake_twins_restate_the_parameters() -> None:
    tree = ast.parse((FA / "flash_attn/flash_attn_interface.py").read_text())
    fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    for op in ("_flash_attn_forward", "_flash_attn_varlen_forward"):
        fake = fns[op + "_fake"]
        assert _py_params(fake) == _py_params(fns[op])
        (dec,) = fake.decorator_list
        assert ast.unparse(dec) == f"torch.library.register_fake('flash_attn::{op}')"


def _schema(path: Path) -> tuple[str, list[str]]:
    (m,) = SCHEMA_RE.finditer(path.read_text())
    return m.group(1), _split_top(m.group(2))


def test_fa3_schemas_match_cpp_stack_and_python() -> None:
    name, params = _schema(FA / "hopper/flash_api.cpp")
    assert (name, params) == _schema(FA / "hopper/flash_api_stable.cpp")
    assert name == "fwd" and len(params) == 12
    schema_names = [p.split("=")[0].split()[-1] for p in params]
    for src in ("hopper/flash_api.cpp", "hopper/flash_api_stable.cpp"):
        (cpp,) = _ts_functions(FA / src)["mha_fwd"]
        assert [n.rstrip("_") for n in cpp] == schema_names, src
    stable = (FA / "hopper/flash_api_stable.cpp").read_text()
    reads = [int(i) for i in STACK_RE.findall(stable)]
    assert reads == list(range(len(params)))
    assert 'm.impl("fwd", &mha_fwd);' in (FA / "hopper/flash_api.cpp").read_text()
    (call,) = _calls(FA / "hopper/flash_attn_interface.py", "torch.ops.flash_attn_3")["fwd"]
    assert not call.keywords and len(call.args) == len(params)
