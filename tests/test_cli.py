"""The command line: output formats, exit codes and one-line errors, the options' refusals,
`impact explain`, and that it prints what the library entry gives (the report, the facts,
the command the GitHub Action logs). Other tests reach reports through tests/harness.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import add_orphan_branch
from test_surface import MINIMAL

from impact import api, checks
from impact.cli import main
from impact.contracts import REPORT_SCHEMA, validate
from impact.errors import (
    EXIT_BAD_INPUT,
    EXIT_BREAKS,
    EXIT_INTERNAL,
    EXIT_NEEDS_DEVICE,
    EXIT_NONE,
)
from impact.fixtures import Change, Scenario
from impact.fixtures.edits import GFX950_DENSE_PACK
from impact.render.json_format import with_words
from impact.session import Session

SCENARIO = Scenario(
    # requirements.txt: the hipdnn map must classify some path, or the report refuses it.
    base={"a.py": "A = 1\n", "b.py": "B = 1\n", "requirements.txt": "numpy\n"},
    head=(Change("h", write={"a.py": "A = 2\n"}, rename={"b.py": "c.py"}),),
    target=(Change("t", write={"a.py": "A = 3\n"}),),
)


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    # These toy trees carry no surface-map markers: name the map, as a user of one would.
    if argv[0] == "report" and "--surface-map" not in argv:
        argv = [*argv, "--surface-map", "hipdnn"]
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_text_report_leads_with_the_answer(build, capsys) -> None:
    repo = build(SCENARIO)
    code, out, err = run(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                          "--target-tip", "target"], capsys)
    assert code == EXIT_NONE, err
    assert out.splitlines()[:2] == ["Pack-time: NOT RUN (no emit file; run with --run-emit)",
                                    "Runtime impact: N/A"]
    assert repo.head not in out and "M a.py" not in out  # those are for --verbose


def test_verbose_text_report_names_revisions_and_paths(build, capsys) -> None:
    repo = build(SCENARIO)
    code, out, err = run(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                          "--target-tip", "target", "--verbose"], capsys)
    assert code == EXIT_NONE, err
    assert repo.head in out and repo.target in out and repo.base in out
    assert "M a.py" in out and "R b.py -> c.py" in out
    assert "[conflicted]" in out


def test_json_report_fits_its_schema_and_is_deterministic(build, capsys) -> None:
    repo = build(SCENARIO)
    argv = ["report", "--repo", str(repo.path), "--range", "base..head", "--target-tip",
            "target", "--format", "json"]
    code, first, _ = run(argv, capsys)
    assert code == EXIT_NONE
    _, second, _ = run(argv, capsys)
    assert first == second
    doc = json.loads(first)
    validate(doc, REPORT_SCHEMA)
    assert doc["revisions"]["head"]["sha"] == repo.head
    merged = doc["views"][1]
    assert merged["name"] == "merged" and merged["conflicts"] == ["a.py"]
    head = doc["views"][0]
    assert len(head["diff_sha256"]) == 64 and head["diff_sha256"] != merged["diff_sha256"]


def test_output_file_is_written_whole(build, capsys, tmp_path: Path) -> None:
    repo = build(SCENARIO)
    out = tmp_path / "r.json"
    code, stdout, _ = run(["report", "--repo", str(repo.path), "--commit", "head",
                           "--format", "json", "-o", str(out)], capsys)
    assert code == EXIT_NONE and stdout == ""
    validate(json.loads(out.read_text()), REPORT_SCHEMA)
    leftovers = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("repo"))
    assert leftovers == ["r.json"]


def _one_line_error(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("impact: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(("argv", "needles"), [
    (["--base", "base", "--head", "nope"], ["unknown revision 'nope'"]),
    (["--base", "base"], ["--base and --head go together"]),
    (["--range", "base"], ["no '..'"]),
    (["--commit", "head", "--worktree"], ["exactly one input form"]),
    ([], ["exactly one input form"]),
    (["--base", "base", "--head", "head", "--target-tip", "gone"], ["unknown revision 'gone'"]),
])
def test_bad_input_is_one_line_and_exit_3(build, capsys, argv, needles) -> None:
    repo = build(SCENARIO)
    code, out, err = run(["report", "--repo", str(repo.path), *argv], capsys)
    assert code == EXIT_BAD_INPUT and out == ""
    _one_line_error(err, *needles)


def test_not_a_repository_exit_3(tmp_path: Path, capsys) -> None:
    code, _, err = run(["report", "--repo", str(tmp_path), "--commit", "HEAD"], capsys)
    assert code == EXIT_BAD_INPUT
    _one_line_error(err, "is not a git repository")


def test_a_subfolder_of_the_repository_finds_it_as_git_does(build, capsys) -> None:
    repo = build(SCENARIO)
    top = run(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
               "--format", "json", "--no-cache"], capsys)
    inner = Path(repo.path) / "sub" / "dir"
    inner.mkdir(parents=True)
    sub = run(["report", "--repo", str(inner), "--base", "base", "--head", "head",
               "--format", "json", "--no-cache"], capsys)
    assert top[0] == sub[0] and top[0] != EXIT_BAD_INPUT, sub
    assert json.loads(top[1])["rows"] == json.loads(sub[1])["rows"]


def test_no_merge_base_exit_3(build, capsys) -> None:
    repo = build(SCENARIO)
    add_orphan_branch(repo, build(Scenario(base={"z": "z\n"})))
    code, _, err = run(["report", "--repo", str(repo.path), "--base", "orphan", "--head",
                        "head"], capsys)
    assert code == EXIT_BAD_INPUT
    _one_line_error(err, "share no history")


def test_shallow_clone_exit_3(build, capsys) -> None:
    repo = build(Scenario(base={"a": "1\n"}, head=(Change("h", write={"a": "2\n"}),),
                          target=(Change("t", write={"b": "1\n"}),)))
    Path(repo.path, ".git", "shallow").write_text(repo.head_commits[0] + "\n")
    code, _, err = run(["report", "--repo", str(repo.path), "--base", "target", "--head",
                        "head"], capsys)
    assert code == EXIT_BAD_INPUT
    _one_line_error(err, "shallow", "--unshallow")


def test_usage_error_is_exit_3(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["report", "--format", "yaml"])
    assert exc.value.code == EXIT_BAD_INPUT
    _one_line_error(capsys.readouterr().err, "--format")


def test_output_folder_missing_writes_nothing(build, capsys, tmp_path: Path) -> None:
    repo = build(SCENARIO)
    code, _, err = run(["report", "--repo", str(repo.path), "--commit", "head", "-o",
                        str(tmp_path / "no" / "r.json")], capsys)
    assert code == EXIT_BAD_INPUT
    _one_line_error(err, "folder does not exist")
    assert not (tmp_path / "no").exists()


def test_internal_error_is_exit_4_without_traceback(build, capsys, monkeypatch) -> None:
    repo = build(SCENARIO)

    def boom(*_args, **_kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr("impact.document.build_report", boom)
    code, _, err = run(["report", "--repo", str(repo.path), "--commit", "head"], capsys)
    assert code == EXIT_INTERNAL
    assert "kaboom" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    with pytest.raises(RuntimeError):
        main(["report", "--repo", str(repo.path), "--commit", "head", "--debug",
              "--surface-map", "hipdnn"])


def test_console_script_runs_as_a_module(build) -> None:
    repo = build(SCENARIO)
    proc = subprocess.run([sys.executable, "-m", "impact", "report", "--repo", str(repo.path),
                           "--commit", "nope"], capture_output=True, text=True, check=False)
    assert proc.returncode == EXIT_BAD_INPUT
    _one_line_error(proc.stderr, "unknown revision 'nope'")


def test_tree_that_fits_no_surface_map_is_a_clear_error(build, capsys) -> None:
    repo = build(SCENARIO)
    code = main(["report", "--repo", str(repo.path), "--commit", "head"])
    out, err = capsys.readouterr()
    assert code == EXIT_BAD_INPUT and out == ""
    _one_line_error(err, "no built-in surface map fits this tree", "--surface-map")


def test_the_report_says_which_map_it_picked_and_why(build, capsys) -> None:
    from impact.fixtures.tree import rocke_tree_files

    repo = build(Scenario(base=rocke_tree_files()))
    main(["report", "--repo", str(repo.path), "--commit", "base", "--format", "json"])
    surface = json.loads(capsys.readouterr().out)["surface_map"]
    assert surface["name"] == "hipdnn" and surface["reason"].startswith("the tree holds ")


def test_cli_surface_map_option(build, capsys, tmp_path: Path) -> None:
    repo = build(Scenario(base={"src/a.py": "A = 1\n"},
                          head=(Change("h", write={"src/a.py": "A = 2\n", "doc.md": "d\n"}),)))
    own = tmp_path / "own.toml"
    own.write_bytes(MINIMAL)
    argv = ["report", "--repo", str(repo.path), "--commit", "head", "--format", "json"]
    # src/a.py is on this map's surface and its content changed: a device run must settle it.
    assert main([*argv, "--surface-map", str(own)]) == EXIT_NEEDS_DEVICE
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"]["line"] == "Runtime impact: NEEDS-DEVICE all-archs"
    assert doc["surface_map"]["name"] == "mine"
    assert doc["views"][0]["surfaces"] == [
        {"path": "doc.md", "kind": "outside", "lane": "NONE"},
        {"path": "src/a.py", "kind": "kernels", "lane": "IMPACT"},
    ]
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"name = 1\n")
    assert main([*argv, "--surface-map", str(bad)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is malformed" in err[0]
    assert main([*argv, "--surface-map", "no-such-map"]) == EXIT_BAD_INPUT
    assert "neither a built-in map nor a file" in capsys.readouterr().err


# ------------------------------------------------------------ version, quiet, progress


def test_version_prints_the_tool_version_and_exits_0(capsys) -> None:
    from impact.version import tool_version

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"impact {tool_version()}\n"
    proc = subprocess.run([sys.executable, "-m", "impact", "--version"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stdout == f"impact {tool_version()}\n"



def _breaking(build):
    from impact.fixtures.edits import GFX950_DENSE, add_builder_param
    from impact.fixtures.tree import rocke_tree_files

    return build(Scenario(base=rocke_tree_files(), head=(
        Change("add a kernel argument",
               edits=(add_builder_param(GFX950_DENSE, "dropout_seed", "I32"),)),)))


def test_fail_on_gates_the_exit_code(build, capsys) -> None:
    """--fail-on: a verdict the gate passes exits 0, one it fails keeps its own code, an
    error is never passed (NEEDS-DEVICE from the aiter stub edit, BREAKS from the demo's)."""
    breaking = _breaking(build)
    device = _aiter_repo(build)
    cases = [(breaking, "hipdnn", "breaks", EXIT_BREAKS), (breaking, "hipdnn", "never", 0),
             (device, "aiter", "breaks", 0), (device, "aiter", "needs-device", 2),
             (device, "aiter", None, 2)]
    for repo, name, gate, expected in cases:
        argv = ["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                "--surface-map", name, "-q", *(["--fail-on", gate] if gate else [])]
        assert main(argv) == expected, (name, gate)
        capsys.readouterr()
    assert main(["report", "--repo", str(device.path), "--base", "base", "--head", "gone",
                 "--fail-on", "never"]) == EXIT_BAD_INPUT


def test_quiet_prints_the_verdict_line_alone_exit_code_unchanged(build, capsys,
                                                                  tmp_path: Path) -> None:
    repo = _breaking(build)
    argv = ["report", "--repo", str(repo.path), "--base", "base", "--head", "head"]
    assert main(argv) == EXIT_BREAKS
    loud = capsys.readouterr().out
    assert main([*argv, "--quiet"]) == EXIT_BREAKS
    assert capsys.readouterr().out == "Runtime impact: BREAKS\n"
    # With -o the whole report still goes to the file; stdout has the verdict alone.
    target = tmp_path / "r.txt"
    assert main([*argv, "-q", "-o", str(target)]) == EXIT_BREAKS
    assert capsys.readouterr().out == "Runtime impact: BREAKS\n"
    assert target.read_text() == loud
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--quiet", "--verbose"])
    assert exc.value.code == EXIT_BAD_INPUT
    _one_line_error(capsys.readouterr().err, "not allowed with")


def test_quiet_keeps_each_formats_sense(build, capsys) -> None:
    """-q with json or sarif prints the whole document (a part is no document); with
    github, the verdict annotation alone; with concise, the verdict line."""
    repo = _breaking(build)
    argv = ["report", "--repo", str(repo.path), "--base", "base", "--head", "head"]
    assert main([*argv, "--format", "json"]) == EXIT_BREAKS
    whole = capsys.readouterr().out
    assert main([*argv, "--format", "json", "-q"]) == EXIT_BREAKS
    quiet = capsys.readouterr().out
    assert json.loads(quiet)["verdict"]["kind"] == "BREAKS" and quiet == whole
    assert main([*argv, "--format", "github", "-q"]) == EXIT_BREAKS
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith("::error title=impact::Runtime impact: BREAKS")
    assert main([*argv, "--format", "concise", "-q"]) == EXIT_BREAKS
    assert capsys.readouterr().out == "Runtime impact: BREAKS\n"


def test_concise_is_one_parseable_line_per_finding(build, capsys) -> None:
    """`path:line:col: CONTRACT-REASON status: message`, the shape ruff and mypy print,
    each on the line the change changed; the verdict last."""
    repo = _breaking(build)
    argv = ["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
            "--format", "concise"]
    assert main(argv) == EXIT_BREAKS
    *found, verdict = capsys.readouterr().out.splitlines()
    assert verdict == "Runtime impact: BREAKS"
    shape = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):1: (?P<code>[a-z-]+) "
                       r"(?P<status>mismatch|changed): (?P<message>.+)$")
    parsed = [shape.match(line) for line in found if not line.startswith("Pack-time: ")]
    assert parsed and all(parsed), found
    mismatch = [m for m in parsed if m["status"] == "mismatch"]
    assert mismatch and all(m["code"].startswith("kernargs-") for m in mismatch)
    assert any("dropout_seed" in m["message"] and "build_attention_dense" in m["message"]
               for m in mismatch)


