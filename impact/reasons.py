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
