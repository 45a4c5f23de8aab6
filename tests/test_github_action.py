"""The GitHub Action: action.yml's shape, and its entry point run end to end on a real
pull_request event payload against scenario repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from dulwich.repo import Repo
from harness import rendered

from impact.contracts import REPORT_SCHEMA, validate
from impact.errors import EXIT_BAD_INPUT, EXIT_BREAKS, EXIT_NONE
from impact.fixtures import BuiltRepository, Change, Scenario
from impact.fixtures.edits import GFX950_DENSE, add_builder_param, edit_comment
from impact.fixtures.tree import rocke_tree_files
from impact.integrations import github_action
from impact.render import RENDERERS
from impact.render.words import markdown_text, printable

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD = Path(__file__).with_name("data") / "pull_request_event.json"

BREAKS_PR = Scenario(
    base=rocke_tree_files(),
    head=(Change("gfx950 attention_dense: add a dropout_seed kernel argument",
                 edits=(add_builder_param(GFX950_DENSE, "dropout_seed", "I32"),)),),
    target=(Change("unrelated: a note", write={"NOTES.md": "target moved\n"}),),
)
COMMENT_PR = Scenario(
    base=rocke_tree_files(),
    head=(Change("gfx950 attention_dense: reword a comment",
                 edits=(edit_comment(GFX950_DENSE),)),),
    target=(Change("unrelated: a note", write={"NOTES.md": "target moved\n"}),),
)


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def test_action_yml_is_a_composite_action_whose_outputs_come_from_the_report_step() -> None:
    action = _action()
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") == "bash", step
    by_id = {s["id"]: s for s in steps if "id" in s}
    report = by_id["report"]
    assert "python\" -m impact.integrations.github_action" in report["run"]
    assert report["env"]["IMPACT_FAIL_ON"] == "${{ inputs.fail-on }}"
    for name in github_action.OUTPUT_NAMES:
        assert action["outputs"][name]["value"] == f"${{{{ steps.report.outputs.{name} }}}}"
        assert action["outputs"][name]["description"]
    assert set(action["outputs"]) == set(github_action.OUTPUT_NAMES)
    inputs = action["inputs"]
    assert inputs["fail-on"]["default"] == "breaks"
    assert inputs["upload-sarif"]["default"] == "true"
    for name, spec in inputs.items():
        assert spec["description"], name
        assert re.search(rf"inputs\.{re.escape(name)}\b", (ROOT / "action.yml").read_text())
    # Every input reaches a step, never spliced into a shell line: run lines read env only.
    for step in steps:
        assert "${{" not in step.get("run", ""), step


def test_action_installs_itself_fetches_what_it_chose_and_uploads_sarif_always() -> None:
    steps = _action()["runs"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install impact")
    assert install["env"]["IMPACT_ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip install --disable-pip-version-check -q "$IMPACT_ACTION_PATH"' in install["run"]
    # impact chooses what to compare (or fails with its own line) before any git fetch,
    # which fetches only the refspecs it chose: no ref is read from an event it may lack.
    plan = next(s for s in steps if s.get("id") == "plan")
    assert plan["run"].endswith("-m impact.integrations.github_action plan")
    assert "if" not in plan
    fetch = next(s for s in steps if s.get("name") == "Fetch what the report compares")
    assert fetch["if"] == "steps.plan.outputs.fetch != ''"
    assert fetch["env"]["IMPACT_FETCH"] == "${{ steps.plan.outputs.fetch }}"
    assert 'fetch --no-tags --quiet origin "$refspec"' in fetch["run"]
    assert "github.event" not in (ROOT / "action.yml").read_text(encoding="utf-8")
    for step in (plan, next(s for s in steps if s.get("id") == "report")):
        assert step["env"]["IMPACT_BASE"] == "${{ inputs.base }}"
        assert step["env"]["IMPACT_HEAD"] == "${{ inputs.head }}"
    upload = next(s for s in steps if str(s.get("uses", "")).startswith(
        "github/codeql-action/upload-sarif@"))
    assert upload["uses"].endswith("@v3")
    assert upload["if"].startswith("always() && inputs.upload-sarif == 'true'")
    assert upload["with"]["sarif_file"] == "${{ steps.report.outputs.sarif-file }}"
    names = [s.get("name") for s in steps]
    assert (names.index("Install impact") < names.index("Choose what to compare")
            < names.index("Fetch what the report compares") < names.index("Report")
            < names.index("Upload SARIF"))


def test_the_report_command_line_names_the_event_shas_and_the_base_tip() -> None:
    pr = github_action.read_event(PAYLOAD)
    assert (pr.number, pr.base_ref, pr.head_ref) == (1412, "develop", "feature/dropout-seed")
    assert pr.repository == "example-org/rocm-libraries"
    argv = github_action.report_argv(pr, "/ws", "/out/impact.sarif", "sarif")
    assert argv == ["report", "--repo", "/ws", "--base", "4" * 40, "--head", "2" * 40,
                    "--target-tip", "origin/develop", "--format", "sarif",
                    "-o", "/out/impact.sarif", "--untrusted-head"]  # the payload's is a fork


def test_outputs_use_the_multi_line_safe_form() -> None:
    text = github_action.output_lines({"device-runs": "[1,\n2]", "verdict": "NONE"})
    lines = text.splitlines()
    name, _, delimiter = lines[0].partition("<<")
    assert name == "device-runs" and lines[1:4] == ["[1,", "2]", delimiter]
    assert _read_outputs(text) == {"device-runs": "[1,\n2]", "verdict": "NONE"}


def _read_outputs(text: str) -> dict[str, str]:
    """Parse $GITHUB_OUTPUT as the runner does: `name<<DELIM` ... `DELIM`, or `name=value`."""
    outputs, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        if "<<" in lines[i]:
            name, delimiter = lines[i].split("<<", 1)
            end = lines.index(delimiter, i + 1)
            outputs[name] = "\n".join(lines[i + 1:end])
            i = end + 1
        else:
            name, value = lines[i].split("=", 1)
            outputs[name] = value
            i += 1
    return outputs


def _pull_request(built: BuiltRepository, tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The payload GitHub sends, pointing at the built repository's commits, with the base
    branch's tip fetched as origin/develop (as the action's fetch step leaves it)."""
    payload = json.loads(PAYLOAD.read_text(encoding="utf-8"))
    payload["pull_request"]["base"]["sha"] = built.target
    payload["pull_request"]["head"]["sha"] = payload["after"] = built.head
    repo = Repo(str(built.path))
    repo.refs[b"refs/remotes/origin/develop"] = built.target.encode()
    repo.close()
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    runner = tmp_path / "runner"
    runner.mkdir()
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_WORKSPACE": str(built.path),
        "GITHUB_OUTPUT": str(runner / "output"),
        "GITHUB_STEP_SUMMARY": str(runner / "summary.md"),
        "RUNNER_TEMP": str(runner),
        "IMPACT_FAIL_ON": "breaks",
    }
    (runner / "output").write_text("", encoding="utf-8")
    return env, runner


