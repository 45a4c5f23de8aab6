"""The file-level contracts (surface, build, deps, dvc, generated-header, sdk-header):
every contract a row names is a registered, explained check; an unreadable blob is a
`changed` row, never a crash; a map without conventions has nothing dormant to check."""

from __future__ import annotations

import dataclasses

import pytest
from harness import report

from impact.api import explain
from impact.checks import REGISTRY, CheckContext, run_checks
from impact.errors import ShallowHistory
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot
from impact.reasons import Reason
from impact.render.words import reason_text
from impact.surface import Conventions, load_surface_map

TREE = rocke_tree_files()
SDK = "projects/hipdnn/plugin_sdk/include/hipdnn_plugin_sdk"
FBS = "projects/hipdnn/flatbuffers_sdk"
GENERATED = f"{FBS}/include/hipdnn_flatbuffers_sdk/data_objects/sdpa_attributes_generated.h"
CENSUS = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
          "TestGfx950AttentionDensePacks.cpp")
ENGINE_CPP = f"{e.HKP}/rocke/platform/cpp/engine/lower.cpp"
PACKER = f"{e.HKP}/descriptor-packaging/python/hkp_pack/rocke_compile.py"

# One change per file-level contract, and some the other checks judge.
EVERY_LANE = (
    e.append(e.ENGINE_CMAKE, "\nset(X 1)\n"),
    e.replace(e.REQUIREMENTS, "numpy>=1.24,<3", "numpy>=2.0,<3"),
    e.touch_dvc(),
    e.append(GENERATED, "\n// hand edit\nint g();\n"),
    e.append(f"{SDK}/ArchMatch.hpp", "\nint extra();\n"),
    e.append(f"{SDK}/GenericTargets.hpp", "\nint more();\n"),
    e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32"),
    e.replace(CENSUS, "// Census of the", "// The census of the"),
)


def _views(build, *edits: e.Edit, base: dict[str, bytes] | None = None):
    """The base and head views of one change, in memory."""
    return build.in_memory(Scenario(base=base or TREE, head=(Change("change", edits=edits),)))


def test_every_contract_a_row_names_is_registered_and_explained(build) -> None:
    views = _views(build, *EVERY_LANE)
    rows = run_checks(CheckContext(views, load_surface_map()))
    contracts = {row.contract for row in rows}
    assert {"surface", "build", "deps", "dvc", "generated-header", "sdk-header"} <= contracts
    registered = {check.name for check in REGISTRY}
    assert contracts <= registered, contracts - registered
    for contract in sorted(contracts):
        text = explain(contract)  # what `impact explain` prints
        for heading in ("What it checks:", "Why a break hurts at run time:", "Example:",
                        "When it says changed instead:", "Evidence:"):
            assert heading in text, (contract, heading)


def test_file_level_rows_keep_their_contract_lane_and_words(build) -> None:
    views = _views(build, *EVERY_LANE)
    rows = {row.subject: row for row in run_checks(CheckContext(views, load_surface_map()))
            if row.view == "head"}
    assert (rows[e.ENGINE_CMAKE].contract, rows[e.ENGINE_CMAKE].lane) == ("build", "BUILD")
    assert (rows[e.REQUIREMENTS].contract, rows[e.REQUIREMENTS].lane) == ("deps", "DEPS")
    dvc = rows[e.DVC_POINTER]
    assert dvc.contract == "dvc" and dvc.reason == Reason.DATA_POINTER_CHANGED
    header = rows[GENERATED]
    assert header.contract == "generated-header" and header.status == "changed"
    assert reason_text(header.reason, header.details) == \
        "generated header edited without its schema or flags"
    assert rows[f"{SDK}/ArchMatch.hpp"].contract == "sdk-header"
    assert rows[f"{SDK}/GenericTargets.hpp"].details == {"surface": "generic-target"}
    assert rows[e.GFX950_DENSE].contract == "surface"


def _losing(views, path: str) -> str:
    """Make the blob of `path` (at head) unreadable in every view, as a partial clone."""
    missing = views.head[path].sha
    blobs = {snap[p].sha: snap.read(p) for snap in (views.base, views.head) for p in snap}

    def reader(sha: str) -> bytes:
        if sha == missing:
            raise ShallowHistory(f"object {sha} is missing", "fetch it")
        return blobs[sha]

    for view in views.views:
        object.__setattr__(view, "new", Snapshot(dict(view.new), reader, label=view.name))
        object.__setattr__(view, "old", Snapshot(dict(view.old), reader, label="base"))
    return missing


