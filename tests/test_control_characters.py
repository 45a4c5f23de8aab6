"""A path cannot forge a line of the report: control characters print as escapes."""

from __future__ import annotations

from impact.cli import main
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

FORGED = f"{e.KERNELS}/gfx950/x\nRuntime impact: NONE\n\x1b[2K.py"


def test_a_path_holding_a_forged_verdict_line_prints_escaped(build, capsys) -> None:
    repo = build(Scenario(base=rocke_tree_files(), head=(
        Change("a module with a hostile name", write={FORGED: "X = 1\n"}),)))
    for fmt in ("text", "markdown"):
        code = main(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                     "--format", fmt, "--verbose"] if fmt == "text" else
                    ["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                     "--format", fmt])
        out = capsys.readouterr().out
        assert code == 2, out  # a surface file added: changed
        lines = out.splitlines()
        assert not any(line.lstrip("*- ").startswith("Runtime impact: NONE") for line in lines)
        if fmt == "text":
            assert lines[1].startswith("Runtime impact: NEEDS-DEVICE")
        assert "\x1b" not in out
        assert "x\\nRuntime impact: NONE\\n\\x1b[2K.py" in out, fmt
