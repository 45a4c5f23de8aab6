"""The GitHub Action's entry point: `python -m impact.integrations.github_action`.

It reads the event (`GITHUB_EVENT_NAME`, the payload at `GITHUB_EVENT_PATH`) and chooses
what to compare (`choose`):

- `pull_request`, `pull_request_target`: the pull request's base and head shas, merged
  onto the base branch's tip (`origin/<base.ref>`);
- `push`: `before` .. `after`; a new branch's push (the all-zero `before`), and a
  force-push whose `before` the clone lacks on a branch other than the default one, from
  the merge base with the default branch (`origin/<repository.default_branch>`);
- `merge_group`: `merge_group.base_sha` .. `merge_group.head_sha`;
- `workflow_dispatch`: the workflow's `base` and `head` inputs, else the default branch
  against `GITHUB_SHA`;

and the action's `base` and `head` inputs (`IMPACT_BASE`, `IMPACT_HEAD`) name the change
on any event, one of these or not. Any other event, or a payload that names no change, is
one `::error::impact action: ...` line (exit 3). Run with the argument `plan` it only
chooses, and writes the refs the report needs fetched as the step output `fetch` (so the
action's fetch step never guesses a ref from an event it does not know); run with no
argument it reports in-process (`impact.api.report`) in the checkout at
`GITHUB_WORKSPACE`, prints one annotation per finding (workflow commands, the `github`
format), writes the JSON report and the SARIF file, appends the Markdown card to
`GITHUB_STEP_SUMMARY`, sets the step outputs in `GITHUB_OUTPUT` and returns the step's exit
status under `fail-on`.

Inputs come as environment variables the composite step sets from `action.yml`'s inputs
(`IMPACT_FAIL_ON`, `IMPACT_SURFACE_MAP`, `IMPACT_REPORT_DIR`, `IMPACT_PATH`, `IMPACT_BASE`,
`IMPACT_HEAD`), never spliced into a shell line.

Maintainers: the analysis runs once, through the library entry, and prints the `impact
report` command line that asks the same (`report_argv`, made from the same options); a
report that cannot run is one `impact: error: ...` line and its exit code, as on the
command line (`impact.errors.failure`). The annotations, the JSON report, the card and the
SARIF file are renderings of that one `Report`, by the renderers `--format
github|json|markdown|sarif` use. Nothing here decides a verdict.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from impact.api import FORMATS, Report, Session, report, write_output
from impact.errors import EXIT_BAD_INPUT, ImpactError, UnknownRevision, failure
from impact.git import open_repository
from impact.integrations import FAIL_ON, fails
from impact.render.github import escape_data
from impact.render.words import code_span, markdown_text, printable

JSON_NAME = "impact.json"
SARIF_NAME = "impact.sarif"
MARKDOWN_NAME = "impact.md"
OUTPUT_NAMES = ("verdict", "archs", "exit-code", "device-runs", "report-json", "sarif-file",
                "markdown-file")
PR_EVENTS = ("pull_request", "pull_request_target")
EVENTS = (*PR_EVENTS, "push", "merge_group", "workflow_dispatch")
ZERO_SHA = "0" * 40
"""A push's `before` when the branch is new (and its `after` when it is deleted)."""


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

    def comparison(self, event: str = "pull_request") -> Comparison:
        """The pull request's base and head, merged onto its base branch's tip."""
        return Comparison(
            event, self.base_sha, self.head_sha,
            f"pull request #{self.number} ({self.head_ref} {self.head_sha[:12]} into "
            f"{self.base_ref}, merged onto {self.target_tip})",
            target_tip=self.target_tip, from_fork=self.from_fork,
            fetch=(_branch_refspec(self.base_ref),))


@dataclass(frozen=True)
class Comparison:
    """What the action reports on, chosen from the event: `base` and `head` (a sha or a
    ref of the checkout; the report compares from their merge base), the tip the head is
    merged onto (pull requests only), and the refspecs the checkout must fetch first."""

    event: str
    base: str
    head: str
    title: str  # the job summary's heading: what was compared, in a reader's words
    target_tip: str | None = None
    from_fork: bool = False
    fetch: tuple[str, ...] = ()
    fallback: Comparison | None = None  # compared instead when `base` is not in the clone


