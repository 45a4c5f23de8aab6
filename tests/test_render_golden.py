"""One sample row set, failure rows included, through every renderer, compared exactly.

The rows are what checks yield (reasons and steps as enumerations, values in details);
every sentence comes from impact/render/words/. When a wording changes on purpose,
regenerate the golden files with `IMPACT_REGOLD=1 pytest tests/test_render_golden.py`
and read the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from impact.document import device_runs
from impact.reasons import Reason, Step
from impact.render import RENDERERS
from impact.render.text import render_text
from impact.rollup import pack_time, rollup
from impact.rows import Hop, Lane, Role, Row, Side, Status

GOLDEN = Path(__file__).parent / "golden"
EVERY = "all-ingestor-archs"

ROWS = [
    Row("kernargs", "head", "packs/Gfx950Native.cpp:kArgs", Status.MISMATCH,
        Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY, archs=("gfx950",),
        sides=(Side("kernels/dense.py", 12, "head", Role.CHANGED, "build_dense"),
               Side("packs/Gfx950Native.cpp", 40, "head", Role.COUNTERPART, "kArgs")),
        evidence=(Hop.of("kernels/dense.py", 30, Step.BUILDER_PARAM_ADDED, param="seed"),
                  Hop.of("packs/Gfx950Native.cpp", 40, Step.LIST_HAS_ENTRIES, count=8)),
        details={"names": ["seed"]}),
    # The same problem seen again in the merged view: one finding naming both views.
    Row("kernargs", "merged", "packs/Gfx950Native.cpp:kArgs", Status.MISMATCH,
        Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY, archs=("gfx942", "gfx950"),
        sides=(Side("kernels/dense.py", 12, "merged", Role.CHANGED, "build_dense"),
               Side("packs/Gfx950Native.cpp", 40, "merged", Role.COUNTERPART, "kArgs")),
        details={"names": ["seed"]}),
    Row("kernargs", "head", "aot/family.json:dense.v1", Status.MISMATCH,
        Reason.ARGS_SIGNATURE_COUNT_DIFFERS, archs=("gfx950",),
        sides=(Side("kernels/dense.py", 12, "head", Role.CHANGED, "build_dense"),
               Side("aot/family.json", 6, "head", Role.COUNTERPART)),
        details={"count": 8, "counts": [9, 10, 11, 12, 13, 14, 15]}),
    Row("surface", "head", "kernels/body.py", Status.CHANGED, Reason.CONTENT_CHANGED,
        archs=("gfx942",), sides=(Side("kernels/body.py", 0, "base", Role.CHANGED),
                                  Side("kernels/body.py", 0, "head", Role.CHANGED))),
    Row("surface", "head", "kernels/broken.py", Status.CHANGED, Reason.FILE_NOT_UNDERSTOOD,
        archs=(EVERY,), sides=(Side("kernels/broken.py", 3, "head", Role.CHANGED),),
        details={"failure": "cannot parse: ParserSyntaxError"}),
    Row("surface", "head", "kernels/notes.py", Status.INERT, Reason.ONLY_LAYOUT_CHANGED,
        archs=("gfx950",), sides=(Side("kernels/notes.py", 0, "head", Role.CHANGED),)),
    Row("launch-surface", "head", "profiles/dense.yaml:grid", Status.CHANGED,
        Reason.CONTENT_CHANGED, archs=("gfx950",), device_test="test_dense_grid",
        sides=(Side("kernels/grid.py", 5, "head", Role.CHANGED, "grid"),)),
    Row("build", "head", "CMakeLists.txt", Status.CHANGED, Reason.CONTENT_CHANGED,
        lane=Lane.BUILD, archs=(EVERY,), sides=(Side("CMakeLists.txt", 0, "head", Role.CHANGED),)),
    Row("kernargs", "merged", "packs/Old.cpp:kArgs", Status.MISMATCH, Reason.ARGUMENT_ORDER_DIFFERS,
        archs=("gfx942",), preexisting=True,
        sides=(Side("kernels/old.py", 7, "merged", Role.COUNTERPART, "build_old"),
               Side("packs/Old.cpp", 9, "merged", Role.COUNTERPART, "kArgs"))),
]


def sample_report() -> dict:
    rows = sorted(ROWS, key=Row.sort_key)
    return {
        "schema_version": "0.3", "tool": {"name": "impact", "version": "0"},
        "repository": "/r", "input": {"form": "commit", "arguments": {"commit": "HEAD"}},
        "revisions": {"base": {"spelled": "HEAD^", "sha": "1" * 40},
                      "head": {"spelled": "HEAD", "sha": "2" * 40}},
        "merge_bases": {},
        "surface_map": {"name": "hipdnn", "source": "builtin:hipdnn", "sha256": "0" * 64,
                        "reason": "the tree holds projects/hipdnn/CMakeLists.txt"},
        "views": [], "rows": [r.to_json() for r in rows],
        "verdict": rollup(rows, EVERY).to_json(),
        "device_runs": device_runs(rows),
        "pack_time": pack_time([{"family": "f@gfx950", "kind": "sign", "field": "seq",
                                 "value": 0, "detail": "a predicate accepts 0",
                                 "status": "new"}]).to_json(),
        "emit": None,
        "coverage": {"contracts_checked": ["kernargs", "surface"], "skipped": [],
                     "parse_failures": ["kernels/broken.py"], "archs": {}},
    }


@pytest.mark.parametrize("fmt", sorted(RENDERERS))
def test_renderer_output_is_exact(fmt: str) -> None:
    out = RENDERERS[fmt](sample_report())
    golden = GOLDEN / f"report.{fmt}"
    if os.environ.get("IMPACT_REGOLD"):
        golden.write_text(out)
    assert out == golden.read_text()


def test_verbose_text_is_exact() -> None:
    """The answer first, then the revisions, rows, sides and evidence chains."""
    out = render_text(sample_report(), verbose=True)
    golden = GOLDEN / "report.verbose.text"
    if os.environ.get("IMPACT_REGOLD"):
        golden.write_text(out)
    assert out == golden.read_text()
    assert out.startswith(render_text(sample_report()).split("\n(--verbose")[0])


def test_inert_tally_tells_layout_from_rules() -> None:
    """A row a rule settled (a removed unit nothing built) or one whose file other rows
    judge is not counted as layout only, and --verbose names its reason."""
    settled = Row("surface", "head", "csrc/unused.cu", Status.INERT,
                  Reason.UNBUILT_UNIT_REMOVED, archs=("gfx950",),
                  sides=(Side("csrc/unused.cu", 0, "base", Role.CHANGED),))
    judged = Row("surface", "head", "ops/stub.py", Status.INERT,
                 Reason.STATED_CHANGED_JUDGED_ELSEWHERE, archs=("gfx950",),
                 details={"judged_by": "bindings"},
                 sides=(Side("ops/stub.py", 0, "head", Role.CHANGED),))
    report = sample_report()
    rows = sorted([*ROWS, settled, judged], key=Row.sort_key)
    report["rows"] = [r.to_json() for r in rows]
    report["verdict"] = rollup(rows, EVERY).to_json()
    text = render_text(report)
    assert ("3 with no runtime effect (1 comments, docstrings or layout only; 1 whose "
            "changes the rows above judge; 1 settled by a rule, --verbose says which)") in text
    assert "inert: csrc/unused.cu: translation unit removed" in render_text(report, verbose=True)
    assert "1 with no runtime effect (comments, docstrings or layout only)" in render_text(
        sample_report())


def test_the_text_report_fits_a_terminal_and_counts_what_it_leaves_out() -> None:
    """Findings wrap at 160 characters between words (a path is never cut), the first 30
    are listed and the rest counted; --verbose lists every one."""
    long_path = "very/deep/" * 8 + "kernels/dense.py"
    many = [Row("surface", "head", f"{long_path}.{n}", Status.CHANGED, Reason.CONTENT_CHANGED,
                archs=("gfx950",), sides=(Side(f"{long_path}.{n}", n + 1, "head",
                                               Role.CHANGED),)) for n in range(35)]
    report = sample_report()
    rows = sorted([*ROWS, *many], key=Row.sort_key)
    report["rows"] = [r.to_json() for r in rows]
    report["verdict"] = rollup(rows, EVERY).to_json()
    text = render_text(report)
    assert all(len(line) <= 160 for line in text.splitlines())
    shown = sum(1 for line in text.splitlines() if line.startswith(("changed ", "mismatch ")))
    total = sum(1 for r in rows if r.status in (Status.MISMATCH, Status.CHANGED)
                and not r.preexisting and r.lane == Lane.IMPACT and r.view == "head")
    assert shown == 30
    assert f"{total - 30} more findings — --verbose lists every one" in text
    verbose = render_text(report, verbose=True)
    assert "more findings" not in verbose
    # Whole paths (not cut by the wrap) stay on one line.
    assert sum(1 for line in text.splitlines() if f"{long_path}." in line) >= 1
