"""Every sentence a row or an evidence hop says, for every format, from one table.

Maintainers: keyed by the enumerations of `impact/reasons.py`; each template
names the `details` (or hop `args`) values it reads as `{name}`. Lists are
joined with commas; a range of counts is written "9 to 15". Checks never
write these words; renderers never write others. Add to your check's group only.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Any

from impact.reasons import Reason, Step

REASONS: dict[Reason, str] = {
    # --- surface
    Reason.SURFACE_FILE_ADDED: "surface file added",
    Reason.SURFACE_FILE_REMOVED: "surface file removed",
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

    # --- conflict
    Reason.MERGED_VIEW_NOT_COMPUTED: "merged view not computed: {why}",
    Reason.SURFACE_FILES_CONFLICT: "{count} surface file(s) conflict with the target tip",

    # --- kernargs

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

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
    Reason.STUB_AND_PYARG_COUNTS_DIFFER:
        "the stub declares {stub_count} parameters, the py::arg list {arg_count}",
    Reason.ARGUMENTS_SWAPPED: "same names in another order: arguments swap silently",
    Reason.PARAMETER_NAME_DIFFERS: "parameter {index} is '{stub_name}' in the stub and "
                                   "'{arg_name}' in py::arg",
    Reason.PARAMETER_NAME_DIFFERS_NO_KEYWORD_CALLER:
        "parameter {index} is '{stub_name}' in the stub and '{arg_name}' in py::arg "
        "(no caller passes it by keyword yet)",
    Reason.DEFAULT_ON_ONE_SIDE: "'{name}' has a default in the {side} only",
    Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS:
        "{what} fits the C++ parameter list only with its #if-guarded parameters {state}",
    Reason.FITS_ONLY_WITH_GUARDED_PARAMETERS_NO_DEFAULTS:
        "{what} fits the C++ parameter list only with its #if-guarded parameters {state} "
        "(pybind ignores C++ defaults)",
    Reason.CPP_ARGUMENT_COUNT_DIFFERS: "{what} has {count} arguments, the C++ function {cpp_count}",
    Reason.CPP_ARGUMENT_COUNT_DIFFERS_NO_DEFAULTS:
        "{what} has {count} arguments, the C++ function {cpp_count} (pybind ignores C++ defaults)",
    Reason.MODULE_MISSING_FROM_SOURCES_MAP: "module '{module}' is missing from the sources map",
    Reason.CTYPES_STUB_UNBOUND: 'ctypes stub with no extern "C" entry point',
    Reason.STUB_UNBOUND: "stub with no binding of that name",
    Reason.PYTHON_SIDE_MISSING: "bound in C++ with no Python stub or caller of that name",
    Reason.SCHEMA_DIFFERS: "the schema differs between registrations",
    Reason.BOXED_SLOTS_DIFFER:
        "the boxed wrapper reads {slots} stack slots, the schema has {schema_count}",
    Reason.CALL_ARGUMENTS_OUTSIDE_SCHEMA:
        "the call passes {given} arguments; the schema takes {required} to {most}",
    Reason.CALL_UNKNOWN_KEYWORDS: "the call passes {given} arguments and unknown keywords "
                                  "{unknown}; the schema takes {required} to {most}",
    Reason.COPY_UNREADABLE: "a copy could not be read: {failure}",
    Reason.BINDING_NOT_UNDERSTOOD: "binding not understood: {failure}",
    Reason.CHANGED_ALIKE_ON_EVERY_SIDE: "'{symbol}' changed on every side alike: all copies agree",

    # --- emit fold
    Reason.FOLDED_EQUAL_BUILD:
        "emit: every shipped variant it reaches has equal arguments, IR and compiler inputs",
}

STEPS: dict[Step, str] = {
    # --- surface

    # --- conflict

    # --- kernargs

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set
    Step.KDP_DOES_NOT_PARSE: "KDP does not parse",
    Step.KDP_SHIPS_UNPINNED: "KDP ships '{variant}'; the census does not pin it",
    Step.CENSUS_PINS_UNSHIPPED: "census pins '{variant}'; the KDP does not ship it",
    Step.PACK_DEFINES_REGISTER: "pack defines {register}",
    Step.TARGET_SOURCES_LACKS_PACK: "target_sources does not list the pack",
    Step.NO_S_PACKS_ROW: "no s_packs row registers {register}",

    # --- bindings
    Step.RESTATES_ARGUMENT_LIST: "restates the argument list",

    # --- emit fold
    Step.EMIT_FAMILIES_EQUAL: "emit: families importing {module} built equal at base and head",
}


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
    return template.format_map({name: _value(values[name]) for name in fields_of(template)})


def reason_text(reason: str, details: Mapping[str, Any]) -> str:
    """The sentence of a row's reason, filled from its details."""
    try:
        template = REASONS[Reason(reason)]
    except (ValueError, KeyError):
        return reason  # not yet a Reason member: the check still writes its own words
    return _say(template, details)


def step_text(step: str, args: Mapping[str, Any]) -> str:
    """The sentence of one evidence hop, filled from its args."""
    try:
        template = STEPS[Step(step)]
    except (ValueError, KeyError):
        return step
    return _say(template, args)