@pytest.mark.parametrize(("path", "edit", "contract"), [
    (e.ENGINE_CMAKE, e.append(e.ENGINE_CMAKE, "\nset(X 1)\n"), "build"),
    (GENERATED, e.append(GENERATED, "\nint g();\n"), "generated-header"),
    (CENSUS, e.replace(CENSUS, "// Census of the", "// The census of the"), "variant-set"),
    (e.GFX950_DENSE_PACK, e.replace(e.GFX950_DENSE_PACK, "// Knob selection: whole K/V",
                                    "// Knob choice: whole K/V"), "variant-set"),
    (ENGINE_CPP, e.replace(ENGINE_CPP, "return 1;", "return 2;"), "surface"),
])
def test_a_missing_blob_is_a_changed_row_naming_the_file(build, path, edit, contract,
                                                          fresh_session) -> None:
    base = {**TREE, ENGINE_CPP: b"int lower() { return 1; }\n"}
    views = _views(build, edit, base=base)
    _losing(views, path)
    rows = run_checks(CheckContext(views, load_surface_map()))
    assert any(r.contract == contract and r.status == "changed" and path in r.files
               for r in rows), [(r.contract, r.subject, str(r.status)) for r in rows]


@pytest.mark.parametrize("lost", [e.ENGINE_CMAKE, PACKER])
def test_dormant_engine_reads_facts_and_never_raises_on_a_missing_blob(build, lost,
                                                                        fresh_session) -> None:
    base = {**TREE, ENGINE_CPP: b"int lower() { return 1; }\n"}
    views = _views(build, e.replace(ENGINE_CPP, "return 1;", "return 2;"),
                   e.append(lost, "\n# touched\n"), base=base)
    _losing(views, lost)
    [row] = [r for r in run_checks(CheckContext(views, load_surface_map()))
             if r.subject == ENGINE_CPP and r.view == "head"]
    # An unreadable build file may name the engine, an unreadable packer may not pin Python:
    # either way the engine is not shown dormant.
    assert row.status == "changed"


def test_dormant_engine_names_its_target_and_pin(build) -> None:
    base = {**TREE, ENGINE_CPP: b"int lower() { return 1; }\n"}
    views = _views(build, e.replace(ENGINE_CPP, "return 1;", "return 2;"), base=base)
    [row] = [r for r in run_checks(CheckContext(views, load_surface_map()))
             if r.subject == ENGINE_CPP and r.view == "head"]
    assert row.status == "inert" and row.reason == Reason.ENGINE_CHANGED_WHILE_DORMANT
    assert row.details["engine_target"] == "rocke_engine" and row.details["pin"] == PACKER


def test_a_map_without_conventions_has_no_dormant_engine_or_pack_registration(build) -> None:
    base = {**TREE, ENGINE_CPP: b"int lower() { return 1; }\n"}
    new_pack = f"{e.ENGINE}/packs/Gfx950ConvFwdNative.cpp"
    views = _views(build, e.replace(ENGINE_CPP, "return 1;", "return 2;"),
                   lambda files: files.__setitem__(
                       new_pack, b"void registerGfx950ConvFwdSymbols() {}\n"), base=base)
    bare = dataclasses.replace(load_surface_map(), conventions=Conventions())
    rows = run_checks(CheckContext(views, bare))
    engine = [r for r in rows if r.subject == ENGINE_CPP and r.view == "head"]
    assert [str(r.status) for r in engine] == ["changed"]
    assert not any(r.contract == "variant-set" for r in rows)
    with_map = run_checks(CheckContext(views, load_surface_map()))
    assert any(r.subject == f"pack:{new_pack}" for r in with_map)


def test_report_json_keeps_the_file_level_contracts() -> None:
    doc = report(Scenario(base=TREE, head=(Change("lanes", edits=EVERY_LANE[:3]),)))
    assert {r["contract"] for r in doc["rows"]} == {"build", "deps", "dvc"}
