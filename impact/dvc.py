"""Facts of a `.dvc` pointer: which data it points at (md5, size, path per output).

Maintainers: parses bytes it is handed; never touches git, the filesystem or DVC's
remote. A pointer that is not the YAML shape DVC writes yields a parse-failure.
"""

from __future__ import annotations

import yaml

from impact.facts import Fact, parse_failure, sorted_facts
from impact.kinds import FactKind
from impact.strict import Refused, load_yaml


def extract_dvc_facts(path: str, source: bytes) -> list[Fact]:
    """One `dvc-out` fact per entry of `outs`; never raises."""
    try:
        doc = load_yaml(source.decode("utf-8"))
    except Refused as exc:
        return [parse_failure(path, f"not a YAML .dvc pointer: {exc.message}", exc.line)]
    except RecursionError:
        return [parse_failure(path, "not a YAML .dvc pointer: nested too deeply")]
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        return [parse_failure(path, f"not a YAML .dvc pointer: {type(exc).__name__}")]
    except Exception as exc:  # PyYAML raises others (e.g. ValueError) on odd scalars
        return [parse_failure(path, f"not a YAML .dvc pointer: {type(exc).__name__}")]
    outs = doc.get("outs") if isinstance(doc, dict) else None
    if not isinstance(outs, list) or not outs:
        return [parse_failure(path, "a .dvc pointer needs a non-empty 'outs' list")]
    facts = []
    text = source.decode("utf-8")
    for index, out in enumerate(outs):
        if not isinstance(out, dict) or not isinstance(out.get("path"), str):
            return [parse_failure(path, f"outs[{index}] has no string 'path'")]
        line = next((n for n, row in enumerate(text.splitlines(), 1)
                     if f"path: {out['path']}" in row), 1)
        facts.append(Fact(FactKind.DVC_OUT, out["path"], line, {
            "md5": out.get("md5"), "size": out.get("size"), "hash": out.get("hash")}))
    return sorted_facts(facts)
