"""The emitter's child run as the sandbox runs it (emit/child/__main__.py, by path) on a copy of
the fixture tree."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from emit.rules import child_rules, write_rules
from impact.git import Snapshot
from impact.surface import load_surface_map

REPO = Path(__file__).resolve().parents[1]
CHILD = REPO / "emit" / "child" / "__main__.py"
SCHEMA = json.loads((REPO / "impact" / "contracts" / "emit_child.schema.json").read_text())
FIXTURE = REPO / "impact" / "fixtures" / "rocke_tree"
HKP = "dnn-providers/hip-kernel-provider"
PY_ROOTS = [
    f"{HKP}/rocke/platform/python",
    f"{HKP}/rocke/library",
    f"{HKP}/descriptor-packaging/python",
]
DESC_ROOT = f"{HKP}/src/engines/kernel_ingestor_engine/descriptors"
KERNELS = f"{HKP}/rocke/library/kernels"
TILED = f"{KERNELS}/gfx950/attention_tiled_2d.py"
UNIFIED = f"{KERNELS}/gfx950/unified_attention.py"
TILED_KDP = f"{DESC_ROOT}/rocKE/gfx950_attention_tiled_2d/gfx950_attention_tiled_2d.kdp.json"
DENSE950 = "kernels.gfx950.attention_dense:build_attention_dense@gfx950"
TILED_ID = "kernels.gfx950.attention_tiled_2d:build_attention_tiled_2d@gfx950"
SEGMENT_ID = "kernels.gfx950.unified_attention:build_unified_attention_segment@gfx950#segment"
REDUCE_ID = "kernels.gfx950.unified_attention:build_unified_attention_reduce@gfx950#reduce"
GENERIC_ID = "kernels.gfx942.attention_dense:build_attention_dense@gfx9-4-generic"


def copy_tree(dest: Path) -> Path:
    shutil.copytree(FIXTURE, dest)
    return dest


def edit(tree: Path, rel: str, old: str, new: str) -> None:
    path = tree / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def write_rules_for(tree: Path, out: Path) -> Path:
    """The rules file the runner would hand the child for this tree on disk."""
    files = {p.relative_to(tree).as_posix(): p.read_bytes()
             for p in sorted(tree.rglob("*")) if p.is_file()}
    write_rules(child_rules(Snapshot.from_files(files), load_surface_map()), out)
    return out


def run_child(tree: Path, out: Path, *extra: str) -> tuple[dict, bytes, float]:
    rules = write_rules_for(tree, out.with_name(out.stem + ".rules.json"))
    cmd = [sys.executable, "-I", "-B", str(CHILD), "--tree", str(tree)]
    for root in PY_ROOTS:
        cmd += ["--python-root", root]
    cmd += ["--descriptor-root", DESC_ROOT, "--rules", str(rules), "--out", str(out), *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCKE_")}
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    doc = json.loads(data)
    jsonschema.validate(doc, SCHEMA)
    return doc, data, elapsed


def families(doc: dict) -> dict:
    return {f["id"]: f for f in doc["families"]}


def table(doc: dict, fid: str) -> dict:
    return next(t for t in doc["predicate_tables"] if t["family"] == fid)


def digests(fam: dict) -> dict:
    return {(v["name"], k["arch"], k["launch"]): k["ir_sha256"]
            for v in fam["variants"] for k in v["kernels"]}


def args_of(fam: dict) -> dict:
    return {(v["name"], k["arch"], k["launch"]): k["args"]
            for v in fam["variants"] for k in v["kernels"]}


def unlabelled(fam: dict) -> dict:
    """A family without the per-variant note of which reading enumerated it."""
    return dict(fam, variants=[{k: v for k, v in var.items()
                                if k not in ("enumerated_by", "enumeration_gap")}
                               for var in fam["variants"]])


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    base = tmp_path_factory.mktemp("baseline")
    tree = copy_tree(base / "tree")
    doc, data, _ = run_child(tree, base / "out.json")
    return doc, data


def test_child_imports_only_the_standard_library():
    """Each module of the child imports the standard library and the child's own modules
    (absolute imports of emit.child.*), nothing else."""
    own = {f"emit.child.{p.stem}" for p in CHILD.parent.glob("*.py")}
    names = set()
    for module in sorted(CHILD.parent.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0
                names.add(node.module)
    foreign = {name.split(".")[0] for name in names - own}
    assert foreign - {"__future__"} <= set(sys.stdlib_module_names), names


ISOLATION = r"""
import json, runpy, sys
entry = runpy.run_path(sys.argv[1], run_name="emit_child_start")["_entry"]
before = list(sys.path)
main = entry()
same_path = sys.path == before
left = [n for n in sys.modules if n == "emit" or n.startswith("emit.")]
sys.path.insert(0, sys.argv[2])
import emit
print(json.dumps({"main": callable(main), "tree_emit": getattr(emit, "MARK", None),
                  "left": left, "same_path": same_path}))
