"""`impact gate`: from a change to evidence in one document. The static report says what
the change touches; the device runs it names are validated on the GPUs present, per arch;
the gate joins both, bound to the head's SHA, and exits with the gate's own code.

Maintainers: three entries share one assembly. `run` does everything on this machine (the
report, then `impact validate` on the GPU it claims). `matrix` reads a report and prints the
archs a CI should fan out to. `join` takes the report and the validation documents the
per-arch jobs wrote, checks that each is about this very change, and assembles the gate.
The gate never runs a test itself and never decides a validation verdict: it reads the
verdict each validation document states, recomputed from its stages and findings
(impact.validate.verdict.decide), and refuses a document whose stated verdict disagrees.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from impact.contracts import load_schema
from impact.errors import BadUsage
from impact.render.words import validate as words
from impact.rollup import Outcome
from impact.rows import Status
from impact.validate.verdict import Verdict, decide

SCHEMA = "gate.schema.json"
SCHEMA_VERSION = 1
EXIT_CODES = {Verdict.PASS: 0, Verdict.BLOCK: 1, Verdict.NEEDS_WORK: 1, Verdict.INCONCLUSIVE: 2}
NEEDS_DEVICE = Outcome.NEEDS_DEVICE
WORST_FIRST = (Verdict.BLOCK, Verdict.NEEDS_WORK, Verdict.INCONCLUSIVE, Verdict.PASS)


def read_json(path: str | Path, schema: str, what: str) -> tuple[dict[str, Any], str]:
    """A document checked against `schema`, and the sha256 of its bytes (bad input: one
    line naming the file)."""
    import jsonschema

    try:
        data = Path(path).read_bytes()
        doc = json.loads(data)
        jsonschema.Draft202012Validator(load_schema(schema)).validate(doc)
    except OSError as exc:
        raise BadUsage(f"cannot read {what} '{path}' ({exc.strerror})",
                       f"give the file {what} was written to") from None
    except ValueError as exc:  # JSON or schema
        first = str(exc).splitlines()[0]
        raise BadUsage(f"'{path}' is not {what} ({first})",
                       f"write it with the impact command that makes {what}") from None
    return doc, hashlib.sha256(data).hexdigest()


def needed_archs(report: dict[str, Any], available: Sequence[str]) -> tuple[list[str], str]:
    """The archs this change needs device evidence on, and the basis: the archs the
    report's NEEDS-DEVICE verdict names; where it names the map's all-archs label (every
    arch the library ships), the archs `available` lists (a CI's matrix, the GPUs here)."""
    verdict = report["verdict"]
    if verdict["kind"] != NEEDS_DEVICE:
        return [], words.gate_basis_static(verdict["kind"])
    named = [a for a in verdict["archs"] if a != report["surface_map"].get("all_archs",
                                                                          "all-archs")]
    wide = len(named) < len(verdict["archs"]) or not verdict["archs"]
    if wide:
        archs = sorted(set(named) | set(available))
        return archs, words.gate_basis_wide(verdict["archs"], archs, bool(available))
    return sorted(named), words.GATE_BASIS_NAMED


def matrix(report_path: str, available: Sequence[str]) -> dict[str, Any]:
    """What a CI fans out to: the needed archs it can run, and those it cannot."""
    report, _ = read_json(report_path, "report.schema.json", "an impact JSON report")
    archs, basis = needed_archs(report, available)
    runnable = [a for a in archs if not available or a in available]
    return {"needs_device": bool(archs), "archs": runnable,
            "unavailable": [a for a in archs if a not in runnable], "basis": basis,
            "static": report["verdict"]["kind"]}


def _static(report: dict[str, Any], digest: str) -> dict[str, Any]:
    """The report's side of the gate: its verdict and the findings that moved it, each
    with both sides as file:line."""
    findings = [{"id": row["id"], "contract": row["contract"], "status": row["status"],
                 "subject": row["subject"], "says": row.get("says", ""),
                 "sides": [f"{s['file']}:{s['line']}" for s in row["sides"]]}
                for row in report["rows"]
                if row["status"] in (Status.MISMATCH, Status.CHANGED) and not row.get("waived")
                and not row.get("preexisting")]
    return {"verdict": report["verdict"]["kind"], "archs": report["verdict"]["archs"],
            "line": report["verdict"]["line"], "exit_code": report["verdict"]["exit_code"],
            "report_sha256": digest, "findings": findings,
            "device_runs": len(report["device_runs"])}


def _evidence(report: dict[str, Any], path: str, doc: dict[str, Any], digest: str
              ) -> dict[str, Any]:
    """One validation document as the gate's evidence, once it is shown to be about the
    report's change and to state the verdict its own stages and findings give."""
    revs = report["revisions"]
    for role in ("base", "head"):
        want = revs.get(role, {}).get("sha")
        if doc["repo"].get(role) != want:
            raise BadUsage(f"'{path}' validates {role} {str(doc['repo'].get(role))[:12]}, "
                           f"not the report's {str(want)[:12]}",
                           "validate this report ('impact validate --from-report R.json')")
    verdict, code, _ = decide(doc["stages"], doc["findings"], doc.get("runtime_identity"))
    if verdict != doc["verdict"] or code != doc["process_exit_code"]:
        raise BadUsage(f"'{path}' states {doc['verdict']} but its stages and findings give "
                       f"{verdict}", "use the document impact validate wrote, unedited")
    reasons = list(doc.get("verdict_reasons", []))
    if doc.get("degraded_mode"):
        reasons.insert(0, f"{doc['degraded_mode']}: {doc['stages']['gpu_claim']['reason']}")
    return {"arch": doc["environment"].get("arch") or "none", "verdict": doc["verdict"],
            "exit_code": doc["process_exit_code"], "reasons": reasons,
            "gpu": doc["environment"].get("gpu"), "degraded_mode": doc.get("degraded_mode"),
            "file": path, "validation_sha256": digest,
            "patch_sha256": doc["repo"].get("patch_sha256"),
            "stages": {name: stage["status"] for name, stage in sorted(doc["stages"].items())}}


def assemble(report: dict[str, Any], report_digest: str,
             validations: Sequence[tuple[str, dict[str, Any], str]],
             required: Sequence[str]) -> dict[str, Any]:
    """The gate document: the static side, the device evidence per arch, what is still
    missing, and the verdict of both together."""
    from impact.version import tool_version

    device = [_evidence(report, path, doc, digest) for path, doc, digest in validations]
    static = _static(report, report_digest)
    archs, basis = needed_archs(report, list(required) or
                                [d["arch"] for d in device if d["arch"] != "none"])
    by_arch: dict[str, list[dict[str, Any]]] = {}
    for run in device:
        by_arch.setdefault(run["arch"], []).append(run)
    pending = [a for a in archs if a not in by_arch]
    reasons: list[str] = []
    if static["verdict"] == Outcome.BREAKS:
        verdict = Verdict.BLOCK
        reasons.append(words.gate_reason_static(Outcome.BREAKS, breaks=True))
    elif static["verdict"] != NEEDS_DEVICE:
        verdict = Verdict.PASS
        reasons.append(words.gate_reason_static(static["verdict"]))
    else:
        verdict = Verdict.PASS
        if not archs:
            verdict = Verdict.INCONCLUSIVE
            reasons.append(words.GATE_NO_ARCH)
        for arch in pending:
            reasons.append(words.gate_pending(arch))
        if pending:
            verdict = Verdict.INCONCLUSIVE
        for arch in archs:
            for run in by_arch.get(arch, []):
                if run["verdict"] != Verdict.PASS:
                    reasons.append(words.gate_run(arch, run["verdict"], run["reasons"]))
                if WORST_FIRST.index(Verdict(run["verdict"])) < WORST_FIRST.index(verdict):
                    verdict = Verdict(run["verdict"])
    # Runs on archs the gate did not need still speak: a failure there is not cleared.
    for run in device:
        if run["arch"] in archs or run["verdict"] == Verdict.PASS:
            continue
        reasons.append(words.gate_run(run["arch"], run["verdict"], run["reasons"]))
        if run["verdict"] == Verdict.BLOCK:
            verdict = Verdict.BLOCK
    patches = sorted({d["patch_sha256"] for d in device if d["patch_sha256"]})
    if len(patches) > 1:
        raise BadUsage("the validations were made from different diffs "
                       f"({', '.join(p[:12] for p in patches)})",
                       "validate every arch from the same report and revisions")
    revs = report["revisions"]
    doc = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "impact", "version": tool_version()},
        "generated_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "repository": report["repository"],
        "revisions": {role: (revs[role]["sha"] if role in revs else None)
                      for role in ("base", "head", "target_tip")},
        "patch_sha256": patches[0] if patches else None,
        "static": static,
        "required_archs": archs,
        "arch_basis": basis,
        "device": sorted(device, key=lambda d: (d["arch"], d["file"])),
        "pending": [{"arch": a, "command": words.gate_pending_command(a)} for a in pending],
        "verdict": str(verdict),
        "reasons": reasons,
        "process_exit_code": EXIT_CODES[verdict],
    }
    doc["line"] = words.gate_line(doc["verdict"], static["verdict"], doc["device"], pending)
    return doc


