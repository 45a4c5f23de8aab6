"""impact audit: one tree checked against itself, and the baseline a report honours.

Every consistent fixture tree audits clean; a tree with drift planted in it lists exactly
that drift, both sides file:line; a baseline written by the audit hides a finding in a
report only while the content of its copies is what was recorded."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from harness import scenario

from impact import api
from impact.contracts import validate
from impact.errors import BadUsage
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import TREES, rocke_tree_files, tree_files
from impact.render.queue import AUDIT_RENDERERS
from impact.rollup import Outcome
from impact.rows import Status

sys.path.insert(0, str(Path(__file__).parent))
import test_check_bindings as bindings

PIN = (f"{e.HKP}/src/tests/engines/kernel_ingestor_engine/packs/"
       "TestGfx950AttentionDenseSignature.cpp")
PIN_SCALE_SIZE = e.replace(PIN, '{"by_value", 4, 32, "scale"},', '{"by_value", 8, 32, "scale"},')


def _audit(build, files: dict[str, bytes], **options) -> dict:
    repo = build(Scenario(base=files))
    return api.audit(repo.path, rev="base", **options)


def _planted(files: dict[str, bytes], *edits: e.Edit) -> dict[str, bytes]:
    files = dict(files)
    for edit in edits:
        edit(files)
    return files


@pytest.mark.parametrize("tree", TREES)
def test_every_consistent_fixture_tree_audits_clean(build, tree: str) -> None:
    document = _audit(build, tree_files(tree))
    validate(document, "audit.schema.json")
    assert document["findings"] == []
    assert Outcome(document["verdict"]["kind"]) == Outcome.NONE
    assert document["unsettled"]  # the checks did run over the whole tree


def test_a_planted_kernargs_drift_is_listed_exactly_with_both_sides(build) -> None:
    document = _audit(build, _planted(rocke_tree_files(), PIN_SCALE_SIZE))
    (finding,) = document["findings"]
    assert finding["contract"] == "kernargs" and Status(finding["status"]) == Status.MISMATCH
    assert finding["subject"] == f"{PIN}:pythonAbi.expected"
    files = {side["file"] for side in finding["sides"]}
    assert files == {PIN, e.GFX950_DENSE}
    assert all(side["line"] > 0 for side in finding["sides"])
    assert Outcome(document["verdict"]["kind"]) == Outcome.BREAKS
    text = AUDIT_RENDERERS["text"](document)
    assert f"{PIN}:" in text and "Audit: BREAKS" in text


BREAKS = [(title, tree, edits) for title, tree, edits, verdict, _row in bindings.CASES
          if verdict == "BREAKS"
          and "swapped" not in title]  # a swap is a change against the base: no tree alone holds it


@pytest.mark.parametrize(("title", "tree", "edits"), BREAKS, ids=[c[0] for c in BREAKS])
def test_a_planted_bindings_drift_is_listed_and_nothing_else(build, title, tree, edits) -> None:
    clean = _audit(build, tree)
    planted = _audit(build, _planted(tree, *edits))
    assert clean["findings"] == []
    assert planted["findings"], title
    assert {f["contract"] for f in planted["findings"]} == {"bindings"}
    # every finding names a copy the planted edit touched
    touched = {path for path in tree if _planted(tree, *edits).get(path) != tree[path]}
    for finding in planted["findings"]:
        assert {s["file"] for s in finding["sides"]} & touched, finding["subject"]


def test_an_unparsable_file_is_named_not_counted_consistent(build) -> None:
    files = _planted(rocke_tree_files(), e.replace(e.GFX950_DENSE, "def build_attention_dense(",
                                                   "def build_attention_dense(("))
    document = _audit(build, files)
    assert e.GFX950_DENSE in document["unreadable"]
    assert "could not be read or parsed" in AUDIT_RENDERERS["text"](document)


# --- baselines ---------------------------------------------------------------------------

ADDED = e.add_builder_param(e.GFX950_DENSE, "dropout_seed", "I32")  # the lists are left behind
AFTER_ADDED = '    dropout_seed = b.param("dropout_seed", I32)\n'


def _report(repo, head: str, baseline: Path | None = None) -> dict:
    return api.report(repo.path, base="base", head=head, baseline=baseline).document


def test_a_baseline_hides_a_finding_only_while_its_copies_are_unchanged(build, tmp_path) -> None:
    changes = {"drift": (ADDED,),
               "drift-and-comment": (ADDED, e.edit_comment(e.GFX950_DENSE)),
               "drift-moved-on": (ADDED, e.add_builder_param(e.GFX950_DENSE, "window", "I32",
                                                             after=AFTER_ADDED))}
    base = rocke_tree_files()
    repo = build(Scenario(base=base, head=(Change("drift", edits=changes["drift"]),)))
    baseline = tmp_path / "baseline.json"
    audit = api.audit(repo.path, rev="head", baseline=baseline)
    recorded = json.loads(baseline.read_text())
    validate(recorded, "baseline.schema.json")
    assert len(recorded["findings"]) == len(audit["findings"]) > 0
    before = _report(repo, "head")
    assert Outcome(before["verdict"]["kind"]) == Outcome.BREAKS
    after = _report(repo, "head", baseline)
    baselined = [r for r in after["rows"] if r.get("baselined")]
    assert baselined and all(Status(r["status"]) == Status.MISMATCH for r in baselined)
    assert Outcome(after["verdict"]["kind"]) != Outcome.BREAKS  # baselined: moves nothing
    text = api.Report(after).render("text", verbose=True)
    assert "(baselined)" in text

    for name in ("drift-and-comment", "drift-moved-on"):
        other = build(Scenario(base=base, head=(Change(name, edits=changes[name]),)))
        doc = _report(other, "head", baseline)
        hidden = any(r.get("baselined") for r in doc["rows"])
        if name == "drift-and-comment":  # a comment: the copies are the recorded ones
            assert hidden and Outcome(doc["verdict"]["kind"]) != Outcome.BREAKS
        else:  # the builder changed since: the finding is not hidden
            assert not hidden and Outcome(doc["verdict"]["kind"]) == Outcome.BREAKS


def test_the_audit_against_its_own_baseline_passes_and_new_drift_fails(build, tmp_path) -> None:
    repo = build(scenario(_planted(rocke_tree_files(), PIN_SCALE_SIZE), ADDED))
    baseline = tmp_path / "b.json"
    api.audit(repo.path, rev="base", baseline=baseline)
    same = api.audit(repo.path, rev="base", against=baseline)
    assert same["baselined"] == len(same["findings"]) == 1
    assert Outcome(same["verdict"]["kind"]) == Outcome.NONE
    later = api.audit(repo.path, rev="head", against=baseline)
    assert Outcome(later["verdict"]["kind"]) == Outcome.BREAKS
    assert later["baselined"] < len(later["findings"])


@pytest.mark.parametrize("content", ["not json", '{"findings": []}', "[]"])
def test_a_bad_baseline_file_is_refused_in_one_line(build, tmp_path, content: str) -> None:
    repo = build(scenario(rocke_tree_files(), ADDED))
    path = tmp_path / "b.json"
    path.write_text(content)
    with pytest.raises(BadUsage, match="baseline"):
        _report(repo, "head", path)
    with pytest.raises(BadUsage, match="baseline"):
        _report(repo, "head", tmp_path / "missing.json")
