"""The synthetic hipDNN/rocKE tree under impact/fixtures/rocke_tree.

The tree is the base commit of every scenario repository, so it must be
internally consistent: every shipped rocKE variant builds on the CPU, every
descriptor symbol exists in a pack, the census pins the shipped names, and
every file parses.  The tree's Python packages are imported with sys.path and
sys.modules saved and restored, so nothing leaks into other tests.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1] / "impact" / "fixtures" / "rocke_tree"
HKP = ROOT / "dnn-providers" / "hip-kernel-provider"
ENGINE = HKP / "src" / "engines" / "kernel_ingestor_engine"
DESCRIPTORS = ENGINE / "descriptors"
PACKS = ENGINE / "packs"
CENSUS = (
    HKP
    / "src"
    / "tests"
    / "engines"
    / "kernel_ingestor_engine"
    / "packs"
    / "TestGfx950AttentionDensePacks.cpp"
)
DENSE950_KDP = DESCRIPTORS / "rocKE/gfx950_attention_dense/gfx950_attention_dense.kdp.json"
TILED_KDP = DESCRIPTORS / "rocKE/gfx950_attention_tiled_2d/gfx950_attention_tiled_2d.kdp.json"
PROFILE = (
    ROOT / "projects/hipdnn/tools/IngestorGenerator/configs/gfx950_attention_dense.profile.yaml"
)
TREE_PATHS = [
    HKP / "rocke" / "platform" / "python",
    HKP / "rocke" / "library",
    HKP / "descriptor-packaging" / "python",
]
TREE_PACKAGES = ("rocke", "kernels", "hkp_pack")

DEFINE_RE = re.compile(r"^define amdgpu_kernel void @([\w.$-]+)\((.*)\) #0 \{$", re.M)
ARG_RE = re.compile(
    r'\{\s*"(global_buffer|by_value)"\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*'
    r'(?:R"([^(]*)\((\w+)\)\4"|"(\w+)")\s*\}'
)
CONSTEXPR_RE = re.compile(r'constexpr\s+std::string_view\s+(\w+)\s*=\s*"([^"]*)"\s*;')


def _files(*suffixes: str) -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.is_file() and p.name.endswith(suffixes))


def _is_tree_module(name: str) -> bool:
    return name.split(".", 1)[0] in TREE_PACKAGES


@pytest.fixture(scope="module")
def tree():
    """Import the tree's packages; restore sys.path and sys.modules afterwards.

    Bytecode writing is off meanwhile, so no __pycache__ lands in the tree.
    """
    saved_path = list(sys.path)
    saved_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    saved = {name: mod for name, mod in sys.modules.items() if _is_tree_module(name)}
    for name in saved:
        del sys.modules[name]
    sys.path[:0] = [str(p) for p in TREE_PATHS]
    try:
        import hkp_pack.registry as registry
        import hkp_pack.rocke_compile as rocke_compile
        import rocke.core.ir as ir
        import rocke.core.lower_llvm as lower_llvm
        import rocke.helpers.compile as compile_mod
        import rocke.helpers.spec as spec_mod

        yield {
            "ir": ir,
            "lower": lower_llvm,
            "compile": compile_mod,
            "spec": spec_mod,
            "registry": registry,
            "rocke_compile": rocke_compile,
        }
    finally:
        sys.dont_write_bytecode = saved_bytecode
        sys.path[:] = saved_path
        for name in [n for n in sys.modules if _is_tree_module(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("ROCKE_LLVM_FLAVOR", "ROCKE_BACKEND", "ROCKE_CPP_STRICT"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def _define(ir_text: str) -> tuple[str, list[str]]:
    m = DEFINE_RE.search(ir_text)
    assert m, ir_text[:400]
    params = [p.strip().rsplit(" ", 1)[-1].lstrip("%") for p in m.group(2).split(",") if p.strip()]
    return m.group(1), params


def _small_kernel(ir, **attrs):
    b = ir.IRBuilder("k_small")
    x = b.param("x_ptr", ir.PtrType(ir.F32), noalias=True, readonly=True, align=16)
    y = b.param("y_ptr", ir.PtrType(ir.F32), writeonly=True)
    n = b.param("n", ir.I32)
    b.buffer_rsrc(x, n)
    b.store(y, b.thread_id(0), b.mul(b.load(x, b.thread_id(0)), 2.0))
    b.kernel.attrs.update(attrs)
    return b.build()


# ---------------------------------------------------------------------------
# The DSL
# ---------------------------------------------------------------------------


def test_param_order_and_validation(tree):
    ir = tree["ir"]
    b = ir.IRBuilder("k")
    b.param("b_ptr", ir.PtrType(ir.BF16), noalias=True, readonly=True, align=16)
    b.param("alpha", ir.F32)
    with b.scope("optional"):
        b.param("extra", ir.PtrType(ir.F32))
    b.param("n", ir.I64)
    kernel = b.build()
    assert kernel.param_names() == ["b_ptr", "alpha", "extra", "n"]
    assert kernel.param("extra").scope == "optional"
    assert kernel.param("b_ptr").attrs == {"noalias": True, "readonly": True, "align": 16}
    with pytest.raises(ValueError):
        b.param("alpha", ir.F32)
    with pytest.raises(ValueError):
        ir.IRBuilder("k2").param("p", ir.PtrType(ir.F32), noaliass=True)
    with pytest.raises(ValueError):
        ir.IRBuilder("k3").param("p", ir.PtrType(ir.F32), readonly=True, writeonly=True)
    with pytest.raises(ValueError):
        ir.IRBuilder("k4").param("s", ir.F32, noalias=True)


def test_kernel_module_keeps_launch_order(tree):
    ir = tree["ir"]
    module = ir.KernelModule("m")
    module.add("segment", ir.IRBuilder("a").build())
    module.add("reduce", ir.IRBuilder("b").build())
    assert module.launches() == ["segment", "reduce"]
    assert [k.name for k in module] == ["a", "b"]
    with pytest.raises(ValueError):
        module.add("segment", ir.IRBuilder("c").build())


def test_flavors_change_datalayout_and_intrinsic(tree, clean_env):
    ir, lower = tree["ir"], tree["lower"]
    kernel = _small_kernel(ir)
    texts = {f: lower.lower_kernel_to_llvm(kernel, flavor=f) for f in lower.LLVM_FLAVORS}
    assert lower.LLVM_FLAVORS == ("llvm20", "llvm22", "llvm23")
    assert len(set(texts.values())) == 3
    dl = {f: re.search(r'target datalayout = "([^"]+)"', t).group(1) for f, t in texts.items()}
    assert "-p8:128:128-" in dl["llvm20"] and "m:e" not in dl["llvm20"]
    assert "-p8:128:128:128:48-" in dl["llvm22"] and "m:e" not in dl["llvm22"]
    assert "-p8:128:128:128:48-" in dl["llvm23"] and dl["llvm23"].startswith("e-m:e-")
    decl = "declare ptr addrspace(8) @llvm.amdgcn.make.buffer.rsrc."
    old = decl + "p1(ptr addrspace(1), i16, i32, i32)"
    new = decl + "p8.p1(ptr addrspace(1), i16, i64, i32)"
    assert old in texts["llvm20"] and new not in texts["llvm20"]
    for f in ("llvm22", "llvm23"):
        assert new in texts[f] and old not in texts[f]
    for text in texts.values():
        assert 'target triple = "amdgcn-amd-amdhsa"' in text
        name, params = _define(text)
        assert name == "k_small" and params == ["x_ptr", "y_ptr", "n"]
        assert "ptr addrspace(1) noalias readonly align 16 %x_ptr" in text


def test_body_edit_changes_ir(tree, clean_env):
    ir, lower = tree["ir"], tree["lower"]
    one = lower.lower_kernel_to_llvm(_small_kernel(ir), flavor="llvm22")
    b = ir.IRBuilder("k_small")
    b.param("x_ptr", ir.PtrType(ir.F32), noalias=True, readonly=True, align=16)
    b.param("y_ptr", ir.PtrType(ir.F32), writeonly=True)
    b.param("n", ir.I32)
    two = lower.lower_kernel_to_llvm(b.build(), flavor="llvm22")
    assert _define(one) == _define(two)
    assert one != two


def test_flavor_resolution(tree, clean_env):
    ir, lower = tree["ir"], tree["lower"]
    kernel = _small_kernel(ir)
    with pytest.raises(lower.LLVMFlavorError, match="ROCKE_LLVM_FLAVOR"):
        lower.lower_kernel_to_llvm(kernel)
    with pytest.raises(lower.LLVMFlavorError):
        lower.resolve_flavor("llvm21")
    assert lower.resolve_flavor(default="llvm23") == "llvm23"
    clean_env.setenv("ROCKE_LLVM_FLAVOR", "llvm20")
    assert "-p8:128:128-" in lower.lower_kernel_to_llvm(kernel)
    assert lower.resolve_flavor("llvm22") == "llvm22"  # the argument wins over the env


def test_compile_options_from_attrs(tree, clean_env):
    ir, comp = tree["ir"], tree["compile"]
    plain = comp.compile_kernel(_small_kernel(ir), arch="gfx950", backend="python", flavor="llvm22")
    assert plain.options == ("-O3",)
    assert plain.isa == "amdgcn-amd-amdhsa--gfx950"
    assert plain.kernel_name == "k_small"
    tuned = comp.compile_kernel(
        _small_kernel(ir, mfma_vgpr_form=True, llvm_opts=["-amdgpu-a", "-amdgpu-b"]),
        arch="gfx942",
        backend="python",
        flavor="llvm20",
    )
    assert tuned.options == (
        "-O3",
        "-mllvm",
        "-amdgpu-mfma-vgpr-form",
        "-mllvm",
        "-amdgpu-a",
        "-mllvm",
        "-amdgpu-b",
    )
    agpr = comp.codegen_options(_small_kernel(ir, agpr_alloc=(0, 0)))
    assert agpr == ["-O3", "-mllvm", "-amdgpu-mfma-vgpr-form"]
    with pytest.raises(comp.CompileError):
        comp.compile_kernel(
            _small_kernel(ir), arch="gfx942:xnack-", backend="python", flavor="llvm22"
        )
    assert comp.isa_name("gfx9-4-generic") == "amdgcn-amd-amdhsa--gfx9-4-generic"


def test_cpp_backend_falls_back_and_records(tree, clean_env):
    ir, comp = tree["ir"], tree["compile"]
    comp.clear_fallback_ledger()
    try:
        comp.compile_kernel(_small_kernel(ir), backend="python", flavor="llvm22")
        assert comp.FALLBACK_LEDGER == []
        out = comp.compile_kernel(_small_kernel(ir), arch="gfx950", flavor="llvm22")
        assert out.backend == "python"
        assert [e["kernel"] for e in comp.FALLBACK_LEDGER] == ["k_small"]
        clean_env.setenv("ROCKE_CPP_STRICT", "1")
        with pytest.raises(comp.CompileError):
            comp.compile_kernel(_small_kernel(ir), backend="cpp", flavor="llvm22")
        with pytest.raises(comp.CompileError):
            comp.compile_kernel(_small_kernel(ir), backend="both", flavor="llvm22")
    finally:
        comp.clear_fallback_ledger()


def test_signature_builder(tree):
    ir, spec = tree["ir"], tree["spec"]
    sig = spec.SignatureBuilder().ptr("a").scalar("s", ir.F32).ptr("b").build()
    assert sig == [
        {"name": "a", "kind": "global_buffer", "size": 8, "offset": 0},
        {"name": "s", "kind": "by_value", "size": 4, "offset": 8},
        {"name": "b", "kind": "global_buffer", "size": 8, "offset": 16},
    ]
    assert spec.kernel_name_join("a", None, "", "b", 3) == "a_b_3"


# ---------------------------------------------------------------------------
# Shipped variants
# ---------------------------------------------------------------------------


def _signature_fn(module, builder: str):
    return getattr(module, builder[len("build_") :] + "_signature", None)


def test_every_shipped_variant_builds_on_cpu(tree, clean_env):
    registry, rc = tree["registry"], tree["rocke_compile"]
    ir, comp = tree["ir"], tree["compile"]
    comp.clear_fallback_ledger()
    variants = registry.rocke_variants(DESCRIPTORS)
    assert variants
    built = 0
    for v in variants:
        assert v.arch, v.ukd_name
        module = rc.resolve_module(v.source)
        for arch in v.arch:
            spec = rc.make_spec(module, v.builder, v.spec)
            predicate = rc.resolve_predicate(module, v.builder)
            assert predicate is not None, v.builder
            ok, reason = predicate(spec, arch=arch)
            assert ok, (v.ukd_name, arch, reason)
            result = rc.resolve_builder(module, v.builder)(spec, arch=arch)
            assert isinstance(result, (ir.KernelDef, ir.KernelModule))
            kernels = list(result) if isinstance(result, ir.KernelModule) else [result]
            artifacts = rc.compile_rocke_variant(
                v.source, v.builder, v.spec, arch=arch, flavor="llvm22", launch=v.launch
            )
            assert len(artifacts) == len(kernels)
            for kernel, art in zip(kernels, artifacts, strict=True):
                name, params = _define(art.ir_text)
                assert name == kernel.name == spec.kernel_name() == art.kernel_name
                assert params == kernel.param_names(), v.ukd_name
                assert art.isa == f"amdgcn-amd-amdhsa--{arch}"
                sig = _signature_fn(module, v.builder)
                assert sig is not None, v.builder
                abi = sig(spec)
                assert [a["name"] for a in abi] == params, v.ukd_name
                assert [a["size"] for a in abi] == [p.type.size for p in kernel.params]
                built += 1
    assert built >= 40
    assert comp.FALLBACK_LEDGER == []


def test_variant_set_shape(tree):
    registry = tree["registry"]
    variants = registry.enumerate_variants(DESCRIPTORS)
    dense950 = [v for v in variants if v.kdp_path.endswith("gfx950_attention_dense.kdp.json")]
    assert len(dense950) >= 30
    assert len({v.ukd_name for v in dense950}) == len(dense950)
    assert {v.kind for v in variants} == {"rocke", "hip", "hsaco"}
    multi = [v for v in variants if v.launch]
    assert {v.launch for v in multi} == {"segment", "reduce"}
    assert {v.builder for v in multi} == {
        "build_unified_attention_segment",
        "build_unified_attention_reduce",
    }
    gfx942 = [v for v in variants if v.kdp_path.endswith("gfx942_attention_dense.kdp.json")]
    assert any("gfx9-4-generic" in v.arch for v in gfx942)
    assert any(v.arch == ("gfx942",) for v in gfx942)

    kdp = json.loads(DENSE950_KDP.read_text())
    assert list(kdp)[-1] == "arch" and kdp["arch"] == ["gfx950"]
    assert "specialization_contract" in kdp["provenance"]
    sources = {u["kernel_source"]["source"] for u in kdp["kernelDescriptors"]}
    assert sources == {"kernels.gfx950.attention_dense", "kernels/gfx950/attention_dense.py"}
    tiled = json.loads(TILED_KDP.read_text())
    assert any(isinstance(u, str) for u in tiled["kernelDescriptors"])
    assert any(isinstance(u, dict) for u in tiled["kernelDescriptors"])


def test_spec_rules_reject_bad_specs(tree):
    rc = tree["rocke_compile"]
    module = rc.resolve_module("kernels/gfx950/attention_dense.py")
    spec_cls = rc.resolve_spec_class(module, "build_attention_dense")
    with pytest.raises(ValueError):
        spec_cls(head_size=96)
    with pytest.raises(ValueError):
        spec_cls(
            paged=True, batch=2, head_size=128, sliding_window=64, block_size=16, num_kv_blocks=8
        )
    with pytest.raises(rc.RockeCompileError):
        rc.make_spec(module, "build_attention_dense", {"not_a_field": 1})
    ok, _ = module.supports_attention_dense(spec_cls(), arch="gfx942")
    assert not ok
    persistent = spec_cls(persistent=True, num_persistent=64)
    five = ["q_ptr", "k_ptr", "v_ptr", "o_ptr", "scale"]
    assert module.build_attention_dense(persistent).param_names() == five
    assert module.attention_dense_grid(persistent) == (64, 1, 1)
    assert module.attention_dense_block(spec_cls(block_m=128)) == (256, 1, 1)
    reduce_pred = rc.predicate_name("build_unified_attention_reduce")
    assert reduce_pred == "supports_unified_attention_reduce"
    assert rc.predicate_name("build_unified_attention_segment") == "supports_unified_attention"
    assert rc.predicate_name("build_attention_tiled_2d") == "supports_attention_tiled_2d"


def test_cpu_path_never_imports_runtime():
    code = (
        "import sys\n"
        f"sys.path[:0] = {[str(p) for p in TREE_PATHS]!r}\n"
        "from hkp_pack.registry import rocke_variants\n"
        "from hkp_pack.rocke_compile import compile_rocke_variant\n"
        f"for v in rocke_variants({str(DESCRIPTORS)!r}):\n"
        "    for arch in v.arch:\n"
        "        compile_rocke_variant(v.source, v.builder, v.spec, arch=arch, flavor='llvm23')\n"
        "assert 'rocke.runtime' not in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---------------------------------------------------------------------------
# Files parse
# ---------------------------------------------------------------------------


def test_json_and_yaml_parse():
    for path in _files(".json"):
        json.loads(path.read_text(encoding="utf-8"))
    yamls = _files(".yaml", ".yml", ".dvc")
    assert yamls
    for path in yamls:
        assert yaml.safe_load(path.read_text(encoding="utf-8")) is not None, path


def test_cpp_parses_without_errors():
    import tree_sitter
    import tree_sitter_cpp

    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cpp.language()))
    paths = _files(".cpp", ".hpp", ".h")
    assert len(paths) >= 15
    for path in paths:
        root = parser.parse(path.read_bytes()).root_node
        stack = [root]
        while stack:
            node = stack.pop()
            assert node.type != "ERROR" and not node.is_missing, (path, node.start_point)
            stack.extend(node.children)


def test_tree_holds_no_build_droppings():
    stray = [p for p in ROOT.rglob("*") if p.name == "__pycache__" or p.suffix in (".pyc", ".ll")]
    assert stray == []


def test_python_compiles():
    paths = _files(".py")
    assert len(paths) >= 20
    for path in paths:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")


# ---------------------------------------------------------------------------
# Hand-kept contracts agree at the base
# ---------------------------------------------------------------------------


def _bundle_symbols(bundle: Path) -> dict[str, str]:
    out = {}
    for path in bundle.glob("*.json"):
        doc = json.loads(path.read_text())
        kind = path.name.split(".")[-2]
        if kind == "ued":
            out["graph_match"] = doc["graph_match"]["native"]
        elif kind == "umd":
            out["kernel_match"] = doc["match_symbol"]
        elif kind == "udd":
            out["dispatch"] = doc["dispatch_symbol"]
        elif kind == "uhd":
            out["score"] = doc["payload"]
    return out


def _camel_to_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def test_descriptor_symbols_equal_pack_constants():
    constants = {}
    for path in PACKS.glob("*Native.cpp"):
        for _, value in CONSTEXPR_RE.findall(path.read_text()):
            constants[value] = path.name
    bundles = sorted({p.parent for p in DESCRIPTORS.rglob("*.kdp.json")})
    assert len(bundles) == 5
    for bundle in bundles:
        symbols = _bundle_symbols(bundle)
        assert set(symbols) == {"graph_match", "kernel_match", "dispatch", "score"}, bundle
        ued = json.loads(next(bundle.glob("*.ued.json")).read_text())
        namespace, local = ued["name"].split(":")
        prefix = f"{namespace}.{_camel_to_snake(local)}."
        packs = set()
        for role, symbol in symbols.items():
            assert symbol == prefix + role
            assert symbol in constants, (bundle.name, symbol)
            packs.add(constants[symbol])
        assert len(packs) == 1


def test_descriptor_ids_resolve_and_metadata_fits_kmd():
    for kdp_path in DESCRIPTORS.rglob("*.kdp.json"):
        bundle = kdp_path.parent
        docs = {}
        for path in bundle.glob("*.json"):
            doc = json.loads(path.read_text())
            docs[doc["id"]] = (path.name.split(".")[-2], doc)
        kdp = json.loads(kdp_path.read_text())
        assert docs[kdp["engine"]][0] == "ued"
        assert docs[kdp["dispatch"]][0] == "udd"
        assert all(docs[m][0] == "umd" for m in kdp["matchers"])
        ued = docs[kdp["engine"]][1]
        assert docs[ued["heuristic"]][0] == "uhd"
        kmd_kind, kmd = docs[ued["metadata"]]
        assert kmd_kind == "kmd"
        fields = {f["name"]: f for f in kmd["fields"]}
        required = {n for n, f in fields.items() if "default_value" not in f}
        for entry in kdp["kernelDescriptors"]:
            ukd = docs[entry][1] if isinstance(entry, str) else entry
            assert set(ukd["metadata"]) <= set(fields), ukd["name"]
            assert required <= set(ukd["metadata"]), ukd["name"]


def test_census_pins_the_shipped_names():
    text = CENSUS.read_text()
    block = re.search(r"EXPECTED_KERNEL_NAMES = \{(.*?)\};", text, re.S).group(1)
    census = re.findall(r'"([^"]+)"', block)
    size_re = r"std::array<std::string_view, (\d+)> EXPECTED_KERNEL_NAMES"
    size = int(re.search(size_re, text).group(1))
    kdp = json.loads(DENSE950_KDP.read_text())
    names = [u["name"] for u in kdp["kernelDescriptors"]]
    assert census == names
    assert size == len(names)
    assert f'EXPECTED_PACK_NAME = "{kdp["name"]}"' in text


def _pack_lists(path: Path) -> dict[str, list[tuple[str, int, int, str]]]:
    """KernelArgument lists per function in a pack source."""
    text = path.read_text()
    lists = {}
    for m in re.finditer(r"std::vector<KernelArgument> (\w+)\(\)\s*\{(.*?)\n\}", text, re.S):
        lists[m.group(1)] = [
            (kind, int(size), int(offset), raw or plain)
            for kind, size, offset, _delim, raw, plain in ARG_RE.findall(m.group(2))
        ]
    return lists


def _launch_calls(path: Path) -> list[list[str]]:
    calls = re.findall(r"\b\w*[lL]auncher\.launch\(([^;]*)\);", path.read_text())
    return [[a.strip() for a in c.split(",")] for c in calls]


def test_pack_abis_agree_with_builders(tree):
    rc = tree["rocke_compile"]

    def python_abi(source, builder, **fields):
        module = rc.resolve_module(source)
        spec = rc.make_spec(module, builder, fields)
        kernel = rc.resolve_builder(module, builder)(spec, arch="gfx950")
        return [
            (
                "global_buffer" if p.type.size == 8 and hasattr(p.type, "elem") else "by_value",
                p.type.size,
                p.name,
            )
            for p in kernel.params
        ]

    def strip(lst):
        return [(k, s, n) for k, s, _o, n in lst]

    dense = _pack_lists(PACKS / "Gfx950AttentionDenseNative.cpp")
    want = python_abi("kernels.gfx950.attention_dense", "build_attention_dense")
    assert strip(dense["attentionDenseKernelSignature"]) == want
    assert len(_launch_calls(PACKS / "Gfx950AttentionDenseNative.cpp")[0]) == len(want) == 8

    sig_test = CENSUS.with_name("TestGfx950AttentionDenseSignature.cpp").read_text()
    literal_re = r"const std::vector<KernelArgument> expected = \{(.*?)\};"
    literal = re.search(literal_re, sig_test, re.S).group(1)
    assert [(k, int(s), r or p) for k, s, _o, _d, r, p in ARG_RE.findall(literal)] == want

    tiled = _pack_lists(PACKS / "Gfx950AttentionTiled2dNative.cpp")
    want = python_abi("kernels.gfx950.attention_tiled_2d", "build_attention_tiled_2d")
    assert strip(tiled["attentionTiled2dKernelSignature"]) == want
    assert len(_launch_calls(PACKS / "Gfx950AttentionTiled2dNative.cpp")[0]) == len(want)

    unified = _pack_lists(PACKS / "Gfx950UnifiedAttentionNative.cpp")
    seg = python_abi("kernels.gfx950.unified_attention", "build_unified_attention_segment")
    red = python_abi("kernels.gfx950.unified_attention", "build_unified_attention_reduce")
    assert strip(unified["unifiedAttentionSegmentSignature"]) == seg
    assert strip(unified["unifiedAttentionReduceSignature"]) == red
    calls = _launch_calls(PACKS / "Gfx950UnifiedAttentionNative.cpp")
    assert [len(c) for c in calls] == [len(seg), len(red)]

    # Old era: no list, five positional values.
    assert _pack_lists(PACKS / "Gfx942AttentionDenseNative.cpp") == {}
    module = rc.resolve_module("kernels.gfx942.attention_dense")
    spec = rc.make_spec(module, "build_attention_dense", {"block_m": 128})
    params = module.build_attention_dense(spec, arch="gfx942").param_names()
    calls = _launch_calls(PACKS / "Gfx942AttentionDenseNative.cpp")
    assert calls == [["q", "k", "v", "o", "scale"]]
    assert len(params) == 5


def test_every_pack_is_registered_three_times():
    header = (ENGINE / "IngestorPacks.hpp").read_text()
    table = (ENGINE / "IngestorPacks.cpp").read_text()
    cmake = (ENGINE / "CMakeLists.txt").read_text()
    natives = sorted(PACKS.glob("*Native.cpp"))
    assert len(natives) == 5
    for path in natives:
        name = path.stem[: -len("Native")]
        assert f"void register{name}Symbols(SymbolScope<Handle>& scope);" in header
        assert f"&register{name}Symbols" in table
        assert f"packs/{path.name}" in cmake
        assert f'"hipkernel:{name}"' in table


def test_launch_surface_locators():
    profile = yaml.safe_load(PROFILE.read_text())
    for key in ("source", "builder", "predicate", "arch_spec", "metadata_fields", "kmd_fields"):
        assert key in profile
    surfaces = profile["launch_surface"]
    pythons = [s["python_source"] for s in surfaces]
    assert any(re.search(r"\.py:\w+\.\w+$", p) for p in pythons)
    assert any(p.endswith(".py") for p in pythons)
    assert any(s["cpp_mirror"] == "none" or s["guard"] == "none" for s in surfaces)
    for surface in surfaces:
        keys = {"name", "python_source", "cpp_mirror", "kmd_fields", "guard", "test"}
        assert set(surface) == keys
        for key in ("python_source", "cpp_mirror", "guard", "test"):
            value = surface[key]
            if value == "none":
                continue
            path, _, symbol = value.partition(":")
            text = (ROOT / path).read_text()
            if symbol and path.endswith(".py"):
                head = symbol.split(".")[0]
                names = {n.name for n in ast.walk(ast.parse(text)) if hasattr(n, "name")}
                assert head in names, value
            elif symbol:
                assert symbol.split("::")[-1] in text, value


def test_includes_resolve_inside_the_tree():
    include_roots = [
        ROOT / "projects/hipdnn/plugin_sdk/include",
        ROOT / "projects/hipdnn/flatbuffers_sdk/include",
    ]
    for path in _files(".cpp", ".hpp", ".h"):
        for quoted, angled in re.findall(r'#include\s+(?:"([^"]+)"|<([^>]+)>)', path.read_text()):
            if quoted:
                if quoted.startswith(("flatbuffers/", "hip/")):
                    continue
                assert (path.parent / quoted).is_file(), (path, quoted)
            elif angled.startswith("hipdnn_"):
                assert any((r / angled).is_file() for r in include_roots), (path, angled)
