"""The `content` fact: blind to comments, docstrings and layout; not blind to code."""

from __future__ import annotations

import pytest

from impact.extract import FactCache
from impact.facts import CONTENT
from impact.git import Snapshot
from impact.surface import load_surface_map

K = "dnn-providers/hip-kernel-provider/rocke/library/kernels/gfx950/m.py"
P = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/packs/XNative.cpp"
D = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/descriptors/a.udd.json"
C = "dnn-providers/hip-kernel-provider/src/engines/kernel_ingestor_engine/CMakeLists.txt"

PY = ('"""Module doc."""\nimport os\n\nregister(1)\n\n'
      'def f(x):\n    """Doc."""\n    return x + 1  # add\n')
CPP = "// head\nint f(int x)\n{\n    return x + 1; /* add */\n}\n"
JSON = '{"id": "u1", "version": "1.0", "dispatch_symbol": "ns.dispatch"}\n'
CMAKE = "# build\ntarget_sources(t PRIVATE a.cpp b.cpp)\n"

CASES = [
    # (path, old, new, equal?)
    (K, PY, PY.replace("# add", "# plus one"), True),
    (K, PY, PY.replace('"""Doc."""', '"""Other doc."""'), True),
    (K, PY, PY.replace('"""Module doc."""\n', ""), True),
    # A trailing comma is layout (issue 11): the syntax tree is the same.
    (K, PY, PY.replace("register(1)", "register(\n    1,\n)").replace("x + 1", "x  +  1"),
     True),
    (K, PY, PY.replace("register(1)", "register(\n    1\n)").replace("x + 1", "x  +  1"), True),
    (K, PY, PY.replace("x + 1", "x + 2"), False),
    (K, PY, PY.replace("register(1)", "register(2)"), False),
    (P, CPP, CPP.replace("/* add */", "// add").replace("// head", ""), True),
    (P, CPP, CPP.replace("    return", "  return"), True),
    (P, CPP, CPP.replace("x + 1", "x + 2"), False),
    (D, JSON, '{\n  "version": "1.0",\n  "id": "u1",\n  "dispatch_symbol": "ns.dispatch"\n}\n',
     True),
    (D, JSON, JSON.replace("ns.dispatch", "ns.other"), False),
    (C, CMAKE, CMAKE.replace("# build", "# the build") + "\n", True),
    (C, CMAKE, CMAKE.replace(" b.cpp", ""), False),
    (C, CMAKE, "#[[ a block\ncomment ]]\n" + CMAKE, True),
    (C, 'set(X "a # b")\n', 'set(X "a # c")\n', False),
]


def digest(path: str, text: str) -> str:
    facts = FactCache(load_surface_map()).facts(Snapshot.from_files({path: text}), path)
    found = [f.data["digest"] for f in facts if f.kind == CONTENT]
    assert len(found) == 1, facts
    return found[0]


@pytest.mark.parametrize(("path", "old", "new", "equal"), CASES)
def test_content_digest(path: str, old: str, new: str, equal: bool) -> None:
    assert (digest(path, old) == digest(path, new)) is equal


def test_unparsable_files_have_no_content_fact() -> None:
    facts = FactCache(load_surface_map()).facts(Snapshot.from_files({K: "def (:\n"}), K)
    assert CONTENT not in {f.kind for f in facts}
