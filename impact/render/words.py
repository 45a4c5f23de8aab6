"""Every sentence a row or an evidence hop says, for every format, from one table.

Maintainers: keyed by the enumerations of `impact/reasons.py`; each template
names the `details` (or hop `args`) values it reads as `{name}`. Lists are
joined with commas; a field named `counts` (or `..._counts`) holds a list of
integers, written as a range when it runs on ("9 to 15"), else "9 or 12" /
"9, 11 or 13": checks pass the numbers, never a joined string. Checks never
write these words; renderers never write others. Add to your check's group only.
The phrases the reports wrap around rows (actions, the card's header and
labels, the summary lines) are at the end of this file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from string import Formatter
from typing import TYPE_CHECKING, Any

from impact.kinds import ViewName
from impact.reasons import Reason, Step
from impact.rollup import Outcome, PackOutcome
from impact.rows import Confirms, Lane, Role, Status

if TYPE_CHECKING:
    from impact.render.findings import Finding

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
    Reason.CALLER_DOES_NOT_FIT_STUB:
        "the call passes {given} positional arguments and keywords {keywords}; the stub "
        "takes {required} to {most} ({problem})",
    Reason.CALLER_SHIFTED_BY_INSERTION:
        "the call passes {given} arguments by position: parameter '{inserted}' now sits at "
        "position {index}, so '{shifted}' and the ones after it get the wrong values",
    Reason.TENSOR_ABI_DIFFERS:
        "the stub says develop={develop}, so its wrapper passes tensors as {passes}; the "
        "bound C++ function takes {takes}: the first call fails with a TypeError",
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
    Step.LIST_HAS_ENTRIES: "KernelArgument list has {count} entries",
    Step.LAUNCH_PASSES: "launch() passes {count} arguments",
    Step.LAUNCH_ARGUMENT_AT: "launch() passes '{argument}' as argument {position}",
    Step.BUILDER_PARAM_AT: "the builder declares '{param}' as argument {position}",
    Step.LIST_CONSTRUCT_AT: "not read statically: {construct}",
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

    # --- emit fold
    Step.EMIT_FAMILIES_EQUAL: "emit: families importing {module} built equal at base and head",
}


def verdict_line(verdict: Mapping[str, Any]) -> str:
    """`Runtime impact: ...` from the report's verdict data."""
    kind = Outcome(verdict["kind"])
    text = str(kind)
    if kind == Outcome.NEEDS_DEVICE:
        text += " " + ", ".join(verdict["archs"])
    lanes = list(verdict["other_lanes"])
    if lanes:
        text += f" (left to the {' and '.join(lanes)} lane{'s' if len(lanes) > 1 else ''})"
    return f"Runtime impact: {text}"


def pack_time_line(pack_time: Mapping[str, Any]) -> str:
    """`Pack-time: ...` from the report's pack-time data."""
    kind = PackOutcome(pack_time["kind"])
    if kind == PackOutcome.NOT_RUN:
        return "Pack-time: NOT RUN (no emit file; run with --run-emit)"
    if kind == PackOutcome.CLEAN:
        return "Pack-time: CLEAN"
    if kind == PackOutcome.INCOMPLETE:
        pending = pack_time.get("unfinished", [])
        return (f"Pack-time: INCOMPLETE ({len(pending)} predicate probe(s) did not finish: "
                f"{', '.join(pending)})")
    return f"Pack-time: NEW {pack_time['new']}, FIRST-SHIPPED {pack_time['first_shipped']}"


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


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(char, f"\\x{ord(char):02x}")


def printable(value: Any) -> Any:
    """`value` with every string in it (keys too) free of control characters, written as
    escapes: a path holding a newline and a forged `Runtime impact: NONE` line cannot
    print that line into a report a person or a script reads line by line."""
    if isinstance(value, str):
        return _CONTROL.sub(_escape, value)
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [printable(v) for v in value]
    return value


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


# Qualifiers any reason's sentence takes when its details carry the value.
QUALIFIERS: dict[str, str] = {
    "closest_to": " (paired by closest names with {closest_to})",
}


def reason_text(reason: str, details: Mapping[str, Any]) -> str:
    """The sentence of a row's reason, filled from its details, with its qualifiers."""
    text = _say(REASONS[Reason(reason)], details)
    return text + "".join(_say(template, details) for key, template in QUALIFIERS.items()
                          if details.get(key) is not None)


def step_text(step: str, args: Mapping[str, Any]) -> str:
    """The sentence of one evidence hop, filled from its args."""
    return _say(STEPS[Step(step)], args)


# ------------------------------------------------------------------ report phrases
# What the text report and the review card say around the rows' own sentences. Each
# takes data the report already holds; none decides anything.

VIEW_NAMES = {ViewName.HEAD: "head", ViewName.MERGED: "merged"}
VIEW_TITLES = {
    ViewName.HEAD: "head view (merge base -> head)",
    ViewName.MERGED: "merged view (merge base -> head merged onto the target tip)",
}


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


def views_text(views: tuple[ViewName, ...] | list[ViewName]) -> str:
    """Where a finding was seen, when more than one view: "head and merged views"."""
    return f"{_and([VIEW_NAMES[v] for v in views])} views" if len(views) > 1 else ""


def archs_text(archs: tuple[str, ...] | list[str]) -> str:
    return ", ".join(archs) if archs else "no architecture named"


def device_run_text(target: str, archs: tuple[str, ...] | list[str],
                    subjects: tuple[str, ...] | list[str] = (), *, code: bool = False) -> str:
    """One device run: the test a map or profile names, else the shipped variants that
    reach the subjects (or "it", the finding's own subject, when none are given)."""
    q = "`" if code else ""
    if target:
        what = f"{q}{target}{q}"
        if subjects:
            what += " (for " + ", ".join(f"{q}{s}{q}" for s in subjects) + ")"
    else:
        what = ("the shipped variants reaching "
                + (", ".join(f"{q}{s}{q}" for s in subjects) if subjects else "it"))
    return f"{what} on {archs_text(archs)}"


