"""The `impact` command: argument parsing and exit codes only.

Maintainers: each subcommand calls a library function; known errors become one
`impact: error: ...` line and their exit code, anything else exit 4, and
`--debug` re-raises so the traceback shows.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from impact.errors import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_NONE,
    BadUsage,
    ImpactError,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 3, as for any bad input."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"impact: error: {message}; see '{self.prog} --help'\n")


def _add_input_forms(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", default=".", help="the repository (default: the current folder)")
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


def _add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=["text", "json", "markdown"], default="text",
                        help="text for people, json for tools, markdown for the review card")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="write the report to FILE (whole or not at all) instead of stdout")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="impact", description=(
        "Which hand-kept Python/C++ kernel contracts a git change touches, and whether "
        "it breaks them."))
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    report = sub.add_parser("report", help="report on a change (a PR, range, commit or worktree)")
    _add_input_forms(report)
    _add_output(report)
    report.add_argument("--emit", metavar="FILE",
                        help="fold an emit file made by 'impact emit' for these revisions")
    report.add_argument("--run-emit", action="store_true",
                        help="run the emitter first and fold what it finds")
    report.add_argument("--jobs", type=int, default=2, help="emitter children at once (2)")
    emit = sub.add_parser("emit", help="build every shipped variant at base and head in a "
                                       "sandboxed child; write the emit file")
    _add_input_forms(emit)
    emit.add_argument("-o", "--output", metavar="FILE", required=True,
                      help="the emit file to write (whole or not at all)")
    emit.add_argument("--jobs", type=int, default=2, help="children at once (default 2)")
    emit.add_argument("--timeout", type=float, default=900.0,
                      help="seconds a child may run before its process group is ended")
    emit.add_argument("--family-budget", type=float, default=20.0,
                      help="seconds of support-predicate probes per family")
    emit.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    facts = sub.add_parser("facts", help="print, as JSON, the facts impact sees in some files")
    facts.add_argument("--repo", default=".", help="the repository (default: the current folder)")
    facts.add_argument("--rev", default="HEAD", help="the revision to read (default: HEAD)")
    facts.add_argument("--surface-map", metavar="NAME|PATH", help="as for report")
    facts.add_argument("paths", nargs="+", metavar="PATH", help="repository-relative file paths")
    facts.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    facts.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    explain = sub.add_parser("explain", help="what a contract check checks, and why")
    explain.add_argument("contract", help="a contract name, e.g. kernargs")
    explain.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    demo = sub.add_parser("demo", help="build a demo repository from the bundled fixture tree "
                                       "and report on it")
    demo.add_argument("--keep", metavar="DIR",
                      help="build the demo repository in DIR (new or empty) and keep it")
    _add_output(demo)
    return parser


def _write(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    target = Path(output)
    if not target.parent.is_dir():
        raise BadUsage(f"cannot write '{output}': its folder does not exist",
                       "create the folder or pick another --output path")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _run(args: argparse.Namespace) -> int:
    # Imported here so `impact --help` stays fast and import errors are reported as errors.
    from impact.render import RENDERERS

    if args.command == "explain":
        from impact.checks import REGISTRY, explain

        text = explain(args.contract)
        if text is None:
            names = ", ".join(sorted(c.name for c in REGISTRY))
            raise BadUsage(f"no contract named '{args.contract}'", f"use one of: {names}")
        sys.stdout.write(inspect.cleandoc(text) + "\n")
        return EXIT_NONE
    if args.command == "emit":
        from emit.runner import Limits, run_emit, write_emit_file
        from impact.git import open_views
        from impact.surface import load_surface_map

        views = open_views(args.repo, base=args.base, head=args.head, range=args.range,
                           commit=args.commit, worktree=args.worktree,
                           target_tip=args.target_tip)
        target = Path(args.output)
        if not target.parent.is_dir():
            raise BadUsage(f"cannot write '{args.output}': its folder does not exist",
                           "create the folder or pick another --output path")
        surface = load_surface_map(args.surface_map, views.head)
        document = run_emit(views, surface, jobs=args.jobs,
                            limits=Limits(timeout=args.timeout, family_budget=args.family_budget),
                            bar=sys.stderr if sys.stderr.isatty() else None)
        write_emit_file(document, target)
        return EXIT_NONE
    if args.command == "facts":
        from impact.factsdoc import facts_document

        _write(facts_document(args.repo, args.rev, args.paths, args.surface_map), args.output)
        return EXIT_NONE
    if args.command == "demo":
        from impact.demo import demo_report

        report = demo_report(keep=args.keep)
    else:
        from impact.git import open_views
        from impact.report import build_report
        from impact.surface import load_surface_map

        views = open_views(args.repo, base=args.base, head=args.head, range=args.range,
                           commit=args.commit, worktree=args.worktree,
                           target_tip=args.target_tip)
        given = {k: getattr(args, k) for k in ("base", "head", "range", "commit", "target_tip")}
        given = {k: v for k, v in given.items() if v}
        if args.worktree:
            given["worktree"] = "yes"
        if args.surface_map:
            given["surface_map"] = args.surface_map
        surface = load_surface_map(args.surface_map, views.head)
        emit_doc, emit_source = None, None
        if args.emit and args.run_emit:
            raise BadUsage("--emit and --run-emit exclude each other",
                           "give a file with --emit, or let --run-emit build one")
        if args.emit:
            from emit.runner import expected_trees, load_emit_file

            emit_doc = load_emit_file(args.emit, expected_trees(views, surface))
            emit_source = f"file:{args.emit}"
        elif args.run_emit:
            from emit.runner import run_emit

            emit_doc = run_emit(views, surface, jobs=args.jobs,
                                bar=sys.stderr if sys.stderr.isatty() else None)
            emit_source = "run"
        report = build_report(views, given, surface, emit_doc, emit_source)
    _write(RENDERERS[args.format](report), args.output)
    if args.command == "demo":
        return EXIT_NONE  # the demo ran; its verdict is in the output, not a failure
    return int(report["verdict"]["exit_code"])  # decided by impact.rollup


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the documented exit code."""
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except ImpactError as exc:
        if args.debug:
            raise
        print(f"impact: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("impact: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        if args.debug:
            raise
        print(f"impact: internal error: {type(exc).__name__}: {exc} "
              "(run again with --debug for the traceback, and report it)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