def _same_as_cli(built: BuiltRepository, fmt: str, tmp_path: Path) -> str:
    """What `impact report --format fmt` says for the same pull request: the library
    entry asked what the action asks (the command line the action logs gives the same
    bytes: tests/test_cli.py)."""
    pr = github_action.read_event(tmp_path / "event.json")
    return rendered(built, fmt, **github_action.report_options(pr))


def test_a_breaks_pull_request_fails_the_step_and_says_so_everywhere(
        build, tmp_path: Path, capsys) -> None:
    built = build(BREAKS_PR)
    env, runner = _pull_request(built, tmp_path)
    assert github_action.main([], env) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert "::error title=impact::Runtime impact: BREAKS (fail-on: breaks)" in out
    assert "--target-tip origin/develop" in out

    outputs = _read_outputs((runner / "output").read_text(encoding="utf-8"))
    assert set(outputs) == set(github_action.OUTPUT_NAMES)
    assert outputs["verdict"] == "BREAKS" and outputs["exit-code"] == "1"
    assert outputs["archs"] == ""
    report = json.loads(Path(outputs["report-json"]).read_text(encoding="utf-8"))
    validate(report, REPORT_SCHEMA)
    assert report["verdict"]["kind"] == "BREAKS"
    assert report["revisions"]["head"]["sha"] == built.head
    assert report["revisions"]["target_tip"]["sha"] == built.target
    assert json.loads(outputs["device-runs"]) == report["device_runs"]
    assert "\n" not in outputs["device-runs"] and ": " not in outputs["device-runs"]
    assert Path(outputs["report-json"]).parent == runner / "impact"

    summary = (runner / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("### impact: pull request #1412 (feature/dropout-seed ")
    # the card's text is escaped Markdown: the argument's `_` is written `\_`
    assert "Impact (static): BREAKS" in summary and "dropout\\_seed" in summary
    card = Path(outputs["markdown-file"]).read_text(encoding="utf-8")
    assert card in summary and card == _same_as_cli(built, "markdown", tmp_path)

    if "sarif" not in RENDERERS:
        assert outputs["sarif-file"] == ""
        assert "::warning::this impact has no SARIF renderer" in out
        pytest.skip("no 'sarif' renderer is registered yet (another change adds it): "
                    "the SARIF file is not written")
    sarif = Path(outputs["sarif-file"])
    assert sarif == runner / "impact" / "impact.sarif"
    assert sarif.read_text(encoding="utf-8") == _same_as_cli(built, "sarif", tmp_path)
    assert json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]


