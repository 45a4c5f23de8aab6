"""Facts about one hipDNN kernel-ingestor descriptor (`<name>.<type>.json`).

A KDP yields its pack fact and one `variant` per inline UKD (with its launches); UED, UMD,
UDD and UHD files yield the native `symbol` strings C++ must register; a KMD yields one
`kmd-field` per metadata field. Every file also yields one `descriptor` fact.
"""

# Maintainers: this module reads the bytes it is handed and nothing else; it must never touch git
# or the filesystem (schemas and the generic-target table are package data). Every failure to
# read a file becomes one parse-failure Fact; a defective inline UKD becomes a variant whose
# `problems` say what is wrong, so one bad kernel never hides its siblings.

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Any

from impact.descriptors.arch import arch_problems, expand_arch
from impact.descriptors.lenient import json_path, validate_leniently
from impact.descriptors.text import LineFinder
from impact.facts import Fact, parse_failure, sorted_facts
from impact.kinds import DescriptorType, FactKind, LaunchKind
from impact.strict import Refused, load_json

if TYPE_CHECKING:  # imported where used: a warm report may need no schema
    import jsonschema

DESCRIPTOR_SCHEMA = "descriptor.schema.json"
DESCRIPTOR_TYPES = frozenset(DescriptorType)
NATIVE = "native"  # the UHD kind whose payload is a symbol C++ registers

DESCRIPTOR = FactKind.DESCRIPTOR
KDP = FactKind.KDP
VARIANT = FactKind.VARIANT
SYMBOL = FactKind.SYMBOL
ENGINE = FactKind.ENGINE
HEURISTIC = FactKind.HEURISTIC
KMD_FIELD = FactKind.KMD_FIELD

# The fields of each descriptor type that impact reads (facts and checks). A field outside
# these that does not fit the schema is set aside and named in the `descriptor` fact's
# `unread_fields`; one of these that does not fit fails the file, naming it.
NEEDED_FIELDS: dict[DescriptorType, frozenset[str]] = {
    DescriptorType.KDP: frozenset({"id", "version", "name", "arch", "engine", "dispatch",
                                   "matchers", "kernelDescriptors"}),
    DescriptorType.UKD: frozenset({"id", "version", "name", "arch", "kernel_source", "sources",
                                   "metadata"}),
    DescriptorType.UED: frozenset({"id", "version", "name", "graph_match"}),
    DescriptorType.UMD: frozenset({"id", "version", "match_symbol"}),
    DescriptorType.UDD: frozenset({"id", "version", "dispatch_symbol"}),
    DescriptorType.UHD: frozenset({"id", "version", "kind"}),  # and `payload`, for kind native
    DescriptorType.KMD: frozenset({"id", "version", "fields"}),
}

_LAUNCH_STRINGS = ("kind", "source", "builder", "target", "name", "file", "symbol", "entry")
_KPACK_STRINGS = ("library", "toc_key", "sha256")
_DOTTED_PARTS = re.compile(r"[A-Za-z_]\w*(?:/[A-Za-z_]\w*)*\.py")


def descriptor_type(path: str) -> DescriptorType | None:
    """The type a descriptor's file name gives it (`x.kdp.json` -> `kdp`), or None."""
    parts = posixpath.basename(path).split(".")
    if len(parts) >= 3 and parts[-1] == "json" and parts[0] and parts[-2] in DESCRIPTOR_TYPES:
        return DescriptorType(parts[-2])
    return None


