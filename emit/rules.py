"""What the emitter's child is told about one revision: impact's own readings, as data.

The child (emit/child/) runs analysed code and may not import impact, so it cannot call
impact's rules; it reads the file `child_rules` builds instead. Every value comes from
impact: the generic-target table (`impact.descriptors.generic_targets`), the variants the
descriptor reader found (rocke sources already normalised by
`impact.descriptors.normalize_rocke_source`), the backend pins read from the packer's
`keyword-literal` facts, and the library's names the child calls (the surface map's
`[conventions.emitter]`, `emitter_names`).

Maintainers: reads a snapshot only through its tree index and the fact cache, never blob
text; the folders come from the surface map (no hipDNN path here). The file is validated
against impact/contracts/emit_rules.schema.json when it is written. `rules_inputs` names
everything `child_rules` reads (the files by blob id, the map, the readers' version)
without reading any of it, for the cache of built variants: a second emit of the same
trees never parses a file, so the parsers (impact.extract) are imported only when the
rules are built.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impact.contracts import validate
from impact.descriptors import descriptor_type, generic_targets
from impact.facts import Fact
from impact.factstore import extractor_version
from impact.git import Snapshot
from impact.index import TreeIndex
from impact.kinds import DescriptorType, FactKind, LaunchKind, SurfaceKind
from impact.surface import SurfaceMap

RULES_SCHEMA = "emit_rules.schema.json"
RULES_VERSION = 2  # 2: the library's names (`emitter`)
# Launch kinds an authored descriptor may name; any other (the packed `kpack` form, a typo)
# leaves its UKD not inspected, as the packer refuses it.
AUTHORED_KINDS = frozenset({LaunchKind.ROCKE, LaunchKind.HIP, LaunchKind.HSACO,
                            LaunchKind.EMBEDDED_SOURCE})
# A literal `backend=` passed to the packer's lowering call pins the lowering backend.
BACKEND_KEYWORD = "backend"

if TYPE_CHECKING:
    from impact.extract import FactCache

Record = dict[str, Any]


def child_rules(snapshot: Snapshot, surface: SurfaceMap) -> Record:
    """The child's data file for `snapshot`: a JSON-ready document (see RULES_SCHEMA).
    Raises ValueError for a map without emitter conventions (emit/runner.py starts no
    child for one)."""
    from impact.extract import FactCache  # the parsers: only when rules are built

    emitter = emitter_names(surface)
    index = TreeIndex.of(snapshot, surface)
    cache = FactCache(surface)
    variants, not_inspected = shipped_variants(snapshot, surface, index, cache)
    return {
        "schema_version": RULES_VERSION,
        "emitter": emitter,
        "generic_targets": {name: list(members)
                            for name, members in sorted(generic_targets().items())},
        "backend_pins": backend_pins(snapshot, index, cache, emitter["lowering"][1]),
        "variants": variants,
        "not_inspected": not_inspected,
    }


def emitter_names(surface: SurfaceMap) -> Record:
    """The library's names the child calls: the map's `[conventions.emitter]` with its
    `python_backend` and `dsl_modules`, module:name pairs as [module, name]. Raises
    ValueError when the map has no emitter conventions."""
    conventions = surface.conventions
    emitter = conventions.emitter
    if emitter is None:
        raise ValueError(f"the surface map {surface.name} has no emitter conventions")
    return {
        "source_kind": emitter.source_kind,
        "python_backend": conventions.python_backend,
        "dsl_modules": list(conventions.dsl_modules),
        "flavor_env": emitter.flavor_env,
        "flavor_ladders": [list(name) for name in emitter.flavor_ladders],
        "enumerators": [{"call": list(call), "returns": returns}
                        for call, returns in emitter.enumerators],
        "producer": list(emitter.producer),
        "predicate_resolvers": list(emitter.predicate_resolvers),
        "builder_prefix": emitter.builder_prefix,
        "support_predicates": list(emitter.support_predicates),
        "lowering": list(emitter.lowering),
        "lowering_reexports": list(emitter.lowering_reexports),
    }


def rules_inputs(snapshot: Snapshot, surface: SurfaceMap) -> Record:
    """What `child_rules(snapshot, surface)` is a function of, read from the tree index
    only: every file it reads (the packer files and the KDP and UKD files under the
    descriptor roots) by blob id, the surface map's digest, and the version of the readers
    (this module's source and impact's extractor version, which covers the descriptor
    readers, the fact cache and the generic-target table). Raises OSError when impact's
    sources cannot be read (the caller then keeps no cache)."""
    index = TreeIndex.of(snapshot, surface)
    paths = sorted({*index.paths(SurfaceKind.HKP_PACK),
                    *_descriptors(index, surface, DescriptorType.KDP),
                    *_descriptors(index, surface, DescriptorType.UKD)})
    return {"files": {path: snapshot[path].sha for path in paths},
            "surface": surface.sha256, "readers": _readers_version()}


@cache
def _readers_version() -> str:
    own = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return hashlib.sha256(f"{RULES_VERSION} {own} {extractor_version()}".encode()).hexdigest()


def write_rules(rules: Record, path: Path) -> None:
    """Validate `rules` and write them where the child will read them."""
    validate(rules, RULES_SCHEMA)
    path.write_text(json.dumps(rules, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def backend_pins(snapshot: Snapshot, index: TreeIndex, cache: FactCache,
                 lowering: str) -> list[str]:
    """Every literal `backend=` a packer file passes to its lowering call (a function
    named `lowering`), sorted."""
    pins: set[str] = set()
    for path in index.paths(SurfaceKind.HKP_PACK):
        for fact in cache.facts(snapshot, path):
            if (fact.kind == FactKind.KEYWORD_LITERAL and fact.name == BACKEND_KEYWORD
                    and fact.data["call"].rsplit(".", 1)[-1] == lowering):
                pins.add(fact.data["value"])
    return sorted(pins)


def _descriptors(index: TreeIndex, surface: SurfaceMap, dtype: DescriptorType) -> list[str]:
    """Descriptor files of type `dtype` under a descriptor root, none in a hidden folder."""
    roots = [root.strip("/") + "/" for root in surface.descriptor_roots]
    out = []
    for path in index.paths(SurfaceKind.DESCRIPTOR):
        root = next((r for r in roots if path.startswith(r)), None)
        if root is None or descriptor_type(path) != dtype:
            continue
        if not any(part.startswith(".") for part in path[len(root):].split("/")):
            out.append(path)
    return out


def _first(facts: list[Fact], kind: FactKind) -> Fact | None:
    return next((fact for fact in facts if fact.kind == kind), None)


def shipped_variants(snapshot: Snapshot, surface: SurfaceMap, index: TreeIndex,
                     cache: FactCache) -> tuple[list[Record], list[Record]]:
    """(variants, not_inspected): every UKD each KDP ships, in kernelDescriptors order, as
    the descriptor reader found it; a UKD the child could not build from goes to
    not_inspected with the reason."""
    ukd_files = _descriptors(index, surface, DescriptorType.UKD)
    variants: list[Record] = []
    refused: list[Record] = []
    for kdp_path in _descriptors(index, surface, DescriptorType.KDP):
        facts = cache.facts(snapshot, kdp_path)
        kdp = _first(facts, FactKind.KDP)
        failure = _first(facts, FactKind.PARSE_FAILURE)
        if kdp is None or failure is not None:
            reason = failure.data["reason"] if failure is not None else "no KDP read"
            refused.append(_refusal(kdp_path, None, None, None, f"KDP not read: {reason}"))
            continue
        standalone = _standalone(snapshot, cache, ukd_files, posixpath.dirname(kdp_path))
        kdp_arch = kdp.data["arch"] or []
        for position, entry in _entries(kdp, facts):
            if isinstance(entry, str):
                if entry not in standalone:
                    refused.append(_refusal(kdp_path, position, entry, None,
                                            f"UKD id {entry} has no readable .ukd.json "
                                            "beside it"))
                    continue
                entry = standalone[entry]
            record, reason = _variant(kdp_path, entry, kdp_arch)
            if reason is None:
                variants.append(record)
            else:
                refused.append(_refusal(kdp_path, position, entry.data["id"], entry.name,
                                        reason))
    return variants, refused


def _entries(kdp: Fact, facts: list[Fact]) -> list[tuple[int, Fact | str]]:
    """kernelDescriptors in order: an inline UKD's variant fact, or a referenced UKD id.
    Inline variants carry their position; the ids fill the other positions in order."""
    inline = {f.data["index"]: f for f in facts if f.kind == FactKind.VARIANT}
    refs = iter(kdp.data["ukd_refs"])
    total = len(inline) + len(kdp.data["ukd_refs"])
    return [(i, inline[i] if i in inline else next(refs)) for i in range(total)]


def _standalone(snapshot: Snapshot, cache: FactCache, ukd_files: list[str],
                folder: str) -> dict[str, Fact]:
    """The readable `.ukd.json` files in `folder`, by id (the first file wins)."""
    found: dict[str, Fact] = {}
    for path in ukd_files:
        if posixpath.dirname(path) != folder:
            continue
        variant = _first(cache.facts(snapshot, path), FactKind.VARIANT)
        if variant is not None and isinstance(variant.data["id"], str):
            found.setdefault(variant.data["id"], variant)
    return found


def _refusal(kdp: str, position: int | None, ukd_id: str | None, name: str | None,
             reason: str) -> Record:
    return {"kdp": kdp, "index": position, "ukd_id": ukd_id, "name": name, "reason": reason}


def _variant(kdp: str, fact: Fact, kdp_arch: list[Any]) -> tuple[Record, str | None]:
    """The child's record of one UKD, and why the child cannot build from it (or None)."""
    data = fact.data
    arch = data["arch"] or kdp_arch
    launches = [{key: launch[key] for key in ("launch", "kind", "source", "builder", "spec")}
                for launch in data["launches"]]
    record = {"kdp": kdp, "name": fact.name, "ukd_id": data["id"], "arch": arch,
              "launches": launches}
    if data["problems"]:
        return record, "; ".join(data["problems"])
    if data["id"] is None:
        return record, "id is not a string"
    if not isinstance(arch, list) or not all(isinstance(a, str) for a in arch):
        return record, "target arch is not a list of strings"
    if not launches:
        return record, "no kernel_source or sources"
    for launch in launches:
        where = f"sources[{launch['launch']}]" if launch["launch"] else "kernel_source"
        kind = launch["kind"]
        if kind not in AUTHORED_KINDS:
            return record, f"{where}: kind {kind!r} is not an authored kernel source"
        for key in ("source", "builder") if kind == LaunchKind.ROCKE else ():
            if launch[key] is None:
                return record, f"{where}: {key} is not a string"
    return record, None