"""


def test_the_childs_own_modules_leave_no_trace_for_tree_code(tmp_path):
    """The entry imports the child from this checkout, then takes its folder off sys.path
    and its modules out of sys.modules before tree code runs: a tree's own `emit` package
    is the one the tree's code imports."""
    (tmp_path / "root" / "emit").mkdir(parents=True)
    (tmp_path / "root" / "emit" / "__init__.py").write_text("MARK = 'the tree'\n")
    done = subprocess.run([sys.executable, "-I", "-c", ISOLATION, str(CHILD),
                           str(tmp_path / "root")], capture_output=True, text=True,
                          check=True, timeout=60)
    found = json.loads(done.stdout)
    assert found == {"main": True, "tree_emit": "the tree", "left": [], "same_path": True}, found


@pytest.mark.slow  # children spawned
def test_every_shipped_variant_builds(baseline):
    doc, _ = baseline
    assert doc["enumerator"] == "hkp_pack.registry"
    assert doc["flavor"] == "llvm23"
    assert doc["backend_pin"] == "python"
    assert doc["error"] is None and doc["not_inspected"] == []
    fams = families(doc)
    assert all(f["status"] == "built" for f in fams.values()), [
        (f["id"], f["reason"]) for f in fams.values() if f["status"] != "built"]
    dense = fams[DENSE950]
    assert len(dense["variants"]) == 38
    assert all(v["status"] == "built" and v["archs"] == ["gfx950"] for v in dense["variants"])
    assert dense["spec_class"] == "kernels.gfx950.attention_dense.Gfx950AttentionDenseSpec"
    assert "kernels.gfx950.attention_dense" in dense["imports"]
    assert "rocke.core.lower_llvm" in dense["imports"]
    kernel = dense["variants"][0]["kernels"][0]
    assert kernel["compiler"]["isa"] == "amdgcn-amd-amdhsa--gfx950"
    assert kernel["compiler"]["options"][0] == "-O3"
    assert kernel["compiler"]["fresh_process"] is True
    assert kernel["args"][:5] == [
        {"name": "q_ptr", "kind": "global_buffer", "size": 8},
        {"name": "k_ptr", "kind": "global_buffer", "size": 8},
        {"name": "v_ptr", "kind": "global_buffer", "size": 8},
        {"name": "o_ptr", "kind": "global_buffer", "size": 8},
        {"name": "scale", "kind": "by_value", "size": 4},
    ]
    # The multi-launch UKD: one family per launch, each kernel with its own arguments.
    seg, red = fams[SEGMENT_ID], fams[REDUCE_ID]
    assert seg["launch"] == "segment" and red["launch"] == "reduce"
    seg_args = [a["name"] for a in seg["variants"][0]["kernels"][0]["args"]]
    red_args = [a["name"] for a in red["variants"][0]["kernels"][0]["args"]]
    assert seg_args[0] == "q_ptr" and seg_args[-1] == "block_table_stride"
    assert red_args == ["segm_output", "segm_max", "segm_expsum", "seq_lens", "o_ptr",
                        "num_seqs"]
    assert {v["name"] for v in seg["variants"]} == {v["name"] for v in red["variants"]}
    # A generic-target KDP arch is built for the member archs the predicate accepts.
    generic = fams[GENERIC_ID]
    assert generic["variants"] and all(v["archs"] == ["gfx942"] for v in generic["variants"])
    assert all("gfx950" in v["reason"] for v in generic["variants"])
    assert sorted(s["kind"] for s in doc["skipped"]) == ["hip", "hsaco"]
    assert all(t["status"] == "done" for t in doc["predicate_tables"])
    assert table(doc, DENSE950)["probes"] > 100
    # The fixture's predicates agree with their builders and with each other.
    assert all(t["findings"] == [] for t in doc["predicate_tables"])


@pytest.mark.slow  # children spawned
def test_two_runs_in_different_places_give_identical_bytes(baseline, tmp_path):
    _, data = baseline
    tree = copy_tree(tmp_path / "elsewhere")
    _, again, _ = run_child(tree, tmp_path / "out.json")
    assert again == data
    assert str(tmp_path) not in again.decode()


