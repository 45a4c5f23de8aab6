"""Kernel arguments: each `b.param` builder against every hand-kept copy of its list.

Maintainers: reads the records the symbol graph of each view's old and new snapshot
hands out (argument lists, launch() calls, kpack signatures, AOT kernels), already
paired with their builder there; never pairs a copy itself, never touches networkx,
parses an id, parses source or touches git. Rows name a `Reason` and `Step`s; the
words live in `impact/render/words/`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, ClassVar

from impact.checks.check import Check, Scope
from impact.graph import (
    ALWAYS,
    Builder,
    LaunchArgument,
    ListEntry,
    PairedBy,
    SymbolGraph,
    Unread,
    abbreviates,
    same_name,
)
from impact.kinds import SurfaceKind
from impact.reasons import Reason, Step
from impact.rows import SETTLED_BY_BUILD, Hop, Role, Row, Side, Status

_POINTER = ("global_buffer", 8)
_SCALARS = {
    "F32": ("by_value", 4), "I32": ("by_value", 4), "U32": ("by_value", 4),
    "I64": ("by_value", 8), "U64": ("by_value", 8), "F64": ("by_value", 8),
    "F16": ("by_value", 2), "BF16": ("by_value", 2), "I16": ("by_value", 2),
    "I8": ("by_value", 1),
}
# family.json type names -> (kind, size); anything else cannot be compared.
_AOT_TYPES = {"ptr": _POINTER, "pointer": _POINTER, "f32": ("by_value", 4),
              "i32": ("by_value", 4), "u32": ("by_value", 4), "i64": ("by_value", 8),
              "u64": ("by_value", 8), "f64": ("by_value", 8), "f16": ("by_value", 2),
              "bf16": ("by_value", 2)}
_PTR_CALL = re.compile(r"(^|\.)PtrType\(")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_MAX_GUARDS = 8
CHANGED, COUNTERPART = Role.CHANGED, Role.COUNTERPART


class _Copy(enum.StrEnum):
    """What kind of copy a site is (the row's `details["site"]`)."""

    LIST = "list"              # a static list or a kpack signature: compared by name
    LAUNCH = "launch"          # a launch() call: compared by count
    POSITIONAL = "positional"  # an AOT args_signature: compared by position


class _Verdict(enum.StrEnum):
    AGREE = "agree"
    CONDITIONAL = "conditional"
    UNRESOLVED = "unresolved"
    MISMATCH = "mismatch"


@dataclass(frozen=True)
class _Param:
    name: str
    kind: tuple[str, int] | None  # None: the type could not be resolved
    guard: str
    line: int
    type_text: str


@dataclass(frozen=True)
class _Builder:
    """A graph Builder with each parameter's kind and size resolved."""

    id: str
    name: str
    path: str
    line: int
    params: tuple[_Param, ...]
    unread: tuple[Unread, ...] = ()
    module: str = ""

    def candidates(self) -> list[tuple[frozenset[str], tuple[_Param, ...]]]:
        """The argument lists the builder emits, one per set of conditions switched on
        (none first, all last)."""
        guards = sorted({p.guard for p in self.params if p.guard != ALWAYS})
        if len(guards) > _MAX_GUARDS:
            subsets = [frozenset(), frozenset(guards)]
        else:
            subsets = [frozenset(c) for n in range(len(guards) + 1)
                       for c in combinations(guards, n)]
        return [(s, tuple(p for p in self.params if p.guard == ALWAYS or p.guard in s))
                for s in subsets]

    @property
    def always(self) -> tuple[_Param, ...]:
        return tuple(p for p in self.params if p.guard == ALWAYS)

    def raw(self) -> tuple[Any, ...]:
        """Everything the comparison reads of the builder."""
        return (self.id, tuple((p.name, p.kind, p.guard, p.type_text) for p in self.params),
                self.unread)


@dataclass(frozen=True)
class _Site:
    """One copy, with the builder the graph paired it with."""

    subject: str
    kind: _Copy
    path: str
    line: int
    symbol: str
    builder: _Builder
    how: PairedBy
    entries: tuple[ListEntry, ...] = ()
    arguments: tuple[str, ...] = ()
    dynamic: bool = False
    launch_args: tuple[LaunchArgument, ...] = ()
    unread: tuple[Unread, ...] = ()

    def copy(self) -> tuple[Any, ...]:
        """Everything the comparison reads of the copy itself."""
        own = (tuple((e.kind, e.size, e.name) for e in self.entries)
               if self.kind != _Copy.LAUNCH else self.arguments)
        return (own, self.dynamic)

    def abi(self) -> tuple[Any, ...]:
        """The argument list itself: names, kinds, sizes, conditions; for a launch() the
        count and the name, kind and size each argument passes (a launch that now passes
        another variable is changed, never inert)."""
        builder = tuple((p.name, p.kind, p.guard) for p in self.builder.params)
        own = (tuple((e.kind, e.size, e.name) for e in self.entries)
               if self.kind != _Copy.LAUNCH else
               (len(self.arguments), tuple((a.name, a.kind, a.size) for a in self.launch_args)))
        return (builder, own)


@dataclass
class _Outcome:
    """A comparison's verdict, the reason a row would give and the values it reads."""

    status: _Verdict
    reason: Reason
    values: dict[str, Any] = field(default_factory=dict)
    hops: list[Hop] = field(default_factory=list)


# ------------------------------------------------------------------- reading the graph


def _resolve_type(graph: SymbolGraph, module: str, text: str,
                  depth: int = 0) -> tuple[str, int] | None:
    """(kind, size) of a b.param type: PtrType(...) is a pointer whatever it points to;
    scalar names map by table; a name bound by a simple module-level assignment (or
    imported from one) is followed. None when it cannot be settled."""
    text = text.strip()
    if _PTR_CALL.search(text):
        return _POINTER
    if not _NAME.match(text) or depth > 5:
        return None
    last = text.rsplit(".", 1)[-1]
    if last in _SCALARS:
        return _SCALARS[last]
    bound = graph.python.assignment(module, text)
    if bound is None:
        return None
    return _resolve_type(graph, bound.module, bound.value, depth + 1)


def _typed(graph: SymbolGraph, builder: Builder) -> _Builder:
    if not builder.params:  # a SignatureBuilder factory: `ptr(name)`, `scalar(name, T)`
        return _Builder(builder.id, builder.name, builder.path, builder.line, tuple(
            _Param(e.name, _POINTER if e.method == "ptr" else _resolve_type(
                graph, builder.module, e.type_text or ""), e.guard, builder.line,
                e.type_text or e.method) for e in builder.signature), (), builder.module)
    return _Builder(builder.id, builder.name, builder.path, builder.line, tuple(
        _Param(p.name, _resolve_type(graph, builder.module, p.type_text), p.guard, p.line,
               p.type_text) for p in builder.params), builder.unread, builder.module)


def _sites(graph: SymbolGraph, prefer: Mapping[str, str]) -> dict[str, _Site]:
    """Every paired list, kpack signature, AOT signature and launch() copy in `graph`.
    `prefer` maps a list's subject to the builder it restated at the old revision."""
    typed: dict[str, _Builder] = {}

    def of(builder: Builder) -> _Builder:
        if builder.id not in typed:
            typed[builder.id] = _typed(graph, builder)
        return typed[builder.id]

    sites: dict[str, _Site] = {}
    for arglist in graph.kernels.argument_lists(prefer):
        if arglist.pairing.builder is not None:
            sites[arglist.subject] = _Site(
                arglist.subject, _Copy.LIST, arglist.path, arglist.line, arglist.name,
                of(arglist.pairing.builder), arglist.pairing.how, entries=arglist.entries,
                dynamic=arglist.dynamic, unread=arglist.unread)
    for signature in graph.kernels.kpack_signatures(prefer):
        assert signature.pairing.builder is not None
        sites[signature.subject] = _Site(
            signature.subject, _Copy.LIST, signature.path, signature.line, signature.variant,
            of(signature.pairing.builder), signature.pairing.how, entries=signature.entries)
    for kernel in graph.kernels.aot_kernels():
        if kernel.pairing.builder is None:
            continue
        entries = tuple(ListEntry(*_AOT_TYPES.get(a.type_text.lower(), (None, None)), a.name,
                                  kernel.line) for a in kernel.arguments)
        sites[kernel.subject] = _Site(
            kernel.subject, _Copy.POSITIONAL, kernel.path, kernel.line, kernel.name,
            of(kernel.pairing.builder), kernel.pairing.how, entries=entries)
    for call in graph.kernels.launch_calls(prefer):
        if call.pairing.builder is not None:
            sites[call.subject] = _Site(
                call.subject, _Copy.LAUNCH, call.path, call.line, call.receiver,
                of(call.pairing.builder), call.pairing.how, arguments=call.arguments,
                launch_args=call.kernel_arguments)
    return sites


@dataclass(frozen=True)
class _Unpaired:
    """A list or launch() the graph paired with no builder, and what it passes."""

    subject: str
    kind: _Copy
    path: str
    line: int
    symbol: str
    how: PairedBy
    own: tuple[Any, ...]


def _unpaired_copies(graph: SymbolGraph, prefer: Mapping[str, str]) -> dict[str, _Unpaired]:
    """Every C++ list and launch() in `graph` with no builder, by subject."""
    found = {}
    for arglist in graph.kernels.argument_lists(prefer):
        if arglist.pairing.builder is None:
            found[arglist.subject] = _Unpaired(
                arglist.subject, _Copy.LIST, arglist.path, arglist.line, arglist.name,
                arglist.pairing.how, arglist.shape)
    for call in graph.kernels.launch_calls(prefer):
        if call.pairing.builder is None:
            found[call.subject] = _Unpaired(
                call.subject, _Copy.LAUNCH, call.path, call.line, call.receiver,
                call.pairing.how, call.shape)
    return found


# ------------------------------------------------------------------------ comparing


def _compare_positional(site: _Site) -> _Outcome:
    """A list whose names are its own (family.json): count, then kind and size by position."""
    for switched, params in site.builder.candidates():
        if len(params) != len(site.entries):
            continue
        for param, entry in zip(params, site.entries, strict=True):
            if entry.kind is None:
                return _Outcome(_Verdict.UNRESOLVED, Reason.LIST_ARGUMENT_TYPE_UNKNOWN,
                                {"argument": entry.name})
            if param.kind is None:
                return _Outcome(_Verdict.UNRESOLVED, Reason.BUILDER_PARAM_TYPE_UNRESOLVED,
                                {"param": param.name})
            if (entry.kind, entry.size) != param.kind:
                return _Outcome(_Verdict.MISMATCH, Reason.ARGUMENT_KIND_DIFFERS_BY_POSITION,
                                {"argument": entry.name, "kind": entry.kind,
                                 "size": entry.size, "param": param.name,
                                 "builder_kind": param.kind[0], "builder_size": param.kind[1]})
        if switched == site.builder.candidates()[-1][0]:
            return _Outcome(_Verdict.AGREE, Reason.LIST_AGREES_BY_POSITION)
        return _Outcome(_Verdict.CONDITIONAL, Reason.LIST_AGREES_WITH_CONDITIONALS_OFF)
    counts = sorted({len(params) for _s, params in site.builder.candidates()})
    return _Outcome(_Verdict.MISMATCH, Reason.ARGS_SIGNATURE_COUNT_DIFFERS,
                    {"count": len(site.entries), "counts": counts})


def _describe_names(want: list[str], have: list[str], python_changed: bool,
                    cpp_changed: bool) -> tuple[Reason, dict[str, Any]]:
    """The reviewer's reason for two name lists that differ, and the names it reads."""
    extra_py = [n for n in want if n not in have]
    extra_cpp = [n for n in have if n not in want]
    if not extra_py and not extra_cpp:
        return Reason.ARGUMENT_ORDER_DIFFERS, {}
    if extra_py and not extra_cpp:
        if cpp_changed and not python_changed:
            return Reason.ARGUMENT_REMOVED_ON_CPP_SIDE_ONLY, {"names": extra_py}
        return Reason.ARGUMENT_ADDED_ON_PYTHON_SIDE_ONLY, {"names": extra_py}
    if extra_cpp and not extra_py:
        if python_changed and not cpp_changed:
            return Reason.ARGUMENT_REMOVED_ON_PYTHON_SIDE_ONLY, {"names": extra_cpp}
        return Reason.ARGUMENT_ADDED_ON_CPP_SIDE_ONLY, {"names": extra_cpp}
    return Reason.ARGUMENT_NAMES_DIFFER, {"copy_name": extra_cpp[0], "builder_arg": extra_py[0]}


def _compare_list(site: _Site, python_changed: bool, cpp_changed: bool) -> _Outcome:
    if site.entries and all(e.name in ("", "None") for e in site.entries):
        outcome = _compare_positional(site)  # a pin of kinds and sizes only: by position
        if outcome.reason == Reason.ARGS_SIGNATURE_COUNT_DIFFERS:
            outcome.reason = Reason.UNNAMED_LIST_COUNT_DIFFERS
        return outcome
    builder = site.builder
    have = [e.name for e in site.entries]
    candidates = builder.candidates()
    all_guards = candidates[-1][0]
    for switched, params in candidates:
        if [p.name for p in params] != have:
            continue
        for param, entry in zip(params, site.entries, strict=True):
            if param.kind is None:
                return _Outcome(_Verdict.UNRESOLVED, Reason.BUILDER_PARAM_TYPE_UNRESOLVED_AT,
                                {"param": param.name, "type_text": param.type_text},
                                [Hop.of(builder.path, param.line, Step.BUILDER_PARAM_HAS_TYPE,
                                        param=param.name, type_text=param.type_text)])
            if (entry.kind, entry.size) != param.kind:
                return _Outcome(_Verdict.MISMATCH, Reason.ARGUMENT_KIND_OR_SIZE_DIFFERS,
                                {"param": param.name}, [
                    Hop.of(builder.path, param.line, Step.BUILDER_PARAM_IS, param=param.name,
                           kind=param.kind[0], size=param.kind[1]),
                    Hop.of(site.path, entry.line, Step.LIST_ENTRY_IS, param=param.name,
                           kind=entry.kind, size=entry.size)])
        if switched == all_guards:
            return _Outcome(_Verdict.AGREE, Reason.LIST_AGREES_WITH_BUILDER)
        return _Outcome(_Verdict.CONDITIONAL, Reason.LIST_AGREES_WITH_CONDITIONALS_OFF, {},
                        [Hop.of(builder.path, p.line, Step.BUILDER_PARAM_ONLY_IF,
                                param=p.name, guard=p.guard)
                         for p in builder.params if p.guard != ALWAYS and p.guard not in switched])
    best = min(candidates, key=lambda c: (len({p.name for p in c[1]} ^ set(have)),
                                          abs(len(c[1]) - len(have)), len(c[1])))[1]
    reason, values = _describe_names([p.name for p in best], have, python_changed, cpp_changed)
    return _Outcome(_Verdict.MISMATCH, reason, values)


def _compare_launch(site: _Site) -> _Outcome:
    """Count first; then, for a builder candidate of the same count, argument by
    argument: a name the builder declares at another position is misplaced (a swapped
    pair names both positions), a kind or size the file settles that differs from the
    parameter's is a mismatch. A name the builder does not use is compared by type only."""
    count = len(site.arguments)
    candidates = [(s, p) for s, p in site.builder.candidates() if len(p) == count]
    if not candidates:
        return _Outcome(_Verdict.MISMATCH, Reason.LAUNCH_COUNT_DIFFERS,
                        {"count": count, "always": len(site.builder.always)})
    first: _Outcome | None = None
    for switched, params in candidates:
        problem = _launch_problem(site, params)
        if problem is None:
            if switched == site.builder.candidates()[-1][0]:
                return _Outcome(_Verdict.AGREE, Reason.LAUNCH_COUNT_AGREES)
            return _Outcome(_Verdict.CONDITIONAL,
                            Reason.LAUNCH_COUNT_AGREES_WITH_CONDITIONALS_OFF)
        first = first or problem
    assert first is not None
    return first


def _names(arg: str | None, param: str) -> bool:
    """Whether a launch() argument names a builder parameter: the same name, or the
    parameter by the starts of its words (`_problem.sq` for `seqlen_q`)."""
    return same_name(arg, param) or abbreviates(arg, param)


def _launch_problem(site: _Site, params: tuple[_Param, ...]) -> _Outcome | None:
    """The first argument of a launch() that disagrees with `params`, or None."""
    args = site.launch_args
    if len(args) != len(params):
        return None  # no per-argument reading (an older fact): the count agreed
    for i, (arg, param) in enumerate(zip(args, params, strict=True)):
        if arg.name is None or _names(arg.name, param.name):
            continue
        others = [j for j, p in enumerate(params) if j != i and _names(arg.name, p.name)]
        if len(others) != 1:
            continue  # a name of its own (or of several): compared by type below
        other = others[0]
        own_elsewhere = any(k != i and _names(a.name, param.name) for k, a in enumerate(args))
        other_in_place = _names(args[other].name, params[other].name)
        if not own_elsewhere and other_in_place:
            continue  # one buffer passed twice on purpose (`q` for `k` too), not a swap
        return _Outcome(_Verdict.MISMATCH, Reason.LAUNCH_ARGUMENT_MISPLACED, {
            "argument": arg.name, "position": i + 1, "param": param.name,
            "argument_param": params[other].name, "other": other + 1}, [
            Hop.of(site.path, arg.line, Step.LAUNCH_ARGUMENT_AT, argument=arg.text,
                   position=i + 1),
            Hop.of(site.builder.path, param.line, Step.BUILDER_PARAM_AT, param=param.name,
                   position=i + 1),
            Hop.of(site.builder.path, params[other].line, Step.BUILDER_PARAM_AT,
                   param=params[other].name, position=other + 1)])
    for i, (arg, param) in enumerate(zip(args, params, strict=True)):
        if arg.kind is None or arg.size is None or param.kind is None:
            continue
        if (arg.kind, arg.size) != param.kind:
            return _Outcome(_Verdict.MISMATCH, Reason.LAUNCH_ARGUMENT_KIND_DIFFERS, {
                "argument": arg.text, "position": i + 1, "kind": arg.kind, "size": arg.size,
                "param": param.name, "builder_kind": param.kind[0],
                "builder_size": param.kind[1]}, [
                Hop.of(site.path, arg.line, Step.LAUNCH_ARGUMENT_AT, argument=arg.text,
                       position=i + 1),
                Hop.of(site.builder.path, param.line, Step.BUILDER_PARAM_IS, param=param.name,
                       kind=param.kind[0], size=param.kind[1])])
    return None


def _compare(site: _Site, python_changed: bool, cpp_changed: bool) -> _Outcome:
    if site.kind == _Copy.LIST:
        return _compare_list(site, python_changed, cpp_changed)
    if site.kind == _Copy.POSITIONAL:
        return _compare_positional(site)
    return _compare_launch(site)


def _made_conditional(old: _Site | None, new: _Site) -> _Param | None:
    """A parameter the builder declared on every path at the base and now only under a
    condition, while the copy, which agreed with the base's builder, stayed as it was: the
    copy still passes the slot when the condition is off (a loop is no condition here: it
    is left to the other readings)."""
    if old is None or old.builder.id != new.builder.id or old.copy() != new.copy():
        return None
    if new.dynamic or old.dynamic or new.builder.unread or old.builder.unread:
        return None
    always = {p.name for p in old.builder.always}
    for param in new.builder.params:
        if param.name in always and param.guard != ALWAYS and "loop:" not in param.guard:
            if _compare(old, False, False).status == _Verdict.AGREE:
                return param
            return None
    return None


# -------------------------------------------------------------------------- the check


class KernargsCheck(Check):
    """What it checks:
        Each `b.param` builder against every hand-kept copy of its argument list: the
        static `KernelArgument` lists of the native packs, literal lists in C++ test pins,
        the signatures packed descriptors record (`kind: kpack`, one copy per distinct
        signature in a descriptor file), and the positional `launch()` call. Lists are
        compared by count, order, name, kind and size (a `PtrType(...)` is
        global_buffer/8; F32, I32 by_value/4; I64 by_value/8; F16, BF16 by_value/2); a
        list that writes kinds and sizes only (no names) by count, kind and size in
        order. A launch() call is compared argument by argument after the launch
        parameters before them (stream, grid and block, shared memory, the kernel
        handle): its count, then each argument's name (`_ptr`, case, `m_`/`k` prefixes
        set aside; `sq` may stand for `seqlen_q`, the start of each of its words)
        against the parameter at its position, and its kind and size where
        the C++ settles them (a cast, a declared type, a struct field). The graph pairs
        each copy with its builder: a list with the builder a profile declares, else the
        one with equal names, else the builder it restated at the base, else the closest
        b.param builder; a launch() with the profile's declared builder, else the list of
        its own pack (the only one, the one whose names it passes, its launcher's name,
        the closest names, the order), and in a pack that keeps no list, the builder it
        passed at the base, else the one whose names it passes, else the closest.

    Why a break hurts at run time:
        The kernel reads its arguments by position from one packed buffer. A copy with an
        extra, missing, reordered or resized entry makes the kernel read garbage pointers
        or scalars: a fault or silently wrong output on the GPU, never a build error.

    Example:
        Breaks: head adds `dropout_seed = b.param("dropout_seed", I32)` to
        build_attention_dense() but not to attentionDenseKernelSignature(), the test pin or
        launch() (`mismatch`); head swaps `batch` and `seqlen_q` in launch() (`mismatch`
        naming both positions); head moves `seqlen_kv` under `if spec.varlen:` while every
        copy still passes it (`mismatch`: the copy passes a slot the kernel may not have).
        Does not break: head adds it to all three (`changed`: the
        ABI changed consistently and needs a device run); an argument added under
        `if spec.use_sinks:` that the lists leave out (`changed`).

    When it says changed instead:
        A copy that agrees with the builder only when its conditional arguments are off; a
        builder whose arguments cannot be placed (a `b.param` whose name is not a literal,
        one per element of a comprehension, a helper declaring on a builder passed to it;
        a loop over literal names is read, one argument per name), whose lists are never
        compared; a builder parameter whose type cannot be resolved; a list the reader could not
        settle statically (grown in a loop or under a condition, a value from a runtime
        parameter, a call to a function it cannot see), which is not compared and whose
        row names the construct and its line; a builder the list restated at the base
        that is gone. A mismatch the base already had, on sides whose
        arguments the change did not touch, is listed as pre-existing.

    Evidence:
        Both sides as file:line (a copy whose arguments, as compared, differ from the
        base's is `changed`, the other `counterpart`); hops from the b.param lines added
        or removed to the copy (its entry count or launch argument count), the entry that
        differs, how the pair was made, and the shipped variants that build the builder.
    """

    name: ClassVar[str] = "kernargs"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.ROCKE_LIBRARY, SurfaceKind.INGESTOR_PACK, SurfaceKind.TEST_PIN})

    def rows(self, scope: Scope) -> Iterator[Row]:
        old_graph, new_graph = scope.ctx.graph(scope.old), scope.ctx.graph(scope.new)
        old_sites = _sites(old_graph, {})
        prefer = {s: site.builder.id for s, site in old_sites.items()
                  if site.kind in (_Copy.LIST, _Copy.LAUNCH)}
        new_sites = _sites(new_graph, prefer)
        touched = scope.changed
        for subject in sorted(new_sites):
            row = self._row(scope, new_graph, old_sites.get(subject), new_sites[subject],
                            touched)
            if row is not None:
                yield row
        new_lists = {a.subject: a for a in new_graph.kernels.argument_lists(prefer)}
        for subject in sorted(set(old_sites) - set(new_sites)):
            old = old_sites[subject]
            if old.kind != _Copy.LIST or subject not in new_lists:
                continue
            if old.path in touched or old.builder.path in touched:
                still = new_lists[subject]
                list_changed = still.shape != (
                    tuple((e.kind, e.size, e.name) for e in old.entries), old.dynamic)
                yield self._make(scope, old, Status.CHANGED, Reason.RESTATED_BUILDER_GONE,
                                 {}, [], (list_changed, True), compared=False)
        yield from self._unpaired(scope, old_graph, new_graph, prefer,
                                  set(old_sites) | set(new_sites))

    def _unpaired(self, scope: Scope, old_graph: SymbolGraph, new_graph: SymbolGraph,
                  prefer: Mapping[str, str], paired: set[str]) -> Iterator[Row]:
        """A list or launch() that pairs with no builder (none at all, or only one of
        another arch), new in this view or itself changed: `changed`, naming it; its
        arguments were compared with nothing (fail closed, never a guessed pairing)."""
        before = _unpaired_copies(old_graph, {})
        for subject, copy in sorted(_unpaired_copies(new_graph, prefer).items()):
            if subject in paired or copy.path not in scope.changed:
                continue
            if subject in before and before[subject].own == copy.own:
                continue  # the copy did not move: the surface check reports the file
            hops = [Hop.of(copy.path, copy.line, Step.COPY_NOT_PAIRED, site=str(copy.kind),
                           symbol=copy.symbol)]
            if copy.how == PairedBy.OTHER_ARCH_ONLY:
                hops.append(Hop.of(copy.path, copy.line, Step.ONLY_OTHER_ARCH_BUILDER))
            yield scope.row(copy.subject, Status.CHANGED, Reason.BUILDER_NOT_FOUND,
                            archs=scope.archs_for(copy.path, scope.holding(copy.path)),
                            sides=(Side(copy.path, copy.line, scope.view.name, CHANGED,
                                        copy.symbol),),
                            evidence=tuple(hops),
                            details={"site": str(copy.kind), "symbol": copy.symbol,
                                     "paired": str(copy.how), "compared": False})

    def _row(self, scope: Scope, graph: SymbolGraph, old: _Site | None, new: _Site,
             touched: frozenset[str]) -> Row | None:
        python_touched = new.builder.path in touched
        cpp_touched = new.path in touched
        # Which copy changed, as the comparison reads it: the copy, the builder, or both
        # (a copy or a pairing new in this view counts as changed on both sides).
        roles = (old is None or old.copy() != new.copy(),
                 old is None or old.builder.raw() != new.builder.raw())
        settled = (python_touched or cpp_touched) and any(roles)
        if new.builder.unread:  # never compare a list the builder side cannot be read of
            if not settled:
                return None
            first = new.builder.unread[0]
            hops = self._hops(graph, old, new) + [
                Hop.of(new.builder.path, u.line, Step.BUILDER_CONSTRUCT_AT,
                       construct=u.construct) for u in new.builder.unread[:3]]
            return self._make(scope, new, Status.CHANGED, Reason.BUILDER_ARGUMENTS_NOT_READ,
                              {"construct": first.construct, "line": first.line}, hops,
                              roles, compared=False)
        made = _made_conditional(old, new) if settled else None
        if made is not None:
            param = made
            return self._make(scope, new, Status.MISMATCH,
                              Reason.ARGUMENT_MADE_CONDITIONAL_ON_PYTHON_SIDE_ONLY,
                              {"param": param.name, "guard": param.guard},
                              self._hops(graph, old, new), roles)
        if new.dynamic:
            if not settled:
                return None
            if new.unread:  # name the construct that could not be read, and where
                first = new.unread[0]
                hops = self._hops(graph, old, new) + [
                    Hop.of(new.path, u.line, Step.LIST_CONSTRUCT_AT, construct=u.construct)
                    for u in new.unread[:3]]
                return self._make(scope, new, Status.CHANGED,
                                  Reason.LIST_CONSTRUCT_NOT_READ,
                                  {"construct": first.construct, "line": first.line}, hops,
                                  roles, compared=False)
            return self._make(scope, new, Status.CHANGED, Reason.LIST_BUILT_BY_HELPER_CALLS,
                              {}, self._hops(graph, old, new), roles, compared=False)
        outcome = _compare(new, python_touched, cpp_touched)
        hops = self._hops(graph, old, new) + outcome.hops
        if outcome.status == _Verdict.MISMATCH:
            values = dict(outcome.values)
            if new.how == PairedBy.CLOSEST:  # the pairing is a guess: the sentence says so
                values["closest_to"] = new.builder.name
            # A mismatch on copies this view left as they were is the base's: no role
            # says changed, and run_checks lists it as pre-existing.
            return self._make(scope, new, Status.MISMATCH, outcome.reason, values, hops,
                              roles if settled else (False, False))
        if not settled:
            return None  # untouched, or a body edit the surface check already reports
        if outcome.status == _Verdict.UNRESOLVED:
            return self._make(scope, new, Status.CHANGED, outcome.reason, outcome.values,
                              hops, roles)
        if old is not None and old.abi() == new.abi():
            return self._make(scope, new, Status.INERT, Reason.ARGUMENT_LIST_UNCHANGED, {},
                              hops, roles)
        reason, values = outcome.reason, outcome.values
        if old is not None and old.abi()[1] != new.abi()[1]:
            reason, values = Reason.ARGUMENT_LIST_CHANGED_ON_BOTH_SIDES, {}
            if outcome.status == _Verdict.CONDITIONAL:
                reason = Reason.ARGUMENT_LIST_CHANGED_ON_BOTH_SIDES_CONDITIONALS_OUT
        return self._make(scope, new, Status.CHANGED, reason, values, hops, roles)

    def _hops(self, graph: SymbolGraph, old: _Site | None, new: _Site) -> list[Hop]:
        builder = new.builder
        hops: list[Hop] = []
        after = {p.name: p for p in builder.params}
        if old is not None:
            before = {p.name: p for p in old.builder.params}
            for param in builder.params:
                if param.name not in before:
                    hops.append(Hop.of(builder.path, param.line, Step.BUILDER_PARAM_ADDED,
                                       param=param.name))
                elif before[param.name].guard != param.guard:
                    hops.append(Hop.of(builder.path, param.line, Step.BUILDER_PARAM_NOW_UNDER,
                                       param=param.name, guard=param.guard))
            for name in before:
                if name not in after:
                    hops.append(Hop.of(builder.path, builder.line, Step.BUILDER_PARAM_REMOVED,
                                       param=name))
        if new.how not in (PairedBy.DECLARED, PairedBy.NAMES):
            hops.append(Hop.of(new.path, new.line, Step.COPY_PAIRED_WITH,
                               builder_name=builder.name, how=str(new.how)))
        if new.kind == _Copy.LIST:
            hops.append(Hop.of(new.path, new.line, Step.LIST_HAS_ENTRIES,
                               count=len(new.entries)))
        else:
            hops.append(Hop.of(new.path, new.line, Step.LAUNCH_PASSES,
                               count=len(new.arguments)))
        hops.append(Hop.of(builder.path, builder.line, Step.BUILDER_DECLARES,
                           builder_name=builder.name, always=len(builder.always),
                           total=len(builder.params)))
        for variant in graph.descriptors.variants_building(builder.id)[:3]:
            hops.append(Hop.of(variant.path, variant.line, Step.VARIANT_BUILDS_IT,
                               variant=variant.name))
        return hops

    def _make(self, scope: Scope, site: _Site, status: Status, reason: Reason,
              values: dict[str, Any], hops: list[Hop], roles: tuple[bool, bool], *,
              compared: bool = True) -> Row:
        """A row naming both copies: each `changed` when it changed in this view, as the
        comparison reads it (run_checks charges the row from these roles)."""
        builder, view = site.builder, scope.view
        copy_changed, builder_changed = roles
        sides = (
            Side(site.path, site.line, view.name, CHANGED if copy_changed else COUNTERPART,
                 site.symbol),
            Side(builder.path, builder.line, view.name,
                 CHANGED if builder_changed else COUNTERPART, builder.name),
        )
        # Only the builder moved: an equal build of every variant it ships shows its
        # arguments are the ones the copy already agreed with.
        claim = ({SETTLED_BY_BUILD: {"builders": [[builder.module, builder.name]],
                                     "files": [builder.path]}}
                 if status == Status.CHANGED and builder_changed and not copy_changed
                 and builder.module else {})
        return scope.row(site.subject, status, reason,
                         archs=scope.archs_for(builder.path, scope.holding(builder.path)),
                         sides=sides, evidence=tuple(hops),
                         details={"builder_name": builder.name, **values,
                                  "site": str(site.kind), "builder": builder.id,
                                  "paired": str(site.how), "compared": compared, **claim})