# ------------------------------------------------------------ explain


def test_explain_prints_the_docstring(capsys) -> None:
    assert main(["explain", "surface"]) == 0
    assert "What it checks:" in capsys.readouterr().out
    assert main(["explain", "nonsense"]) == 3
    assert "no contract named" in capsys.readouterr().err


def test_explain_with_no_name_lists_every_contract(capsys) -> None:
    assert main(["explain"]) == 0
    out = capsys.readouterr().out.splitlines()
    listed = [line.split()[0] for line in out[1:]]
    assert listed == sorted(c.name for c in checks.REGISTRY)
    assert all(len(line) <= 160 for line in out)
    assert any(line.split()[0] == "bindings" and "op" in line for line in out[1:])


@pytest.mark.parametrize(("argv", "suggested"), [
    (["reprot"], "did you mean 'report'?"),
    (["report", "--comit", "HEAD"], "did you mean '--commit'?"),
    (["emit", "--untrusted-haed"], "did you mean '--untrusted-head'?"),
    (["explain", "kernarg"], "did you mean 'kernargs'?"),
])
def test_a_typo_gets_did_you_mean(capsys, argv, suggested) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's usage errors exit from the parser
        code = exc.code
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT
    assert suggested in err and len(err.strip().splitlines()) == 1


def test_a_flag_like_no_other_gets_no_suggestion(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["report", "--zzzz"])
    assert "did you mean" not in capsys.readouterr().err


