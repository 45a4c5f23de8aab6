"""Nothing the analysed code writes is read back from a cache as truth (issue 25, caches).

The emit cache keys a group by the manifest of what its child read, and the child's
record of its reads is written by the child's own process, which runs the head's code.
A head whose code empties that record must not leave entries that a later, honest change
is served from: what the head's children built is kept under the tree ids of the whole
roots (content-addressed), and only the base's children (reviewed code) narrow a manifest
to what they read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_emit_groups import TILED_BODY, emit_file, requirements, without_work
from test_emit_scale import TILED, TREE

from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e

# The analysed code finds the reads recorder in its own process (the child took its
# modules out of sys.modules; the garbage collector still lists the object) and makes
# every window it records read nothing: a manifest that holds for every tree.
EMPTY_READS = """import gc as _gc

for _reads in [o for o in _gc.get_objects() if type(o).__name__ == "Reads"]:
    def _nothing(self, _real=type(_reads).document):
        document = _real(self)
        for _window in document["windows"].values():
            _window.update(paths=[], listed=[], scanned=[], opaque=None)
        return document
    type(_reads).document = _nothing
"""


@pytest.mark.slow  # three emits of the fixture tree
def test_a_head_that_empties_its_reads_record_does_not_poison_the_cache(build,
                                                                        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    poison = Change("poison", edits=(e.insert_after(
        TILED, "from __future__ import annotations\n", EMPTY_READS),))
    first = build(Scenario(base=TREE, head=(poison,)))
    emit_file(first, tmp_path / "first.json", cache)
    # A later, honest change to the same family's code (its IR changes): it must be
    # built, not served from what the poisoned head's child stored.
    honest = build(Scenario(base=TREE, head=(TILED_BODY,)))
    cached = emit_file(honest, tmp_path / "cached.json", cache)
    cold = emit_file(honest, tmp_path / "cold.json", None)
    assert without_work(cached) == without_work(cold)
    assert cached["revisions"]["head"]["work"]["groups_built"] >= 1


@pytest.mark.slow  # two emits of the fixture tree
def test_the_heads_own_groups_are_reused_only_for_the_same_trees(build, tmp_path: Path
                                                                 ) -> None:
    """What a head's child built is reused for exactly its root trees (a second emit of
    the same head starts no child), never narrowed by what that child says it read."""
    cache = tmp_path / "cache"
    repo = build(Scenario(base=TREE, head=(TILED_BODY,)))
    emit_file(repo, tmp_path / "first.json", cache)
    again = emit_file(repo, tmp_path / "again.json", cache)
    for label in ("base", "head"):
        assert again["revisions"][label]["work"]["children"] == 0
    entries = [json.loads(p.read_bytes().partition(b"\n")[2])
               for p in (cache / "emit").rglob("*.json")]
    heads = [c for entry in entries for c in entry["candidates"]
             if set(c["manifest"]) == {"roots"}]
    assert heads  # the head's groups, under the whole roots
    other = build(Scenario(base=TREE, head=(requirements("scipy"),)))
    served = emit_file(other, tmp_path / "other.json", cache)
    assert served["revisions"]["head"]["work"]["children"] == 0  # the base's narrow entries
