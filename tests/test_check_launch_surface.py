"""launch-surface: each profile entry's Python half against its hand-written C++ mirror."""

from __future__ import annotations

import pytest
from harness import by_subject, check_rows
from memory import tree_with

from impact.checks.launch_surface import LaunchSurfaceCheck
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

CONFIGS = "projects/hipdnn/tools/IngestorGenerator/configs"
P950 = f"{CONFIGS}/gfx950_attention_dense.profile.yaml"
P942 = f"{CONFIGS}/gfx942_attention_dense.profile.yaml"
TILING = f"{e.KERNELS}/common/tiling.py"
SPEC = f"{e.KERNELS}/common/attention_dense_spec.py"
GEOMETRY950 = f"{e.PACKS}/Gfx950AttentionDenseGeometry.hpp"

GRID = f"{P950}:launch_grid"
BLOCK = f"{P950}:launch_block"
SPEC_RULES = f"{P950}:spec_rules"
POSITIONAL = f"{P950}:positional_launch"
KERNEL_ARGS = f"{P950}:kernel_arguments"
OPTIONAL = f"{P950}:optional_arguments"
GRID942 = f"{P942}:launch_grid"

BLOCK_DEF = "def attention_dense_block(spec) -> tuple[int, int, int]:\n" \
            "    return (spec.num_waves * 64, 1, 1)\n"
BLOCK_UNDER_IF = (
    "if ARCH == \"gfx950\":\n"
    "    def attention_dense_block(spec) -> tuple[int, int, int]:\n"
    "        return (spec.num_waves * 64, 1, 1)\n"
    "else:\n"
    "    def attention_dense_block(spec) -> tuple[int, int, int]:\n"
    "        return (spec.num_waves * 32, 1, 1)\n"
)
GRID942_DEF = ("    return (ceil_div(spec.seqlen_q, spec.block_m), "
               "spec.num_query_heads, spec.batch)\n")
GRID942_ALIASED = ("    return (tiling_mod.ceil_div(spec.seqlen_q, spec.block_m), "
                   "spec.num_query_heads, spec.batch)\n")


CHECK = LaunchSurfaceCheck()


def on_tree(*changes: Change, base: dict[str, bytes] | None = None) -> Scenario:
    """`changes` on the fixture tree (or on `base`)."""
    return Scenario(base=base if base is not None else rocke_tree_files(), head=changes)


def grid_edit() -> e.Edit:
    return e.replace(e.GFX950_DENSE, "    return (hq, nqb, batch)\n",
                     "    return (hq, batch, nqb)\n")


def geometry_edit() -> e.Edit:
    return e.replace(GEOMETRY950, "static_cast<std::uint32_t>(numWaves * 64)",
                     "static_cast<std::uint32_t>(numWaves * 32)")


GHOST_ENTRY = ("  - name: ghost\n"
               f"    python_source: {e.GFX950_DENSE}:no_such_function\n"
               "    cpp_mirror: none\n"
               "    kmd_fields: []\n"
               "    guard: none\n"
               "    test: none\n")

