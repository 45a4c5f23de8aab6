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
    MERGED_VIEW_NOT_COMPUTED = "merged-view-not-computed"
    SURFACE_FILES_CONFLICT = "surface-files-conflict"

    # --- kernargs

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set
    CENSUS_WITHOUT_KDP = "census-without-kdp"
    CENSUS_NOT_UNDERSTOOD = "census-not-understood"
    KDP_NOT_UNDERSTOOD = "kdp-not-understood"
    CENSUS_HAS_NO_NAMES = "census-has-no-names"
    SHIPPED_SET_CHANGED_CENSUS_AGREES = "shipped-set-changed-census-agrees"
    VARIANT_ADDED_NOT_PINNED = "variant-added-not-pinned"
    CENSUS_DROPPED_PIN = "census-dropped-pin"
    PINNED_VARIANT_NO_LONGER_SHIPPED = "pinned-variant-no-longer-shipped"
    PINNED_VARIANT_NOT_SHIPPED = "pinned-variant-not-shipped"
    CENSUS_AND_KDP_DIFFER = "census-and-kdp-differ"
    PACK_REGISTRATION_NOT_UNDERSTOOD = "pack-registration-not-understood"
    PACK_REGISTER_NOT_FOUND = "pack-register-not-found"
    PACK_WITHOUT_S_PACKS_ROW = "pack-without-s-packs-row"
    PACK_WITHOUT_TARGET_SOURCES = "pack-without-target-sources"
    PACK_WITHOUT_REGISTRATION = "pack-without-registration"

    # --- bindings
    STUB_AND_PYARG_COUNTS_DIFFER = "stub-and-pyarg-counts-differ"
    ARGUMENTS_SWAPPED = "arguments-swapped"
    PARAMETER_NAME_DIFFERS = "parameter-name-differs"
    PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER = "parameter-name-differs-no-keyword-caller"
    DEFAULT_ON_ONE_SIDE = "default-on-one-side"
    FITS_ONLY_WITH_GUARDED_PARAMETERS = "fits-only-with-guarded-parameters"
    FITS_ONLY_WITH_GUARDED_PARAMETERS_NO_DEFAULTS = "fits-only-with-guarded-parameters-no-defaults"
    CPP_ARGUMENT_COUNT_DIFFERS = "cpp-argument-count-differs"
    CPP_ARGUMENT_COUNT_DIFFERS_NO_DEFAULTS = "cpp-argument-count-differs-no-defaults"
    MODULE_MISSING_FROM_SOURCES_MAP = "module-missing-from-sources-map"
    CTYPES_STUB_UNBOUND = "ctypes-stub-unbound"
    STUB_UNBOUND = "stub-unbound"
    PYTHON_SIDE_MISSING = "python-side-missing"
    SCHEMA_DIFFERS = "schema-differs"
    BOXED_SLOTS_DIFFER = "boxed-slots-differ"
    CALL_ARGUMENTS_OUTSIDE_SCHEMA = "call-arguments-outside-schema"
    CALL_UNKNOWN_KEYWORDS = "call-unknown-keywords"
    COPY_UNREADABLE = "copy-unreadable"
    BINDING_NOT_UNDERSTOOD = "binding-not-understood"
    CHANGED_ALIKE_ON_EVERY_SIDE = "changed-alike-on-every-side"

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
    KDP_DOES_NOT_PARSE = "kdp-does-not-parse"
    KDP_SHIPS_UNPINNED = "kdp-ships-unpinned"
    CENSUS_PINS_UNSHIPPED = "census-pins-unshipped"
    PACK_DEFINES_REGISTER = "pack-defines-register"
    TARGET_SOURCES_LACKS_PACK = "target-sources-lacks-pack"
    NO_S_PACKS_ROW = "no-s-packs-row"

    # --- bindings
    RESTATES_ARGUMENT_LIST = "restates-argument-list"

    # --- emit fold
    EMIT_FAMILIES_EQUAL = "emit-families-equal"