def check(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` checked against gate.schema.json (a misfit is our bug: it raises)."""
    import jsonschema

    jsonschema.Draft202012Validator(load_schema(SCHEMA)).validate(doc)
    return doc


def join(report_path: str, validation_paths: Sequence[str],
         required: Sequence[str]) -> dict[str, Any]:
    """The gate of a report and the validation documents the per-arch jobs wrote."""
    report, digest = read_json(report_path, "report.schema.json", "an impact JSON report")
    validations = [(path, *read_json(path, "validation_report.schema.json",
                                     "a validation report")) for path in validation_paths]
    return check(assemble(report, digest, validations, required))


def run(report_options: dict[str, Any], options: Any, output: Path,
        required: Sequence[str]) -> dict[str, Any]:
    """Everything on this machine: the report (`report_options` are api.report's), then,
    when it needs a device, `impact validate` of its device runs on the GPU this machine
    lends (`options`, validate's Options), then the gate of both. The report and the
    validation are kept beside `output` as <stem>.report.json and <stem>.validation.json;
    each file is written whole."""
    from impact import api
    from impact.validate.run import validate

    if output.is_dir() or not output.parent.is_dir():
        raise BadUsage(f"cannot write '{output}'", "name a file in an existing folder with -o")
    report = api.report(**report_options)
    report_path = output.with_name(f"{output.stem}.report.json")
    api.write_output(report.render("json"), report_path)
    validations: list[str] = []
    if report.verdict["kind"] == NEEDS_DEVICE:
        validation_path = output.with_name(f"{output.stem}.validation.json")
        options.from_report, options.output = str(report_path), str(validation_path)
        validate(options)
        validations.append(str(validation_path))
    doc = join(str(report_path), validations, required)
    api.write_output(json.dumps(doc, indent=2, sort_keys=True) + "\n", output)
    return doc
