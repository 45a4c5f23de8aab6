"""Facts about one IngestorGenerator tool profile (`configs/<slug>.profile.yaml`).

One `profile` fact for the file, and one `launch-surface` fact per `launch_surface:` entry:
the Python half and the hand-written C++ mirror of one launch contract, its guard and test.
"""

# Maintainers: this module reads the bytes it is handed and nothing else; it must never touch git
# or the filesystem. Malformed YAML or a schema violation becomes one parse-failure Fact.

from __future__ import annotations

from typing import Any

import jsonschema
import yaml

from impact.contracts import validate
from impact.descriptors.text import LineFinder
from impact.facts import Fact, parse_failure, sorted_facts
from impact.kinds import FactKind
from impact.strict import Refused, load_yaml

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
        validate(document, PROFILE_SCHEMA)
    except jsonschema.ValidationError as err:
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                              for p in err.absolute_path)
        return [parse_failure(path, f"schema: {where}: {err.message}")]
    except RecursionError:
        return [parse_failure(path, "YAML nested too deeply")]
    try:
        return sorted_facts(_facts(path, document, LineFinder(text)))
    except Exception as err:  # an extractor reports, never raises
        return [parse_failure(path, f"profile extractor error: {type(err).__name__}")]


def _optional(value: Any) -> Any:
    return None if is_none(value) else value


def _facts(path: str, doc: dict[str, Any], lines: LineFinder) -> list[Fact]:
    kmd_names = [f if isinstance(f, str) else f["name"] for f in doc.get("kmd_fields", [])]
    out = [Fact(PROFILE, path, 0, {
        "engine": doc["engine"],
        "source": doc["source"],
        "builder": doc["builder"],
        "predicate": _optional(doc.get("predicate")),
        "arch_spec": _optional(doc.get("arch_spec")),
        "metadata_fields": list(doc.get("metadata_fields", [])),
        "kmd_fields": kmd_names,
    })]
    for entry in doc.get("launch_surface", []):
        name = entry["name"]
        out.append(Fact(LAUNCH_SURFACE, name, lines.yaml_pair("name", name), {
            "python_source": parse_locator(entry["python_source"]),
            "cpp_mirror": parse_locator(entry.get("cpp_mirror")),
            "kmd_fields": list(entry.get("kmd_fields", [])),
            "guard": _optional(entry.get("guard")),
            "test": _optional(entry.get("test")),
        }))
    return out
