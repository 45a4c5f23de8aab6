"""`--format sarif`: valid SARIF 2.1.0 (the official OASIS schema, vendored under
tests/data/sarif/), in the shape GitHub code scanning reads, one result per finding.

The schema's origin and license: tests/data/sarif/README.md.
"""

from __future__ import annotations

import copy
import gzip
import inspect
import json
from pathlib import Path
from urllib.parse import unquote

import harness
import jsonschema
import pytest
from test_render_golden import sample_report

from impact.checks import REGISTRY, explain
from impact.demo import demo_report
from impact.render import RENDERERS
from impact.render.findings import findings
from impact.render.sarif import SRCROOT, render_sarif, sarif_log
from impact.render.words import reason_text
from impact.rows import Role

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif" / "sarif-schema-2.1.0.json")
                    .read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)

# GitHub code scanning's limits on an uploaded SARIF file.
MAX_GZIP_BYTES = 10 * 1024 * 1024
MAX_RESULTS_PER_RUN = 25_000


def valid(log: dict) -> dict:
    """The log, after checking it against the SARIF 2.1.0 schema."""
    errors = sorted(VALIDATOR.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    return log


def code_scanning_ready(text: str) -> dict:
    """What GitHub code scanning requires of an upload, beyond the schema."""
    assert len(gzip.compress(text.encode())) <= MAX_GZIP_BYTES
    log = valid(json.loads(text))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert driver["name"] == "impact" and driver["version"]
        rules = {r["id"]: r for r in driver["rules"]}
        assert len(rules) == len(driver["rules"])
        for r in driver["rules"]:
            assert r["shortDescription"]["text"] and r["fullDescription"]["text"]
            assert r["help"]["text"]
        assert "uri" not in run["originalUriBaseIds"][SRCROOT] or \
            run["originalUriBaseIds"][SRCROOT]["uri"].endswith("/")
        assert len(run["results"]) <= MAX_RESULTS_PER_RUN
        for result in run["results"]:
            assert result["ruleId"] in rules
            assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
            assert result["message"]["text"]
            assert result["partialFingerprints"]
            locations = result.get("locations", []) + result.get("relatedLocations", [])
            for location in locations:
                artifact = location["physicalLocation"]["artifactLocation"]
                assert artifact["uriBaseId"] == SRCROOT
                uri = artifact["uri"]
                assert ":" not in uri and not uri.startswith("/"), uri  # relative, no scheme
                assert location["physicalLocation"]["region"]["startLine"] >= 1
            for related in result.get("relatedLocations", []):
                assert f"]({related['id']})" in result["message"]["text"]
    return log


def test_the_sample_report_is_valid_sarif_for_code_scanning() -> None:
    report = sample_report()
    log = code_scanning_ready(render_sarif(report))
    run = log["runs"][0]
    found = findings(report)
    assert [r["partialFingerprints"]["impactFindingId/v1"] for r in run["results"]] == \
        [f.row_ids[0] for f in found]
    assert [r["ruleId"] for r in run["results"]] == [f.contract for f in found]
    by_subject = {r["properties"]["subject"]: r for r in run["results"]}

    mismatch = by_subject["packs/Gfx950Native.cpp:kArgs"]
    assert mismatch["level"] == "error"
    assert mismatch["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "kernels/dense.py", "uriBaseId": SRCROOT},
        "region": {"startLine": 12}}
    [counterpart] = mismatch["relatedLocations"]
    assert counterpart["physicalLocation"]["artifactLocation"]["uri"] == "packs/Gfx950Native.cpp"
    assert counterpart["physicalLocation"]["region"]["startLine"] == 40
    assert counterpart["message"]["text"].startswith("counterpart")
    row = next(r for r in report["rows"] if r["subject"] == "packs/Gfx950Native.cpp:kArgs")
    assert mismatch["message"]["text"].startswith(
        "kArgs: " + reason_text(row["reason"], row["details"]))
    assert "[packs/Gfx950Native.cpp:40](1)" in mismatch["message"]["text"]

    # changed -> warning; a whole-file side (line 0) anchors on line 1; the base copy of
    # the same file is not a second location
    body = by_subject["kernels/body.py"]
    assert body["level"] == "warning"
    assert body["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert "relatedLocations" not in body
    assert by_subject["kernels/notes.py"]["level"] == "note"  # inert
    # a pre-existing mismatch is a note saying so, anchored on a counterpart
    old = by_subject["packs/Old.cpp:kArgs"]
    assert old["level"] == "note" and old["properties"]["preexisting"] is True
    assert "Pre-existing" in old["message"]["text"]
    assert old["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "kernels/old.py"

    props = run["properties"]
    assert props["verdict"] == report["verdict"]["kind"] == "BREAKS"
    assert props["exitCode"] == report["verdict"]["exit_code"]
    assert props["archs"] == report["verdict"]["archs"]
    assert props["revisions"]["base"]["sha"] == "1" * 40
    assert props["revisions"]["head"]["sha"] == "2" * 40


def test_rules_carry_the_explain_text() -> None:
    log = sarif_log(sample_report())
    for r in log["runs"][0]["tool"]["driver"]["rules"]:
        assert r["help"]["text"] == inspect.cleandoc(explain(r["id"]))
        assert r["shortDescription"]["text"] in r["fullDescription"]["text"]
        assert "\n" not in r["shortDescription"]["text"]


def test_every_registered_contract_has_a_rule_with_text() -> None:
    from impact.render.sarif import rule
    for check in REGISTRY:
        r = rule(check.name)
        assert r["shortDescription"]["text"] and r["help"]["text"], check.name
        assert not r["shortDescription"]["text"].endswith(":"), check.name


def test_a_problem_in_two_views_is_one_result() -> None:
    report = sample_report()
    row = next(r for r in report["rows"] if r["contract"] == "kernargs" and r["view"] == "head")
    twin = {**copy.deepcopy(row), "view": "merged", "id": "f" * 16,
            "sides": [{**s, "revision": "merged"} for s in row["sides"]]}
    report["rows"].append(twin)
    results = valid(sarif_log(report))["runs"][0]["results"]
    mine = [r for r in results if r["properties"]["subject"] == row["subject"]]
    assert len(mine) == 1
    assert mine[0]["properties"]["views"] == ["head", "merged"]
    assert mine[0]["properties"]["rowIds"] == [row["id"], "f" * 16]
    assert mine[0]["partialFingerprints"] == {"impactFindingId/v1": row["id"]}


def test_output_is_deterministic_and_sorted() -> None:
    first, second = render_sarif(sample_report()), render_sarif(sample_report())
    assert first == second
    assert first == json.dumps(json.loads(first), indent=2, sort_keys=True,
                               ensure_ascii=False) + "\n"
    assert RENDERERS["sarif"] is render_sarif


def test_odd_paths_and_messages_stay_valid() -> None:
    odd = "dir with space/we,ird%25:#?[x]\u00e9\x01\n.py"
    report = sample_report()
    row = next(r for r in report["rows"] if r["contract"] == "kernargs" and r["view"] == "head"
               and r["reason"] == "argument-added-on-python-side-only")
    row["sides"] = [{**s, "file": odd} if s["role"] == Role.CHANGED else s
                    for s in row["sides"]]
    row["details"] = {"names": ["a]b", "c\\d", "e\r\nf"]}
    text = render_sarif(report)
    log = code_scanning_ready(text)
    result = next(r for r in log["runs"][0]["results"]
                  if r["properties"]["subject"] == row["subject"])
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert unquote(uri) == odd
    assert all(c.isascii() and c.isprintable() for c in uri)
    # brackets and backslashes of the sentence are escaped; the link to the counterpart stays
    assert "a\\]b, c\\\\d" in result["message"]["text"]
    assert "](1)." in result["message"]["text"]
    # no raw control character reaches the bytes
    assert not any(ord(c) < 0x20 and c != "\n" for c in text)


def test_the_validator_rejects_what_is_not_sarif() -> None:
    log = sarif_log(sample_report())
    bad = copy.deepcopy(log)
    bad["runs"][0]["results"][0]["level"] = "fatal"
    assert list(VALIDATOR.iter_errors(bad))
    bad = copy.deepcopy(log)
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(VALIDATOR.iter_errors(bad))
    bad = copy.deepcopy(log)
    bad["version"] = "2.0.0"
    assert list(VALIDATOR.iter_errors(bad))


def test_a_report_without_sides_or_findings_is_valid() -> None:
    report = sample_report()
    report["rows"] = [{**report["rows"][0], "sides": []}]
    log = code_scanning_ready(render_sarif(report))
    assert "locations" not in log["runs"][0]["results"][0]
    report["rows"] = []
    log = code_scanning_ready(render_sarif(report))
    assert log["runs"][0]["results"] == [] and log["runs"][0]["tool"]["driver"]["rules"] == []


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("demo") / "repo"
    demo_report(keep=str(where))
    return where


def test_the_demo_pull_request_as_sarif(demo_repo: Path) -> None:
    found = harness.run(demo_repo, target_tip="target")
    assert found.exit_code == 1  # BREAKS
    report = json.loads(found.render("json"))
    log = code_scanning_ready(found.render("sarif"))
    run = log["runs"][0]
    assert run["properties"]["verdict"] == "BREAKS"
    assert run["properties"]["exitCode"] == 1
    assert run["properties"]["revisions"]["head"]["sha"] == report["revisions"]["head"]["sha"]
    assert run["properties"]["revisions"]["target_tip"]["sha"] == \
        report["revisions"]["target_tip"]["sha"]
    assert run["originalUriBaseIds"][SRCROOT]["uri"].startswith("file:///")
    # one result per finding: the head and merged views' copies of a row are one result
    assert len(run["results"]) == len(findings(report)) < len(report["rows"])
    errors = [r for r in run["results"] if r["level"] == "error"]
    assert errors and all(r["ruleId"] == "kernargs" for r in errors)
    for result in errors:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].endswith("attention_dense.py")
        assert location["region"]["startLine"] > 1
        assert result["relatedLocations"]
        assert all(r["message"]["text"].startswith("counterpart")
                   for r in result["relatedLocations"])
    assert {r["ruleId"] for r in run["results"]} == \
        {r["id"] for r in run["tool"]["driver"]["rules"]}