# ------------------------------------------------------------ what the library entry gives


def test_report_is_the_document_the_command_line_prints(build, capsys, tmp_path) -> None:
    repo = _breaking(build).path
    found = api.report(repo, base="base", head="head", session=Session(tmp_path / "lib"))
    argv = ["report", "--repo", str(repo), "--base", "base", "--head", "head",
            "--cache-dir", str(tmp_path / "cli")]
    for fmt in api.FORMATS:
        assert main([*argv, "--format", fmt]) == found.exit_code == EXIT_BREAKS
        assert capsys.readouterr().out == found.render(fmt), fmt
    # The JSON is the document with its sentences (what the report schema describes).
    assert json.loads(found.render("json")) == json.loads(json.dumps(with_words(found.document)))
    assert found.verdict == found.document["verdict"] and found.verdict["kind"] == "BREAKS"
    assert found.rows == found.document["rows"] and found.rows
    assert found.verdict_line() == "Runtime impact: BREAKS"
    verbose = found.render("text", verbose=True)
    assert main([*argv, "--verbose"]) == EXIT_BREAKS
    assert capsys.readouterr().out == verbose != found.render("text")


def test_read_facts_is_what_impact_facts_prints(build, capsys) -> None:
    from impact.factsdoc import facts_json

    repo = _breaking(build).path
    document = api.read_facts(repo, paths=[GFX950_DENSE_PACK], rev="base")
    assert main(["facts", "--repo", str(repo), "--rev", "base", GFX950_DENSE_PACK,
                 "--no-cache"]) == 0
    assert capsys.readouterr().out == facts_json(document)


