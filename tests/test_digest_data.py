"""The `content` fact of JSON and YAML: the parsed value, canonically written (issue 11).

JSON objects and YAML mappings are unordered by their specs (RFC 8259 §4, YAML 1.2 §3.2.1.1),
and every reader of these files reads them by key: the hipDNN descriptor loader keeps
objects in nlohmann::json, whose default object type is a sorted std::map, and the packer
and launch_surface.py read Python dicts by key. So key order, whitespace, comments, quoting
and flow or block style are inert; a value, a list's order or a value's type is not.
"""

from __future__ import annotations

import pytest

from impact.extract import FactCache
from impact.facts import CONTENT, PARSE_FAILURE
from impact.git import Snapshot
from impact.surface import load_surface_map

D = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/descriptors/a.udd.json"
Y = "projects/hipdnn/tools/IngestorGenerator/configs/x.profile.yaml"

JSON = '{"id": "u1", "version": "1.0", "dispatch_symbol": "ns.dispatch", "n": [1, 2]}\n'
YAML = ("engine: hipkernel:X\nsource: kernels/gfx950/x.py\nbuilder: build_x\n"
        "metadata_fields:\n  - x\n  - y\nrequest: {defaults: {d: true, n: 1}}\n")

CASES = [
    # (path, old, new, equal?)
    (D, JSON, '{\n  "n": [1, 2],\n  "version": "1.0",\n  "id": "u1",\n'
              '  "dispatch_symbol": "ns.dispatch"\n}\n', True),
    (D, JSON, JSON.replace("[1, 2]", "[\n 1,\n 2\n ]"), True),
    (D, JSON, JSON.replace("[1, 2]", "[2, 1]"), False),
    (D, JSON, JSON.replace("[1, 2]", "[1, 2.0]"), False),
    (D, JSON, JSON.replace('"1.0"', '"1.1"'), False),
    (Y, YAML, "# head\nrequest:\n  defaults:\n    n: 1  # one\n    d: true\n"
              "metadata_fields: [x, y]\nbuilder: build_x\nsource: 'kernels/gfx950/x.py'\n"
              'engine: "hipkernel:X"\n', True),
    (Y, YAML, YAML.replace("- x", "- 'x'"), True),
    (Y, YAML, YAML.replace("- x\n  - y", "- y\n  - x"), False),
    (Y, YAML, YAML.replace("n: 1", "n: '1'"), False),
    (Y, YAML, YAML.replace("d: true", "d: false"), False),
]


def facts(path: str, text: str):
    return FactCache(load_surface_map()).facts(Snapshot.from_files({path: text}), path)


def digest(path: str, text: str) -> str:
    found = [f.data["digest"] for f in facts(path, text) if f.kind == CONTENT]
    assert len(found) == 1, facts(path, text)
    return found[0]


@pytest.mark.parametrize(("path", "old", "new", "equal"), CASES)
def test_data_digest(path: str, old: str, new: str, equal: bool) -> None:
    assert (digest(path, old) == digest(path, new)) is equal


def test_a_trailing_comma_in_json_is_not_json() -> None:
    # JSON has no trailing commas; the loader rejects the file, so it is not understood.
    kinds = {f.kind for f in facts(D, JSON.replace("[1, 2]", "[1, 2,]"))}
    assert PARSE_FAILURE in kinds and CONTENT not in kinds
