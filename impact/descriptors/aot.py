"""Facts of an AOT catalog `family.json`: each kernel's symbol and its `args_signature`.

Maintainers: parses bytes it is handed; never touches git or the filesystem. A file
that is not the shape the AOT catalog loader reads yields one parse-failure.
"""

from __future__ import annotations

from impact.descriptors.text import LineFinder
from impact.facts import Fact, parse_failure, sorted_facts
from impact.kinds import FactKind
from impact.strict import load_json

AOT_KERNEL = FactKind.AOT_KERNEL


def extract_aot_family_facts(path: str, source: bytes) -> list[Fact]:
    """One `aot-kernel` fact per entry of `kernels[]`; never raises."""
    try:
        doc = load_json(source.decode("utf-8"))
    except RecursionError:
        return [parse_failure(path, "family.json is nested too deeply")]
    except (UnicodeDecodeError, ValueError) as exc:
        return [parse_failure(path, f"family.json is not JSON: {exc}")]
    kernels = doc.get("kernels") if isinstance(doc, dict) else None
    if not isinstance(kernels, list):
        return [parse_failure(path, "family.json needs a 'kernels' list")]
    lines = LineFinder(source.decode("utf-8"))
    facts = []
    for index, kernel in enumerate(kernels):
        args = kernel.get("args_signature") if isinstance(kernel, dict) else None
        symbol = kernel.get("symbol") if isinstance(kernel, dict) else None
        if not isinstance(symbol, str) or not isinstance(args, list) or not all(
                isinstance(a, dict) and isinstance(a.get("name"), str)
                and isinstance(a.get("type"), str) for a in args):
            return [parse_failure(path, f"kernels[{index}] needs a string 'symbol' and an "
                                        "'args_signature' list of {name, type}")]
        facts.append(Fact(AOT_KERNEL, symbol, lines.json_pair("symbol", symbol), {
            "args": [{"name": a["name"], "type": a["type"]} for a in args]}))
    return sorted_facts(facts)