def normalize_rocke_source(source: str) -> str:
    """A rocke `source` as the dotted module the packer resolves through `kernels`.

    `kernels/gfx950/attention_dense.py` becomes `kernels.gfx950.attention_dense`; a dotted
    path stays as it is, and so does anything else.
    """
    if not _DOTTED_PARTS.fullmatch(source):
        return source
    parts = source[: -len(".py")].split("/")
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def extract_descriptor_facts(path: str, source: bytes) -> list[Fact]:
    """Every fact one descriptor file states, sorted; never raises."""
    import jsonschema

    kind = descriptor_type(path)
    if kind is None:
        return [parse_failure(path, "unknown descriptor type: expected <name>.<type>.json "
                              f"with type one of {', '.join(sorted(DESCRIPTOR_TYPES))}")]
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError as err:
        return [parse_failure(path, f"not UTF-8: {err.reason}")]
    try:
        document = load_json(text, constants=False)
    except RecursionError:
        return [parse_failure(path, "JSON nested too deeply")]
    except Refused as err:
        return [parse_failure(path, f"not JSON: {err.message}", err.line)]
    except ValueError as err:
        line = getattr(err, "lineno", 0)
        return [parse_failure(path, f"not JSON: {getattr(err, 'msg', str(err))}", line)]
    if not isinstance(document, dict):
        return [parse_failure(path, f"not a JSON object: top level is {_json_type(document)}")]
    try:
        wrapped, unread = validate_leniently(
            {"descriptor_type": kind, "document": document}, DESCRIPTOR_SCHEMA,
            lambda err, doc: _set_aside(kind, err, doc))
    except jsonschema.ValidationError as err:
        return [parse_failure(path, f"schema: {_json_path(err)}: {err.message}")]
    except RecursionError:
        return [parse_failure(path, "JSON nested too deeply")]
    try:
        return sorted_facts(_Extractor(path, kind, wrapped["document"], text, unread).facts())
    except RecursionError:
        return [parse_failure(path, "JSON nested too deeply")]
    except Exception as err:  # an extractor reports, never raises
        return [parse_failure(path, f"descriptor extractor error: {type(err).__name__}")]


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _json_path(err: jsonschema.ValidationError) -> str:
    parts = list(err.absolute_path)
    if parts[:1] == ["document"]:
        parts = parts[1:]
    return json_path(parts)


def _set_aside(kind: DescriptorType, err: jsonschema.ValidationError,
               wrapped: dict[str, Any]) -> str | None:
    """Drop the top-level field `err` is about when impact does not read it; its name."""
    parts = list(err.absolute_path)
    document = wrapped["document"]
    if len(parts) < 2 or parts[0] != "document" or not isinstance(parts[1], str):
        return None
    field = parts[1]
    if field in NEEDED_FIELDS[kind] or field not in document:
        return None
    if kind == DescriptorType.UHD and field == "payload" and document.get("kind") == NATIVE:
        return None  # a native heuristic's payload is the symbol C++ must register
    del document[field]
    return field


