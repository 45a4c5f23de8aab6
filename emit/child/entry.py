"""The child's command line: read the arguments and the rules, record reads when asked,
write the document (an error document when anything fails as a whole), exit.

Maintainers: the reads recorder is installed before any other step (before tree code can
run); the process exits 0 once the document is written, even when variants failed, and
without waiting for a worker thread still running tree code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from emit.child.context import Context, read_rules
from emit.child.document import error_document, make_document, write_document
from emit.child.reads import Reads

DEFAULT_BUDGET = 20.0


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="emit-child")
    p.add_argument("--tree", required=True, type=Path)
    p.add_argument("--python-root", action="append", default=[], dest="python_roots")
    p.add_argument("--descriptor-root", required=True)
    p.add_argument("--rules", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--family-budget", type=float, default=DEFAULT_BUDGET)
    p.add_argument("--flavor", default=None)
    p.add_argument("--only", type=Path, default=None)
    p.add_argument("--reads", type=Path, default=None)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.dont_write_bytecode = True
    reads = None
    if args.reads is not None:
        try:  # before any tree code runs; without it no reads file is written
            recorder = Reads(args.tree.resolve())
            recorder.install()
            reads = recorder
        except Exception as exc:
            print(f"emit-child: cannot record reads: {exc}", file=sys.stderr)
    tree = args.tree.resolve()
    roots = []
    for rel in args.python_roots:
        root = (tree / rel).resolve()
        roots.append(root)
    sys.path[:0] = [str(r) for r in roots]
    abandoned = False
    ctx = Context(tree, roots, args.descriptor_root, {})
    try:
        ctx.rules = read_rules(args.rules)
        only = None
        if args.only is not None:
            only = set(json.loads(args.only.read_text(encoding="utf-8"))["families"])
        doc, abandoned = make_document(ctx, args.flavor, max(args.family_budget, 0.01), only,
                                       reads)
    except BaseException as exc:  # still write a document
        doc = error_document(ctx.describe(exc))
    try:
        if reads is not None:
            reads.window(None)
            write_document(reads.document(), args.reads)
        write_document(doc, args.out)
    except OSError as exc:
        print(f"emit-child: cannot write {args.out}: {exc}", file=sys.stderr)
        return 2
    if abandoned:
        # A worker thread is still running tree code: leave without waiting for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
