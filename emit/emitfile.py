"""The emit file: shaped by `emit_document`, written whole by `write_emit_file`, read back
and refused when it is of another schema, malformed, or made for other trees by
`load_emit_file`, and the slices of `impact emit --shard` joined by `merge_emit_files`.

Maintainers: the one module that shapes and reads the emit file (the tests hold the writer
and the reader to each other); every revision's result is checked against the child's
schema as well. Reads and writes the file only.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from emit.shard import Uncovered, coverage, describe, merge_files
from impact.contracts import validate
from impact.errors import ImpactError
from impact.kinds import ViewName
from impact.version import tool_version

EMIT_SCHEMA = "emit.schema.json"
CHILD_SCHEMA = "emit_child.schema.json"
SCHEMA_VERSION = 1


class BadEmitFile(ImpactError):
    """An emit file of another schema, of a malformed shape, or made for other trees."""


def emit_document(revisions: Mapping[str, Mapping[str, Any]],
                  slice_of: tuple[int, int] | None = None) -> dict[str, Any]:
    """The emit file's content; the one function that shapes it (`slice_of`: (K, N) of
    `impact emit --shard K/N`)."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "tool": {"name": "impact", "version": tool_version()},
        "revisions": {label: dict(revisions[label]) for label in (ViewName.BASE, ViewName.HEAD)}}
    if slice_of is not None:
        document["slice"] = {"index": slice_of[0], "count": slice_of[1]}
    return document


def write_emit_file(document: Mapping[str, Any], path: str | Path) -> None:
    """Validate and write the emit file whole (a temporary file renamed into place)."""
    validate(dict(document), EMIT_SCHEMA)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # Compact: the C encoder (an indent turns it off) writes 900 variants in a blink.
            handle.write(json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_emit_file(path: str | Path, expected: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """Read an emit file and refuse one of another schema version, of a malformed shape,
    or made for other trees than `expected` (from `expected_trees`)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadEmitFile(f"emit file '{path}' cannot be read ({exc})",
                          "give the path of an emit file impact emit wrote") from None
    return load_emit_bytes(data, str(path), expected)


def load_emit_bytes(data: bytes, path: str,
                    expected: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """`load_emit_file` on bytes already read (so the caller can hash exactly what was
    judged); `path` only names the file in errors."""
    document = _checked(data, path)
    fix = "run impact emit (or report --run-emit) again for these revisions"
    for label in (ViewName.BASE, ViewName.HEAD):
        if document["revisions"][label]["trees"] != dict(expected[label]):
            raise BadEmitFile(f"emit file '{path}' was made for other trees than this "
                              f"{label}", fix)
    for label in (ViewName.BASE, ViewName.HEAD):
        result = document["revisions"][label]["result"]
        if result is not None and "enumerated" not in result and (
                "slice" in document or "merged" in document):
            raise BadEmitFile(f"emit file '{path}' is a slice or a merge whose {label} "
                              "does not list the families enumerated", fix)
        # A result without `enumerated` comes from a child before it: one child built
        # the whole revision, so there is nothing to cover.
        checked = result is not None and "enumerated" in result
        missing, doubled = coverage(result) if checked else ([], [])
        if missing or doubled:
            part = document.get("slice")
            what = f"is slice {part['index']}/{part['count']} and " if part else ""
            raise BadEmitFile(
                f"emit file '{path}' {what}does not cover every {label} variant exactly "
                f"once: {describe(missing, doubled)}",
                "join every slice of impact emit --shard K/N with impact emit merge, or "
                "run impact emit without --shard")
    return document


def _checked(data: bytes, path: str) -> dict[str, Any]:
    """An emit file's bytes as a document of this schema version, its results valid."""
    fix = "run impact emit (or report --run-emit) again for these revisions"
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadEmitFile(f"emit file '{path}' cannot be read as JSON ({exc})", fix) from None
    version = document.get("schema_version") if isinstance(document, dict) else None
    if version != SCHEMA_VERSION:
        raise BadEmitFile(f"emit file '{path}' has schema version {version!r}, "
                          f"this impact reads {SCHEMA_VERSION}", fix)
    try:
        validate(document, EMIT_SCHEMA)
        for revision in document["revisions"].values():
            if revision["result"] is not None:
                validate(revision["result"], CHILD_SCHEMA)
    except Exception as exc:  # jsonschema.ValidationError and friends
        message = getattr(exc, "message", str(exc))
        raise BadEmitFile(f"emit file '{path}' is malformed: {message}", fix) from None
    return document


def merge_emit_files(paths: list[str]) -> dict[str, Any]:
    """The emit document joining the slice files at `paths` (`impact emit merge`): each read
    and checked as `report --emit` would, then joined by emit.shard.merge_files; a set
    that is not every slice 1..N of the same trees once each is refused in one line."""
    fix = "give every file of impact emit --shard K/N for K = 1..N, made for the same revisions"
    documents = []
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise BadEmitFile(f"emit file '{path}' cannot be read ({exc.strerror})", fix) from None
        documents.append(_checked(data, path))
    try:
        merged = merge_files(documents, paths)
    except Uncovered as exc:
        raise BadEmitFile(f"cannot merge the slices: {exc}", fix) from None
    validate(merged, EMIT_SCHEMA)
    return merged

