"""The graph's typed queries: definitions, readers, reach, launch surfaces, symbol strings.

Checks read these records instead of graph nodes; the tests pin what each record says.
"""

from __future__ import annotations

from impact.extract import FactCache
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files
from impact.git import Snapshot
from impact.graph import ReadHow, SymbolGraph, build_graph
from impact.kinds import FactKind
from impact.surface import load_surface_map, parse_surface_map

MAP = parse_surface_map(b'''schema_version = 1
name = "test"
python_roots = ["lib"]
[[surface]]
kind = "code"
lane = "IMPACT"
language = "python"
patterns = ["lib/**/*.py"]
''', "test")

FILES = {
    "lib/pkg/__init__.py": "from .impl import helper\n",
    "lib/pkg/impl.py": ("LIMIT = 4\n\n"
                        "def helper(x, *, y=1):\n    return x + LIMIT\n\n"
                        "class Box:\n    def size(self):\n        return LIMIT\n"),
    "lib/user.py": ("from pkg import helper\nfrom pkg.impl import Box\n\n"
                    "class Crate(Box):\n    pass\n\n"
                    "def run(x):\n    return helper(x)\n"),
}


def graph_of(files: dict[str, str]) -> SymbolGraph:
    return build_graph(Snapshot.from_files(files), FactCache(MAP))


def test_definitions_are_records_with_sites_and_signature() -> None:
    g = graph_of(FILES)
    assert g.python.module_at("lib/pkg/impl.py") == "pkg.impl"
    assert g.python.module_at("lib/nowhere.py") is None
    names = [(d.name, d.kind) for d in g.python.definitions("pkg.impl")]
    assert names == [("Box", FactKind.CLASS), ("Box.size", FactKind.FUNCTION),
                     ("LIMIT", FactKind.ASSIGNMENT), ("helper", FactKind.FUNCTION)]
    helper = g.python.definition("pkg.impl", "helper")
    assert helper is not None and helper.path == "lib/pkg/impl.py" and helper.line == 3
    assert helper.signature == "(pos x, key y=)"
    assert helper.sites[0].digest
    limit = g.python.definition("pkg.impl", "LIMIT")
    assert limit is not None and limit.sites[0].digest  # the value's digest
    assert g.python.definition("pkg.impl", "missing") is None


def test_readers_say_who_reads_and_how() -> None:
    g = graph_of(FILES)
    helper = g.python.definition("pkg.impl", "helper")
    box = g.python.definition("pkg.impl", "Box")
    assert helper is not None and box is not None
    how = {(r.module, r.function, r.how) for r in g.python.readers(helper)}
    assert ("user", "run", ReadHow.READS) in how
    assert ("user", None, ReadHow.IMPORTS) in how
    run = next(r for r in g.python.readers(helper) if r.function == "run")
    assert run.path == "lib/user.py" and run.line == 7
    assert ("user", "Crate", ReadHow.INHERITS) in {
        (r.module, r.function, r.how) for r in g.python.readers(box)}


def test_reached_definitions() -> None:
    g = graph_of(FILES)
    run = g.python.definition("user", "run")
    assert run is not None
    assert [(d.module, d.name) for d in g.python.reached(run)] == [("pkg.impl", "LIMIT"),
                                                           ("pkg.impl", "helper")]


def test_launch_surface_entries_and_symbol_strings() -> None:
    files = rocke_tree_files()
    g = build_graph(Snapshot.from_files(files), FactCache(load_surface_map()))
    entries = {(x.profile.rsplit("/", 1)[-1], x.name): x for x in g.descriptors.launch_surfaces()}
    grid = entries[("gfx950_attention_dense.profile.yaml", "launch_grid")]
    assert grid.line > 0 and grid.python_source is not None and grid.cpp_mirror is not None
    assert grid.python_source.file == e.GFX950_DENSE
    assert grid.python_source.symbol == "attention_dense_grid"
    assert grid.cpp_mirror.symbol == "gfx950AttentionDenseGeometry"
    positional = entries[("gfx950_attention_dense.profile.yaml", "positional_launch")]
    assert positional.python_source is not None and positional.python_source.symbol is None

    ued = next(p for p in files if p.endswith("gfx950_attention_dense.ued.json"))
    named = g.strings.symbol_names([ued])
    graph_match = "hipkernel.gfx950_attention_dense.graph_match"
    assert any(s.value == graph_match and s.path == ued and s.line > 0 for s in named)
    declared = g.strings.symbol_declarations([e.GFX950_DENSE_PACK])
    assert [(s.value, s.holder) for s in declared if s.value == graph_match] == [
        (graph_match, "GRAPH_MATCH_SYMBOL")]
    assert g.strings.symbol_declarations(["no/such/file.cpp"]) == []
