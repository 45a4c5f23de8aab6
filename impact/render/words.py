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

    # --- bindings

    # --- emit fold
    Reason.FOLDED_EQUAL_BUILD:
        "emit: every shipped variant it reaches has equal arguments, IR and compiler inputs",
}

STEPS: dict[Step, str] = {
    # --- surface

    # --- conflict

    # --- kernargs

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

    # --- bindings

    # --- emit fold
    Step.EMIT_FAMILIES_EQUAL: "emit: families importing {module} built equal at base and head",
}


def verdict_line(verdict: Mapping[str, Any]) -> str:
    """`Runtime impact: ...` from the report's verdict data."""
    text = str(verdict["kind"])
    if text == "NEEDS-DEVICE":
        text += " " + ", ".join(verdict["archs"])
    lanes = list(verdict["other_lanes"])
    if lanes:
        text += f" (left to the {' and '.join(lanes)} lane{'s' if len(lanes) > 1 else ''})"
    return f"Runtime impact: {text}"


def pack_time_line(pack_time: Mapping[str, Any]) -> str:
    """`Pack-time: ...` from the report's pack-time data."""
    if pack_time["kind"] == "NOT-RUN":
        return "Pack-time: NOT RUN (no emit file; run with --run-emit)"
    if pack_time["kind"] == "CLEAN":
        return "Pack-time: CLEAN"
    return f"Pack-time: NEW {pack_time['new']}, FIRST-SHIPPED {pack_time['first_shipped']}"


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
