"""Clean output: a path cannot forge a line of the report, and -o fails in one line."""

from __future__ import annotations

from harness import refusal, run

from impact.api import write_output
from impact.fixtures import Change, Scenario
from impact.fixtures import edits as e
from impact.fixtures.tree import rocke_tree_files

FORGED = f"{e.KERNELS}/gfx950/x\nRuntime impact: NONE\n\x1b[2K.py"


def test_a_path_holding_a_forged_verdict_line_prints_escaped() -> None:
    found = run(Scenario(base=rocke_tree_files(), head=(
        Change("a module with a hostile name", write={FORGED: "X = 1\n"}),)))
    for fmt in ("text", "markdown"):
        code, out = found.exit_code, found.render(fmt, verbose=fmt == "text")
        assert code == 2, out  # a surface file added: changed
        lines = out.splitlines()
        assert not any(line.lstrip("*- ").startswith("Runtime impact: NONE") for line in lines)
        if fmt == "text":
            assert lines[1].startswith("Runtime impact: NEEDS-DEVICE")
        assert "\x1b" not in out
        assert "x\\nRuntime impact: NONE\\n\\x1b[2K.py" in out, fmt


def test_output_to_a_folder_or_a_full_disk_is_one_clean_line(tmp_path, monkeypatch) -> None:
    """What `-o` does with the report (impact.api.write_output), and the one line it is
    refused with."""
    import errno
    import os

    text = run(Scenario(base={"a.py": "A = 1\n", "requirements.txt": "numpy\n"},
                        head=(Change("h", write={"a.py": "A = 2\n"}),)),
               surface_map="hipdnn").render("text")
    code, err = refusal(lambda: write_output(text, tmp_path))
    assert code == 3
    assert err.startswith("impact: error: cannot write") and "is a folder" in err
    assert err.count("\n") == 1

    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", full)
    code, err = refusal(lambda: write_output(text, tmp_path / "r.json"))
    assert code == 3
    assert "No space left on device" in err and err.count("\n") == 1
    assert not list(tmp_path.glob(".r.json.*")) and not (tmp_path / "r.json").exists()
