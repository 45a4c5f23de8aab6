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
    RESTATED_BUILDER_GONE = "restated-builder-gone"
    LIST_BUILT_BY_HELPER_CALLS = "list-built-by-helper-calls"
    LIST_ARGUMENT_TYPE_UNKNOWN = "list-argument-type-unknown"
    BUILDER_PARAM_TYPE_UNRESOLVED = "builder-param-type-unresolved"
    BUILDER_PARAM_TYPE_UNRESOLVED_AT = "builder-param-type-unresolved-at"
    ARGUMENT_KIND_DIFFERS_BY_POSITION = "argument-kind-differs-by-position"
    LIST_AGREES_BY_POSITION = "list-agrees-by-position"
    LIST_AGREES_WITH_CONDITIONALS_OFF = "list-agrees-with-conditionals-off"
    ARGS_SIGNATURE_COUNT_DIFFERS = "args-signature-count-differs"
    LIST_AGREES_WITH_BUILDER = "list-agrees-with-builder"
    LAUNCH_COUNT_AGREES = "launch-count-agrees"
    LAUNCH_COUNT_AGREES_WITH_CONDITIONALS_OFF = "launch-count-agrees-with-conditionals-off"
    LAUNCH_COUNT_DIFFERS = "launch-count-differs"
    ARGUMENT_LIST_UNCHANGED = "argument-list-unchanged"
    ARGUMENT_LIST_CHANGED_ON_BOTH_SIDES = "argument-list-changed-on-both-sides"
    ARGUMENT_LIST_CHANGED_ON_BOTH_SIDES_CONDITIONALS_OUT = (
        "argument-list-changed-on-both-sides-conditionals-out")
    # A list's disagreement, and the same when the list was paired by closest names.
    ARGUMENT_KIND_OR_SIZE_DIFFERS = "argument-kind-or-size-differs"
    ARGUMENT_ORDER_DIFFERS = "argument-order-differs"
    ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY = "argument-added-on-python-side-only"
    ARGUMENT_REMOVED_ON_PYTHON_SIDE_ONLY = "argument-removed-on-python-side-only"
    ARGUMENT_ADDED_ON_CPP_SIDE_ONLY = "argument-added-on-cpp-side-only"
    ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY = "argument-removed-on-cpp-side-only"
    ARGUMENT_NAMES_DIFFER = "argument-names-differ"
    ARGUMENT_KIND_OR_SIZE_DIFFERS_CLOSEST = "argument-kind-or-size-differs-closest"
    ARGUMENT_ORDER_DIFFERS_CLOSEST = "argument-order-differs-closest"
    ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY_CLOSEST = "argument-added-on-python-side-only-closest"
    ARGUMENT_REMOVED_ON_PYTHON_SIDE_ONLY_CLOSEST = "argument-removed-on-python-side-only-closest"
    ARGUMENT_ADDED_ON_CPP_SIDE_ONLY_CLOSEST = "argument-added-on-cpp-side-only-closest"
    ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY_CLOSEST = "argument-removed-on-cpp-side-only-closest"
    ARGUMENT_NAMES_DIFFER_CLOSEST = "argument-names-differ-closest"

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
    BUILDER_PARAM_HAS_TYPE = "builder-param-has-type"
    BUILDER_PARAM_IS = "builder-param-is"
    LIST_ENTRY_IS = "list-entry-is"
    BUILDER_PARAM_ONLY_IF = "builder-param-only-if"
    BUILDER_PARAM_ADDED = "builder-param-added"
    BUILDER_PARAM_NOW_UNDER = "builder-param-now-under"
    BUILDER_PARAM_REMOVED = "builder-param-removed"
    COPY_PAIRED_WITH = "copy-paired-with"
    LIST_HAS_ENTRIES = "list-has-entries"
    LAUNCH_PASSES = "launch-passes"
    BUILDER_DECLARES = "builder-declares"
    VARIANT_BUILDS_IT = "variant-builds-it"

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set

    # --- bindings

    # --- emit fold
    EMIT_FAMILIES_EQUAL = "emit-families-equal"
