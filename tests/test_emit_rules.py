"""The rules file the runner hands the child: impact's readings as data, and no copies left."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from emit.rules import child_rules, write_rules
from impact.contracts import validate
from impact.descriptors import generic_targets
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot
from impact.surface import Conventions, load_surface_map

REPO = Path(__file__).resolve().parents[1]
CHILD = REPO / "emit" / "child" / "__main__.py"
CHILD_MODULES = sorted((REPO / "emit" / "child").glob("*.py"))
TREE = rocke_tree_files()
TILED_KDP = next(p for p in TREE if p.endswith("gfx950_attention_tiled_2d.kdp.json"))
PACKER = next(p for p in TREE if p.endswith("hkp_pack/rocke_compile.py"))


def rules_of(files: dict[str, bytes]) -> dict:
    rules = child_rules(Snapshot.from_files(files), load_surface_map())
    validate(rules, "emit_rules.schema.json")
    return rules


def with_kdp(edit) -> dict[str, bytes]:
    kdp = json.loads(TREE[TILED_KDP])
    edit(kdp)
    return {**TREE, TILED_KDP: json.dumps(kdp, indent=2).encode()}


def test_fixture_rules_come_from_impacts_tables() -> None:
    rules = rules_of(TREE)
    assert rules["generic_targets"] == {k: list(v) for k, v in generic_targets().items()}
    assert rules["backend_pins"] == ["python"]
    assert rules["not_inspected"] == []
    tiled = [v for v in rules["variants"] if v["kdp"] == TILED_KDP]
    assert len(tiled) == 4 and all(v["arch"] == ["gfx950"] for v in tiled)
    [launch] = tiled[0]["launches"]
    assert launch["kind"] == "rocke" and launch["launch"] is None
    assert launch["source"] == "kernels.gfx950.attention_tiled_2d"
    # A generic target stays as written: the child keys families by it.
    assert any("gfx9-4-generic" in v["arch"] for v in rules["variants"])


def test_backend_pin_read_from_the_packers_keyword_literals() -> None:
    text = TREE[PACKER].decode().replace('backend="python"', 'backend="cpp"')
    assert rules_of({**TREE, PACKER: text.encode()})["backend_pins"] == ["cpp"]


def test_child_gets_the_source_normalised_by_impact() -> None:
    def path_spelled(kdp: dict) -> None:
        kdp["kernelDescriptors"][0]["kernel_source"]["source"] = (
            "kernels/gfx950/attention_tiled_2d.py")

    rules = rules_of(with_kdp(path_spelled))
    sources = {launch["source"] for v in rules["variants"] if v["kdp"] == TILED_KDP
               for launch in v["launches"]}
    assert sources == {"kernels.gfx950.attention_tiled_2d"}


def test_unreadable_ukds_are_not_inspected_with_their_position() -> None:
    def spoil(kdp: dict) -> None:
        # Two inline UKDs, then two referenced by id (their .ukd.json files lie beside it).
        entries = kdp["kernelDescriptors"]
        assert [isinstance(e, str) for e in entries] == [False, False, True, True]
        entries[0]["kernel_source"]["kind"] = "kpack"          # the packed form
        entries[1]["kernel_source"] = "kernels.gfx950.attention_tiled_2d"
        entries[2] = "00000000-0000-4000-8000-00000000000a"  # no .ukd.json beside it

    rules = rules_of(with_kdp(spoil))
    refused = {r["index"]: r for r in rules["not_inspected"]}
    assert sorted(refused) == [0, 1, 2]
    assert "not an authored kernel source" in refused[0]["reason"]
    assert "not an object" in refused[1]["reason"]
    assert "has no readable .ukd.json" in refused[2]["reason"]
    assert refused[2]["ukd_id"] == "00000000-0000-4000-8000-00000000000a"
    [kept] = [v for v in rules["variants"] if v["kdp"] == TILED_KDP]
    assert kept["ukd_id"] == "c3a16887-2a14-595d-b769-f4dd4ff25625"


def test_child_refuses_a_rules_file_of_another_version(tmp_path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"schema_version": 99}))
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-I", "-B", str(CHILD), "--tree", str(tmp_path),
         "--descriptor-root", "d", "--rules", str(rules), "--out", str(out)],
        capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    validate(doc, "emit_child.schema.json")
    assert doc["families"] == [] and "schema version" in doc["error"]


def test_write_rules_validates(tmp_path) -> None:
    rules = rules_of(TREE)
    write_rules(rules, tmp_path / "rules.json")
    assert json.loads((tmp_path / "rules.json").read_text()) == rules
    rules["variants"][0]["launches"] = []
    with pytest.raises(jsonschema.ValidationError):
        write_rules(rules, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()


def _code_strings(path: Path) -> list[str]:
    """Every string constant of a module except its docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_copy_of_impacts_rules_and_no_hipdnn_path_in_emit() -> None:
    surface = load_surface_map()
    roots = (*surface.python_roots, *surface.descriptor_roots, surface.conventions.engine_tree)
    folders = {part for root in roots for part in root.split("/") if "-" in part or "_" in part}
    assert "hip-kernel-provider" in folders
    for module in sorted((REPO / "emit").rglob("*.py")):
        for text in _code_strings(module):
            assert not any(folder in text for folder in folders), (module.name, text)
            assert not ("/" in text and text.endswith((".py", ".json"))), (module.name, text)
    child = [text for module in CHILD_MODULES for text in _code_strings(module)]
    assert not any(name in child for name in generic_targets()), "a generic-target copy"
    assert "kernels." not in " ".join(child), "a copy of the source normalisation"