def _branch_refspec(branch: str) -> str:
    """The refspec that leaves `branch`'s tip as `origin/<branch>` in the checkout."""
    return f"+refs/heads/{branch}:refs/remotes/origin/{branch}"


def _from_fork(pr: Mapping[str, Any]) -> bool:
    """Whether the pull request's head is in another repository than its base (a fork);
    unknown counts as a fork (fail closed: its code is then not trusted)."""
    head = (pr.get("head") or {}).get("repo") or {}
    base = (pr.get("base") or {}).get("repo") or {}
    names = head.get("full_name"), base.get("full_name")
    return None in names or names[0] != names[1]


def read_payload(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The event payload at `path`, a JSON object."""
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ActionError(f"cannot read the event payload '{path}': {exc}") from exc
    if not isinstance(payload, dict):
        raise ActionError(f"the event payload '{path}' is not a JSON object")
    return payload


def read_event(path: str | os.PathLike[str]) -> PullRequest:
    """The pull request of the event payload at `path`."""
    return _pull_request(read_payload(path))


def _pull_request(payload: Mapping[str, Any]) -> PullRequest:
    pr = payload.get("pull_request")
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


def _sha(value: object) -> str | None:
    """A payload's commit id, None when absent or all zeros."""
    return str(value) if value and str(value) != ZERO_SHA else None


def _default_branch(payload: Mapping[str, Any], why: str) -> str:
    branch = (payload.get("repository") or {}).get("default_branch")
    if not branch:
        raise ActionError(f"{why}, and the event payload names no "
                          "repository.default_branch: set the action's base input")
    return str(branch)


def _short(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def _push(payload: Mapping[str, Any], env: Mapping[str, str]) -> Comparison:
    """`before` .. `after`; a new branch from its merge base with the default branch."""
    ref = str(payload.get("ref") or "")
    after, before = _sha(payload.get("after")), _sha(payload.get("before"))
    if after is None:
        raise ActionError(f"the push deletes '{ref}': it has no commit to report on")
    default = (payload.get("repository") or {}).get("default_branch")
    on_default = ref == f"refs/heads/{default}"
    if before:
        # The fetch brings a force-pushed `before` the clone lacks; where it cannot, a
        # branch other than the default one is compared from the default branch instead.
        fallback = None if on_default or not default else Comparison(
            "push", f"origin/{default}", after,
            f"push to {_short(ref)} ({before[:12]}..{after[:12]}; {before[:12]} is not in "
            f"the clone), from its merge base with origin/{default}")
        return Comparison("push", before, after,
                          f"push to {_short(ref)} ({before[:12]}..{after[:12]})",
                          fetch=(before, *([_branch_refspec(default)] if fallback else [])),
                          fallback=fallback)
    default = _default_branch(payload, f"the push creates '{ref}'")
    if on_default:
        raise ActionError(f"the push creates the default branch '{default}': there is "
                          "nothing to compare it with; set the action's base input")
    return Comparison("push", f"origin/{default}", after,
                      f"push of the new branch {_short(ref)} ({after[:12]}), from its "
                      f"merge base with origin/{default}",
                      fetch=(_branch_refspec(default),))


def _merge_group(payload: Mapping[str, Any], env: Mapping[str, str]) -> Comparison:
    """The merge queue's base and head shas (the head is already merged onto the base)."""
    group = payload.get("merge_group")
    base = _sha(group.get("base_sha")) if isinstance(group, dict) else None
    head = _sha(group.get("head_sha")) if isinstance(group, dict) else None
    if not (base and head):
        raise ActionError("the merge_group event payload lacks merge_group.base_sha or "
                          "merge_group.head_sha")
    return Comparison("merge_group", base, head,
                      f"merge queue {_short(str(group.get('head_ref', '')))} "
                      f"({head[:12]}) onto {_short(str(group.get('base_ref', '')))} "
                      f"({base[:12]})")


def _workflow_dispatch(payload: Mapping[str, Any], env: Mapping[str, str]) -> Comparison:
    """The workflow's `base` and `head` inputs, else the default branch against the sha
    the workflow runs on."""
    inputs = payload.get("inputs") or {}
    head = str(inputs.get("head") or env.get("GITHUB_SHA") or "")
    if not head:
        raise ActionError("GITHUB_SHA is not set and the workflow_dispatch event has no "
                          "'head' input: run this inside a GitHub workflow")
    if inputs.get("base"):
        base = str(inputs["base"])
        return Comparison("workflow_dispatch", base, head, f"{head[:12]} from {base}")
    default = _default_branch(payload, "the workflow_dispatch event has no 'base' input")
    if payload.get("ref") == f"refs/heads/{default}":
        raise ActionError(f"workflow_dispatch on the default branch '{default}' would "
                          "compare it with itself: dispatch it on another branch, or set "
                          "a 'base' workflow input or the action's base input")
    return Comparison("workflow_dispatch", f"origin/{default}", head,
                      f"{_short(str(payload.get('ref', head)))} ({head[:12]}) from its "
                      f"merge base with origin/{default}",
                      fetch=(_branch_refspec(default),))


CHOOSERS: dict[str, Callable[[Mapping[str, Any], Mapping[str, str]], Comparison]] = {
    "push": _push, "merge_group": _merge_group, "workflow_dispatch": _workflow_dispatch}


def choose(env: Mapping[str, str]) -> Comparison:
    """What the action compares on this event (`EVENTS`), with the action's base and head
    inputs over it; an event it does not know, unless those inputs name the change, or a
    payload that names no change is an ActionError."""
    event_path = env.get("GITHUB_EVENT_PATH")
    if not event_path:
        raise ActionError("GITHUB_EVENT_PATH is not set: run this inside a GitHub workflow")
    payload = read_payload(event_path)
    event = env.get("GITHUB_EVENT_NAME") or ("pull_request" if "pull_request" in payload
                                             else "")
    if not event:
        raise ActionError("GITHUB_EVENT_NAME is not set: run this inside a GitHub workflow")
    base, head = env.get("IMPACT_BASE"), env.get("IMPACT_HEAD")
    if base and event not in EVENTS:  # the inputs name the change on any event
        head = head or env.get("GITHUB_SHA") or "HEAD"
        return Comparison(event, base, head, f"{head[:12]} from {base}")
    if event in PR_EVENTS:
        chosen = _pull_request(payload).comparison(event)
    elif event in CHOOSERS:
        chosen = CHOOSERS[event](payload, env)
    else:
        raise ActionError(
            f"the '{event}' event names no change to report on: run this "
            f"action on {', '.join(EVENTS[:-1])} or {EVENTS[-1]} events, or set its base "
            "input")
    if base or head:
        chosen = replace(chosen, base=base or chosen.base, head=head or chosen.head,
                         fallback=None,
                         title=f"{chosen.title}; as the base/head inputs: "
                               f"{base or chosen.base} .. {head or chosen.head}")
    return chosen


def _comparison(change: Comparison | PullRequest) -> Comparison:
    return change.comparison() if isinstance(change, PullRequest) else change


def report_options(change: Comparison | PullRequest,
                   surface_map: str | None = None) -> dict[str, Any]:
    """The keyword arguments of `impact.api.report` the action reports with."""
    change = _comparison(change)
    options: dict[str, Any] = {"base": change.base, "head": change.head}
    if change.target_tip:
        options["target_tip"] = change.target_tip
    if surface_map:
        options["surface_map"] = surface_map
    if change.from_fork:
        options["untrusted_head"] = True  # a stranger's code may not fold a row to inert
    return options


def _flags(options: Mapping[str, Any]) -> list[str]:
    flags: list[str] = []
    for name, value in options.items():
        flag = f"--{name.replace('_', '-')}"
        flags += [flag] if value is True else [flag, str(value)]
    return flags


def report_argv(change: Comparison | PullRequest, repo: str, output: str, fmt: str = "json",
                surface_map: str | None = None) -> list[str]:
    """The `impact report` command line that asks what the action asks (`report_options`),
    writing `fmt` to `output`: the step log shows it, so a reader can run it again."""
    options = report_options(change, surface_map)
    change = {name: options.pop(name) for name in ("base", "head", "target_tip")
              if name in options}
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
        print(printable(line), file=sys.stderr)
        return None, code
    return result, result.exit_code


def _in_clone(repo: Path, revision: str) -> bool:
    """Whether `revision` names a commit of the checkout (a report that cannot open it at
    all says so itself)."""
    try:
        open_repository(repo).resolve(revision)
    except UnknownRevision:
        return False
    except ImpactError:
        return True
    return True


def _md(text: str) -> str:
    """A value of the event (a branch name is its author's) as Markdown text."""
    return markdown_text(printable(text))


def _heading(change: Comparison) -> str:
    return f"### impact: {_md(change.title)}\n\n"


def plan(env: Mapping[str, str]) -> int:
    """The action's first step: choose what to compare, say it, and write the refspecs
    the fetch step fetches (one a line) as the step output `fetch`."""
    change = choose(env)
    print(printable(f"impact: {change.event}: comparing {change.head} with its merge base "
                    f"with {change.base}" + (f", merged onto {change.target_tip}"
                                             if change.target_tip else "")))
    _append(env.get("GITHUB_OUTPUT"), output_lines({"fetch": "\n".join(change.fetch)}))
    return 0


def run(env: Mapping[str, str]) -> int:
    """The whole action step; returns its exit status."""
    fail_on = env.get("IMPACT_FAIL_ON") or "breaks"
    if fail_on not in FAIL_ON:
        raise ActionError(f"fail-on is '{fail_on}'; use one of: {', '.join(FAIL_ON)}")
    change = choose(env)
    workspace = Path(env.get("GITHUB_WORKSPACE") or os.getcwd())
    repo = workspace / (env.get("IMPACT_PATH") or ".")
    if change.fallback and not _in_clone(repo, change.base):
        print("::notice::" + escape_data(printable(
            f"impact: {change.base} is not in the clone (a force-push?); comparing from the "
            f"merge base with {change.fallback.base}")))
        change = change.fallback
    out_dir = Path(env.get("IMPACT_REPORT_DIR")
                   or Path(env.get("RUNNER_TEMP") or tempfile.gettempdir()) / "impact")
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / JSON_NAME
    surface_map = env.get("IMPACT_SURFACE_MAP")
    argv = report_argv(change, str(repo), str(json_path), surface_map=surface_map)
    print(printable(f"impact {shlex.join(argv)}"), flush=True)
    result, code = _report(repo, json_path, report_options(change, surface_map))
    if result is None:
        _append(env.get("GITHUB_OUTPUT"), output_lines({
            "verdict": "ERROR", "archs": "", "exit-code": str(code), "device-runs": "[]",
            "report-json": "", "sarif-file": "", "markdown-file": ""}))
        needed = [change.base, change.head, *([change.target_tip] if change.target_tip else [])]
        _append(env.get("GITHUB_STEP_SUMMARY"), _heading(change) + (
            f"**impact could not report on this change (exit {code}).** The step log names "
            f"the problem. Check out with `fetch-depth: 0` so "
            f"{', '.join(code_span(printable(n)) for n in needed)} "
            "are in the clone.\n"))
        print(f"::error::impact could not report (exit {code}); see the line above")
        return code or EXIT_BAD_INPUT
    # One annotation per finding; the verdict is said once, below, with the gate.
    from impact.render.github import render_github_findings

    print(render_github_findings(result.document), end="", flush=True)
    markdown_path = out_dir / MARKDOWN_NAME
    _render("markdown", result, markdown_path)
    sarif_path = out_dir / SARIF_NAME
    if not _render("sarif", result, sarif_path):
        print("::warning::this impact has no SARIF renderer; no SARIF file written")
        sarif_path = None
    verdict = result.verdict
    _append(env.get("GITHUB_STEP_SUMMARY"),
            _heading(change) + markdown_path.read_text(encoding="utf-8") + "\n")
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
    line = result.verdict_line() + f" (fail-on: {fail_on})"
    if fails(code, fail_on):
        print(f"::error title=impact::{escape_data(line)}")
        return code
    print(f"::notice title=impact::{escape_data(line)}")
    return 0


def main(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """Entry point: `python -m impact.integrations.github_action [plan]`."""
    argv = list(argv or [])
    if argv not in ([], ["plan"]):
        print("impact-action: takes no arguments but 'plan'; set the action's inputs",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return (plan if argv else run)(os.environ if env is None else env)
    except ActionError as exc:
        print(f"::error::{escape_data(printable(f'impact action: {exc}'))}")
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
