"""A native pack's KernelArgument list against its own launch(), when no builder pairs.

Maintainers: reads the pairs the graph makes (`KernelGraph.launches_with_own_list`: a
launch() and the list of its own pack, neither paired with a builder; the rule is
`list_for_launch` in `impact/graph/pairing.py`); compares their typed records and never
parses a file or pairs anything itself. A side is `changed` when that copy, as compared,
differs from the base; `run_checks` charges. Its sentences live in `impact/render/words/`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from impact.checks.check import Check, Scope
from impact.graph import ArgList, LaunchCall, SymbolGraph, same_name
from impact.kinds import SurfaceKind
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status


@dataclass
class _Problem:
    reason: Reason
    values: dict[str, Any]
    hops: list[Hop] = field(default_factory=list)


def _problem(call: LaunchCall, arglist: ArgList) -> _Problem | None:
    """The first disagreement of the launch() with the list: count, then each argument's
    name (one the list declares at another position is misplaced), then its kind and size
    where both copies settle them. None when they agree as far as they are read."""
    args, entries = call.kernel_arguments, arglist.entries
    if len(args) != len(entries):
        return _Problem(Reason.PACK_LAUNCH_COUNT_DIFFERS,
                        {"count": len(args), "entries": len(entries)},
                        [Hop.of(call.path, call.line, Step.LAUNCH_PASSES, count=len(args)),
                         Hop.of(arglist.path, arglist.line, Step.LIST_HAS_ENTRIES,
                                count=len(entries))])
    for i, (arg, entry) in enumerate(zip(args, entries, strict=True)):
        if arg.name and not same_name(arg.name, entry.name):
            elsewhere = [j for j, e in enumerate(entries) if same_name(arg.name, e.name)]
            if elsewhere:
                other = entries[elsewhere[0]]
                return _Problem(Reason.PACK_LAUNCH_ARGUMENT_MISPLACED, {
                    "argument": arg.text, "position": i + 1, "entry": entry.name,
                    "declared_at": elsewhere[0] + 1}, [
                    Hop.of(call.path, arg.line or call.line, Step.LAUNCH_ARGUMENT_AT,
                           argument=arg.text, position=i + 1),
                    Hop.of(arglist.path, entry.line or arglist.line, Step.LIST_ENTRY_AT,
                           entry=entry.name, position=i + 1),
                    Hop.of(arglist.path, other.line or arglist.line, Step.LIST_ENTRY_AT,
                           entry=other.name, position=elsewhere[0] + 1)])
        if (None not in (arg.kind, arg.size, entry.kind, entry.size)
                and (arg.kind, arg.size) != (entry.kind, entry.size)):
            return _Problem(Reason.PACK_LAUNCH_ARGUMENT_KIND_DIFFERS, {
                "argument": arg.text, "position": i + 1, "kind": arg.kind, "size": arg.size,
                "entry": entry.name, "entry_kind": entry.kind, "entry_size": entry.size}, [
                Hop.of(call.path, arg.line or call.line, Step.LAUNCH_ARGUMENT_AT,
                       argument=arg.text, position=i + 1),
                Hop.of(arglist.path, entry.line or arglist.line, Step.LIST_ENTRY_IS,
                       param=entry.name, kind=entry.kind, size=entry.size)])
    return None


def _copies(graph: SymbolGraph) -> tuple[dict[str, LaunchCall], dict[str, ArgList]]:
    calls = {c.subject: c for c in graph.kernels.launch_calls()}
    lists = {a.subject: a for a in graph.kernels.argument_lists()}
    return calls, lists


class PackLaunchCheck(Check):
    """What it checks:
        In a native pack that no builder pairs with (its own builder is not in the tree,
        or only another arch's is), the launch() call against the KernelArgument list of
        the same pack: the count, then each argument's name against the entry at its
        position (a name the list declares at another position is misplaced), then its
        kind and size where both copies settle them (a cast, a declared type, a field).

    Why a break hurts at run time:
        The list is what the pack checks the packed kernel's signature against; the
        launch() packs the buffer the kernel reads. Two by_value/4 scalars swapped in the
        launch pass the signature check and hand the kernel each other's values.

    Example:
        Breaks: `launch(..., binding.scale, p.batch, ...)` becomes
        `launch(..., p.batch, binding.scale, ...)` while the list names scale, batch;
        the launch drops `seqlen_kv`. Does not break: the launch's expression for `batch`
        changes while its name, position, kind and size stay.

    When it says changed instead:
        It does not: a launch() or list with no builder that changed is the kernargs
        check's `builder-not-found` row; an argument whose name or type the reader
        cannot settle is compared by what it can read only.

    Evidence:
        The launch() argument's file:line and position, and the list entries' file:line
        (the entry at that position and the one that names the argument).
    """

    name: ClassVar[str] = "pack-launch"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset({SurfaceKind.INGESTOR_PACK})

    def rows(self, scope: Scope) -> Iterator[Row]:
        new_graph = scope.ctx.graph(scope.new)
        pairs = new_graph.kernels.launches_with_own_list()
        if not pairs:
            return
        old_calls, old_lists = _copies(scope.ctx.graph(scope.old))
        view = scope.view.name
        for call, arglist in pairs:
            problem = _problem(call, arglist)
            if problem is None:
                continue
            before_call, before_list = old_calls.get(call.subject), old_lists.get(
                arglist.subject)
            call_changed = before_call is None or before_call.shape != call.shape
            list_changed = before_list is None or before_list.shape != arglist.shape
            sides = (Side(call.path, call.line, view,
                          Role.CHANGED if call_changed else Role.COUNTERPART, call.receiver),
                     Side(arglist.path, arglist.line, view,
                          Role.CHANGED if list_changed else Role.COUNTERPART, arglist.name))
            yield scope.row(call.subject, Status.MISMATCH, problem.reason,
                            archs=scope.archs_for(call.path, scope.holding(call.path)),
                            sides=sides, evidence=tuple(problem.hops),
                            details={**problem.values, "list": arglist.name})
