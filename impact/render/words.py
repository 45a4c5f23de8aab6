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

    # --- conflict

    # --- kernargs
    Reason.RESTATED_BUILDER_GONE: "the builder this list restated ({builder_name}) is gone",
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
        "args_signature has {count} arguments, the builder declares {declared}",
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
    Reason.ARGUMENT_REMOVED_ON_PYTHON_SIDE_ONLY:
        "argument removed on the Python side only: {names}",
    Reason.ARGUMENT_ADDED_ON_CPP_SIDE_ONLY:
        "argument added on the C++ side only: {names}",
    Reason.ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY:
        "argument removed on the C++ side only: {names}",
    Reason.ARGUMENT_NAMES_DIFFER:
        "argument names differ: '{copy_name}' where the builder has '{builder_arg}'",
    Reason.ARGUMENT_KIND_OR_SIZE_DIFFERS_CLOSEST:
        "kind or size differs for '{param}'"
        " (paired by closest names with {builder_name})",
    Reason.ARGUMENT_ORDER_DIFFERS_CLOSEST:
        "argument order differs"
        " (paired by closest names with {builder_name})",
    Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY_CLOSEST:
        "argument added on the Python side only: {names}"
        " (paired by closest names with {builder_name})",
    Reason.ARGUMENT_REMOVED_ON_PYTHON_SIDE_ONLY_CLOSEST:
        "argument removed on the Python side only: {names}"
        " (paired by closest names with {builder_name})",
    Reason.ARGUMENT_ADDED_ON_CPP_SIDE_ONLY_CLOSEST:
        "argument added on the C++ side only: {names}"
        " (paired by closest names with {builder_name})",
    Reason.ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY_CLOSEST:
        "argument removed on the C++ side only: {names}"
        " (paired by closest names with {builder_name})",
    Reason.ARGUMENT_NAMES_DIFFER_CLOSEST:
        "argument names differ: '{copy_name}' where the builder has '{builder_arg}'"
        " (paired by closest names with {builder_name})",

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set

    # --- bindings

    # --- emit fold
    Reason.FOLDED_EQUAL_BUILD:
        "emit: every shipped variant it reaches has equal arguments, IR and compiler inputs",
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
    Step.LIST_HAS_ENTRIES: "KernelArgument list has {count} entries",
    Step.LAUNCH_PASSES: "launch() passes {count} arguments",
    Step.BUILDER_DECLARES: "{builder_name} declares {always} arguments always, {total} in all",
    Step.VARIANT_BUILDS_IT: "variant {variant} builds it",

    # --- launch-surface

    # --- removed-symbol

    # --- descriptor-symbol

    # --- variant-set

    # --- bindings

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