class _FakeTTY:
    """A stderr that says it is a terminal and keeps what is written to it."""

    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        return None


def _report_with_stderr(build, capsys, monkeypatch, stderr) -> tuple[int, str]:
    from impact import cli

    monkeypatch.setattr(cli.Progress, "delay", 0.0)
    monkeypatch.setattr(sys, "stderr", stderr)
    repo = build(SCENARIO)
    code, out, _ = run(["report", "--repo", str(repo.path), "--commit", "head"], capsys)
    return code, out


def test_progress_shows_on_a_terminal_and_is_erased(build, capsys, monkeypatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    tty = _FakeTTY()
    code, out = _report_with_stderr(build, capsys, monkeypatch, tty)
    assert code == EXIT_NONE and out.startswith("Pack-time: ")
    assert "\r\x1b[Kimpact: reading the revisions... " in tty.text
    assert "\r\x1b[Kimpact: checking the contracts... " in tty.text
    assert tty.text.endswith("\r\x1b[K")  # the line is erased before the report prints
    assert "impact: reading" not in out


@pytest.mark.parametrize("ci", ["true", "1"])
def test_no_progress_under_ci(build, capsys, monkeypatch, ci) -> None:
    monkeypatch.setenv("CI", ci)
    tty = _FakeTTY()
    code, _ = _report_with_stderr(build, capsys, monkeypatch, tty)
    assert code == EXIT_NONE and tty.text == ""


def test_no_progress_when_piped(build, capsys, monkeypatch) -> None:
    import io

    monkeypatch.delenv("CI", raising=False)
    piped = io.StringIO()
    code, _ = _report_with_stderr(build, capsys, monkeypatch, piped)
    assert code == EXIT_NONE and piped.getvalue() == ""


def _demo_on_a_terminal(tmp_path: Path, env: dict[str, str]) -> tuple[int, str, bytes]:
    """`impact demo --quiet` with stderr on a pseudo-terminal: exit code, stdout, stderr."""
    import os
    import pty

    leader, follower = pty.openpty()
    try:
        # The delay is zeroed so the stages show however fast the demo runs (a warm
        # machine finishes it in under the second a person would wait first).
        start = ("import sys; from impact import cli; cli.Progress.delay = 0.0; "
                 "sys.exit(cli.main(['demo', '--quiet']))")
        proc = subprocess.run([sys.executable, "-c", start],
                              stdout=subprocess.PIPE, stderr=follower, env=env, cwd=tmp_path,
                              text=True, check=False, timeout=300)
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # Linux: EIO once the terminal has no writer left
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    return proc.returncode, proc.stdout, seen


def test_progress_on_a_real_terminal(tmp_path: Path) -> None:
    """On a pseudo-terminal the demo's stages show on stderr and are erased (CI set, or
    stderr piped, is tested above with a fake terminal). stdout carries the verdict line
    alone."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "CI"}
    code, out, seen = _demo_on_a_terminal(tmp_path, env)
    assert code == EXIT_NONE and out == "Runtime impact: BREAKS\n"
    assert b"impact: checking the contracts..." in seen, seen
    assert seen.endswith(b"\r\x1b[K")


# ------------------------------------------------------------ emit


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--shard", "3/2"]])
def test_bad_emit_options_are_one_line_and_exit_3(build, tmp_path, capsys, argv) -> None:
    repo = build(SCENARIO)
    try:  # argparse's own refusals end in SystemExit, ours in the exit code
        code = main(["emit", "--repo", str(repo.path), "--base", "base", "--head",
                     "head", "-o", str(tmp_path / "x.json"), *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == EXIT_BAD_INPUT
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


# ------------------------------------------------------------ the Action's logged command


def test_the_command_line_the_action_logs_gives_the_actions_report(build, tmp_path) -> None:
    """The step log shows `impact report ...` so a reader can run it again: that command
    line writes what the action's in-process report renders, in each format it writes."""
    from test_github_action import BREAKS_PR, _pull_request

    from impact import api
    from impact.integrations import github_action

    built = build(BREAKS_PR)
    _pull_request(built, tmp_path)
    pr = github_action.read_event(tmp_path / "event.json")
    found = api.report(built.path, **github_action.report_options(pr))
    for fmt in ("json", "markdown", "sarif"):
        target = tmp_path / f"cli.{fmt}"
        assert main(github_action.report_argv(pr, str(built.path), str(target), fmt)) == \
            found.exit_code
        assert target.read_text(encoding="utf-8") == found.render(fmt), fmt


# ------------------------------------------------------------ maps without an emitter


def _aiter_repo(build):
    from impact.fixtures.tree import tree_files
    aiter = tree_files("aiter_tree")
    stub = "aiter/ops/norm.py"
    return build(Scenario(base=aiter, head=(Change("h", write={
        stub: aiter[stub] + b"\n_DEFAULT_EPSILON = 1e-6\n"}),)))


def test_a_map_without_an_emitter_has_no_pack_time_line(build, capsys) -> None:
    repo = _aiter_repo(build)
    code, out, _ = run(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                        "--surface-map", "aiter"], capsys)
    assert code != EXIT_BAD_INPUT and out.startswith("Runtime impact: ")
    assert "Pack-time" not in out
    code, out, _ = run(["report", "--repo", str(repo.path), "--base", "base", "--head", "head",
                        "--surface-map", "aiter", "--format", "json"], capsys)
    assert json.loads(out)["pack_time"]["kind"] == "NOT-APPLICABLE"


