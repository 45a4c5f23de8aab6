"""The child's record of what tree code read (emit/child/reads.py `Reads`), in a fresh interpreter.

Every way a read reaches the tree must land in the window it happened in: an open, a
stat of a file that is not there, a listing, a scan, a path relative to a folder
descriptor; and a process started makes the window opaque. Reads outside the tree and
outside any window are not recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

READS = Path(__file__).resolve().parents[1] / "emit" / "child" / "reads.py"
SCRIPT = r"""
import importlib.util, json, os, subprocess, sys
spec = importlib.util.spec_from_file_location("emit_child_reads", sys.argv[1])
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
tree, outside = sys.argv[2], sys.argv[3]
reads = child.Reads(__import__("pathlib").Path(tree))
reads.install()
reads.window("a")
open(os.path.join(tree, "pkg", "data.json")).read()
os.path.exists(os.path.join(tree, "pkg", "missing.txt"))
os.listdir(os.path.join(tree, "pkg"))
list(os.scandir(os.path.join(tree, "other")))
open(os.path.join(outside, "x.txt")).read()
fd = os.open(os.path.join(tree, "other"), os.O_RDONLY)
os.stat("rel.txt", dir_fd=fd)
os.close(fd)
reads.window("b")
import glob
glob.glob(os.path.join(tree, "other", "*.txt"))
subprocess.run([sys.executable, "-c", "pass"], check=True)
reads.window(None)
os.path.exists(os.path.join(tree, "pkg", "unseen.txt"))
print(json.dumps(reads.document()))
"""


def test_each_kind_of_read_lands_in_its_window(tmp_path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "pkg").mkdir(parents=True)
    (tree / "other").mkdir()
    outside.mkdir()
    (tree / "pkg" / "data.json").write_text("{}")
    (tree / "other" / "rel.txt").write_text("x")
    (outside / "x.txt").write_text("y")
    done = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(READS), str(tree),
                           str(outside)], capture_output=True, text=True, check=True,
                          timeout=60)
    windows = json.loads(done.stdout)["windows"]
    a, b = windows["a"], windows["b"]
    assert {"pkg/data.json", "pkg/missing.txt", "other/rel.txt"} <= set(a["paths"])
    assert not any(p.startswith("..") or "x.txt" in p for p in a["paths"])
    assert a["listed"] == ["pkg"] and a["scanned"] == ["other"] and a["opaque"] is None
    assert b["scanned"] == ["other"] and b["opaque"] == "subprocess.Popen"
    assert "pkg/data.json" not in b["paths"]
    assert not any("unseen" in p for w in windows.values() for p in w["paths"])