def test_fail_on_never_passes_a_breaks_pull_request(build, tmp_path: Path, capsys) -> None:
    built = build(BREAKS_PR)
    env, runner = _pull_request(built, tmp_path)
    assert github_action.main([], {**env, "IMPACT_FAIL_ON": "never"}) == EXIT_NONE
    outputs = _read_outputs((runner / "output").read_text(encoding="utf-8"))
    assert outputs["verdict"] == "BREAKS" and outputs["exit-code"] == "1"
    assert "Runtime impact: BREAKS (fail-on: never)" in capsys.readouterr().out


def test_a_comment_only_pull_request_passes(build, tmp_path: Path, capsys) -> None:
    built = build(COMMENT_PR)
    env, runner = _pull_request(built, tmp_path)
    code = github_action.main([], {**env, "IMPACT_FAIL_ON": "needs-device"})
    assert code == EXIT_NONE, capsys.readouterr()
    outputs = _read_outputs((runner / "output").read_text(encoding="utf-8"))
    assert outputs["verdict"] in ("NONE", "N/A") and outputs["exit-code"] == "0"
    assert outputs["archs"] == "" and outputs["device-runs"] == "[]"
    summary = (runner / "summary.md").read_text(encoding="utf-8")
    assert f"Impact (static): {outputs['verdict']}" in summary
    report = json.loads(Path(outputs["report-json"]).read_text(encoding="utf-8"))
    assert report["verdict"]["exit_code"] == 0


def test_an_unfetched_base_branch_is_an_error_that_says_fetch_depth(
        build, tmp_path: Path, capsys) -> None:
    built = build(COMMENT_PR)
    env, runner = _pull_request(built, tmp_path)
    payload = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    payload["pull_request"]["base"]["ref"] = "release/never-fetched"
    Path(env["GITHUB_EVENT_PATH"]).write_text(json.dumps(payload), encoding="utf-8")
    assert github_action.main([], {**env, "IMPACT_FAIL_ON": "never"}) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert "unknown revision 'origin/release/never-fetched'" in captured.err
    outputs = _read_outputs((runner / "output").read_text(encoding="utf-8"))
    assert outputs["verdict"] == "ERROR" and outputs["exit-code"] == "3"
    assert "fetch-depth: 0" in (runner / "summary.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("change, message", [
    ({"IMPACT_FAIL_ON": "sometimes"}, "fail-on is 'sometimes'; use one of: breaks, "),
    ({"GITHUB_EVENT_PATH": ""}, "GITHUB_EVENT_PATH is not set"),
])
def test_misconfiguration_is_one_error_line(tmp_path: Path, capsys, change, message) -> None:
    env = {"GITHUB_EVENT_PATH": str(PAYLOAD), "GITHUB_WORKSPACE": str(tmp_path), **change}
    assert github_action.main([], env) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().out