@pytest.mark.parametrize("argv", [["emit", "-o", "{out}"], ["report", "--run-emit"]])
def test_building_variants_under_a_map_without_an_emitter_is_one_line_and_exit_3(
        build, capsys, tmp_path, argv) -> None:
    repo = _aiter_repo(build)
    out = tmp_path / "emit.json"
    argv = [a.replace("{out}", str(out)) for a in argv]
    code, stdout, err = run([*argv, "--repo", str(repo.path), "--base", "base", "--head",
                             "head", "--surface-map", "aiter"], capsys)
    assert code == EXIT_BAD_INPUT and stdout == "" and not out.exists()
    _one_line_error(err, "has no emitter")



def test_the_version_is_the_code_that_runs(tmp_path: Path) -> None:
    """Run from this checkout, the version is pyproject's with the checkout's commit; a
    folder that is not a checkout of this project gives none (the installed one's, else
    0+unknown), never a wrong one."""
    import tomllib

    from impact.version import _checkout_version, tool_version

    root = Path(__file__).resolve().parents[1]
    if (root / ".git").exists():
        declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
        assert tool_version().startswith(f"{declared}+g")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\nversion = "9"\n')
    (tmp_path / ".git").mkdir()
    assert _checkout_version(tmp_path) is None
    assert _checkout_version(tmp_path / "missing") is None