@pytest.mark.slow  # children spawned
def test_ir_edit_changes_digest_and_refactor_does_not(baseline, tmp_path):
    base_doc, _ = baseline
    tree = copy_tree(tmp_path / "tree")
    # Changes the IR of every tiled variant, not its arguments.
    edit(tree, TILED, "    p = b.exp2(s)\n", "    b.barrier()\n    p = b.exp2(s)\n")
    # A refactor of the segment builder that emits the same IR.
    edit(tree, UNIFIED, "    kv_head = b.div(head, spec.num_query_heads // spec.num_kv_heads)\n",
         "    group = spec.num_query_heads // spec.num_kv_heads  # GQA group size\n"
         "    kv_head = b.div(head, group)\n")
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    old, new = families(base_doc), families(doc)
    old_d, new_d = digests(old[TILED_ID]), digests(new[TILED_ID])
    assert old_d.keys() == new_d.keys() and len(old_d) == 4
    assert all(old_d[k] != new_d[k] for k in old_d)
    assert args_of(old[TILED_ID]) == args_of(new[TILED_ID])
    for fid in (SEGMENT_ID, REDUCE_ID, DENSE950):
        assert digests(old[fid]) == digests(new[fid])


def test_unreadable_and_duplicate_descriptors(baseline, tmp_path):
    tree = copy_tree(tmp_path / "tree")
    kdp_path = tree / TILED_KDP
    kdp = json.loads(kdp_path.read_text())
    first = kdp["kernelDescriptors"][0]
    malformed = {"id": "00000000-0000-4000-8000-000000000001", "name": "broken.gfx950",
                 "version": "1.0", "kernel_source": "kernels.gfx950.attention_tiled_2d"}
    twin = json.loads(json.dumps(first))
    twin["id"] = "00000000-0000-4000-8000-000000000002"
    twin["kernel_source"]["spec"]["block_n"] = 32
    kdp["kernelDescriptors"] += [malformed, twin]
    kdp_path.write_text(json.dumps(kdp, indent=2))
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert doc["enumerator"] == "kdp-json"
    assert doc["enumerator_error"]
    [bad] = doc["not_inspected"]
    assert bad["name"] == "broken.gfx950" and "not an object" in bad["reason"]
    tiled = families(doc)[TILED_ID]
    dup = [v for v in tiled["variants"] if v["name"] == first["name"]]
    assert len(dup) == 2
    assert all(v["status"] == "failed" and v["reason"].startswith("duplicate-name") for v in dup)
    assert tiled["status"] == "failed"
    # The JSON reading finds the same variants as the registry everywhere else.
    base = families(baseline[0])
    for fid, fam in families(doc).items():
        if fid != TILED_ID:
            assert all(v["enumerated_by"] == "kdp-json" for v in fam["variants"])
            assert unlabelled(fam) == unlabelled(base[fid])
    assert doc["skipped"] == baseline[0]["skipped"]


def test_packer_pinned_to_cpp_fails_every_variant(tmp_path):
    tree = copy_tree(tmp_path / "tree")
    edit(tree, f"{HKP}/descriptor-packaging/python/hkp_pack/rocke_compile.py",
         'backend="python", flavor=flavor', 'backend="cpp", flavor=flavor')
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert doc["backend_pin"] == "cpp"
    variants = [v for f in doc["families"] for v in f["variants"]]
    assert len(variants) > 50
    assert all(v["status"] == "failed" and "'cpp'" in v["reason"] for v in variants)
    assert all(f["status"] == "failed" for f in doc["families"])


@pytest.mark.slow  # a builder left to hang until its budget cuts it
def test_builder_that_never_returns_is_cut_at_its_budget(tmp_path):
    tree = copy_tree(tmp_path / "tree")
    edit(tree, TILED, "    elem = BF16 if spec.dtype", "    import time\n    time.sleep(1000)\n"
         "    elem = BF16 if spec.dtype")
    doc, _, elapsed = run_child(tree, tmp_path / "out.json", "--family-budget", "2")
    assert elapsed < 30
    fams = families(doc)
    tiled = fams[TILED_ID]
    assert tiled["status"] == "timed-out" and tiled["imports"] == []
    assert all(v["status"] == "timed-out" for v in tiled["variants"])
    assert table(doc, TILED_ID)["status"] == "timed-out"
    others = [f for fid, f in fams.items() if fid != TILED_ID]
    assert others and all(f["status"] == "built" for f in others)
    assert len(fams[DENSE950]["variants"]) == 38