ACTION_MISMATCH = "make the copies agree"
ACTION_DEVICE = "device run: {run}"


def action_text(status: Status, run: str) -> str:
    """What to do about a finding: agree the copies (mismatch), or the device run (else)."""
    return ACTION_MISMATCH if status == Status.MISMATCH else ACTION_DEVICE.format(run=run)


def preexisting_text(count: int) -> str:
    return f"{count} pre-existing, not charged"


def inert_text(count: int) -> str:
    return f"{count} with no runtime effect (comments, docstrings or layout only)"


def lanes_text(lanes: Mapping[str, list[str]], *, code: bool = False) -> str:
    """Rows left to other reviewers: "Left to other lanes: BUILD (a, b); DEPS (c)"."""
    q = "`" if code else ""
    parts = [f"{lane} ({', '.join(f'{q}{s}{q}' for s in subjects)})"
             for lane, subjects in sorted(lanes.items())]
    return "Left to other lanes: " + "; ".join(parts)


def finding_message(finding: Finding, cite: Callable[[int, Mapping[str, Any]], str], *,
                    say: Callable[[str], str] = str, views: bool = False) -> str:
    """A finding as one message, a GitHub annotation's or a SARIF result's: its reason's
    sentence (through `say`: SARIF escapes it), every other copy it names (its `related`
    sides, numbered from 1, each as `cite` writes it: a place, or a link to a related
    location), its views when `views`, the lane it is left to and whether it is
    pre-existing."""
    text = say(reason_text(finding.reason, finding.details)) + "."
    related = list(enumerate(finding.related, 1))
    counterparts = [cite(i, side) for i, side in related if side["role"] != Role.CHANGED]
    others = [cite(i, side) for i, side in related if side["role"] == Role.CHANGED]
    if counterparts:
        label = "Counterpart" if len(counterparts) == 1 else "Counterparts"
        text += f" {label}: " + ", ".join(counterparts) + "."
    if others:
        text += " Also changed: " + ", ".join(others) + "."
    if views:
        text += f" ({' and '.join(finding.views)} view{'s' if len(finding.views) > 1 else ''})"
    if finding.lane != Lane.IMPACT:
        text += f" Left to the {finding.lane} lane."
    if finding.preexisting:
        text += " Pre-existing: not charged to this change."
    return text


NO_FINDINGS = "No runtime contract needs attention."
NO_ROWS = "No changed file is on the runtime surface."
MORE_DETAIL = "(--verbose adds the revisions, the changed paths, every copy and the evidence)"


# The review card (the IMPACT lane of an automated PR review).
CARD_MARK_BREAK = "🔴"      # a mismatch with both sides traced
CARD_MARK_WARN = "⚠️"       # a changed row, or a mismatch not fully traced
CARD_MARK_NOTE = "📝"       # anything else
CARD_VERIFIED = "[verified]"
CARD_INFERRED = "[inferred]"


def card_header(verdict: Mapping[str, Any], runs: int, breaks: int) -> str:
    """`Impact (static): <verdict> — <n> device runs named; <m> BREAKS`."""
    kind = Outcome(verdict["kind"])
    text = str(kind)
    if kind == Outcome.NEEDS_DEVICE:
        text += " " + ",".join(verdict["archs"])
    return (f"Impact (static): {text} — {runs} device run{'s' if runs != 1 else ''} named; "
            f"{breaks} BREAKS")


def card_problem(changed: list[str], counterparts: list[str], views: str) -> str:
    text = "; ".join([*(f"{c} (changed)" for c in changed),
                      *(f"{c} (counterpart)" for c in counterparts)])
    return f"**Problem:** {text}" + (f", in the {views}" if views else "")


def card_impact(reason: str, archs: tuple[str, ...] | list[str]) -> str:
    return f"**Impact:** {reason} (on {archs_text(archs)})."


def card_action_author() -> str:
    return ("**Action:** **Author must** make every copy of this contract agree before "
            "merging.")


def card_action_ask_agree() -> str:
    return ("**Action:** **Reviewer should ask** whether every copy of this contract still "
            "agrees: only one side could be traced.")


def card_action_ask_run(run: str) -> str:
    return f"**Action:** **Reviewer should ask** for the device run that settles it: {run}."


def card_more(count: int) -> str:
    return f"… and {count} more finding{'s' if count != 1 else ''} in the full report."


CARD_RUNS = "Device runs that would settle the changed findings:"


def card_preexisting(count: int) -> str:
    return f"Pre-existing, not charged to this change: {count}."


# --- The device-run plan (impact validate's input): tests and bench commands per run ---

CARD_BREAK_RUNS = "Device runs that would confirm the breaks:"
TEXT_RUNS = "device runs (impact validate --from-report runs their tests and bench commands):"


def plan_text(tests: list[str], bench: list[str], *, code: bool = False) -> str:
    """`tests: a, b; bench: cmd`, or that the map names none."""
    q = "`" if code else ""
    parts = []
    if tests:
        parts.append("tests: " + ", ".join(f"{q}{t}{q}" for t in tests))
    if bench:
        parts.append("bench: " + ", ".join(f"{q}{b}{q}" for b in bench))
    return "; ".join(parts) if parts else "no test or bench named by the surface map"


def confirms_text(confirms: Confirms) -> str:
    """What a passing run would settle: the change is safe, or the break is real."""
    return "confirms the break" if confirms == Confirms.BREAK else "settles the change"
