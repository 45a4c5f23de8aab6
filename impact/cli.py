"""The `impact` command: argument parsing and exit codes only.

Maintainers: each subcommand calls one function of the library entry (impact/api.py) in
a Session of its own (`Session.for_command`) and renders or writes what it returns;
known errors become one `impact: error: ...` line and their exit code, anything else
exit 4 (`impact.errors.failure`), and `--debug` re-raises so the traceback shows. A long
report shows what it is doing on one stderr line, only for a person at a terminal (never
when stderr is piped or `CI` is set).
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from impact import api
from impact.api import FORMATS, Session, write_output
from impact.errors import EXIT_BAD_INPUT, EXIT_NONE, BadUsage, failure
from impact.rollup import FAIL_ON, fails
from impact.version import tool_version


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 3, as for any bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT,
                  f"impact: error: {message}{_did_you_mean(self, message)}; see '{self.prog} "
                  "--help'\n")


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every flag of `parser` and of its subcommands (argparse reports a flag no parser
    took from the top-level parser)."""
    found: list[str] = []
    for action in parser._actions:
        found += action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _option_strings(sub)
    return found


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """`; did you mean '--commit'?` for a mistyped command or flag, else nothing."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from ([^)]*)\)", message)
    if choice is not None:
        typed, known = choice.group(1), re.findall(r"'([^']*)'", choice.group(2))
    else:
        flag = re.search(r"unrecognized arguments: (--?[\w-]+)", message)
        if flag is None:
            return ""
        typed = flag.group(1)
        known = _option_strings(parser)
    close = difflib.get_close_matches(typed, known, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def progress_stream(stream: TextIO | None = None) -> TextIO | None:
    """stderr when a person watches it: a terminal, and not under CI (`CI` set)."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if os.environ.get("CI") or not (callable(isatty) and isatty()):
        return None
    return stream