def _readme_yaml_blocks() -> list[dict]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Use it in CI and before you push", 1)[1].split("\n## ", 1)[0]
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)]


def test_the_readme_workflow_checks_out_full_history_and_uses_real_inputs() -> None:
    workflow = next(b for b in _readme_yaml_blocks() if "jobs" in b)
    # YAML 1.1 reads the key `on` as True; the example runs on every event the action knows
    assert set(workflow[True]) == {"pull_request", "push", "merge_group", "workflow_dispatch"}
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["impact"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@")
    assert steps[0]["with"]["fetch-depth"] == 0
    action = next(s for s in steps if s.get("id") == "impact")
    assert re.fullmatch(r"[\w./-]+@v\d+\.\d+\.\d+", action["uses"])  # pinned to a release tag
    assert set(action["with"]) <= set(_action()["inputs"])
    used = re.findall(r"steps\.impact\.outputs\.([\w-]+)", json.dumps(steps))
    assert used and set(used) <= set(_action()["outputs"])


def test_a_pull_request_from_a_fork_is_reported_with_an_untrusted_head(tmp_path: Path) -> None:
    payload = json.loads(PAYLOAD.read_text(encoding="utf-8"))
    (tmp_path / "fork.json").write_text(json.dumps(payload), encoding="utf-8")
    fork = github_action.read_event(tmp_path / "fork.json")
    payload["pull_request"]["head"]["repo"] = payload["pull_request"]["base"]["repo"]
    (tmp_path / "same.json").write_text(json.dumps(payload), encoding="utf-8")
    same = github_action.read_event(tmp_path / "same.json")
    assert fork.from_fork and "--untrusted-head" in github_action.report_argv(fork, ".", "o")
    assert not same.from_fork
    assert "--untrusted-head" not in github_action.report_argv(same, ".", "o")


# --- every event the action runs on: what it compares, from recorded-looking payloads -----

DATA = Path(__file__).with_name("data")


def _event(built: BuiltRepository, tmp_path: Path, name: str, payload: dict,
           **extra: str) -> tuple[dict[str, str], Path]:
    """The environment the runner gives the step on a `name` event carrying `payload`, in
    the checkout of `built`, whose default branch `develop` was fetched at the target."""
    repo = Repo(str(built.path))
    repo.refs[b"refs/remotes/origin/develop"] = built.target.encode()
    repo.close()
    event = tmp_path / f"{name}.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    runner = tmp_path / "runner"
    runner.mkdir(exist_ok=True)
    (runner / "output").write_text("", encoding="utf-8")
    return {"GITHUB_EVENT_NAME": name, "GITHUB_EVENT_PATH": str(event),
            "GITHUB_WORKSPACE": str(built.path), "GITHUB_OUTPUT": str(runner / "output"),
            "GITHUB_STEP_SUMMARY": str(runner / "summary.md"), "RUNNER_TEMP": str(runner),
            "GITHUB_SHA": built.head, **extra}, runner


def _payload(name: str) -> dict:
    return json.loads((DATA / f"{name}_event.json").read_text(encoding="utf-8"))


def _push(built: BuiltRepository, before: str | None) -> dict:
    payload = _payload("push")
    payload["before"] = before or "0" * 40
    payload["after"] = payload["head_commit"]["id"] = built.head
    payload["created"] = before is None
    return payload


def _merge_group(built: BuiltRepository) -> dict:
    payload = _payload("merge_group")
    payload["merge_group"]["base_sha"] = built.base
    payload["merge_group"]["head_sha"] = built.head
    return payload


def _dispatch(built: BuiltRepository, **inputs: str) -> dict:
    return {**_payload("workflow_dispatch"), "inputs": inputs}


def _merge_base(runner: Path) -> list[str]:
    outputs = _read_outputs((runner / "output").read_text(encoding="utf-8"))
    report = json.loads(Path(outputs["report-json"]).read_text(encoding="utf-8"))
    validate(report, REPORT_SCHEMA)
    assert report["verdict"]["kind"] == outputs["verdict"]
    return next(iter(report["merge_bases"].values()))


@pytest.mark.parametrize("name, payload, base, fetch", [
    ("push", lambda b: _push(b, b.base), lambda b: b.base,
     lambda b: f"{b.base}\n+refs/heads/develop:refs/remotes/origin/develop"),
    ("push", lambda b: _push(b, None), lambda b: "origin/develop",
     lambda b: "+refs/heads/develop:refs/remotes/origin/develop"),  # a new branch
    ("merge_group", _merge_group, lambda b: b.base, lambda b: ""),
    ("workflow_dispatch", _dispatch, lambda b: "origin/develop",
     lambda b: "+refs/heads/develop:refs/remotes/origin/develop"),
    ("workflow_dispatch", lambda b: _dispatch(b, base=b.base, head="head"), lambda b: b.base,
     lambda b: ""),
], ids=["push", "push-new-branch", "merge_group", "workflow_dispatch",
        "workflow_dispatch-inputs"])
def test_each_event_picks_its_base_and_head_and_reports(
        build, tmp_path: Path, capsys, name, payload, base, fetch) -> None:
    built = build(BREAKS_PR)
    env, runner = _event(built, tmp_path, name, payload(built))
    change = github_action.choose(env)
    assert (change.event, change.base) == (name, base(built))
    assert change.head in (built.head, "head") and change.target_tip is None
    assert github_action.main(["plan"], env) == EXIT_NONE
    assert _read_outputs((runner / "output").read_text(encoding="utf-8")) == {
        "fetch": fetch(built)}
    (runner / "output").write_text("", encoding="utf-8")
    assert f"impact: {name}: comparing {change.head} with its merge base with {base(built)}" \
        in capsys.readouterr().out

    assert github_action.main([], env) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert f"--base {base(built)} --head {change.head} --format json" in out
    assert "--target-tip" not in out
    assert "::error title=impact::Runtime impact: BREAKS (fail-on: breaks)" in out
    assert _merge_base(runner) == [built.base]  # origin/develop is the target: from the fork
    summary = (runner / "summary.md").read_text(encoding="utf-8")
    # the heading and the card are escaped Markdown (`_` written `\_`)
    heading = markdown_text(printable(change.title))
    assert summary.startswith(f"### impact: {heading}\n") and "dropout\\_seed" in summary


@pytest.mark.parametrize("name, payload, message", [
    ("schedule", lambda b: {"schedule": "0 4 * * *", "repository": {"default_branch": "x"}},
     "the 'schedule' event names no change to report on: run this action on pull_request, "
     "pull_request_target, push, merge_group or workflow_dispatch events, or set its base "
     "input"),
    ("push", lambda b: {**_push(b, b.base), "after": "0" * 40, "deleted": True},
     "the push deletes 'refs/heads/feature/dropout-seed': it has no commit to report on"),
    ("push", lambda b: {**_push(b, None), "ref": "refs/heads/develop"},
     "the push creates the default branch 'develop': there is nothing to compare it with"),
    ("merge_group", lambda b: {"merge_group": {"head_sha": b.head}},
     "the merge_group event payload lacks merge_group.base_sha"),
    ("workflow_dispatch", lambda b: {**_dispatch(b), "ref": "refs/heads/develop"},
     "workflow_dispatch on the default branch 'develop' would compare it with itself"),
    ("pull_request", lambda b: _push(b, b.base), "the event payload has no pull_request"),
], ids=["unknown-event", "push-delete", "push-creates-default", "merge_group-no-base",
        "dispatch-on-default", "pull_request-without-one"])
def test_an_event_that_names_no_change_is_one_line_before_any_fetch(
        build, tmp_path: Path, capsys, name, payload, message) -> None:
    built = build(BREAKS_PR)
    env, runner = _event(built, tmp_path, name, payload(built))
    for argv in (["plan"], []):
        assert github_action.main(argv, env) == EXIT_BAD_INPUT
        (line,) = capsys.readouterr().out.splitlines()
        assert line.startswith(f"::error::impact action: {message}"), line
    assert (runner / "output").read_text(encoding="utf-8") == ""  # nothing for the fetch


def test_a_force_push_whose_before_is_gone_is_compared_from_the_default_branch(
        build, tmp_path: Path, capsys) -> None:
    built = build(BREAKS_PR)
    env, runner = _event(built, tmp_path, "push", _push(built, "1" * 40))
    assert github_action.main([], env) == EXIT_BREAKS
    out = capsys.readouterr().out
    assert (f"::notice::impact: {'1' * 40} is not in the clone (a force-push?); comparing "
            "from the merge base with origin/develop") in out
    assert "--base origin/develop" in out and _merge_base(runner) == [built.base]
    # On the default branch itself there is nothing else to compare with: impact's error.
    payload = {**_push(built, "1" * 40), "ref": "refs/heads/develop"}
    env, runner = _event(built, tmp_path, "push", payload)
    assert github_action.main([], env) == EXIT_BAD_INPUT
    assert f"unknown revision '{'1' * 40}'" in capsys.readouterr().err


def test_the_base_and_head_inputs_name_the_change_on_any_event(
        build, tmp_path: Path, capsys) -> None:
    built = build(BREAKS_PR)
    env, runner = _event(built, tmp_path, "schedule", {"schedule": "0 4 * * *"},
                         IMPACT_BASE="target")
    change = github_action.choose(env)
    assert (change.base, change.head) == ("target", built.head)  # GITHUB_SHA
    assert github_action.main([], env) == EXIT_BREAKS
    assert _merge_base(runner) == [built.base]
    # Over a push's own before..after too.
    env, _ = _event(built, tmp_path, "push", _push(built, built.head), IMPACT_BASE=built.base)
    assert (github_action.choose(env).base, github_action.choose(env).head) == (
        built.base, built.head)


def test_the_step_writes_one_annotation_per_finding(build, tmp_path: Path, capsys) -> None:
    from test_github_annotations import parse

    built = build(BREAKS_PR)
    env, _ = _pull_request(built, tmp_path)
    assert github_action.main([], env) == EXIT_BREAKS
    out = capsys.readouterr().out
    commands = [parse(line) for line in out.splitlines() if line.startswith("::")]
    errors = [(props, message) for name, props, message in commands
              if name == "error" and "file" in props]
    assert errors, out
    props, _message = next(e for e in errors if "dropout_seed" in e[1])
    assert props["file"] == GFX950_DENSE and int(props["line"]) > 0
    assert "kernargs" in props["title"]
    # the same lines `impact report --format github` prints, before the gate's verdict line
    # (less its verdict line: the step says the verdict once, with its gate — issue 27)
    *found, verdict = _same_as_cli(built, "github", tmp_path).splitlines(keepends=True)
    assert "".join(found) in out and verdict not in out
    gate = "::error title=impact::Runtime impact: BREAKS (fail-on: breaks)"
    assert out.index("".join(found)) < out.index(gate)
    assert sum(1 for line in out.splitlines() if "Runtime impact:" in line
               and line.startswith("::")) == 1


def test_the_readme_names_every_event_the_action_runs_on_and_its_annotations() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("the GitHub Action\n", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| (`[^|]+`) \| ", section, re.M)
    named = {name for row in rows for name in re.findall(r"`([\w]+)`", row)}
    assert set(github_action.EVENTS) <= named
    assert "::error file=" in section and ",line=" in section and "title=" in section
    for name in ("base", "head"):
        assert f"| `{name}` | empty |" in section
