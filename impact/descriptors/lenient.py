"""Schema validation that fails only for the fields impact reads.

A descriptor or tool profile in the wild carries fields impact never reads, in shapes our
schema may not know (a profile's `engine` as a mapping, a newer UHD's adapter). One such
field must not make the whole file "cannot be understood": it is set aside and named, and
the rest of the file is read. A field impact does read, and a file that is not an object
at all, still fails the file, with the field named.

Maintainers: pure functions over parsed documents and the package's schemas; no git, no
filesystem, no parsing of text.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from impact.contracts import load_schema

if TYPE_CHECKING:  # imported where used: a warm report may need no schema
    import jsonschema

# What to do with one schema error: None to fail the file, else a function that rewrites
# the document so the error goes, and the name under which the unread field is recorded.
Handler = Callable[["jsonschema.ValidationError", dict[str, Any]], str | None]


def json_path(parts: list[Any]) -> str:
    """`$.a[0].b` for the path parts `["a", 0, "b"]`."""
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validate_leniently(document: dict[str, Any], schema_name: str,
                       set_aside: Handler) -> tuple[dict[str, Any], dict[str, str]]:
    """(the document with the fields impact does not read and cannot validate set aside,
    {field path: why}); raises the first jsonschema.ValidationError `set_aside` refuses.

    `set_aside(error, document)` rewrites the (copied) document in place so that error
    goes away and returns the field's path, or returns None to fail the file."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    working = document
    unread: dict[str, str] = {}
    for _ in range(1 + _count_fields(document)):
        error = jsonschema.exceptions.best_match(validator.iter_errors(working))
        if error is None:
            return working, unread
        if working is document:
            working = copy.deepcopy(document)
        field = set_aside(error, working)
        if field is None or field in unread:
            raise error
        unread[field] = error.message
    raise jsonschema.ValidationError("too many fields set aside")


def _count_fields(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(_count_fields(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_fields(v) for v in value)
    return 0
