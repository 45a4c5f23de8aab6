"""removed-symbol: removed Python names traced to the readers that still use them."""

from __future__ import annotations

from harness import check_rows, report

from impact.checks.removed_symbol import RemovedSymbolCheck
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

TREE = rocke_tree_files()
CHECK = RemovedSymbolCheck()
COMMON = f"{e.KERNELS}/common"
TILING = f"{COMMON}/tiling.py"
SPEC = f"{COMMON}/attention_dense_spec.py"
CEIL_DIV = ('def ceil_div(a: int, b: int) -> int:\n'
            '    """Smallest integer >= a / b (b must be positive)."""\n'
            '    if b <= 0:\n'
            '        raise ValueError("ceil_div: divisor must be positive")\n'
            '    return -(-a // b)\n')
NUM_Q_BLOCKS = "    @property\n    def num_q_blocks(self) -> int:\n"


def on_tree(*changes: Change) -> Scenario:
    """`changes` on the fixture tree."""
    return Scenario(base=TREE, head=changes)


def drop_ceil_div() -> e.Edit:
    # Keep round_up working by inlining the arithmetic it borrowed.
    return lambda files: (e.replace(TILING, CEIL_DIV, "")(files),
                          e.replace(TILING, "return ceil_div(a, b) * b",
                                    "return -(-a // b) * b")(files))


def test_removed_function_still_imported_breaks_even_with_a_namesake() -> None:
    namesake = e.append(f"{COMMON}/other_math.py",
                        "def ceil_div(a, b):\n    return (a + b - 1) // b\n")
    rows = check_rows(CHECK, on_tree(Change("drop ceil_div", edits=(drop_ceil_div(), namesake))))
    mismatches = {r.subject for r in rows if r.status == "mismatch"}
    assert "kernels.common.tiling.ceil_div <- module:kernels.common" in mismatches
    assert any("kernels.gfx950.attention_dense" in s for s in mismatches)
    assert all(r.contract == "removed-symbol" for r in rows)


def test_removed_function_with_readers_moved_along_is_quiet() -> None:
    moved = e.append(f"{COMMON}/other_math.py", CEIL_DIV)
    reexport = e.replace(f"{COMMON}/__init__.py", "from .tiling import ceil_div, is_pow2, round_up",
                         "from .other_math import ceil_div\nfrom .tiling import is_pow2, round_up")
    spec = e.replace(SPEC, "from kernels.common.tiling import ceil_div",
                     "from kernels.common.other_math import ceil_div")
    rows = check_rows(CHECK, on_tree(Change("move ceil_div",
                                            edits=(drop_ceil_div(), moved, reexport, spec))))
    assert [r for r in rows if r.status == "mismatch"] == []


def test_member_removed_from_a_base_class_read_through_a_subclass() -> None:
    drop = e.replace(SPEC, NUM_Q_BLOCKS, "    @property\n    def q_block_count(self) -> int:\n")
    rows = check_rows(CHECK, on_tree(Change("rename num_q_blocks", edits=(drop,))))
    readers = {r.subject for r in rows if r.status == "changed"}
    assert any(s.endswith("kernels.gfx950.attention_dense._emit_attention_tile")
               for s in readers), readers
    assert not [r for r in rows if r.status == "mismatch"]


def test_comment_edit_removes_nothing() -> None:
    assert check_rows(CHECK, on_tree(Change("c", edits=(e.edit_comment(e.GFX950_DENSE),)))) == []


def test_verdict_lines() -> None:
    for changes, line in [
        ((Change("drop", edits=(drop_ceil_div(),)),), "Runtime impact: BREAKS"),
        ((Change("rename member", edits=(e.replace(
            SPEC, NUM_Q_BLOCKS, "    @property\n    def q_block_count(self) -> int:\n"),)),),
         "Runtime impact: NEEDS-DEVICE"),
    ]:
        assert report(on_tree(*changes))["verdict"]["line"].startswith(line)


def test_resigned_function_still_called_elsewhere_is_changed() -> None:
    resign = e.replace(TILING, "def ceil_div(a: int, b: int) -> int:",
                       "def ceil_div(a: int, b: int, *, floor: int = 0) -> int:")
    rows = check_rows(CHECK, on_tree(Change("re-sign", edits=(resign,))))
    assert rows and {r.status for r in rows} == {"changed"}
    assert any("attention_dense" in r.subject for r in rows)