# (case, base edits, head edits, head deletions, expected status by subject; None = no row)
CASES = [
    ("grid body edit", (), (grid_edit(),), (),
     {GRID: "changed", BLOCK: None, SPEC_RULES: None, GRID942: None}),
    ("helper the grid reaches through the re-export", (),
     (e.replace(TILING, "return -(-a // b)", "return (a + b - 1) // b"),), (),
     {GRID: "changed", GRID942: "changed", BLOCK: None, KERNEL_ARGS: None}),
    ("comment-only edit in the grid", (),
     (e.replace(e.GFX950_DENSE, "    hq, batch = spec.num_query_heads, spec.batch\n",
                "    # heads, then batch\n    hq, batch = spec.num_query_heads, spec.batch\n"),),
     (), {GRID: None, POSITIONAL: None, KERNEL_ARGS: None}),
    ("Class.method locator edited", (),
     (e.replace(SPEC, "self.waves_per_eu > 8", "self.waves_per_eu > 16"),), (),
     {SPEC_RULES: "changed", GRID: None}),
    ("function under if/else, one branch edited", (e.replace(e.GFX950_DENSE, BLOCK_DEF,
                                                               BLOCK_UNDER_IF),),
     (e.replace(e.GFX950_DENSE, "        return (spec.num_waves * 32, 1, 1)\n",
                "        return (spec.num_waves * 16, 1, 1)\n"),), (),
     {BLOCK: "changed", GRID: None}),
    ("grid moved into a class as a method (still found)", (),
     (e.replace(e.GFX950_DENSE, "def attention_dense_grid(spec)",
                "class _Launch:\n  def attention_dense_grid(spec)"),), (),
     {GRID: "changed"}),
    ("grid renamed away", (),
     (e.rename_function(e.GFX950_DENSE, "attention_dense_grid", "attention_dense_launch_grid"),),
     (), {GRID: "mismatch", BLOCK: None}),
    ("path-only locator module edited", (),
     (e.replace(e.GFX950_DENSE, "NEG_BIG = -1.0e30", "NEG_BIG = -1.0e20"),), (),
     {POSITIONAL: "changed", GRID: None}),
    ("C++ mirror edited alone", (), (geometry_edit(),), (),
     {GRID: "changed", BLOCK: "changed", POSITIONAL: None}),
    ("both halves edited", (), (grid_edit(), geometry_edit()), (),
     {GRID: "changed", BLOCK: "changed"}),
    ("mirror symbol removed", (),
     (e.replace(GEOMETRY950, "Gfx950AttentionDenseLaunch gfx950AttentionDenseGeometry(",
                "Gfx950AttentionDenseLaunch gfx950AttentionDenseLaunchOf("),), (),
     {GRID: "mismatch", BLOCK: "mismatch"}),
    ("mirror file deleted", (), (), (GEOMETRY950,),
     {GRID: "mismatch", BLOCK: "mismatch", KERNEL_ARGS: None}),
    ("python_source with a `none` mirror edited", (),
     (e.replace(e.GFX950_DENSE, '    sig.scalar("scale", F32)\n    if _has_shape_params',
                '    sig.scalar("scale", F16)\n    if _has_shape_params'),), (),
     {OPTIONAL: "changed", KERNEL_ARGS: None}),
    ("python_source module stops parsing", (),
     (e.replace(e.GFX950_DENSE, "def attention_dense_block(spec)",
                "def attention_dense_block(spec"),), (),
     {GRID: "changed", BLOCK: "changed", POSITIONAL: "changed", SPEC_RULES: None}),
    ("profile entry edited", (),
     (e.replace(P950, f"{e.GFX950_DENSE}:attention_dense_block",
                f"{e.GFX950_DENSE}:attention_dense_grid"),), (),
     {BLOCK: "changed", GRID: None}),
    ("profile entry removed", (),
     (e.replace(P950, "  - name: launch_block\n", "  - name: launch_block_gone\n"),), (),
     {BLOCK: "changed", f"{P950}:launch_block_gone": "changed"}),
    ("profile entry names a function that never existed", (), (e.append(P950, GHOST_ENTRY),),
     (), {f"{P950}:ghost": "mismatch", GRID: None}),
    ("python_source file deleted", (), (), (e.GFX950_DENSE,),
     {GRID: "mismatch", POSITIONAL: "mismatch", SPEC_RULES: None}),
    ("profile stops parsing", (),
     (e.replace(P950, "launch_surface:\n", "launch_surface: [\n"),), (),
     {GRID: "changed", BLOCK: "changed", GRID942: None}),
    ("module alias followed to the helper",
     (e.replace(e.GFX942_DENSE, "from kernels.common import ceil_div\n",
                "from kernels.common import ceil_div\n"
                "import kernels.common.tiling as tiling_mod\n"),
      e.replace(e.GFX942_DENSE, GRID942_DEF, GRID942_ALIASED)),
     (e.replace(TILING, "return -(-a // b)", "return (a + b - 1) // b"),), (),
     {GRID942: "changed"}),
]


