"""The sentence of every row's reason and every evidence hop, and how a template is filled.

Maintainers: keyed by the enumerations of `impact/reasons.py` (a member without a
sentence here fails the tests); each template names the `details` (or hop `args`) values
it reads as `{name}`. Lists are joined with commas; a field named `counts` (or
`..._counts`) holds a list of integers, written as a range when it runs on ("9 to 15"),
else "9 or 12" / "9, 11 or 13": checks pass the numbers, never a joined string. Checks
never write these words. Add to your check's group only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from string import Formatter
from typing import Any

from impact.reasons import Reason, Refusal, Step
from impact.render.words import forms

REASONS: dict[Reason, str] = {
    # --- surface
    Reason.SURFACE_FILE_ADDED: "surface file added",
    Reason.SURFACE_FILE_REMOVED: "surface file removed",
    Reason.UNBUILT_UNIT_REMOVED: "translation unit removed that no build of the base "
                                 "compiled and no file of the base names: nothing compiled "
                                 "changes",
    Reason.FILE_NOT_UNDERSTOOD: "file cannot be understood: {failure}",
    Reason.FILE_NOT_UNDERSTOOD_AT_BASE: "file could not be understood at the base",
    Reason.DATA_POINTER_CHANGED: "data pointer changed: the data it names changed",
    Reason.ONLY_LAYOUT_CHANGED: "only comments, docstrings or layout changed",
    Reason.STATED_CHANGED_JUDGED_ELSEWHERE:
        "what it states changed; the {judged_by} check compares every copy",
    Reason.CODE_BEYOND_BINDINGS_CHANGED:
        "code beyond what the bindings state changed (a body or an implementation)",
    Reason.ENGINE_ADDED_WHILE_DORMANT:
        "rocKE C++ engine file added while no build file outside rocKE names "
        "{engine_target} and the packer pins the Python backend ({pin})",
    Reason.ENGINE_REMOVED_WHILE_DORMANT:
        "rocKE C++ engine file removed while no build file outside rocKE names "
        "{engine_target} and the packer pins the Python backend ({pin})",
    Reason.ENGINE_CHANGED_WHILE_DORMANT:
        "rocKE C++ engine changed while no build file outside rocKE names "
        "{engine_target} and the packer pins the Python backend ({pin})",
    Reason.GENERATED_HEADER_WITHOUT_SOURCE: "generated header edited without its schema or flags",
    Reason.CONTENT_CHANGED: "content changed",

    # --- pack-launch
    Reason.PACK_LAUNCH_COUNT_DIFFERS:
        "launch() passes {count} arguments, the pack's own list ({list}) declares {entries}",
    Reason.PACK_LAUNCH_ARGUMENT_MISPLACED:
        "launch() passes '{argument}' as argument {position}, where the pack's own list "
        "({list}) declares '{entry}'; the list declares it as argument {declared_at}",
    Reason.PACK_LAUNCH_ARGUMENT_KIND_DIFFERS:
        "launch() passes '{argument}' ({kind}/{size}) as argument {position}, where the "
        "pack's own list ({list}) declares '{entry}' as {entry_kind}/{entry_size}",

    # --- metadata-field
    Reason.FIELD_NOT_IN_KMD:
        "the matcher reads metadata field '{field}', which the KMD does not declare",
    Reason.METADATA_FIELD_NOT_READ:
        "a metadata read whose field could not be settled ({construct}, line {line})",

    # --- conflict
    Reason.MERGED_VIEW_NOT_COMPUTED: "merged view not computed: {why}",
    Reason.SURFACE_FILES_CONFLICT: "{count} surface file(s) conflict with the target tip",

    # --- kernargs
    Reason.RESTATED_BUILDER_GONE: "the builder this list restated ({builder_name}) is gone",
    Reason.BUILDER_NOT_FOUND:
        "builder not found for this {site} ({symbol}): its arguments are compared with no "
        "builder",
    Reason.LIST_BUILT_BY_HELPER_CALLS: "list built by helper calls: not compared",
    Reason.LIST_ARGUMENT_TYPE_UNKNOWN:
        "type of '{argument}' is not one impact knows: kind and size not compared",
    Reason.BUILDER_PARAM_TYPE_UNRESOLVED: "type of '{param}' could not be resolved",
    Reason.BUILDER_PARAM_TYPE_UNRESOLVED_AT:
        "type of '{param}' could not be resolved ({type_text}): kind and size not compared",
    Reason.ARGUMENT_KIND_DIFFERS_BY_POSITION:
        "argument '{argument}' is {kind}/{size}, the builder's '{param}' is "
        "{builder_kind}/{builder_size}",
    Reason.LIST_AGREES_BY_POSITION: "argument list agrees with the builder by position",
    Reason.LIST_AGREES_WITH_CONDITIONALS_OFF:
        "list agrees with the builder when its conditional arguments are off",
    Reason.ARGS_SIGNATURE_COUNT_DIFFERS:
        "args_signature has {count} arguments, the builder declares {counts} arguments",
    Reason.LIST_AGREES_WITH_BUILDER: "argument list agrees with the builder",
    Reason.LAUNCH_COUNT_AGREES: "launch() passes as many arguments as the builder declares",
    Reason.LAUNCH_COUNT_AGREES_WITH_CONDITIONALS_OFF:
        "launch() passes the builder's arguments with its conditional ones off",
    Reason.LAUNCH_COUNT_DIFFERS: "launch() passes {count} arguments, the builder declares {always}",
    Reason.ARGUMENT_LIST_UNCHANGED: "argument list unchanged and still agrees",
    Reason.ARGUMENT_LIST_CHANGED_ON_BOTH_SIDES: "argument list changed on both sides consistently",
    Reason.ARGUMENT_LIST_CHANGED_ON_BOTH_SIDES_CONDITIONALS_OUT:
        "argument list changed on both sides consistently (conditional arguments left out)",
    Reason.ARGUMENT_KIND_OR_SIZE_DIFFERS:
        "kind or size differs for '{param}'",
    Reason.ARGUMENT_ORDER_DIFFERS:
        "argument order differs",
    Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY:
        "argument added on the Python side only: {names}",
    Reason.ARGUMENT_MADE_CONDITIONAL_ON_PYTHON_SIDE_ONLY:
        "the builder now declares '{param}' only if {guard}; the copy still passes it on "
        "every path",
    Reason.ARGUMENT_REMOVED_ON_PYTHON_SIDE_ONLY:
        "argument removed on the Python side only: {names}",
    Reason.ARGUMENT_ADDED_ON_CPP_SIDE_ONLY:
        "argument added on the C++ side only: {names}",
    Reason.ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY:
        "argument removed on the C++ side only: {names}",
    Reason.ARGUMENT_NAMES_DIFFER:
        "argument names differ: '{copy_name}' where the builder has '{builder_arg}'",

    # --- launch-surface
    Reason.PROFILE_REMOVED: "profile removed: its launch-surface entry went with it",
    Reason.PROFILE_UNREADABLE: "profile cannot be understood: {profile_failure}",
    Reason.LAUNCH_ENTRY_REMOVED: "launch-surface entry removed from the profile",
    Reason.LAUNCH_ENTRY_ADDED: "launch-surface entry added to the profile",
    Reason.LAUNCH_ENTRY_EDITED: "launch-surface entry edited in the profile",
    Reason.PYTHON_SOURCE_UNREADABLE:
        "python_source module cannot be understood: {python_failure}",
    Reason.PYTHON_SOURCE_UNREADABLE_AT_BASE:
        "python_source module could not be understood at the base",
    Reason.PYTHON_SOURCE_FILE_MISSING: "python_source file does not exist",
    Reason.PYTHON_SOURCE_FUNCTION_MISSING:
        "python_source names a function that does not exist",
    Reason.MIRROR_FILE_MISSING: "C++ mirror file does not exist",
    Reason.MIRROR_UNREADABLE: "C++ mirror cannot be understood: {mirror_failure}",
    Reason.MIRROR_UNREADABLE_AT_BASE: "C++ mirror could not be understood at the base",
    Reason.MIRROR_SYMBOL_MISSING: "C++ mirror does not define {mirror_symbol}",
    Reason.HOST_SIDE_CHANGED_NO_MIRROR: "host-side {host_side} changed; no C++ mirror declared",
    Reason.HOST_SIDE_CHANGED_MIRROR_MUST_RESTATE:
        "host-side {host_side} changed; its C++ mirror {mirror_locator} must restate it",
    Reason.HOST_SIDE_AND_MIRROR_CHANGED:
        "host-side {host_side} changed; its C++ mirror {mirror_locator} must restate it "
        "(the mirror changed too: only a device run can tell they agree)",
    Reason.MIRROR_CHANGED_WITHOUT_PYTHON_SOURCE: "C++ mirror changed without its Python source",

    # --- removed-symbol
    Reason.REMOVED_WHILE_STILL_IMPORTED: "'{name}' removed while still imported",
    Reason.REMOVED_WHILE_STILL_READ: "'{name}' removed while still read",
    Reason.MEMBER_REMOVED_MAY_STILL_BE_READ: "member '{name}' removed; '{use}' may still read it",
    Reason.RESIGNED_WHILE_STILL_CALLED:
        "'{name}' re-signed ({old_signature} -> {new_signature}); still called here",

    # --- descriptor-symbol
    Reason.DESCRIPTOR_UNREADABLE_SYMBOLS_UNCHECKED:
        "descriptor cannot be understood ({failure}); its native symbols cannot be checked",
    Reason.SYMBOL_NAMED_NO_PACK_DECLARES:
        "descriptor names symbol '{symbol}'; no pack declares it "
        "(the loader drops the whole engine)",
    Reason.SYMBOL_NAMED_UNDECLARED_PACK_UNREADABLE:
        "descriptor names symbol '{symbol}'; no pack that parses declares it, "
        "and a pack does not parse",
    Reason.PACK_SYMBOL_NO_LONGER_NAMED:
        "pack symbol '{symbol}' is no longer named by any descriptor",

    # --- variant-set
    Reason.CENSUS_WITHOUT_KDP: "census changed, but no KDP of its family is found",
    Reason.CENSUS_NOT_UNDERSTOOD: "census file cannot be understood: {failure}",
    Reason.KDP_NOT_UNDERSTOOD:
        "KDP cannot be understood ({failure}); its variant set cannot be compared with the census",
    Reason.CENSUS_HAS_NO_NAMES:
        "no kernel names found in the census file; cannot compare it with the KDP",
    Reason.SHIPPED_SET_CHANGED_CENSUS_AGREES:
        "the shipped variant set changed and the census agrees: pack time and the census "
        "run are needed",
    Reason.VARIANT_ADDED_NOT_PINNED: "variant added to the KDP but not to the census",
    Reason.CENSUS_DROPPED_PIN: "census no longer pins a variant the KDP ships",
    Reason.PINNED_VARIANT_NO_LONGER_SHIPPED: "census pins a variant the KDP no longer ships",
    Reason.PINNED_VARIANT_NOT_SHIPPED: "census pins a variant the KDP does not ship",
    Reason.CENSUS_AND_KDP_DIFFER: "census and KDP list different variants",
    Reason.PACK_REGISTRATION_NOT_UNDERSTOOD:
        "the pack's registration cannot be checked: {file} cannot be understood: {failure}",
    Reason.PACK_REGISTER_NOT_FOUND:
        "no register<Name>Symbols definition found in the pack; its registration cannot "
        "be checked",
    Reason.PACK_WITHOUT_S_PACKS_ROW: "pack declared without its s_packs row",
    Reason.PACK_WITHOUT_TARGET_SOURCES: "pack declared without its target_sources entry",
    Reason.PACK_WITHOUT_REGISTRATION:
        "pack declared without its s_packs row or target_sources entry",

    # --- bindings
    Reason.PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER:
        "parameter {index} is '{stub_name}' in the stub and '{arg_name}' in py::arg "
        "(no caller passes it by keyword yet)",
    Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS:
        "{what} fits the C++ parameter list only with its #if-guarded parameters {state}",
    Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS_NO_DEFAULTS:
        "{what} fits the C++ parameter list only with its #if-guarded parameters {state} "
        "(pybind ignores C++ defaults)",
    Reason.CPP_ARGUMENT_COUNT_DIFFERS: "{what} has {count} arguments, the C++ function {cpp_count}",
    Reason.CPP_ARGUMENT_COUNT_DIFFERS_NO_DEFAULTS:
        "{what} has {count} arguments, the C++ function {cpp_count} (pybind ignores C++ defaults)",
    # --- extension-build
    Reason.EXTENSION_BUILD_CHANGED:
        "what the build compiles into {modules} changed ({parts}): the GPU code it ships "
        "may differ",
    Reason.PREBUILD_STEP_CHANGED:
        "{count} statement(s) of the build script that prebuild or copy GPU code changed "
        "({callees}): which GPU code the package builds may differ",
    Reason.BUILD_FILE_NOT_READ:
        "build file could not be read at the {revision} ({failure}): which GPU code it "
        "builds is unknown",
    Reason.MODULE_MISSING_FROM_SOURCES_MAP: "module '{module}' is missing from the sources map",
    Reason.CTYPES_STUB_UNBOUND: 'ctypes stub with no extern "C" entry point',
    Reason.STUB_UNBOUND: "stub '{symbol}' finds no binding of that name: every call fails "
                         "before any kernel runs",
    Reason.PYTHON_SIDE_MISSING: "bound in C++ with no Python stub or caller of that name",
    Reason.SCHEMA_DIFFERS: "the schema differs between registrations",
    Reason.BOXED_SLOTS_DIFFER:
        "the boxed wrapper reads {slots} stack slots, the schema has {schema_count}",
    Reason.COPY_UNREADABLE: "a copy could not be read: {failure}",
    Reason.BINDING_NOT_UNDERSTOOD: "binding not understood: {failure}",
    Reason.CHANGED_ALIKE_ON_EVERY_SIDE: "'{symbol}' changed on every side alike: all copies agree",
    Reason.TENSOR_ABI_DIFFERS:
        "the stub says develop={develop}, so its wrapper passes tensors as {passes}; the "
        "bound C++ function takes {takes}: the first call fails with a TypeError",
    Reason.CALL_DOES_NOT_BIND:
        "{call} does not bind to the {layer} {head_form}: it {failure}; it raises TypeError "
        "before any kernel runs",
    Reason.CALL_ARGUMENT_MOVED:
        "{call} binds its values to other parameters of the {layer} than at the base "
        "({moves}; base {base_form}, head {head_form}): they get the wrong values silently",
    Reason.CALL_VALUE_KIND_DIFFERS:
        "{call} passes {kind} {value} to '{param}' of the {layer}, which takes {type}",
    Reason.CALL_NOW_BINDS:
        "{call} did not bind to the {layer} at the base (it {was_failure}) and binds now: "
        "what runs changed",
    Reason.CALL_PASSES_OTHER_VALUES:
        "{call} binds as before to the {layer} but passes other values ({values}): what "
        "runs changed",
    Reason.CALL_ADDED: "{call} is new and binds to the {layer}: a kernel runs where none did",
    Reason.CALL_GONE: "{call}, which bound to the {layer} at the base, is gone: what runs "
                      "changed",
    Reason.DECLARATION_WITHOUT_DEFINITION:
        "'{function}' is declared with {declared} parameters and defined with {defined}: "
        "the declaration the binding compiles against is defined nowhere, so the module "
        "fails to load (undefined symbol)",
    Reason.DEFAULT_FILLS_DIFFERENTLY:
        "{call} leaves '{param}' of the {layer} to its default, which was {was} and is "
        "{now} now: what runs changed",
    Reason.PARAMETERS_RENAMED_ALIKE:
        "only parameters renamed ({renames}), each alike at its definition and at every "
        "call that passes it by keyword (callers in {callers} other files read): the same "
        "program runs",
    Reason.FORWARDED_CALLEE_UNRESOLVED:
        "{call} passes its other arguments to the __call__ of its first argument, whose "
        "class is not known ({why}): whether it binds is unknown",
    Reason.FORWARDED_CALLEE_NOT_READ:
        "{call} passes its other arguments to {cls}.__call__, which is not defined in a "
        "file read (module {module}; an inherited __call__ is not read): whether it binds "
        "is unknown",
    Reason.FORWARDED_CALLEE_SIGNATURE_UNKNOWN:
        "{call} passes its other arguments to {cls}.__call__, whose decorators "
        "({decorators}) may change its signature: whether it binds is unknown",
    Reason.MISMATCH_RESOLVED:
        "'{symbol}' had copies that disagreed at the base and agree now: calls that failed "
        "or passed wrong values run differently",

    # --- emit fold
    Reason.FOLDED_EQUAL_BUILD:
        "emit: every shipped variant it reaches has equal arguments, IR and compiler inputs",

    # --- surface-map
    Reason.SURFACE_MAP_EDITED:
        "the repository's surface map changed (judged with the base's map): patterns added: "
        "{added}; removed: {removed}",
    Reason.SURFACE_MAP_REFUSED:
        "the repository's surface map changed and cannot be used: {failure} "
        "(judged with the base's map)",

    # --- unreadable
    Reason.FILE_NOT_READABLE:
        "file could not be read ({error}): every contract that needs it is unsettled",

    # --- kernargs: argument by argument (cppread)
    Reason.LIST_CONSTRUCT_NOT_READ:
        "list not readable statically ({construct}, line {line}): not compared",
    Reason.BUILDER_ARGUMENTS_NOT_READ:
        "the builder's arguments are not readable statically ({construct}, line {line}): "
        "not compared",
    Reason.LAUNCH_ARGUMENT_MISPLACED:
        "launch() passes '{argument}' as argument {position}, where the builder declares "
        "'{param}'; the builder declares '{argument_param}' as argument {other}",
    Reason.UNNAMED_LIST_COUNT_DIFFERS:
        "the list (kinds and sizes, no names) has {count} arguments, the builder declares "
        "{counts} arguments",
    Reason.LAUNCH_ARGUMENT_KIND_DIFFERS:
        "launch() argument {position} '{argument}' is {kind}/{size}, the builder's "
        "'{param}' is {builder_kind}/{builder_size}",
}

STEPS: dict[Step, str] = {
    # --- surface

    # --- conflict

    # --- kernargs
    Step.BUILDER_PARAM_HAS_TYPE: "b.param '{param}' has type {type_text}",
    Step.BUILDER_PARAM_IS: "b.param '{param}' is {kind}/{size}",
    Step.LIST_ENTRY_IS: "KernelArgument '{param}' is {kind}/{size}",
    Step.BUILDER_PARAM_ONLY_IF: "b.param '{param}' only if {guard}",
    Step.BUILDER_PARAM_ADDED: "b.param '{param}' added",
    Step.BUILDER_PARAM_NOW_UNDER: "b.param '{param}' now under {guard}",
    Step.BUILDER_PARAM_REMOVED: "b.param '{param}' removed",
    Step.COPY_PAIRED_WITH: "paired with {builder_name} ({how})",
    Step.LIST_ENTRY_AT: "the list declares '{entry}' as argument {position}",
    Step.PACK_READS_FIELD: "the pack reads metadata field '{field}' ({via})",
    Step.KMD_DECLARES_NO_FIELD: "the KMD (found by {how}) declares no field '{field}'",
    Step.PACK_READS_UNSETTLED_FIELD: "the pack reads a metadata field through {construct}",
    Step.COPY_NOT_PAIRED: "the {site} {symbol} pairs with no builder",
    Step.ONLY_OTHER_ARCH_BUILDER:
        "only a builder of another arch shares its names: not paired across archs",
    Step.LIST_HAS_ENTRIES: "KernelArgument list has {count} entries",
    Step.LAUNCH_PASSES: "launch() passes {count} arguments",
    Step.LAUNCH_ARGUMENT_AT: "launch() passes '{argument}' as argument {position}",
    Step.BUILDER_PARAM_AT: "the builder declares '{param}' as argument {position}",
    Step.LIST_CONSTRUCT_AT: "not read statically: {construct}",
    Step.BUILDER_CONSTRUCT_AT: "builder argument not read statically: {construct}",
    Step.BUILDER_DECLARES: "{builder_name} declares {always} arguments always, {total} in all",
    Step.VARIANT_BUILDS_IT: "variant {variant} builds it",

    # --- launch-surface
    Step.PROFILE_REMOVED_WITH_ENTRY: "profile removed: its launch-surface entry went with it",
    Step.PROFILE_DOES_NOT_PARSE: "profile cannot be understood: {failure}",
    Step.LAUNCH_ENTRY_REMOVED_FROM_PROFILE: "launch-surface entry removed from the profile",
    Step.LAUNCH_ENTRY_ADDED_TO_PROFILE: "launch-surface entry added to the profile",
    Step.LAUNCH_ENTRY_EDITED_IN_PROFILE: "launch-surface entry edited in the profile",
    Step.PYTHON_SOURCE_DOES_NOT_PARSE: "python_source module cannot be understood: {failure}",
    Step.PYTHON_SOURCE_DID_NOT_PARSE_AT_BASE:
        "python_source module could not be understood at the base",
    Step.PYTHON_SOURCE_FILE_ABSENT: "python_source file does not exist",
    Step.NO_SUCH_FUNCTION_IN_MODULE: "no function '{symbol}' in the module",
    Step.MODULE_CONTENT_CHANGED: "module content changed",
    Step.HOST_SIDE_ADDED: "host-side {qualname} added",
    Step.HOST_SIDE_REMOVED: "host-side {qualname} removed",
    Step.HOST_SIDE_CHANGED: "host-side {qualname} changed",
    Step.REACHED_HELPER_NOW_REACHED: "reached helper {helper} now reached",
    Step.REACHED_HELPER_NO_LONGER_REACHED: "reached helper {helper} no longer reached",
    Step.REACHED_HELPER_CHANGED: "reached helper {helper} changed",
    Step.MIRROR_FILE_ABSENT: "C++ mirror file does not exist",
    Step.MIRROR_DOES_NOT_PARSE: "C++ mirror cannot be understood: {failure}",
    Step.MIRROR_DID_NOT_PARSE_AT_BASE: "C++ mirror could not be understood at the base",
    Step.MIRROR_DEFINES_NO_SYMBOL: "C++ mirror does not define {symbol}",
    Step.MIRROR_CHANGED: "C++ mirror {mirror} changed",
    Step.MIRROR_RESTATES_IT: "C++ mirror {mirror} restates it",

    # --- removed-symbol
    Step.DEFINED_AT_BASE: "'{name}' defined at the base",
    Step.READS_IT_FROM: "reads it from {reader}",
    Step.STILL_BOUND_TO: "still bound to {binding}",

    # --- descriptor-symbol
    Step.DESCRIPTOR_DOES_NOT_PARSE: "descriptor does not parse",
    Step.DESCRIPTOR_NAMES_SYMBOL: "descriptor names symbol '{symbol}' ({role})",
    Step.PACK_DECLARED_IT_AT_BASE: "pack declared it as {constant} at the base",
    Step.PACK_DOES_NOT_PARSE: "this pack does not parse",
    Step.SYMBOL_NAMED_AT_BASE: "named '{symbol}' at the base",
    Step.PACK_STILL_DECLARES_IT: "pack still declares it as {constant}",

    # --- variant-set
    Step.KDP_DOES_NOT_PARSE: "KDP does not parse",
    Step.KDP_SHIPS_UNPINNED: "KDP ships '{variant}'; the census does not pin it",
    Step.CENSUS_PINS_UNSHIPPED: "census pins '{variant}'; the KDP does not ship it",
    Step.PACK_DEFINES_REGISTER: "pack defines {register}",
    Step.TARGET_SOURCES_LACKS_PACK: "target_sources does not list the pack",
    Step.NO_S_PACKS_ROW: "no s_packs row registers {register}",

    # --- bindings
    Step.RESTATES_ARGUMENT_LIST: "restates the argument list",

    # --- extension-build
    Step.MODULE_DECLARED: "declares extension module {module} ({count} source files; archs "
                          "{archs})",
    Step.MODULE_NO_LONGER_DECLARED: "no longer declares extension module {module}",
    Step.MODULE_SOURCES_CHANGED: "{module}: {added_count} source(s) added ({added}), "
                                 "{removed_count} removed ({removed})",
    Step.MODULE_ARCHS_CHANGED: "{module}: archs and arch flags added ({added}), removed "
                               "({removed})",
    Step.MODULE_FLAGS_CHANGED: "{module}: {added_count} compile flag(s) added ({added}), "
                               "{removed_count} removed ({removed})",
    Step.MODULE_HOOK_CHANGED: "{module}: the build hook it is compiled through changed: now "
                              "({added}), before ({removed})",
    Step.MODULE_UNRESOLVED_CHANGED: "{module}: what impact could not resolve changed: "
                                    "added ({added}), removed ({removed})",
    Step.PREBUILD_CALL_EDITED: "{revision}: a statement that prebuilds GPU code through "
                               "{callee} changed",
    Step.PREBUILD_INPUT_EDITED: "{revision}: a statement binding {name}, which {callee} "
                                "reads, changed",
    Step.SOURCE_ROOT_NAMED_EDITED: "{revision}: a statement naming the source root {root} "
                                   "({callee}) changed",

    # --- emit fold
    Step.EMIT_FAMILIES_EQUAL: "emit: families importing {module} built equal at base and head",
    Step.EMIT_BUILDER_EQUAL: ("emit: every shipped variant {module}.{builder} builds has equal "
                              "arguments, IR and compiler inputs at base and head"),
}


def counts_text(counts: Any) -> str:
    """A set of counts: "9", "9 or 12", "9, 11 or 13", and a run of three or more
    "9 to 15"."""
    values = sorted({int(v) for v in counts})
    if not values:
        return "none"
    if len(values) == 1:
        return str(values[0])
    if len(values) > 2 and values[-1] - values[0] == len(values) - 1:
        return f"{values[0]} to {values[-1]}"
    return ", ".join(map(str, values[:-1])) + f" or {values[-1]}"


def _is_counts(name: str) -> bool:
    return name == "counts" or name.endswith("_counts")


def _value(value: Any) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else list(value)
        return ", ".join(_value(v) for v in items) if items else "none"
    if value is None:
        return "none"
    return str(value)


def fields_of(template: str) -> set[str]:
    """The `{name}` fields a template reads."""
    return {name for _text, name, _spec, _conv in Formatter().parse(template) if name}


def _say(template: str, values: Mapping[str, Any]) -> str:
    return template.format_map({
        name: counts_text(values[name]) if _is_counts(name) else _value(values[name])
        for name in fields_of(template)})


# Why a call does not bind (impact/graph/call_binding.py `Refusal`), filled from the
# values beside it: a row's `refusal` (and a base's `was_refusal`) becomes its `failure`.
REFUSALS: dict[Refusal, str] = {
    Refusal.TOO_MANY: "passes {given} arguments by position; the {layer} takes at most {most}",
    Refusal.NO_NAMES: "passes '{name}' by keyword; the {layer} names no parameter",
    Refusal.UNKNOWN_KEYWORD: "passes '{name}' by keyword; the {layer} has no such parameter",
    Refusal.GIVEN_TWICE: "passes '{name}' by position and by keyword",
    Refusal.MISSING: "leaves {missing} without a value (the {layer} has no default for it)",
}


def _refusals(details: Mapping[str, Any]) -> dict[str, Any]:
    """`details` with the sentence of each refusal they carry, as `failure` (and
    `was_failure` for the base's)."""
    values = dict(details)
    for prefix in ("", "was_"):
        refusal = details.get(f"{prefix}refusal")
        if refusal is not None:
            own = {k.removeprefix(prefix): v for k, v in details.items() if k.startswith(prefix)}
            values[f"{prefix}failure"] = _say(REFUSALS[Refusal(refusal)], {**details, **own})
    return values


# Qualifiers any reason's sentence takes when its details carry the value.
QUALIFIERS: dict[str, str] = {
    "closest_to": " (paired by closest names with {closest_to})",
    # A call that bound at the base, its forms then and now.
    "base_call": "; at the base it bound, {call_delta}",
    "base_layer": "; the {layer} changed: {layer_delta}",
    "loads": " (it loads {loads})",
    "closest_bound": " (bound names closest to it: {closest_bound})",
}


# Details that hold a parameter list or a call's arguments whole: a sentence writes them
# elided to the parameters it is about (impact/render/words/forms.py).
_FORMS = ("head_form", "base_form", "base_layer", "base_call", "head_call")
# Details naming the parameters a sentence is about.
_ABOUT = ("missing", "name", "param", "names", "argument")


def _shortened(details: Mapping[str, Any]) -> dict[str, Any]:
    """`details` with each long form elided and the base → head changes of the forms."""
    values = dict(details)
    about: set[str] = set()
    for key in _ABOUT:
        value = details.get(key)
        about.update(value if isinstance(value, list | tuple) else [value] if value else [])
    for move in str(details.get("moves", "")).split(";"):
        about.update(forms.parameters(f"({move})") or [])
    if details.get("base_call") is not None and details.get("head_call") is not None:
        base, head = str(details["base_call"]), str(details["head_call"])
        values["call_delta"] = "passing the same values" if base == head else \
            f"and what it passes changed: {forms.delta(base, head)}"
    if details.get("base_layer") is not None and details.get("head_form") is not None:
        values["layer_delta"] = forms.delta(str(details["base_layer"]), str(details["head_form"]))
    for key in _FORMS:
        if isinstance(details.get(key), str):
            values[key] = forms.elided(details[key], about)
    # A path whose folder the finding's sides cite beside the sentence: its file name says it.
    for key in ("mirror_locator", "host_side"):
        if isinstance(details.get(key), str):
            values[key] = details[key].rsplit("/", 1)[-1]
    return values


def reason_text(reason: str, details: Mapping[str, Any]) -> str:
    """The sentence of a row's reason, filled from its details, with its qualifiers."""
    details = _shortened(_refusals(details))
    text = _say(REASONS[Reason(reason)], details)
    return text + "".join(_say(template, details) for key, template in QUALIFIERS.items()
                          if details.get(key) is not None)


def step_text(step: str, args: Mapping[str, Any]) -> str:
    """The sentence of one evidence hop, filled from its args."""
    return _say(STEPS[Step(step)], args)


# Details that name a finding's subject, most telling first (a row's `subject` is an id:
# stable, but written for machines).
_IN_FILE = re.compile(r"^[\w./-]+\.\w+:(.+)$")  # `path/file.ext:symbol`
_SUBJECT_KEYS = ("symbol", "name", "variant", "function", "module", "modules")


def subject_text(subject: str, details: Mapping[str, Any],
                 sides: Iterable[Mapping[str, Any]]) -> str:
    """What a finding is about, as a reviewer names it: the builder and the copy of a
    kernel-argument row (`build_x ↔ kernelSignature`), the profile entry of a
    launch-surface row (its sentence names the host side), the symbol, name, variant or
    module its details carry, the symbol after the file a subject starts with, else the
    op a binding row's subject starts with; "" when the subject is a file a side names."""
    sides = list(sides)
    files = {str(side["file"]) for side in sides}
    if subject in files or subject.removeprefix("beyond:") in files:
        return ""
    builder = details.get("builder_name")
    if builder:
        copy = next((str(s["symbol"]) for s in sides if s["symbol"] and s["symbol"] != builder),
                    "")
        return f"{builder} ↔ {copy}" if copy else str(builder)
    if details.get("host_side"):  # the sentence names the host side; the entry is the subject
        entry = details.get("entry")
        return f"{entry} entry" if entry else str(details["host_side"]).rsplit("/", 1)[-1]
    for key in _SUBJECT_KEYS:
        value = details.get(key)
        if value:
            return _value(value)
    for file in sorted(files, key=len, reverse=True):
        if subject.startswith(f"{file}:"):
            return subject[len(file) + 1:]
    in_file = _IN_FILE.match(subject)
    if in_file:
        return in_file[1]
    return re.split(r"[|@:]", subject, maxsplit=1)[0].rsplit("/", 1)[-1]