class Progress:
    """One stderr line, `impact: <stage>... <n>s`, rewritten in place while a report runs
    and erased when it ends. Silent for the first `delay` seconds, so short runs print
    nothing, and silent altogether without a stream (`progress_stream`)."""

    delay = 1.0
    interval = 0.5

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.what: str | None = None
        self.shown = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        if stream is not None:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()

    def stage(self, what: str | None) -> None:
        """Now doing `what`; None pauses the line (another display owns stderr)."""
        with self._lock:
            self.what = what
            if what is None:
                self._erase()
            else:
                self._draw()

    def _draw(self) -> None:
        elapsed = time.monotonic() - self.start
        if self.stream is None or self.what is None or elapsed < self.delay:
            return
        self.stream.write(f"\r\x1b[Kimpact: {self.what}... {elapsed:.0f}s")
        self.stream.flush()
        self.shown = True

    def _erase(self) -> None:
        if self.stream is not None and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def _tick(self) -> None:
        while not self._done.wait(self.interval):
            with self._lock:
                self._draw()

    def close(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._erase()


REPO_HELP = "the repository, or a folder inside it (default: the current folder)"


def _add_input_forms(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", default=".", help=REPO_HELP)
    parser.add_argument("--base", help="the branch or commit the change is compared with")
    parser.add_argument("--head", help="the branch or commit holding the change")
    parser.add_argument("--range", metavar="A..B", help="a commit range, like --base A --head B")
    parser.add_argument("--commit", metavar="C", help="one commit against its first parent")
    parser.add_argument("--worktree", action="store_true",
                        help="HEAD against uncommitted work: staged, unstaged and untracked files")
    parser.add_argument("--target-tip", metavar="T",
                        help="also analyse the head merged onto T (the target branch's tip)")
    parser.add_argument("--surface-map", metavar="NAME|PATH",
                        help="which paths are which surface: a built-in map name (hipdnn) or a "
                             ".toml file; default: the repository's .impact/surface.toml, "
                             "else hipdnn")


def _day(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is no day; write YYYY-MM-DD") from None


def _positive(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least 1")
    return value


def _add_cache(parser: argparse.ArgumentParser, *, switch: bool = True) -> None:
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="the cache folder: facts, stored reports, built variants "
                             "(default: $XDG_CACHE_HOME/impact, else ~/.cache/impact)")
    if switch:
        parser.add_argument("--no-cache", action="store_true",
                            help="compute everything afresh; read and write no cache")


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="text for people (default, or the repository's [tool.impact] "
                             "format), concise for editors and log "
                             "matchers (path:line:col: CONTRACT-REASON message), json for "
                             "tools, markdown for the review card, sarif for code scanning, "
                             "github for workflow annotations")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the report to FILE (whole or not at all) instead of stdout")
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("-v", "--verbose", action="store_true",
                        help="text: after the answer, the revisions, the changed paths and "
                             "their surfaces, every copy compared and the evidence")
    amount.add_argument("-q", "--quiet", action="store_true",
                        help="print the verdict alone in the format's sense: the Runtime "
                             "impact line, github's verdict annotation; json and sarif stay "
                             "whole (with -o, the full report still goes to FILE); the exit "
                             "code is unchanged")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="impact", description=(
        "Which hand-kept Python/C++ kernel contracts a git change touches, and whether "
        "it breaks them."))
    parser.add_argument("--version", action="version", version=f"impact {tool_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    report = sub.add_parser("report", help="report on a change (a PR, range, commit or worktree)")
    _add_input_forms(report)
    _add_output(report)
    report.add_argument("--emit", metavar="FILE",
                        help="fold an emit file made by 'impact emit' for these revisions")
    report.add_argument("--fail-on", choices=list(FAIL_ON), default=None,
                        help="gate: exit 0 unless the verdict is BREAKS (breaks), BREAKS or "
                             "NEEDS-DEVICE (needs-device), or never (never); errors still "
                             "exit 3 or 4 (default: the base's [tool.impact] fail-on, else "
                             "the exit code says the verdict)")
    report.add_argument("--run-emit", action="store_true",
                        help="run the emitter first and fold what it finds")
    report.add_argument("--untrusted-head", action="store_true",
                        help="the head's own code is not trusted (a pull request from a "
                             "fork): emit results may raise severity, never fold a row")
    report.add_argument("--jobs", type=_positive, default=None,
                        help="emitter children at once (default: the cores)")
    report.add_argument("--baseline", metavar="FILE",
                        help="a baseline 'impact audit --baseline' wrote: the findings it "
                             "recorded, their copies unchanged, are shown as baselined and "
                             "move no verdict")
    _add_cache(report)
    emit = sub.add_parser("emit", help="build every shipped variant at base and head in "
                                       "sandboxed children; write the emit file")
    _add_input_forms(emit)
    emit.add_argument("-o", "--output", metavar="FILE",
                      help="the emit file to write (whole or not at all); required")
    emit.add_argument("--jobs", type=_positive, default=None,
                      help="children at once (default: the cores)")
    emit.add_argument("--shard", metavar="K/N",
                      help="build slice K of N (1 <= K <= N) of the variants, balanced by "
                           "family cost; join the N files with 'impact emit merge'")
    emit.add_argument("--untrusted-head", action="store_true",
                      help="the head's own code is not trusted: its results are neither read "
                           "from nor written to the cache of built variants")
    emit_sub = emit.add_subparsers(dest="emit_action", parser_class=_Parser,
                                   metavar="{merge}")
    merge = emit_sub.add_parser("merge", help="join the files of 'impact emit --shard K/N' "
                                              "into one emit file")
    merge.add_argument("slices", nargs="+", metavar="FILE", help="every slice, 1..N once each")
    merge.add_argument("-o", "--output", dest="merge_output", metavar="FILE", required=True,
                       help="the merged emit file to write (whole or not at all)")
    merge.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    emit.add_argument("--timeout", type=float, default=900.0,
                      help="seconds a child may run before its process group is ended")
    emit.add_argument("--family-budget", type=float, default=20.0,
                      help="CPU seconds per family build and per family's support-predicate "
                           "probes (past it: timed-out, Pack-time INCOMPLETE)")
    _add_cache(emit)
    emit.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    facts = sub.add_parser("facts", help="print, as JSON, the facts impact sees in some files")
    facts.add_argument("--repo", default=".", help=REPO_HELP)
    facts.add_argument("--rev", default="HEAD", help="the revision to read (default: HEAD)")
    facts.add_argument("--surface-map", metavar="NAME|PATH", help="as for report")
    facts.add_argument("paths", nargs="+", metavar="PATH", help="repository-relative file paths")
    facts.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    _add_cache(facts)
    facts.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    explain = sub.add_parser("explain", help="what a contract check checks, and why")
    explain.add_argument("contract", nargs="?",
                         help="a contract name, e.g. kernargs (none: list every contract)")
    explain.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    cache = sub.add_parser("cache", help="show or empty the cache folder (the fact cache "
                                         "and the emitter's cache of built variants)")
    cache.add_argument("action", choices=["info", "clear"],
                       help="info: the folder, its entries and size, per store (facts, "
                            "emit); clear: delete every entry of both")
    _add_cache(cache, switch=False)
    cache.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    demo = sub.add_parser("demo", help="build a demo repository from the bundled fixture tree "
                                       "and report on it")
    demo.add_argument("--keep", metavar="DIR",
                      help="build the demo repository in DIR (new or empty) and keep it")
    _add_output(demo)
    _add_device_commands(sub)
    _add_gate_command(sub)
    _add_tree_commands(sub)
    return parser


def _add_gate_command(sub: argparse._SubParsersAction) -> None:
    """`impact gate`: report, device runs, validation, one document (impact/gate.py)."""
    gate = sub.add_parser("gate", help="from a change to evidence: the report, the device "
                                       "runs it names validated on the GPU here, one document")
    _add_input_forms(gate)
    gate.add_argument("-o", "--output", default="gate.json", metavar="FILE",
                      help="the gate document (the report and the validation are kept beside "
                           "it as FILE's stem + .report.json and .validation.json)")
    gate.add_argument("--require-arch", action="append", default=[], metavar="ARCH",
                      help="an arch the gate needs evidence on when the report names every "
                           "arch the map ships (repeatable; default: the GPU validated here)")
    gate.add_argument("--untrusted-head", action="store_true",
                      help="as for report: emit results never fold a row")
    gate.add_argument("--package", metavar="NAME", help="as for validate")
    gate.add_argument("--samples", type=int, default=10, help="idle samples (10)")
    gate.add_argument("--interval", type=float, default=1.0, help="seconds between (1)")
    gate.add_argument("--lock-dir", default="/tmp", metavar="D")
    gate.add_argument("--timeout", type=float, default=1800.0,
                      help="seconds per build, test or bench run (1800)")
    gate.add_argument("--vram-only", action="store_true", help="as for validate")
    gate.add_argument("--python", default=sys.executable,
                      help="the interpreter that builds and runs the tests")
    gate.add_argument("--keep", action="store_true", help="keep validate's scratch folders")
    _install_options(gate, map_flag=False)
    _add_cache(gate)
    gate.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    gate_sub = gate.add_subparsers(dest="gate_action", parser_class=_Parser,
                                   metavar="{matrix,join}")
    plan = gate_sub.add_parser("matrix", help="the archs a CI should validate a report on, "
                                              "as JSON for a job matrix")
    plan.add_argument("report", metavar="REPORT.json")
    plan.add_argument("--arch", action="append", default=[], dest="available",
                      help="an arch the CI has GPU runners for (repeatable)")
    plan.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    joined = gate_sub.add_parser("join", help="the gate of a report and the validation "
                                              "documents its per-arch jobs wrote")
    joined.add_argument("report", metavar="REPORT.json")
    joined.add_argument("validations", nargs="*", metavar="VALIDATION.json")
    joined.add_argument("-o", "--output", dest="join_output", default="gate.json",
                        metavar="FILE", help="the gate document (whole or not at all)")
    joined.add_argument("--require-arch", action="append", default=[], dest="join_required",
                        metavar="ARCH", help="an arch the gate needs evidence on (repeatable;"
                                             " a missing one leaves the gate INCONCLUSIVE)")
    joined.add_argument("--debug", action="store_true", help="show tracebacks of errors")


def _gate_command(args: argparse.Namespace) -> int:
    """`impact gate`, `impact gate matrix`, `impact gate join`: the gate's line on stdout,
    its own exit code (0 PASS, 1 BLOCK or NEEDS_WORK, 2 INCONCLUSIVE)."""
    import json

    from impact import gate
    from impact.render.words.report import printable
    from impact.validate.run import Options

    if args.gate_action == "matrix":
        sys.stdout.write(json.dumps(gate.matrix(args.report, args.available),
                                    sort_keys=True) + "\n")
        return EXIT_NONE
    if args.gate_action == "join":
        doc = gate.join(args.report, args.validations, args.join_required)
        write_output(json.dumps(doc, indent=2, sort_keys=True) + "\n", args.join_output)
        output = args.join_output
    else:
        options = Options(repo=None, base=None, head=None, package=args.package,
                          samples=args.samples, interval=args.interval,
                          lock_dir=args.lock_dir, timeout=args.timeout, python=args.python,
                          keep=args.keep,
                          basis="vram-only" if args.vram_only else "activity+vram",
                          python_roots=tuple(args.python_root) or None,
                          install=args.install, env=_env_pairs(args.env))
        report_options = dict(repo=args.repo, base=args.base, head=args.head,
                              range=args.range, commit=args.commit, worktree=args.worktree,
                              target_tip=args.target_tip, surface_map=args.surface_map,
                              untrusted_head=args.untrusted_head, session=_session(args))
        doc = gate.run(report_options, options, Path(args.output), args.require_arch)
        output = args.output
    sys.stdout.write(f"{printable(doc['line'])} ({printable(output)})\n")
    for reason in doc["reasons"]:
        sys.stdout.write(f"  {printable(reason)}\n")
    return int(doc["process_exit_code"])


TREE_FORMATS = ("json", "markdown", "text")


def _add_tree_commands(sub: argparse._SubParsersAction) -> None:
    """`impact audit` (one tree against itself) and `impact queue` (pull requests alone
    and two at a time onto one target)."""
    waive = sub.add_parser("waive", help="acknowledge a reviewed finding in "
                           ".impact/waivers.toml, with a reason and a last day")
    waive.add_argument("finding", metavar="ID",
                       help="the finding's id (a JSON report's rows carry it as 'finding')")
    waive.add_argument("--reason", required=True, help="why the finding is accepted")
    waive.add_argument("--expires", metavar="YYYY-MM-DD", type=_day,
                       help="the last day the waiver holds (default: 90 days from today)")
    _add_input_forms(waive)
    waive.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    audit = sub.add_parser("audit", help="check every contract of one revision against "
                                         "itself: the drift it holds, both sides each")
    audit.add_argument("rev", nargs="?", default="HEAD", help="the revision (default: HEAD)")
    audit.add_argument("--repo", default=".", help=REPO_HELP)
    audit.add_argument("--surface-map", metavar="NAME|PATH", help="as for report (default: "
                       "the revision's own .impact/surface.toml, else the built-in that fits)")
    audit.add_argument("--baseline", metavar="FILE",
                       help="write today's findings to FILE (whole or not at all) for "
                            "'impact report --baseline FILE' to honour")
    audit.add_argument("--against", metavar="FILE",
                       help="a baseline written before: its findings, copies unchanged, "
                            "are shown as baselined and do not fail the audit")
    queue = sub.add_parser("queue", help="each pull request merged alone onto a target, "
                                         "and each pair that shares a contract subject "
                                         "merged together: pairs that break together")
    queue.add_argument("items", nargs="+", metavar="PR",
                       help="pull request revisions or ref patterns ('pr/*'); with --merge, "
                            "the JSON files of every --shard K/N")
    queue.add_argument("--repo", default=".", help=REPO_HELP)
    queue.add_argument("--target", metavar="T", help="the branch the pull requests target")
    queue.add_argument("--surface-map", metavar="NAME|PATH",
                       help="as for report (default: the target's own map, else the "
                            "built-in that fits)")
    queue.add_argument("--shard", metavar="K/N",
                       help="analyse slice K of N of the pairs (every pull request alone "
                            "in each); join the N JSON files with --merge")
    queue.add_argument("--merge", action="store_true",
                       help="join the JSON files of 'impact queue --shard K/N' given as PR")
    for parser in (audit, queue):
        parser.add_argument("--format", choices=TREE_FORMATS, default="text",
                            help="text for people (default), json for tools, markdown for "
                                 "the review card")
        parser.add_argument("-o", "--output", metavar="FILE",
                            help="write to FILE (whole or not at all) instead of stdout")
        _add_cache(parser)
        parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")


def _tree_command(args: argparse.Namespace) -> int:
    """Run audit or queue; the exit code is the verdict's (impact.rollup)."""
    from impact.render.queue import AUDIT_RENDERERS, QUEUE_RENDERERS

    if args.command == "audit":
        document = api.audit(args.repo, rev=args.rev, surface_map=args.surface_map,
                             baseline=args.baseline, against=args.against,
                             session=_session(args))
        _write(AUDIT_RENDERERS[args.format](document), args.output)
        return int(document["verdict"]["exit_code"])
    if args.merge:
        document = api.merge_queues(args.items)
    else:
        if not args.target:
            raise BadUsage("impact queue needs --target T",
                           "name the branch the pull requests target, e.g. --target main")
        from emit.shard import parse_shard

        document = api.queue(args.repo, target=args.target, prs=args.items,
                             surface_map=args.surface_map,
                             shard=parse_shard(args.shard) if args.shard else None,
                             session=_session(args))
    _write(QUEUE_RENDERERS[args.format](document), args.output)
    return int(document["verdict"]["exit_code"])


def _add_device_commands(sub: argparse._SubParsersAction) -> None:
    """`impact validate` and `impact verify`: the device runs, on one locked idle GPU."""
    validate = sub.add_parser("validate", help="run the device runs on base and head on one "
                                               "locked idle GPU; write validation_report.json")
    validate.add_argument("--repo", help="the repository (default: the report's, else '.')")
    validate.add_argument("--base", help="the base revision (default: the report's)")
    validate.add_argument("--head", help="the head revision (default: the report's)")
    validate.add_argument("--target-tip", metavar="T",
                          help="merge head onto T and test that (default: the report's tip, "
                               "else the base)")
    validate.add_argument("--from-report", metavar="R.json",
                          help="take tests and bench commands from this impact JSON report's "
                               "device_runs (it must be about the same base and head)")
    validate.add_argument("--test", action="append", default=[], metavar="T",
                          help="a pytest target or script path (repeatable)")
    validate.add_argument("--bench", action="append", default=[], metavar="CMD",
                          help="a bench shell command, run base/head/base (repeatable)")
    validate.add_argument("--package", metavar="NAME",
                          help="the package under test, for the import check (default with "
                               "--from-report: the one package its device_runs name)")
    validate.add_argument("-o", "--output", default="validation_report.json", metavar="FILE")
    validate.add_argument("--samples", type=int, default=10, help="idle samples (10)")
    validate.add_argument("--interval", type=float, default=1.0, help="seconds between (1)")
    validate.add_argument("--lock-dir", default="/tmp", metavar="D",
                          help="folder of the GPU lock files (/tmp)")
    validate.add_argument("--timeout", type=float, default=1800.0,
                          help="seconds per test or bench run (1800)")
    validate.add_argument("--vram-only", action="store_true",
                          help="accept a GPU whose utilisation cannot be read, on VRAM alone "
                               "(recorded as idleness_basis vram-only)")
    validate.add_argument("--python", default=sys.executable,
                          help="the interpreter that runs the tests (default: this one)")
    validate.add_argument("--keep", action="store_true",
                          help="keep the scratch folders (their paths are in the report)")
    _install_options(validate)
    validate.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    verify = sub.add_parser("verify", help="one command on one locked idle GPU; one JSON "
                                           "artifact with its raw output beside it")
    verify.add_argument("--arch", help="the architecture the GPU must have (e.g. sm_90, gfx950)")
    verify.add_argument("-o", "--output", default="verify.json", metavar="FILE")
    verify.add_argument("--package", action="append", default=[], metavar="NAME",
                        help="a package whose import origin to record (repeatable)")
    verify.add_argument("--samples", type=int, default=10, help="idle samples (10)")
    verify.add_argument("--interval", type=float, default=1.0, help="seconds between (1)")
    verify.add_argument("--lock-dir", default="/tmp", metavar="D")
    verify.add_argument("--timeout", type=float, default=1800.0, help="seconds the command may run")
    verify.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    verify.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD...",
                        help="the command to run")


def _install_options(parser: argparse.ArgumentParser, *, map_flag: bool = True) -> None:
    """How validate puts each side on the import path (impact/validate/install.py)."""
    parser.add_argument("--install", choices=("auto", "build", "roots"), default="auto",
                        help="auto (default): the map's python_roots, else the project's own "
                             "packaging built into a folder per side, else the tree's root; "
                             "build: always build; roots: only the python roots")
    parser.add_argument("--python-root", action="append", default=[], metavar="DIR",
                        help="a folder of the tree that holds the package (e.g. src); "
                             "repeatable; default: the report's or the map's python_roots")
    if map_flag:  # gate has its own, the report's
        parser.add_argument("--surface-map", metavar="PATH",
                            help="the map whose python_roots to use (default: the "
                                 "report's, else the base's .impact/surface.toml)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="a variable for the build and the tests (repeatable), e.g. "
                             "MAX_JOBS=8 or a project's FORCE_BUILD switch")


def _env_pairs(pairs: list[str]) -> dict[str, str]:
    """--env NAME=VALUE pairs, each refused with one line when it has no '='."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not name.replace("_", "a").isalnum():
            raise BadUsage(f"--env '{pair}' is not NAME=VALUE",
                           "write it as --env MAX_JOBS=8")
        out[name] = value
    return out


def _validate_options(args: argparse.Namespace) -> Any:
    """The validate Options of a command line (validate's own, or gate's)."""
    from impact.validate.run import Options

    return Options(repo=args.repo, base=args.base, head=args.head,
                   target_tip=args.target_tip, from_report=getattr(args, "from_report", None),
                   tests=getattr(args, "test", []), bench=getattr(args, "bench", []),
                   package=args.package, output=args.output, samples=args.samples,
                   interval=args.interval, lock_dir=args.lock_dir, timeout=args.timeout,
                   python=args.python, keep=args.keep,
                   basis="vram-only" if args.vram_only else "activity+vram",
                   python_roots=tuple(args.python_root) or None,
                   surface_map=args.surface_map, install=args.install,
                   env=_env_pairs(args.env))


def _device_command(args: argparse.Namespace) -> int:
    """Run validate or verify; the exit code is the one the document records."""
    if args.command == "validate":
        from impact.render.words.report import printable
        from impact.render.words.validate import inconclusive_advice
        from impact.validate.run import validate
        from impact.validate.verdict import SATISFIED, StageStatus, Verdict

        document = validate(_validate_options(args))
        sys.stdout.write(f"Validation: {document['verdict']} ({printable(args.output)})\n")
        if document["verdict"] == Verdict.INCONCLUSIVE:
            unsatisfied = [(name, stage["status"], stage["reason"])
                           for name, stage in document["stages"].items()
                           if stage["status"] != SATISFIED.get(name, StageStatus.PASS)]
            for line in inconclusive_advice(unsatisfied):
                sys.stdout.write(f"  {printable(line)}\n")
        return int(document["process_exit_code"])
    from impact.validate.verify import VerifyOptions, verify

    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    document = verify(VerifyOptions(command=command, output=args.output, arch=args.arch,
                                    packages=args.package, samples=args.samples,
                                    interval=args.interval, lock_dir=args.lock_dir,
                                    timeout=args.timeout))
    sys.stdout.write(f"Verify: {document['verdict']} ({args.output})\n")
    return int(document["process_exit_code"])


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(text, output)


def _session(args: argparse.Namespace) -> Session:
    """The Session of this one command, over the cache its options ask for
    (--cache-dir, --no-cache)."""
    return Session.for_command(getattr(args, "cache_dir", None),
                               use_cache=not getattr(args, "no_cache", False))


def _cache_command(args: argparse.Namespace) -> int:
    """`impact cache info|clear`: the three stores of the cache folder, the facts of
    parsed files (`facts/`), the built variants of the emitter (`emit/`) and the stored
    reports (`reports/`), each with its own size bound; the totals come first."""
    session = _session(args)
    folder = session.cache_dir
    if args.action == "clear":
        gone = session.clear_cache()
        entries = sum(usage.entries for _, usage in gone)
        parts = ", ".join(f"{name} {usage.entries}" for name, usage in gone)
        sys.stdout.write(f"impact cache: cleared {folder}: {entries} entries, "
                         f"{_size(sum(usage.size for _, usage in gone))} ({parts})\n")
        return EXIT_NONE
    usages = session.cache_usage()
    lines = [f"folder: {folder}", f"entries: {sum(u.entries for _, u in usages)}",
             f"size: {_size(sum(u.size for _, u in usages))} "
             f"(limit {_size(usages[0][1].limit)} per store)"]
    lines += [f"{name}: {u.entries} entries, {_size(u.size)} (limit {_size(u.limit)})"
              for name, u in usages]
    sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_NONE


def _size(count: int) -> str:
    return f"{count} bytes" if count < 1024 * 1024 else f"{count / (1024 * 1024):.1f} MB"


def _run(args: argparse.Namespace) -> int:
    if args.command == "cache":
        return _cache_command(args)
    if args.command in ("validate", "verify"):
        return _device_command(args)
    if args.command == "gate":
        return _gate_command(args)
    if args.command == "explain":
        sys.stdout.write(api.explain(args.contract) + "\n")
        return EXIT_NONE
    if args.command == "emit":
        return _emit_command(args)
    if args.command in ("audit", "queue"):
        return _tree_command(args)
    if args.command == "waive":
        path, subject = api.waive(
            args.repo, args.finding, reason=args.reason, expires=args.expires,
            session=_session(args), base=args.base, head=args.head, range=args.range,
            commit=args.commit, worktree=args.worktree, target_tip=args.target_tip,
            surface_map=args.surface_map)
        sys.stdout.write(f"impact waive: {subject} ({args.finding}) written to {path}; commit "
                         "it: reports whose base holds it list the finding as waived\n")
        return EXIT_NONE
    if args.command == "facts":
        from impact.factsdoc import facts_json

        document = api.read_facts(args.repo, paths=args.paths, rev=args.rev,
                                  surface_map=args.surface_map, session=_session(args))
        _write(facts_json(document), args.output)
        return EXIT_NONE
    progress = Progress(progress_stream())
    try:
        report = _report(args, progress)
        progress.stage("writing the report")
        # A flag wins; else the base's [tool.impact] (impact/policy.py); else the default.
        policy = report.policy
        fmt = args.format or (policy.format if policy else None) or "text"
        text = report.render(fmt, verbose=args.verbose)
    finally:
        progress.close()
    if args.quiet:
        if args.output is not None:
            _write(text, args.output)
        sys.stdout.write(report.quiet(fmt))
    else:
        _write(text, args.output)
    if args.command == "demo":
        return EXIT_NONE  # the demo ran; its verdict is in the output, not a failure
    fail_on = getattr(args, "fail_on", None) or (policy.fail_on if policy else None)
    if fail_on is not None and not fails(report.exit_code, fail_on):
        return EXIT_NONE  # the gate passes this verdict
    return report.exit_code  # decided by impact.rollup


def _report(args: argparse.Namespace, progress: Progress) -> api.Report:
    """The report of `report` or `demo`, telling `progress` each stage."""
    if args.command == "demo":
        from impact.demo import demo_report

        return demo_report(keep=args.keep, progress=progress.stage)
    return api.report(args.repo, base=args.base, head=args.head, range=args.range,
                      commit=args.commit, worktree=args.worktree, target_tip=args.target_tip,
                      surface_map=args.surface_map, emit=args.emit, run_emit=args.run_emit,
                      untrusted_head=args.untrusted_head, jobs=args.jobs,
                      session=_session(args), progress=progress.stage, bar=progress.stream,
                      baseline=args.baseline)


def _emit_command(args: argparse.Namespace) -> int:
    """`impact emit` (build, or one --shard slice) and `impact emit merge`."""
    if args.emit_action == "merge":
        api.merge_emits(args.slices, output=args.merge_output)
        return EXIT_NONE
    from emit.shard import parse_shard

    if args.output is None:
        raise BadUsage("impact emit needs -o FILE", "name the emit file to write, e.g. "
                       "-o emit.json")
    shard = parse_shard(args.shard) if args.shard else None
    api.emit(args.repo, output=args.output, base=args.base, head=args.head, range=args.range,
             commit=args.commit, worktree=args.worktree, target_tip=args.target_tip,
             surface_map=args.surface_map, jobs=args.jobs, shard=shard, timeout=args.timeout,
             family_budget=args.family_budget, untrusted_head=args.untrusted_head,
             session=_session(args), bar=progress_stream())
    return EXIT_NONE


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the documented exit code."""
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except (Exception, KeyboardInterrupt) as exc:
        if args.debug and not isinstance(exc, KeyboardInterrupt):
            raise
        line, code = failure(exc)
        from impact.render.words import printable  # here: a clean run loads no renderer

        print(printable(line), file=sys.stderr)  # a revision's name cannot forge a line
        return code


if __name__ == "__main__":
    sys.exit(main())