def test_the_child_spells_no_name_of_the_librarys() -> None:
    """What the child calls in a tree (modules, functions, the source kind, the flavor's
    variable) reaches it from the map's [conventions.emitter] through the rules file: no
    module of emit/child/ spells one, nor a module under one of the library's packages."""
    emitter = rules_of(TREE)["emitter"]
    assert emitter["producer"] == ["hkp_pack.rocke_compile", "compile_rocke_variant"]
    pairs = [*emitter["flavor_ladders"], emitter["producer"], emitter["lowering"],
             *(e["call"] for e in emitter["enumerators"])]
    names = {emitter["source_kind"], emitter["flavor_env"], emitter["python_backend"],
             emitter["builder_prefix"], *emitter["dsl_modules"], *emitter["lowering_reexports"],
             *emitter["predicate_resolvers"], *emitter["support_predicates"],
             *(part for pair in pairs for part in pair)}
    packages = {name.split(".")[0] + "." for name in names if "." in name}
    assert packages == {"rocke.", "hkp_pack."}
    for module in CHILD_MODULES:
        for text in _code_strings(module):
            assert text not in names, (module.name, text)
            assert not text.startswith(tuple(packages)), (module.name, text)


def test_the_child_refuses_a_rules_file_without_the_librarys_names(tmp_path) -> None:
    """Without emitter conventions the child builds nothing and says why (an error
    document), never an empty document that reads as nothing changed."""
    rules = rules_of(TREE)
    del rules["emitter"]
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(dict(rules, schema_version=2)))
    out = tmp_path / "out.json"
    proc = subprocess.run(
        [sys.executable, "-I", "-B", str(CHILD), "--tree", str(tmp_path),
         "--descriptor-root", "d", "--rules", str(path), "--out", str(out)],
        capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    validate(doc, "emit_child.schema.json")
    assert doc["families"] == [] and "no emitter conventions" in doc["error"]


def test_rules_for_a_map_without_emitter_conventions_are_refused() -> None:
    bare = dataclasses.replace(load_surface_map(), conventions=Conventions())
    with pytest.raises(ValueError, match="no emitter conventions"):
        child_rules(Snapshot.from_files(TREE), bare)
