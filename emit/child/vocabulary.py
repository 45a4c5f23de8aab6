"""The closed vocabularies of the emitter's documents, spelled once for the child that
writes its document, the parent that writes the emit file and the fold that reads both.

Maintainers: a module of the child, so it imports nothing but the standard library (the
import-linter contract that isolates the child names it); the parent's own vocabulary
(`RunStatus`) lives here too, so every status of the emitter's documents has one home
that all three may import. The values are data: impact/contracts/emit.schema.json and
emit_child.schema.json list the same ones. Code compares against these members, never
against a string literal.
"""

from __future__ import annotations

import enum


class RunStatus(enum.StrEnum):
    """How a revision's children ended, as the emit file records it."""

    NOT_STARTED = "not-started"
    RUNNING = "running"  # in memory only, while its children run: never written
    DONE = "done"
    CRASHED = "crashed"
    TIMED_OUT = "timed-out"


class BuildStatus(enum.StrEnum):
    """How a family, or one of its variants, was built by the child."""

    BUILT = "built"
    FAILED = "failed"
    TIMED_OUT = "timed-out"


class TableStatus(enum.StrEnum):
    """Whether a family's support-predicate probes finished."""

    DONE = "done"
    TIMED_OUT = "timed-out"


class EnumeratedBy(enum.StrEnum):
    """Where a variant's fields came from: the tree's own enumerator, or (some or all of
    them) the KDP JSON as impact's descriptor reader read it. `KDP_JSON` is also the
    document's `enumerator` when no enumerator of the tree's ran."""

    TREE = "tree"
    KDP_JSON = "kdp-json"
