"""Which variants a revision ships: the tree's own enumerator, completed from impact's KDP
JSON reading of the same variants (the rules file).

The tree's own enumerator (the first of `Emitter.enumerators` that runs) is read leniently
(objects or dicts, either spelling of a field); whatever it lacks for a variant (a field, or
the variant itself) comes from the KDP JSON reading of that variant in the rules file, and
the variant records that (``enumerated_by``, ``enumeration_gap``). With no enumerator that
runs, every variant comes from the JSON (``enumerator: "kdp-json"``, the error recorded).
Descriptors impact could not read go to ``not_inspected``.

Maintainers: the enumerators' modules and functions come from the rules file; what an
enumerator returns is read by the reader its `returns` names (READERS), never trusted to
have a shape.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from emit.child.context import Context, source_module
from emit.child.vocabulary import EnumeratedBy


def _entry(kdp, name, ukd_id, src, arch, launch) -> dict:
    return {
        "kdp": kdp, "name": name, "ukd_id": ukd_id, "kind": src["kind"],
        "source": src.get("source"), "builder": src.get("builder"),
        "spec": src.get("spec") if isinstance(src.get("spec"), dict) else {},
        "arch": tuple(arch), "launch": launch,
    }


def rules_entries(ctx: Context) -> tuple[list[dict], list[dict]]:
    """The variants impact's descriptor reader found, one entry per launch, and the UKDs
    it could not read (not_inspected)."""
    entries = [_entry(v["kdp"], v["name"], v["ukd_id"], launch, v["arch"], launch["launch"])
               for v in ctx.rules["variants"] for launch in v["launches"]]
    return entries, [dict(r, reason=ctx.clean(r["reason"])) for r in ctx.rules["not_inspected"]]


# What an enumerator returns, turned into variant items (read leniently below); each reader
# is given the enumerator's result and the source kind the child builds.
def _listed_variants(found, _kind: str) -> list:
    return list(found)


def _flat_input_variants(flat, kind: str) -> list:
    """The packer's flat input (`load_flat_input`): its KDPs with their documents, UKDs
    inline or by id (`ukd_by_id()`), one item per launch."""
    by_id = flat.ukd_by_id() if callable(getattr(flat, "ukd_by_id", None)) else {}
    out = []
    for kdp in flat.kdps():
        doc = getattr(kdp, "doc", None)
        if not isinstance(doc, dict):
            raise TypeError("a KDP of the flat input has no document")
        path, rel_dir = getattr(kdp, "path", None), getattr(kdp, "rel_dir", None)
        rel = (Path(str(rel_dir)) / Path(str(path)).name).as_posix() \
            if path is not None and rel_dir is not None else None
        for entry in doc.get("kernelDescriptors", []):
            ukd = getattr(by_id.get(entry), "doc", None) if isinstance(entry, str) else entry
            if not isinstance(ukd, dict):
                continue
            arch = ukd.get("arch") or doc.get("arch") or []
            sources = ukd["sources"] if "sources" in ukd else [ukd.get("kernel_source")]
            for src in sources if isinstance(sources, list) else ():
                if not isinstance(src, dict):
                    continue
                item = {"name": ukd.get("name"), "id": ukd.get("id"), "arch": arch,
                        "launch": src.get("launch")}
                item.update({k: src[k] for k in ("kind", "source", "builder", "spec")
                             if k in src})
                if isinstance(item.get("source"), str) and item.get("kind") == kind:
                    item["source"] = source_module(item["source"])
                if rel is not None:
                    item["kdp_path"] = rel
                out.append(item)
    return out


READERS = {"variants": _listed_variants, "flat-input": _flat_input_variants}
# Field -> the spellings an enumerator's variant may use for it, first found wins.
_FIELD_SPELLINGS = {
    "kdp": ("kdp_path", "kdp"),
    "name": ("ukd_name", "name"),
    "ukd_id": ("ukd_id", "id"),
    "kind": ("kind", "source_kind", "origin_kind"),
    "source": ("source",),
    "builder": ("builder",),
    "spec": ("spec",),
    "arch": ("arch", "archs"),
    "launch": ("launch",),
}
# Fields an entry needs before the producer can build it.
_BUILD_FIELDS = ("kind", "source", "builder", "spec", "arch")
_MISSING = object()


def _field(item, spellings):
    """The first spelling `item` (an object or a dict) carries, else _MISSING."""
    for name in spellings:
        if isinstance(item, dict):
            if name in item:
                return item[name]
        else:
            try:
                return getattr(item, name)
            except AttributeError:
                continue
            except Exception:  # a property of the tree's that raises
                continue
    return _MISSING


def _usable(key: str, value) -> bool:
    if value is _MISSING:
        return False
    if key in ("kdp", "name", "ukd_id", "kind", "source", "builder"):
        return isinstance(value, str)
    if key == "spec":
        return isinstance(value, dict)
    if key == "arch":
        return isinstance(value, (list, tuple)) and all(isinstance(a, str) for a in value)
    if key == "launch":
        return value is None or isinstance(value, str)
    return True


def read_tree_enumeration(ctx: Context) -> tuple[str, list[dict]]:
    """(enumerator module, the tree's variants as partial entries: the fields it gave)."""
    errors = []
    for (module_name, function), returns in ctx.emitter.enumerators:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            errors.append(ctx.describe(exc))
            continue
        enumerate_fn = getattr(module, function, None)
        if not callable(enumerate_fn):
            errors.append(f"{module_name} has no {function}()")
            continue
        try:
            items = READERS[returns](enumerate_fn(ctx.descriptor_root), ctx.emitter.source_kind)
        except Exception as exc:  # this enumerator fails on this tree: try the next
            errors.append(f"{module_name}.{function}: {ctx.describe(exc)}")
            continue
        out = []
        for item in items:
            got = {}
            for key, spellings in _FIELD_SPELLINGS.items():
                value = _field(item, spellings)
                if _usable(key, value):
                    got[key] = value
            if "kdp" in got:
                got["kdp"] = ctx.kdp_rel(str(got["kdp"]).replace(os.sep, "/"))
            if "arch" in got:
                got["arch"] = tuple(got["arch"])
            if "spec" in got:
                got["spec"] = dict(got["spec"])
            out.append(got)
        return module_name, out
    raise LookupError("the tree offers no enumerator: " + "; ".join(errors))


def merge_enumerations(json_entries: list[dict], not_inspected: list[dict],
                       tree: list[dict], kind: str) -> tuple[list[dict], list[dict]]:
    """The tree's variants, each completed from the KDP JSON reading of that same variant
    (matched by UKD id and launch, and KDP when both name it); a JSON variant the tree did
    not list is kept from the JSON. Each entry says which reading it came from and, when
    the JSON filled in, what the tree's enumerator lacked (an entry of the source `kind`
    the child builds needs every field the producer takes; another, its kind and arch)."""
    by_key: dict = {}
    for e in json_entries:
        by_key.setdefault((e["ukd_id"], e["launch"]), []).append(e)
    used: set = set()
    out = []
    for got in tree:
        candidates = by_key.get((got.get("ukd_id"), got.get("launch")), [])
        if "kdp" in got:
            candidates = [c for c in candidates if c["kdp"] == got["kdp"]] or candidates
        candidates = [c for c in candidates if id(c) not in used]
        base = candidates[0] if candidates else None
        if base is not None:
            used.add(id(base))
        needed = _BUILD_FIELDS if got.get("kind", kind) == kind else ("kind", "arch")
        lacked = [k for k in ("kdp", "name", "ukd_id", *needed) if k not in got]
        if base is None and lacked:
            continue  # listed by the tree without enough to build it, and not in the JSON
        entry = dict(base) if base is not None else {"launch": None}
        entry.update(got)
        entry["enumerated_by"] = EnumeratedBy.TREE if not lacked else EnumeratedBy.KDP_JSON
        entry["enumeration_gap"] = (
            "the tree's enumerator gives no " + ", ".join(lacked) if lacked else None)
        out.append(entry)
    for e in json_entries:
        if id(e) not in used:
            out.append(dict(e, enumerated_by=EnumeratedBy.KDP_JSON,
                            enumeration_gap="not listed by the tree's enumerator"))
    listed = {(e["kdp"], e["ukd_id"]) for e in out if e["enumerated_by"] == EnumeratedBy.TREE}
    left = [r for r in not_inspected if (r["kdp"], r["ukd_id"]) not in listed]
    return out, left
