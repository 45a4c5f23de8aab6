"""Why a row has its status, and what each evidence hop saw: enumerations, not sentences.

Maintainers: checks name a `Reason` (and put the values it needs in the row's
`details`) and a `Step` for each evidence hop (values in the hop's `args`);
`impact/render/words.py` holds the one table that turns each member into words,
for every format. A member without a sentence there fails the tests. Members are
grouped by the check that uses them; add to your check's group only.
"""

from __future__ import annotations

import enum


class Reason(enum.StrEnum):
    """Why a row has its status."""

    # --- surface (and the file-level contracts it hands to: build, deps, dvc, ...)
    SURFACE_FILE_ADDED = "surface-file-added"
    SURFACE_FILE_REMOVED = "surface-file-removed"
    FILE_NOT_UNDERSTOOD = "file-not-understood"
    FILE_NOT_UNDERSTOOD_AT_BASE = "file-not-understood-at-base"
    DATA_POINTER_CHANGED = "data-pointer-changed"
    ONLY_LAYOUT_CHANGED = "only-layout-changed"
    STATED_CHANGED_JUDGED_ELSEWHERE = "stated-changed-judged-elsewhere"
    CODE_BEYOND_BINDINGS_CHANGED = "code-beyond-bindings-changed"
    ENGINE_ADDED_WHILE_DORMANT = "engine-added-while-dormant"
    ENGINE_REMOVED_WHILE_DORMANT = "engine-removed-while-dormant"
    ENGINE_CHANGED_WHILE_DORMANT = "engine-changed-while-dormant"
    GENERATED_HEADER_WITHOUT_SOURCE = "generated-header-without-source"
    CONTENT_CHANGED = "content-changed"

    # --- conflict

    # --- kernargs

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set

    # --- bindings

    # --- emit fold
    FOLDED_EQUAL_BUILD = "folded-equal-build"


class Step(enum.StrEnum):
    """What one hop of a row's evidence chain saw."""

    # --- surface

    # --- conflict

    # --- kernargs

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set

    # --- bindings

    # --- emit fold
    EMIT_FAMILIES_EQUAL = "emit-families-equal"
