"""Facts of a module → sources map such as aiter's `aiter/jit/optCompilerConfig.json`.

Maintainers: this module reads the bytes it is handed and nothing else; it must never touch
git or the filesystem. `extract_sources_map_facts` never raises: text that is not a JSON
object of `{module: {"srcs": [...]}}` yields a parse-failure fact.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from impact.facts import Fact, content_fact, parse_failure, sorted_facts
from impact.kinds import FactKind
from impact.strict import Refused, load_json

OP_MODULE = FactKind.OP_MODULE


def extract_sources_map_facts(path: str, source: bytes) -> list[Fact]:
    """One `op-module` fact per module (data: `srcs`, the list as written) and a `content`
    fact blind to layout and key order, sorted; never raises.

    A file that is not a JSON object yields one parse-failure fact; an entry that is not an
    object with a `srcs` list of strings yields a parse-failure naming it, beside the others.
    """
    try:
        text = source.decode("utf-8-sig")
        document = load_json(text)
    except UnicodeDecodeError as err:
        return [parse_failure(path, f"not UTF-8: {err.reason}")]
    except Refused as err:
        return [parse_failure(path, f"not JSON: {err.message}", err.line)]
    except (ValueError, RecursionError) as err:
        line = getattr(err, "lineno", 0)
        return [parse_failure(path, f"not JSON: {getattr(err, 'msg', type(err).__name__)}",
                              line)]
    try:
        if not isinstance(document, dict):
            return [parse_failure(path, "not a JSON object of modules")]
        facts: list[Fact] = []
        for module, entry in document.items():
            line = _key_line(text, module)
            srcs = entry.get("srcs") if isinstance(entry, dict) else None
            if not isinstance(srcs, list) or not all(isinstance(s, str) for s in srcs):
                facts.append(parse_failure(path, f"module {module!r} has no list of srcs", line))
                continue
            facts.append(Fact(OP_MODULE, module, line, {
                "srcs": list(srcs), "files": sorted({source_tail(s) for s in srcs} - {""})}))
        if any(f.kind != OP_MODULE for f in facts):
            return sorted_facts(facts)  # a file not fully understood has no content fact
        canonical = json.dumps(document, sort_keys=True, separators=(",", ":"))
        facts.append(content_fact(path, hashlib.sha256(canonical.encode("utf-8")).hexdigest()))
        return sorted_facts(facts)
    except Exception as err:  # an extractor reports, never raises
        return [parse_failure(path, f"internal error: {type(err).__name__}")]


def source_tail(spelled: str) -> str:
    """A source as the map spells it (`f'{AITER_CSRC_DIR}/pybind/x_pybind.cu'`) reduced to
    the part a repository path ends with (`pybind/x_pybind.cu`): quotes, an f-string
    prefix and a leading `{FOLDER}/` placeholder dropped."""
    text = spelled.strip()
    if text[:2] in ("f'", 'f"'):
        text = text[1:]
    text = text.strip("'\"")
    text = re.sub(r"^(\{[^}]*\}/)+", "", text)
    return text.lstrip("./")


def _key_line(text: str, key: Any) -> int:
    """Line of the first `"key":` in the text (1-based), or 0 when not found."""
    match = re.search(re.escape(json.dumps(key)) + r"\s*:", text)
    if match is None:
        return 0
    return text.count("\n", 0, match.start()) + 1