@pytest.mark.slow  # children spawned
def test_predicate_findings(tmp_path):
    tree = copy_tree(tmp_path / "tree")
    # The builder refuses a tile width the predicate accepts.
    edit(tree, TILED, "    elem = BF16 if spec.dtype",
         "    if spec.block_n > 64:\n        raise ValueError('block_n over 64 spills LDS')\n"
         "    elem = BF16 if spec.dtype")
    # The reduce predicate refuses a head count the segment predicate accepts.
    edit(tree, UNIFIED, '        return False, "spec must be a UnifiedAttentionReduceSpec"\n',
         '        return False, "spec must be a UnifiedAttentionReduceSpec"\n'
         '    if spec.num_query_heads <= 0:\n'
         '        return False, "num_query_heads must be positive"\n')
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert all(f["status"] == "built" for f in doc["families"])
    tiled = table(doc, TILED_ID)["findings"]
    hit = [f for f in tiled if f["field"] == "block_n" and f["value"] == 128]
    assert hit and hit[0]["kind"] == "builder" and "block_n over 64" in hit[0]["detail"]
    assert hit[0]["spec"]["block_n"] == 128
    assert all(f["kind"] == "builder" for f in tiled)
    sign = table(doc, SEGMENT_ID)["findings"]
    assert {(f["kind"], f["field"], f["value"]) for f in sign} >= {
        ("sign", "num_query_heads", 0)}
    assert all(f["family"] == SEGMENT_ID and f["value"] <= 0 for f in sign)
    assert table(doc, REDUCE_ID)["findings"] == []


# ---------------------------------------------------------------------------
# Issue 11: the child builds as the tree's own producer does, on any tree
# ---------------------------------------------------------------------------

PACKER = f"{HKP}/descriptor-packaging/python/hkp_pack"
KERNEL_MODULES = [f"{KERNELS}/gfx942/attention_dense.py", f"{KERNELS}/gfx950/attention_dense.py",
                  TILED, UNIFIED]


def built_digests(doc: dict) -> dict:
    """(family, variant, arch, launch) -> IR digest, for every kernel built."""
    return {(f["id"], *key): d for f in doc["families"] for key, d in digests(f).items()}


@pytest.mark.slow  # children spawned
def test_a_registry_that_lacks_a_field_is_completed_per_variant(baseline, tmp_path):
    tree = copy_tree(tmp_path / "tree")
    # The registry's variant has no `kind` (an attribute only our first tree had) and
    # leaves out one shipped UKD altogether.
    registry = f"{PACKER}/registry.py"
    edit(tree, registry, "    kind: str\n", "    origin: str\n")
    edit(tree, registry, "        kind=kind,\n", "        origin=kind,\n")
    edit(tree, registry, 'if v.kind == "rocke"', 'if v.origin == "rocke"')
    edit(tree, registry, "        for ukd in ukds:\n",
         "        for ukd in ukds[1:] if 'tiled_2d' in rel else ukds:\n")
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert doc["enumerator"] == "hkp_pack.registry" and doc["enumerator_error"] is None
    variants = [v for f in doc["families"] for v in f["variants"]]
    assert all(f["status"] == "built" for f in doc["families"])
    assert {v["enumerated_by"] for v in variants} == {"kdp-json"}
    gaps = {v["enumeration_gap"] for v in variants}
    assert gaps == {"the tree's enumerator gives no kind", "not listed by the tree's enumerator"}
    omitted = [v for v in variants if v["enumeration_gap"].startswith("not listed")]
    assert len(omitted) == 1 and omitted[0]["kdp"] == TILED_KDP
    # The same kernels as the baseline, built the same way.
    assert built_digests(doc) == built_digests(baseline[0])
    assert sorted(s["kind"] for s in doc["skipped"]) == ["hip", "hsaco"]


@pytest.mark.slow  # children spawned
def test_the_spec_class_is_whatever_the_trees_producer_resolves(baseline, tmp_path):
    tree = copy_tree(tmp_path / "tree")
    # No SPEC_CLASS anywhere: the tree's producer resolves another name of its own...
    for rel in [*KERNEL_MODULES, f"{PACKER}/rocke_compile.py"]:
        path = tree / rel
        path.write_text(path.read_text().replace("SPEC_CLASS", "SPEC_TYPE"))
    # ...and, for the tiled builder, the annotation of its first parameter, as the real
    # packer does.
    edit(tree, TILED, "SPEC_TYPE = Gfx950AttentionTiled2dSpec\n", "")
    edit(tree, TILED, "def build_attention_tiled_2d(spec, *,",
         "def build_attention_tiled_2d(spec: Gfx950AttentionTiled2dSpec, *,")
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    fams = families(doc)
    assert all(f["status"] == "built" for f in fams.values()), [
        (f["id"], f["reason"]) for f in fams.values() if f["status"] != "built"]
    assert fams[TILED_ID]["spec_class"] == (
        "kernels.gfx950.attention_tiled_2d.Gfx950AttentionTiled2dSpec")
    assert {f["id"]: f["spec_class"] for f in fams.values()} == {
        f["id"]: f["spec_class"] for f in baseline[0]["families"]}
    assert built_digests(doc) == built_digests(baseline[0])
    assert table(doc, DENSE950)["probes"] == table(baseline[0], DENSE950)["probes"]


