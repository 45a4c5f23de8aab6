"""The GitHub Action's entry point: `python -m impact.integrations.github_action`.

On a `pull_request` event it reads the event payload (`GITHUB_EVENT_PATH`), reports
in-process (`impact.api.report`) on the pull request's base and head shas, merged onto the
base branch's tip (`origin/<base.ref>`, which the action's previous step fetched), in the
checkout at `GITHUB_WORKSPACE`. It writes the JSON report and the SARIF file, appends the
Markdown card to `GITHUB_STEP_SUMMARY`, sets the step outputs in `GITHUB_OUTPUT` and
returns the step's exit status under `fail-on`.

Inputs come as environment variables the composite step sets from `action.yml`'s inputs
(`IMPACT_FAIL_ON`, `IMPACT_SURFACE_MAP`, `IMPACT_REPORT_DIR`, `IMPACT_PATH`), never
spliced into a shell line.

Maintainers: the analysis runs once, through the library entry, and prints the `impact
report` command line that asks the same (`report_argv`, made from the same options); a
report that cannot run is one `impact: error: ...` line and its exit code, as on the
command line (`impact.errors.failure`). The JSON report, the card and the SARIF file are
renderings of that one `Report`, by the renderers `--format json|markdown|sarif` use.
Nothing here decides a verdict.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from impact.api import FORMATS, Report, Session, report, write_output
from impact.errors import EXIT_BAD_INPUT, failure
from impact.integrations import FAIL_ON, fails

JSON_NAME = "impact.json"
SARIF_NAME = "impact.sarif"
MARKDOWN_NAME = "impact.md"
OUTPUT_NAMES = ("verdict", "archs", "exit-code", "device-runs", "report-json", "sarif-file",
                "markdown-file")
PR_EVENTS = ("pull_request", "pull_request_target")


class ActionError(Exception):
    """The action cannot run as configured; the message says what to change."""


@dataclass(frozen=True)
class PullRequest:
    """What the action reads from a pull_request event payload."""

    number: int
    base_sha: str
    base_ref: str
    head_sha: str
    head_ref: str
    repository: str
    from_fork: bool = False  # the head lives in another repository: its code is untrusted

    @property
    def target_tip(self) -> str:
        """The base branch's tip as fetched into the checkout."""
        return f"origin/{self.base_ref}"


def _from_fork(pr: Mapping[str, Any]) -> bool:
    """Whether the pull request's head is in another repository than its base (a fork);
    unknown counts as a fork (fail closed: its code is then not trusted)."""
    head = (pr.get("head") or {}).get("repo") or {}
    base = (pr.get("base") or {}).get("repo") or {}
    names = head.get("full_name"), base.get("full_name")
    return None in names or names[0] != names[1]


