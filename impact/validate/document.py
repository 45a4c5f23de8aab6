"""validation_report.json: assembled, its verdict decided, checked against
impact/contracts/validation_report.schema.json, and written whole or not at all.

Maintainers: the verdict comes only from impact.validate.verdict.decide; this module
adds it, validates, and writes atomically. `clear` deletes the output at the start of a
run so a crash can never leave a stale PASS behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import jsonschema

from impact.contracts import load_schema
from impact.errors import BadUsage
from impact.validate.verdict import Severity, decide, fill_stages

SCHEMA = "validation_report.schema.json"
SCHEMA_VERSION = 1


def clear(path: Path) -> None:
    """Delete the output before anything runs (a folder at the path is bad input)."""
    if path.is_dir():
        raise BadUsage(f"cannot write '{path}': it is a folder", "name a file with -o")
    if not path.parent.is_dir():
        raise BadUsage(f"cannot write '{path}': its folder does not exist",
                       "create the folder or pick another -o path")
    path.unlink(missing_ok=True)


def schema_problems(document: dict[str, Any], schema: str = SCHEMA) -> list[str]:
    """Every way `document` misses its schema ([] when it fits)."""
    validator = jsonschema.Draft202012Validator(load_schema(schema))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in validator.iter_errors(document)]


def finish(document: dict[str, Any]) -> dict[str, Any]:
    """Fill the stages, decide the verdict, check the schema (a misfit never stays PASS)."""
    document["stages"] = fill_stages(document.get("stages", {}))
    findings = sorted(document.get("findings", []),
                      key=lambda f: (list(Severity).index(Severity(f["severity"])),
                                     f["stage"], f["detail"]))
    document["findings"] = findings
    verdict, code, why = decide(document["stages"], findings, document.get("runtime_identity"))
    document.update(verdict=verdict, verdict_reasons=why, process_exit_code=code)
    problems = schema_problems(document)
    if problems:
        verdict, code, why = decide(document["stages"], findings,
                                    document.get("runtime_identity"), schema_valid=False)
        document.update(verdict=verdict, verdict_reasons=[*why, *problems[:5]],
                        process_exit_code=code)
    return document


def write_json(document: dict[str, Any], path: Path) -> None:
    """`document` to `path` atomically (a temporary file in the same folder, renamed)."""
    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