@pytest.mark.slow  # children spawned
def test_a_producer_shaped_like_the_real_packers(baseline, tmp_path):
    tree = copy_tree(tmp_path / "tree")
    # The real producer takes (source, builder, spec, arch, out_dir), no flavor and no
    # launch, and returns (code object path, symbol).
    path = tree / PACKER / "rocke_compile.py"
    path.write_text(path.read_text() + (
        "\n\n_one_variant = compile_rocke_variant\n\n\n"
        "def compile_rocke_variant(source, builder, spec, arch, out_dir):\n"
        "    arts = _one_variant(source, builder, spec, arch, out_dir)\n"
        "    return out_dir, arts[0].kernel_name\n"))
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert all(f["status"] == "built" for f in doc["families"])
    assert built_digests(doc) == built_digests(baseline[0])


def test_a_tree_without_a_producer_fails_closed_and_says_why(tmp_path):
    tree = copy_tree(tmp_path / "tree")
    (tree / PACKER / "rocke_compile.py").unlink()
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert doc["error"] is None and doc["families"]
    for fam in doc["families"]:
        assert fam["status"] == "failed"
        assert "hkp_pack.rocke_compile" in fam["reason"], fam["reason"]
        assert all(v["status"] == "failed" and "hkp_pack.rocke_compile" in v["reason"]
                   for v in fam["variants"])


@pytest.mark.slow  # children spawned
def test_a_variant_the_producer_refuses_fails_alone_and_says_why(tmp_path):
    tree = copy_tree(tmp_path / "tree")
    kdp_path = tree / TILED_KDP
    kdp = json.loads(kdp_path.read_text())
    kdp["kernelDescriptors"][0]["kernel_source"]["spec"]["no_such_field"] = 1
    kdp_path.write_text(json.dumps(kdp, indent=2))
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    tiled = families(doc)[TILED_ID]
    assert tiled["status"] == "failed" and tiled["reason"].startswith("1 of ")
    bad = [v for v in tiled["variants"] if v["status"] != "built"]
    assert len(bad) == 1 and "no_such_field" in bad[0]["reason"]
    assert bad[0]["reason"].startswith("the producer refused every target: gfx950:")
    others = [f for f in doc["families"] if f["id"] != TILED_ID]
    assert all(f["status"] == "built" for f in others)


FLAT_INPUT = '''

class _Descriptor:
    def __init__(self, path, root):
        self.path = path
        self.rel_dir = path.parent.relative_to(root)
        self.doc = load_json(path)


class _FlatInput:
    def __init__(self, root):
        root = Path(root)
        self._kdps = [_Descriptor(p, root) for p in sorted(root.rglob("*.kdp.json"))]
        self._ukds = [_Descriptor(p, root) for p in sorted(root.rglob("*.ukd.json"))]

    def kdps(self):
        return self._kdps

    def ukd_by_id(self):
        return {d.doc["id"]: d for d in self._ukds}


def load_flat_input(root):
    return _FlatInput(root)
'''


@pytest.mark.slow  # children spawned
def test_a_tree_that_enumerates_through_its_flat_input(baseline, tmp_path):
    # The real packer has no registry: its descriptors module loads a flat input.
    tree = copy_tree(tmp_path / "tree")
    (tree / PACKER / "registry.py").unlink()
    descriptors = tree / PACKER / "descriptors.py"
    descriptors.write_text(descriptors.read_text() + FLAT_INPUT)
    doc, _, _ = run_child(tree, tmp_path / "out.json")
    assert doc["enumerator"] == "hkp_pack.descriptors" and doc["enumerator_error"] is None
    variants = [v for f in doc["families"] for v in f["variants"]]
    assert {v["enumerated_by"] for v in variants} == {"tree"}
    assert all(f["status"] == "built" for f in doc["families"])
    assert built_digests(doc) == built_digests(baseline[0])
