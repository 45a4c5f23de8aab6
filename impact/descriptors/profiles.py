"""Facts about one IngestorGenerator tool profile (`configs/<slug>.profile.yaml`).

One `profile` fact for the file, and one `launch-surface` fact per `launch_surface:` entry:
the Python half and the hand-written C++ mirror of one launch contract, its guard and test.

Real profiles spell things several ways (`engine` and `predicate` as mappings, `kmd_fields`
as {name, type, default_value} or `none`); every spelling launch_surface.py accepts is
read. A field impact does not read whose shape the schema does not know is set aside and
named (`unread_fields` of the profile fact); an entry's `kmd_fields`, `guard` or `test` in
an unknown shape is named in that entry's `unread` and kept as its raw text, so an edit of
it still reads as an edit. Only an entry's name, python_source or cpp_mirror, or the
`launch_surface` list itself, in an unknown shape fails the file.
"""

# Maintainers: this module reads the bytes it is handed and nothing else; it must never touch git
# or the filesystem. Malformed YAML, or a schema violation in a field impact reads, becomes one
# parse-failure Fact; impact/descriptors/lenient.py sets the other fields aside.

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import yaml

from impact.descriptors.lenient import json_path, validate_leniently
from impact.descriptors.text import LineFinder
from impact.facts import Fact, parse_failure, sorted_facts
from impact.kinds import FactKind
from impact.strict import Refused, load_yaml

if TYPE_CHECKING:  # imported where used: a warm report may need no schema
    import jsonschema

PROFILE_SCHEMA = "profile.schema.json"
PROFILE = FactKind.PROFILE
LAUNCH_SURFACE = FactKind.LAUNCH_SURFACE


def is_none(value: Any) -> bool:
    """True for an absent value: YAML null or the string `none` in any case."""
    return value is None or (isinstance(value, str) and value.strip().lower() == "none")


def parse_locator(raw: Any) -> dict[str, Any] | None:
    """`file:symbol` as {raw, file, symbol}; None for an explicit `none`.

    The file ends at the first colon: `a.py:Class.method` and `b.cpp:Ns::fn` both keep
    their whole symbol. A path with no colon names no symbol (symbol None).
    """
    if is_none(raw):
        return None
    text = str(raw).strip()
    file, sep, symbol = text.partition(":")
    return {"raw": raw, "file": file, "symbol": symbol if sep and symbol else None}


def extract_profile_facts(path: str, source: bytes) -> list[Fact]:
    """Every fact one tool profile states, sorted; never raises."""
    import jsonschema

    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as err:
        return [parse_failure(path, f"not UTF-8: {err.reason}")]
    try:
        document = load_yaml(text)
    except Refused as err:
        return [parse_failure(path, f"not YAML: {err.message}", err.line)]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(err, "problem", None) or type(err).__name__
        return [parse_failure(path, f"not YAML: {problem}", line)]
    except RecursionError:
        return [parse_failure(path, "YAML nested too deeply")]
    except Exception as err:  # PyYAML raises others (e.g. ValueError) on odd scalars
        return [parse_failure(path, f"not YAML: {type(err).__name__}")]
    if not isinstance(document, dict):
        return [parse_failure(path, "not a YAML mapping at top level")]
    try:
        document, unread = validate_leniently(document, PROFILE_SCHEMA, _set_aside)
    except jsonschema.ValidationError as err:
        return [parse_failure(path, f"schema: {json_path(list(err.absolute_path))}: "
                                    f"{err.message}")]
    except RecursionError:
        return [parse_failure(path, "YAML nested too deeply")]
    try:
        return sorted_facts(_facts(path, document, LineFinder(text), unread))
    except Exception as err:  # an extractor reports, never raises
        return [parse_failure(path, f"profile extractor error: {type(err).__name__}")]


# Entry fields impact only compares for an edit: in an unknown shape, kept as raw text.
_ENTRY_TEXT_FIELDS = ("kmd_fields", "guard", "test")
_LAUNCH_SURFACE = "launch_surface"


def _set_aside(err: jsonschema.ValidationError, doc: dict[str, Any]) -> str | None:
    """Set aside the field `err` is about when impact does not need it; its path."""
    parts = list(err.absolute_path)
    if not parts or not isinstance(parts[0], str) or parts[0] not in doc:
        return None
    if parts[0] != _LAUNCH_SURFACE:
        del doc[parts[0]]
        return parts[0]
    if len(parts) < 3 or not isinstance(parts[1], int) or parts[2] not in _ENTRY_TEXT_FIELDS:
        return None
    entry = doc[_LAUNCH_SURFACE][parts[1]]
    field = parts[2]
    raw = json.dumps(entry[field], sort_keys=True, default=str)
    entry[field] = [raw] if field == "kmd_fields" else raw
    return json_path(parts[:3])


def _optional(value: Any) -> Any:
    return None if is_none(value) else value


def _listed(value: Any) -> list[Any]:
    """A list field, an explicit none read as the empty list."""
    return [] if is_none(value) else list(value)


def _engine(value: Any) -> Any:
    """The engine's name: the string itself, or a mapping's `name`."""
    return value.get("name") if isinstance(value, dict) else value


def _facts(path: str, doc: dict[str, Any], lines: LineFinder,
           unread: dict[str, str]) -> list[Fact]:
    kmd_names = [f if isinstance(f, str) else f["name"] for f in _listed(doc.get("kmd_fields"))]
    top = {k: v for k, v in unread.items() if not k.startswith(f"$.{_LAUNCH_SURFACE}[")}
    out = [Fact(PROFILE, path, 0, {
        "engine": _engine(doc.get("engine")),
        "source": doc.get("source"),
        "builder": doc.get("builder"),
        "predicate": _optional(doc.get("predicate")),
        "arch_spec": _optional(doc.get("arch_spec")),
        "metadata_fields": _listed(doc.get("metadata_fields")),
        "kmd_fields": kmd_names,
        "unread_fields": dict(sorted(top.items())),
    })]
    for index, entry in enumerate(_listed(doc.get(_LAUNCH_SURFACE))):
        name = entry["name"]
        prefix = f"$.{_LAUNCH_SURFACE}[{index}]."
        out.append(Fact(LAUNCH_SURFACE, name, lines.yaml_pair("name", name), {
            "python_source": parse_locator(entry["python_source"]),
            "cpp_mirror": parse_locator(entry.get("cpp_mirror")),
            "kmd_fields": _listed(entry.get("kmd_fields")),
            "guard": _optional(entry.get("guard")),
            "test": _optional(entry.get("test")),
            "unread": {k.removeprefix(prefix): v for k, v in sorted(unread.items())
                       if k.startswith(prefix)},
        }))
    return out
