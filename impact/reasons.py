"""Why a row has its status, and what each evidence hop saw: enumerations, not sentences.

Maintainers: checks name a `Reason` (and put the values it needs in the row's
`details`) and a `Step` for each evidence hop (values in the hop's `args`);
`impact/render/words/rows.py` holds the one table that turns each member into
words, for every format. A member without a sentence there fails the tests. Members are
grouped by the check that uses them; add to your check's group only.
"""

from __future__ import annotations

import enum


class Reason(enum.StrEnum):
    """Why a row has its status."""

    # --- surface (and the file-level contracts it hands to: build, deps, dvc, ...)
    SURFACE_FILE_ADDED = "surface-file-added"
    SURFACE_FILE_REMOVED = "surface-file-removed"
    UNBUILT_UNIT_REMOVED = "unbuilt-unit-removed"
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

    # --- pack-launch
    PACK_LAUNCH_COUNT_DIFFERS = "pack-launch-count-differs"
    PACK_LAUNCH_ARGUMENT_MISPLACED = "pack-launch-argument-misplaced"
    PACK_LAUNCH_ARGUMENT_KIND_DIFFERS = "pack-launch-argument-kind-differs"

    # --- metadata-field
    FIELD_NOT_IN_KMD = "field-not-in-kmd"
    METADATA_FIELD_NOT_READ = "metadata-field-not-read"

    # --- conflict
    MERGED_VIEW_NOT_COMPUTED = "merged-view-not-computed"
    SURFACE_FILES_CONFLICT = "surface-files-conflict"

    # --- kernargs
    RESTATED_BUILDER_GONE = "restated-builder-gone"
    BUILDER_NOT_FOUND = "builder-not-found"
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
    ARGUMENT_MADE_CONDITIONAL_ON_PYTHON_SIDE_ONLY = "argument-made-conditional-on-python-side-only"
    ARGUMENT_ADDED_ON_CPP_SIDE_ONLY = "argument-added-on-cpp-side-only"
    ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY = "argument-removed-on-cpp-side-only"
    ARGUMENT_NAMES_DIFFER = "argument-names-differ"

    # --- launch-surface
    PROFILE_REMOVED = "profile-removed"
    PROFILE_UNREADABLE = "profile-unreadable"
    LAUNCH_ENTRY_REMOVED = "launch-entry-removed"
    LAUNCH_ENTRY_ADDED = "launch-entry-added"
    LAUNCH_ENTRY_EDITED = "launch-entry-edited"
    PYTHON_SOURCE_UNREADABLE = "python-source-unreadable"
    PYTHON_SOURCE_UNREADABLE_AT_BASE = "python-source-unreadable-at-base"
    PYTHON_SOURCE_FILE_MISSING = "python-source-file-missing"
    PYTHON_SOURCE_FUNCTION_MISSING = "python-source-function-missing"
    MIRROR_FILE_MISSING = "mirror-file-missing"
    MIRROR_UNREADABLE = "mirror-unreadable"
    MIRROR_UNREADABLE_AT_BASE = "mirror-unreadable-at-base"
    MIRROR_SYMBOL_MISSING = "mirror-symbol-missing"
    HOST_SIDE_CHANGED_NO_MIRROR = "host-side-changed-no-mirror"
    HOST_SIDE_CHANGED_MIRROR_MUST_RESTATE = "host-side-changed-mirror-must-restate"
    HOST_SIDE_AND_MIRROR_CHANGED = "host-side-and-mirror-changed"
    MIRROR_CHANGED_WITHOUT_PYTHON_SOURCE = "mirror-changed-without-python-source"

    # --- removed-symbol
    REMOVED_WHILE_STILL_IMPORTED = "removed-while-still-imported"
    REMOVED_WHILE_STILL_READ = "removed-while-still-read"
    MEMBER_REMOVED_MAY_STILL_BE_READ = "member-removed-may-still-be-read"
    RESIGNED_WHILE_STILL_CALLED = "resigned-while-still-called"

    # --- descriptor-symbol
    DESCRIPTOR_UNREADABLE_SYMBOLS_UNCHECKED = "descriptor-unreadable-symbols-unchecked"
    SYMBOL_NAMED_NO_PACK_DECLARES = "symbol-named-no-pack-declares"
    SYMBOL_NAMED_UNDECLARED_PACK_UNREADABLE = "symbol-named-undeclared-pack-unreadable"
    PACK_SYMBOL_NO_LONGER_NAMED = "pack-symbol-no-longer-named"

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
    PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER = "parameter-name-differs-no-keyword-caller"
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
    COPY_UNREADABLE = "copy-unreadable"
    BINDING_NOT_UNDERSTOOD = "binding-not-understood"
    CHANGED_ALIKE_ON_EVERY_SIDE = "changed-alike-on-every-side"
    # bindings, session 3 (helper `bindings`): callers are copies too
    TENSOR_ABI_DIFFERS = "tensor-abi-differs"
    MISMATCH_RESOLVED = "mismatch-resolved"
    # bindings judged by calls: every concrete call bound as Python / pybind11 / torch would
    CALL_DOES_NOT_BIND = "call-does-not-bind"
    CALL_ARGUMENT_MOVED = "call-argument-moved"
    CALL_VALUE_KIND_DIFFERS = "call-value-kind-differs"
    CALL_NOW_BINDS = "call-now-binds"
    CALL_PASSES_OTHER_VALUES = "call-passes-other-values"
    CALL_ADDED = "call-added"
    CALL_GONE = "call-gone"
    DECLARATION_WITHOUT_DEFINITION = "declaration-without-definition"
    DEFAULT_FILLS_DIFFERENTLY = "default-fills-differently"
    PARAMETERS_RENAMED_ALIKE = "parameters-renamed-alike"
    # forwarded calls (`cute.compile(obj, ...)` binds to `obj.__call__`)
    FORWARDED_CALLEE_UNRESOLVED = "forwarded-callee-unresolved"
    FORWARDED_CALLEE_NOT_READ = "forwarded-callee-not-read"
    FORWARDED_CALLEE_SIGNATURE_UNKNOWN = "forwarded-callee-signature-unknown"

    # --- extension-build
    EXTENSION_BUILD_CHANGED = "extension-build-changed"
    BUILD_FILE_NOT_READ = "build-file-not-read"
    PREBUILD_STEP_CHANGED = "prebuild-step-changed"

    # --- emit fold
    FOLDED_EQUAL_BUILD = "folded-equal-build"

    # --- surface-map
    SURFACE_MAP_EDITED = "surface-map-edited"
    SURFACE_MAP_REFUSED = "surface-map-refused"

    # --- unreadable
    FILE_NOT_READABLE = "file-not-readable"

    # --- kernargs: argument by argument (cppread)
    LIST_CONSTRUCT_NOT_READ = "list-construct-not-read"
    BUILDER_ARGUMENTS_NOT_READ = "builder-arguments-not-read"
    LAUNCH_ARGUMENT_MISPLACED = "launch-argument-misplaced"
    LAUNCH_ARGUMENT_KIND_DIFFERS = "launch-argument-kind-differs"
    UNNAMED_LIST_COUNT_DIFFERS = "unnamed-list-count-differs"


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
    COPY_NOT_PAIRED = "copy-not-paired"
    PACK_READS_FIELD = "pack-reads-field"
    LIST_ENTRY_AT = "list-entry-at"
    KMD_DECLARES_NO_FIELD = "kmd-declares-no-field"
    PACK_READS_UNSETTLED_FIELD = "pack-reads-unsettled-field"
    ONLY_OTHER_ARCH_BUILDER = "only-other-arch-builder"
    LIST_HAS_ENTRIES = "list-has-entries"
    LAUNCH_PASSES = "launch-passes"
    BUILDER_DECLARES = "builder-declares"
    VARIANT_BUILDS_IT = "variant-builds-it"
    LAUNCH_ARGUMENT_AT = "launch-argument-at"
    BUILDER_PARAM_AT = "builder-param-at"
    LIST_CONSTRUCT_AT = "list-construct-at"
    BUILDER_CONSTRUCT_AT = "builder-construct-at"

    # --- launch-surface
    PROFILE_REMOVED_WITH_ENTRY = "profile-removed-with-entry"
    PROFILE_DOES_NOT_PARSE = "profile-does-not-parse"
    LAUNCH_ENTRY_REMOVED_FROM_PROFILE = "launch-entry-removed-from-profile"
    LAUNCH_ENTRY_ADDED_TO_PROFILE = "launch-entry-added-to-profile"
    LAUNCH_ENTRY_EDITED_IN_PROFILE = "launch-entry-edited-in-profile"
    PYTHON_SOURCE_DOES_NOT_PARSE = "python-source-does-not-parse"
    PYTHON_SOURCE_DID_NOT_PARSE_AT_BASE = "python-source-did-not-parse-at-base"
    PYTHON_SOURCE_FILE_ABSENT = "python-source-file-absent"
    NO_SUCH_FUNCTION_IN_MODULE = "no-such-function-in-module"
    MODULE_CONTENT_CHANGED = "module-content-changed"
    HOST_SIDE_ADDED = "host-side-added"
    HOST_SIDE_REMOVED = "host-side-removed"
    HOST_SIDE_CHANGED = "host-side-changed"
    REACHED_HELPER_NOW_REACHED = "reached-helper-now-reached"
    REACHED_HELPER_NO_LONGER_REACHED = "reached-helper-no-longer-reached"
    REACHED_HELPER_CHANGED = "reached-helper-changed"
    MIRROR_FILE_ABSENT = "mirror-file-absent"
    MIRROR_DOES_NOT_PARSE = "mirror-does-not-parse"
    MIRROR_DID_NOT_PARSE_AT_BASE = "mirror-did-not-parse-at-base"
    MIRROR_DEFINES_NO_SYMBOL = "mirror-defines-no-symbol"
    MIRROR_CHANGED = "mirror-changed"
    MIRROR_RESTATES_IT = "mirror-restates-it"

    # --- removed-symbol
    DEFINED_AT_BASE = "defined-at-base"
    READS_IT_FROM = "reads-it-from"
    STILL_BOUND_TO = "still-bound-to"

    # --- descriptor-symbol
    DESCRIPTOR_DOES_NOT_PARSE = "descriptor-does-not-parse"
    DESCRIPTOR_NAMES_SYMBOL = "descriptor-names-symbol"
    PACK_DECLARED_IT_AT_BASE = "pack-declared-it-at-base"
    PACK_DOES_NOT_PARSE = "pack-does-not-parse"
    SYMBOL_NAMED_AT_BASE = "symbol-named-at-base"
    PACK_STILL_DECLARES_IT = "pack-still-declares-it"

    # --- variant-set
    KDP_DOES_NOT_PARSE = "kdp-does-not-parse"
    KDP_SHIPS_UNPINNED = "kdp-ships-unpinned"
    CENSUS_PINS_UNSHIPPED = "census-pins-unshipped"
    PACK_DEFINES_REGISTER = "pack-defines-register"
    TARGET_SOURCES_LACKS_PACK = "target-sources-lacks-pack"
    NO_S_PACKS_ROW = "no-s-packs-row"

    # --- bindings
    RESTATES_ARGUMENT_LIST = "restates-argument-list"

    # --- extension-build
    MODULE_DECLARED = "module-declared"
    MODULE_NO_LONGER_DECLARED = "module-no-longer-declared"
    MODULE_SOURCES_CHANGED = "module-sources-changed"
    MODULE_ARCHS_CHANGED = "module-archs-changed"
    MODULE_FLAGS_CHANGED = "module-flags-changed"
    MODULE_HOOK_CHANGED = "module-hook-changed"
    MODULE_UNRESOLVED_CHANGED = "module-unresolved-changed"
    PREBUILD_CALL_EDITED = "prebuild-call-edited"
    PREBUILD_INPUT_EDITED = "prebuild-input-edited"
    SOURCE_ROOT_NAMED_EDITED = "source-root-named-edited"

    # --- emit fold
    EMIT_FAMILIES_EQUAL = "emit-families-equal"
    EMIT_BUILDER_EQUAL = "emit-builder-equal"


class Refusal(enum.StrEnum):
    """Why a call does not bind (each raises TypeError); its sentence is in
    impact/render/words/rows.py (REFUSALS), filled from the refusal's values."""

    TOO_MANY = "too-many-positional"  # given, most
    NO_NAMES = "keyword-without-names"  # name
    UNKNOWN_KEYWORD = "unknown-keyword"  # name
    GIVEN_TWICE = "given-twice"  # name
    MISSING = "missing"  # missing (a list of labels)