@pytest.mark.parametrize(("base_edits", "head_edits", "delete", "expected"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_launch_surface_table(base_edits, head_edits, delete, expected) -> None:
    rows = check_rows(CHECK, on_tree(Change("edit", edits=head_edits, delete=delete),
                                     base=tree_with(rocke_tree_files(), *base_edits)))
    assert all(r.contract == "launch-surface" for r in rows)
    got = by_subject(rows)
    for subject, status in expected.items():
        assert got.get(subject) == status, (subject, got)


def test_no_change_no_rows() -> None:
    assert check_rows(CHECK, on_tree(Change("readme", write={"README.md": "hello\n"}))) == []


def test_sides_evidence_and_details() -> None:
    rows = check_rows(CHECK, on_tree(Change("both", edits=(grid_edit(), geometry_edit()))))
    grid = next(r for r in rows if r.subject == GRID)
    assert grid.details["python_changed"] and grid.details["mirror_changed"]
    assert {(s.file, s.role) for s in grid.sides} == {(e.GFX950_DENSE, "changed"),
                                                      (GEOMETRY950, "changed")}
    assert all(s.line > 0 for s in grid.sides)
    assert {h.file for h in grid.evidence} == {e.GFX950_DENSE, GEOMETRY950}
    assert grid.archs == ("gfx950",)

    alone = check_rows(CHECK, on_tree(Change("mirror", edits=(geometry_edit(),))))
    block = next(r for r in alone if r.subject == BLOCK)
    assert not block.details["python_changed"] and block.details["mirror_changed"]
    assert {s.role for s in block.sides if s.file == e.GFX950_DENSE} == {"counterpart"}


def test_reached_helper_is_a_hop() -> None:
    rows = check_rows(CHECK, on_tree(Change("ceil", edits=(
        e.replace(TILING, "return -(-a // b)", "return (a + b - 1) // b"),))))
    grid = next(r for r in rows if r.subject == GRID)
    assert [h.file for h in grid.evidence if h.file == TILING] == [TILING]


def test_none_mirror_row_names_no_mirror() -> None:
    rows = check_rows(CHECK, on_tree(Change("sig", edits=(e.replace(
        e.GFX950_DENSE, '    sig.scalar("scale", F32)\n    if _has_shape_params',
        '    sig.scalar("scale", F16)\n    if _has_shape_params'),))))
    row = next(r for r in rows if r.subject == OPTIONAL)
    assert row.details["mirror"] is None
    assert [s.file for s in row.sides] == [e.GFX950_DENSE]


def test_docstring_has_the_five_headings() -> None:
    doc = LaunchSurfaceCheck.__doc__ or ""
    for heading in ("What it checks:", "Why a break hurts at run time:", "Example:",
                    "When it says changed instead:", "Evidence:"):
        assert heading in doc
    assert LaunchSurfaceCheck.name == "launch-surface"


def test_a_break_the_base_had_names_no_changed_copy() -> None:
    from impact.checks import charged

    base = tree_with(rocke_tree_files(), e.append(P950, GHOST_ENTRY))
    for edits in ((e.replace(P950, "engine:", "engine:  ")), grid_edit()):
        rows = check_rows(CHECK, on_tree(Change("touch", edits=(edits,)), base=base))
        ghost = next(r for r in rows if r.subject == f"{P950}:ghost")
        assert ghost.status == "mismatch"
        assert {s.role for s in ghost.sides} == {"counterpart"}
        assert charged(ghost).preexisting is True


def test_a_break_names_as_changed_only_the_half_that_went_missing() -> None:
    """The host function renamed away while its mirror is reworded: the row is the
    Python half's break, so that half is the changed copy and the mirror, which this
    break does not read, is a counterpart (the mirror's edit has its own file row)."""
    from impact.checks import charged

    rows = check_rows(CHECK, on_tree(Change("rename and reword", edits=(
        e.rename_function(e.GFX950_DENSE, "attention_dense_grid", "attention_dense_launch_grid"),
        geometry_edit()))))
    grid = next(r for r in rows if r.subject == GRID)
    assert (grid.status, grid.reason) == ("mismatch", "python-source-function-missing")
    roles = {s.file: s.role for s in grid.sides}
    assert roles == {e.GFX950_DENSE: "changed", GEOMETRY950: "counterpart"}
    assert charged(grid).preexisting is False


def test_an_edited_entry_makes_the_break_it_names_the_changes() -> None:
    """A profile entry edited to name a function the module lacks: the entry changed,
    and so did the Python half as the entry names it (found at the base, missing now)."""
    from impact.checks import charged

    rows = check_rows(CHECK, on_tree(Change("rename in the profile", edits=(
        e.replace(P950, f"{e.GFX950_DENSE}:attention_dense_grid",
                  f"{e.GFX950_DENSE}:attention_dense_launch_grid"),))))
    grid = next(r for r in rows if r.subject == GRID)
    assert grid.status == "mismatch"
    roles = {s.file: s.role for s in grid.sides}
    assert roles[P950] == roles[e.GFX950_DENSE] == "changed"
    assert roles[GEOMETRY950] == "counterpart"
    assert charged(grid).preexisting is False


_DEFINED = "inline Gfx950AttentionDenseLaunch gfx950AttentionDenseGeometry(std::int64_t blockM,"
_RENAMED = "inline Gfx950AttentionDenseLaunch geometryImpl(std::int64_t blockM,"
_END = "} // namespace hip_kernel_provider::ingestor"
MIRROR_SPELLINGS = {
    # the definition renamed, the profile's name kept by each spelling C++ allows
    "a prototype in the header": "Gfx950AttentionDenseLaunch gfx950AttentionDenseGeometry("
                                 "std::int64_t blockM, std::int64_t seqlenQ, "
                                 "std::int64_t headsQ, std::int64_t batch);\n",
    "a using alias": "using gfx950AttentionDenseGeometry = Gfx950AttentionDenseLaunch;\n",
    "a function pointer": "constexpr auto gfx950AttentionDenseGeometry = &geometryImpl;\n",
    "a template": "template <typename T>\ninline T gfx950AttentionDenseGeometry(T blockM) "
                  "{ return blockM; }\n",
    "a class": "struct gfx950AttentionDenseGeometry { int order; };\n",
}


@pytest.mark.parametrize("spelling", list(MIRROR_SPELLINGS))
def test_a_mirror_under_another_spelling_is_found(spelling: str) -> None:
    """The mirror the profile names exists, spelled another way: the row says the mirror
    changed (a device run settles it), never that its symbol is missing."""
    rows = check_rows(CHECK, on_tree(Change("spelled", edits=(
        e.replace(GEOMETRY950, _DEFINED, _RENAMED),
        e.replace(GEOMETRY950, _END, MIRROR_SPELLINGS[spelling] + _END)))))
    grid = next(r for r in rows if r.subject == GRID)
    assert grid.status == "changed" and "mirror-symbol-missing" not in grid.details["reasons"]


@pytest.mark.parametrize("named", ["::hip_kernel_provider::ingestor::gfx950AttentionDenseGeometry",
                                   "ingestor::gfx950AttentionDenseGeometry<int>"])
def test_a_profile_naming_the_mirror_qualified_finds_it(named: str) -> None:
    profile = f"{CONFIGS}/gfx950_attention_dense.profile.yaml"
    rows = check_rows(CHECK, on_tree(Change("qualified", edits=(e.replace(
        profile, "Gfx950AttentionDenseGeometry.hpp:gfx950AttentionDenseGeometry\n    kmd_fields: "
        "[block_m]\n    guard: none\n    test: dnn-providers/hip-kernel-provider/src/tests/"
        "engines/kernel_ingestor_engine/packs/TestGfx950AttentionDenseGeometry.cpp\n  - name: "
        "launch_block", f"Gfx950AttentionDenseGeometry.hpp:{named}\n    kmd_fields: "
        "[block_m]\n    guard: none\n    test: dnn-providers/hip-kernel-provider/src/tests/"
        "engines/kernel_ingestor_engine/packs/TestGfx950AttentionDenseGeometry.cpp\n  - name: "
        "launch_block"),))))
    grid = next(r for r in rows if r.subject == GRID)
    assert "mirror-symbol-missing" not in grid.details["reasons"]


def test_a_mirror_gone_in_every_spelling_is_still_missing() -> None:
    rows = check_rows(CHECK, on_tree(Change("gone", edits=(
        e.replace(GEOMETRY950, _DEFINED, _RENAMED),))))
    grid = next(r for r in rows if r.subject == GRID)
    assert grid.status == "mismatch" and grid.reason == "mirror-symbol-missing"
