"""A pack is never paired by names with a builder of another arch (issue 26, bug 1).

The real tree has a gfx942 dense builder and pack beside the gfx950 pack; with the gfx950
builder absent, the gfx950 list and launch() were paired "by closest names" with the
gfx942 builder and read as a mismatch on a file nobody touched.
"""

from __future__ import annotations

from harness import context, report, rows_naming, verdict
from tiny_hipdnn import B942, B950, LAUNCH950, P942, P950, SIG942, SIG950, builder, pack, pack942

from impact.fixtures import Change, Scenario
from impact.fixtures.edits import append, replace
from impact.graph import PairedBy


def _scenario(base: dict[str, str], *edits) -> Scenario:
    return Scenario(base=base, head=(Change("head", edits=edits),))


def test_adding_another_archs_family_reads_no_mismatch_on_the_untouched_pack() -> None:
    doc = report(_scenario({P950: pack(SIG950, LAUNCH950)},
                           append(B942, builder(SIG942)), append(P942, pack942())))
    assert not [r for r in doc["rows"] if r["status"] == "mismatch"]
    assert not rows_naming(doc, P950)
    assert verdict(doc) != "BREAKS"


def test_a_changed_pack_whose_own_builder_is_absent_reads_builder_not_found() -> None:
    doc = report(_scenario({P950: pack(SIG950, LAUNCH950), B942: builder(SIG942)},
                           replace(P950, "static_cast<int32_t>(p.batch)",
                                   "static_cast<int32_t>(p.batch + 0)")))
    rows = [r for r in doc["rows"] if r["contract"] == "kernargs"]
    assert [(r["status"], r["reason"]) for r in rows] == [("changed", "builder-not-found")]
    assert rows[0]["sides"][0]["file"] == P950
    assert "only-other-arch-builder" in {h["step"] for h in rows[0]["evidence"]}
    assert verdict(doc).startswith("NEEDS-DEVICE")


def test_with_both_builders_each_pack_pairs_with_its_own() -> None:
    # The gfx950 list names exactly what the gfx942 builder declares; its own builder
    # has one argument more. Equal names across archs must not win.
    files = {P950: pack(SIG942, LAUNCH950.split(", static")[0]),
             P942: pack942(), B942: builder(SIG942), B950: builder([*SIG942, "batch"])}
    ctx = context(_scenario(files))
    graph = ctx.graph(ctx.views.head)
    (arglist,) = graph.kernels.argument_lists()
    assert arglist.pairing.builder is not None and arglist.pairing.builder.path == B950
    assert arglist.pairing.how == PairedBy.CLOSEST
    launches = {c.path: c.pairing for c in graph.kernels.launch_calls()}
    assert launches[P942].builder is not None and launches[P942].builder.path == B942
    assert launches[P950].builder is not None and launches[P950].builder.path == B950