class _Extractor:
    def __init__(self, path: str, kind: DescriptorType, document: dict[str, Any], text: str,
                 unread: dict[str, str]) -> None:
        self.path = path
        self.kind = kind
        self.doc = document
        self.lines = LineFinder(text)
        self.unread = unread

    def facts(self) -> list[Fact]:
        doc = self.doc
        ident = doc.get("id")
        name = doc.get("name")
        out = [Fact(DESCRIPTOR, ident if isinstance(ident, str) else self.path, 0,
                    {"type": self.kind, "name": name, "version": doc.get("version"),
                     # Fields impact does not read whose shape the schema does not know.
                     "unread_fields": dict(sorted(self.unread.items()))})]
        handler = getattr(self, f"_{self.kind}")
        out.extend(handler())
        return out

    def _line_of_name(self, name: Any, *, advance: bool = True) -> int:
        return self.lines.json_pair("name", name, advance=advance)

    def _kdp(self) -> list[Fact]:
        doc = self.doc
        name = doc["name"]
        arch = doc.get("arch")
        expanded = expand_arch(arch) if isinstance(arch, list) else []
        entries = doc.get("kernelDescriptors", [])
        provenance = doc.get("provenance")
        contract = provenance.get("specialization_contract") if isinstance(provenance, dict) \
            else None
        data = {
            "id": doc.get("id"),
            "engine": doc.get("engine"),
            "dispatch": doc.get("dispatch"),
            "matchers": list(doc.get("matchers", [])),
            "arch": arch,
            "arch_expanded": expanded,
            "arch_problems": arch_problems(arch) if isinstance(arch, list) else [],
            "ukd_refs": [e for e in entries if isinstance(e, str)],
            "inline_count": sum(isinstance(e, dict) for e in entries),
            "provenance_contract": contract if isinstance(contract, dict) else None,
        }
        out = [Fact(KDP, name, self._line_of_name(name), data)]
        for index, entry in enumerate(entries):
            if isinstance(entry, dict):
                out.append(self._variant(entry, name, expanded, index))
        return out

    def _ukd(self) -> list[Fact]:
        return [self._variant(self.doc, None, [], None)]

    def _variant(self, ukd: dict[str, Any], kdp: str | None, kdp_arch: list[str],
                 index: int | None) -> Fact:
        problems: list[str] = []
        ident = ukd.get("id")
        line = self.lines.json_pair("id", ident) if isinstance(ident, str) else 1
        if "sources" in ukd:
            multi = True
            sources = ukd["sources"]
            if not isinstance(sources, list) or not sources:
                problems.append("sources is not a non-empty array")
                sources = sources if isinstance(sources, list) else []
            launches = [self._launch(entry, i, problems, multi=True)
                        for i, entry in enumerate(sources)]
            if "kernel_source" in ukd:
                problems.append("both kernel_source and sources are given")
        elif "kernel_source" in ukd:
            multi = False
            launches = [self._launch(ukd["kernel_source"], 0, problems, multi=False)]
        else:
            multi = False
            launches = []
            problems.append("neither kernel_source nor sources is given")
        name = ukd.get("name")
        if not isinstance(name, str):
            if name is not None:
                problems.append("name is not a string")
            if multi:
                problems.append("a multi-launch UKD has no name")
            name = ident if isinstance(ident, str) else f"{self.path}#{index or 0}"
        if ident is not None and not isinstance(ident, str):
            problems.append("id is not a string")
        arch = ukd.get("arch")
        if arch is not None and not isinstance(arch, list):
            problems.append("arch is not an array")
            arch = None
        metadata = ukd.get("metadata", {})
        if not isinstance(metadata, dict):
            problems.append("metadata is not an object")
            metadata = {}
        data = {
            "id": ident if isinstance(ident, str) else None,
            "kdp": kdp,
            "index": index,  # position in the KDP's kernelDescriptors; None for a UKD file
            "arch": arch,
            "arch_expanded": expand_arch(arch) if arch is not None else list(kdp_arch),
            "arch_problems": arch_problems(arch) if arch is not None else [],
            "priority": ukd.get("priority"),
            "metadata": metadata,
            "launches": launches,
            "problems": problems,
        }
        if not isinstance(ident, str) and isinstance(ukd.get("name"), str):
            line = self._line_of_name(name)
        return Fact(VARIANT, name, line, data)

    def _launch(self, entry: Any, index: int, problems: list[str], *,
                multi: bool) -> dict[str, Any]:
        where = f"sources[{index}]" if multi else "kernel_source"
        launch: dict[str, Any] = {"launch": None, "spec": {}, "problems": []}
        launch.update(dict.fromkeys(_LAUNCH_STRINGS))
        own: list[str] = launch["problems"]
        if not isinstance(entry, dict):
            own.append(f"{where} is {_json_type(entry)}, not an object")
            problems.extend(own)
            return launch
        if multi:
            name = entry.get("launch")
            if isinstance(name, str):
                launch["launch"] = name
                where = f"launch {name}"
            else:
                own.append(f"{where} has no string launch name")
        for key in _LAUNCH_STRINGS:
            value = entry.get(key)
            if isinstance(value, str):
                launch[key] = value
            elif value is not None:
                own.append(f"{where}: {key} is {_json_type(value)}, not a string")
        kind = launch["kind"]
        if kind is None and "kind" not in entry:
            own.append(f"{where}: no kind")
        if kind == LaunchKind.ROCKE and launch["source"] is not None:
            launch["source"] = normalize_rocke_source(launch["source"])
        if kind == LaunchKind.EMBEDDED_SOURCE:
            for key, alias in (("source_file", "source"), ("entry_point", "entry")):
                if isinstance(entry.get(key), str):
                    launch[alias] = entry[key]
        if kind == LaunchKind.HIP and isinstance(entry.get("build"), dict):
            launch["build"] = entry["build"]
        spec = entry.get("spec", {})
        if isinstance(spec, dict):
            launch["spec"] = spec
        else:
            own.append(f"{where}: spec is {_json_type(spec)}, not an object")
        if kind == LaunchKind.KPACK:
            self._kpack(entry, launch, where)
        problems.extend(own)
        return launch

    @staticmethod
    def _kpack(entry: dict[str, Any], launch: dict[str, Any], where: str) -> None:
        own: list[str] = launch["problems"]
        for key in _KPACK_STRINGS:
            value = entry.get(key)
            launch[key] = value if isinstance(value, str) else None
            if value is not None and not isinstance(value, str):
                own.append(f"{where}: {key} is {_json_type(value)}, not a string")
        signature = entry.get("signature", [])
        rows: list[dict[str, Any]] = []
        if not isinstance(signature, list):
            own.append(f"{where}: signature is not an array")
            signature = []
        for i, row in enumerate(signature):
            if not isinstance(row, dict):
                own.append(f"{where}: signature[{i}] is not an object")
                continue
            rows.append({key: row.get(key) for key in ("kind", "size", "offset", "name")})
        launch["signature"] = rows

    def _symbol(self, value: Any, data: dict[str, Any]) -> list[Fact]:
        if not isinstance(value, str):
            return []
        return [Fact(SYMBOL, value, self.lines.json_value(value), data)]

    def _ued(self) -> list[Fact]:
        doc = self.doc
        name = doc["name"]
        graph_match = doc.get("graph_match", {})
        native = graph_match.get("native") if isinstance(graph_match, dict) else None
        out = self._symbol(native, {"role": "graph_match", "descriptor": DescriptorType.UED,
                                    "engine_name": name})
        out.append(Fact(ENGINE, name, self._line_of_name(name, advance=False), {
            "id": doc.get("id"),
            "metadata": doc.get("metadata"),
            "heuristic": doc.get("heuristic"),
            "sdk_version": doc.get("sdk_version"),
            "knobs": doc.get("knobs", []),
        }))
        return out

    def _umd(self) -> list[Fact]:
        return self._symbol(self.doc["match_symbol"], {
            "role": "match_symbol", "descriptor": DescriptorType.UMD,
            "scope": self.doc.get("scope")})

    def _udd(self) -> list[Fact]:
        return self._symbol(self.doc["dispatch_symbol"],
                            {"role": "dispatch_symbol", "descriptor": DescriptorType.UDD})

    def _uhd(self) -> list[Fact]:
        doc = self.doc
        kind = doc.get("kind")
        if kind == NATIVE and isinstance(doc.get("payload"), str):
            return self._symbol(doc["payload"], {"role": "heuristic_payload",
                                                 "descriptor": DescriptorType.UHD})
        name = doc.get("name") if isinstance(doc.get("name"), str) else doc["id"]
        line = self.lines.json_pair("kind", kind) if isinstance(kind, str) else 1
        return [Fact(HEURISTIC, name, line, {
            "id": doc.get("id"), "kind": kind, "adapter": doc.get("adapter")})]

    def _kmd(self) -> list[Fact]:
        out = []
        for field in self.doc["fields"]:
            name = field["name"]
            out.append(Fact(KMD_FIELD, name, self._line_of_name(name), {
                "kmd": self.doc.get("id"),
                "type": field.get("type"),
                "default_value": field.get("default_value"),
                "mandatory": "default_value" not in field,
            }))
        return out