def read_event(path: str | os.PathLike[str]) -> PullRequest:
    """The pull request of the event payload at `path`."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ActionError(f"cannot read the event payload '{path}': {exc}") from exc
    pr = payload.get("pull_request") if isinstance(payload, dict) else None
    if not isinstance(pr, dict):
        raise ActionError("the event payload has no pull_request: run this action on "
                          "'pull_request' events")
    try:
        return PullRequest(
            number=int(pr.get("number", payload.get("number"))),
            base_sha=str(pr["base"]["sha"]), base_ref=str(pr["base"]["ref"]),
            head_sha=str(pr["head"]["sha"]), head_ref=str(pr["head"]["ref"]),
            repository=str((payload.get("repository") or {}).get("full_name", "")),
            from_fork=_from_fork(pr))
    except (KeyError, TypeError, ValueError) as exc:
        raise ActionError(f"the event payload's pull_request lacks {exc}") from exc


def report_options(pr: PullRequest, surface_map: str | None = None) -> dict[str, Any]:
    """The keyword arguments of `impact.api.report` the action reports with."""
    options: dict[str, Any] = {"base": pr.base_sha, "head": pr.head_sha,
                               "target_tip": pr.target_tip}
    if surface_map:
        options["surface_map"] = surface_map
    if pr.from_fork:
        options["untrusted_head"] = True  # a stranger's code may not fold a row to inert
    return options


def _flags(options: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    for name, value in options.items():
        flag = f"--{name.replace('_', '-')}"
        flags += [flag] if value is True else [flag, str(value)]
    return flags


def report_argv(pr: PullRequest, repo: str, output: str, fmt: str = "json",
                surface_map: str | None = None) -> list[str]:
    """The `impact report` command line that asks what the action asks (`report_options`),
    writing `fmt` to `output`: the step log shows it, so a reader can run it again."""
    options = report_options(pr, surface_map)
    change = {name: options.pop(name) for name in ("base", "head", "target_tip")}
    return ["report", "--repo", repo, *_flags(change), "--format", fmt, "-o", output,
            *_flags(options)]


def output_lines(outputs: Mapping[str, str]) -> str:
    """`$GITHUB_OUTPUT` text in the multi-line-safe `name<<DELIMITER` form."""
    text = []
    for name, value in outputs.items():
        delimiter = f"impact_{uuid.uuid4().hex}"
        while delimiter in value:
            delimiter = f"impact_{uuid.uuid4().hex}"
        text.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(text)


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)


def _render(name: str, result: Report, target: Path) -> bool:
    """Write `result` rendered as `name` to `target`; False when no such renderer."""
    if name not in FORMATS:
        return False
    target.write_text(result.render(name), encoding="utf-8")
    return True


def _report(repo: Path, json_path: Path, options: Mapping[str, Any]) -> tuple[Report | None, int]:
    """The report and its exit code, its JSON written to `json_path`; (None, the exit
    code) when it could not run, its one error line printed on stderr."""
    try:
        result = report(repo, **options, session=Session.for_command())
        write_output(result.render("json"), json_path)
    except (Exception, KeyboardInterrupt) as exc:
        line, code = failure(exc)
        print(line, file=sys.stderr)
        return None, code
    return result, result.exit_code


def _heading(pr: PullRequest) -> str:
    return (f"### impact: pull request #{pr.number} ({pr.head_ref} {pr.head_sha[:12]} "
            f"into {pr.base_ref}, merged onto {pr.target_tip})\n\n")


def run(env: Mapping[str, str]) -> int:
    """The whole action step; returns its exit status."""
    fail_on = env.get("IMPACT_FAIL_ON") or "breaks"
    if fail_on not in FAIL_ON:
        raise ActionError(f"fail-on is '{fail_on}'; use one of: {', '.join(FAIL_ON)}")
    event_path = env.get("GITHUB_EVENT_PATH")
    if not event_path:
        raise ActionError("GITHUB_EVENT_PATH is not set: run this inside a GitHub workflow")
    pr = read_event(event_path)
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    repo = workspace / (env.get("IMPACT_PATH") or ".")
    out_dir = Path(env.get("IMPACT_REPORT_DIR")
                   or Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / "impact")
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / JSON_NAME
    surface_map = env.get("IMPACT_SURFACE_MAP")
    argv = report_argv(pr, str(repo), str(json_path), surface_map=surface_map)
    print(f"impact {shlex.join(argv)}", flush=True)
    result, code = _report(repo, json_path, report_options(pr, surface_map))
    if result is None:
        _append(env.get("GITHUB_OUTPUT"), output_lines({
            "verdict": "ERROR", "archs": "", "exit-code": str(code), "device-runs": "[]",
            "report-json": "", "sarif-file": "", "markdown-file": ""}))
        _append(env.get("GITHUB_STEP_SUMMARY"), _heading(pr) + (
            f"**impact could not report on this pull request (exit {code}).** The step log "
            "names the problem. Check out with `fetch-depth: 0` so both shas and "
            f"`{pr.target_tip}` are in the clone.\n"))
        print(f"::error::impact could not report (exit {code}); see the line above")
        return code or EXIT_BAD_INPUT
    markdown_path = out_dir / MARKDOWN_NAME
    _render("markdown", result, markdown_path)
    sarif_path = out_dir / SARIF_NAME
    if not _render("sarif", result, sarif_path):
        print("::warning::this impact has no SARIF renderer; no SARIF file written")
        sarif_path = None
    verdict = result.verdict
    _append(env.get("GITHUB_STEP_SUMMARY"),
            _heading(pr) + markdown_path.read_text(encoding="utf-8") + "\n")
    _append(env.get("GITHUB_OUTPUT"), output_lines({
        "verdict": str(verdict["kind"]),
        "archs": ",".join(verdict["archs"]),
        "exit-code": str(code),
        "device-runs": json.dumps(result.document["device_runs"], separators=(",", ":"),
                                  sort_keys=True),
        "report-json": str(json_path),
        "sarif-file": str(sarif_path) if sarif_path else "",
        "markdown-file": str(markdown_path),
    }))
    line = f"Runtime impact: {verdict['kind']} (fail-on: {fail_on})"
    if fails(code, fail_on):
        print(f"::error::{line}")
        return code
    print(line)
    return 0


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point: `python -m impact.integrations.github_action` (takes no arguments)."""
    if argv:
        print("impact-action: takes no arguments; set the action's inputs", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return run(os.environ if env is None else env)
    except ActionError as exc:
        print(f"::error::impact action: {exc}")
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
