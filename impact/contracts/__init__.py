"""Declarative, versioned inputs and outputs, and their validation.

Maintainers: data files live beside this module (JSON Schemas, surface maps)
and ship as package data; code here only loads and validates them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

REPORT_SCHEMA = "report.schema.json"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped in this package, checked to be a valid schema."""
    import jsonschema  # on first use: a text report on a change outside every surface needs none

    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    schema = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def validate(document: Any, schema_name: str) -> None:
    """Raise jsonschema.ValidationError when `document` does not fit the schema."""
    import jsonschema

    jsonschema.Draft202012Validator(load_schema(schema_name)).validate(document)
