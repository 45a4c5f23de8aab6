"""Launch surfaces: each profile `launch_surface:` entry, its Python half against its C++ mirror.

Maintainers: reads the profiles' launch-surface entries, the definitions and what they
reach through each snapshot's SymbolGraph records, and facts through the CheckContext;
never parses source, touches git or sees a graph node. It compares digests only: what the
two halves compute is left to a device run. Its sentences live in `impact/render/words/`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.checks.check import Check, Scope
from impact.git import Snapshot
from impact.graph import LaunchSurfaceEntry, Locator, SymbolGraph
from impact.kinds import FactKind, SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.rows import SETTLED_BY_BUILD, Hop, Role, Row, Side, Status

Entry = LaunchSurfaceEntry
_Key = tuple[str, str]  # (module, qualname) of a definition; (path, "") for a whole module

# States of one side at one revision.
_OK = "ok"
_NONE = "none"            # declared absent (`none`)
_NO_FILE = "no-file"
_UNPARSED = "unparsed"
_NO_SYMBOL = "no-symbol"
_ABSENT = (_NO_FILE, _NO_SYMBOL)  # a break the side can carry from the base unchanged


@dataclass
class _Python:
    """The Python half at one revision: the named function(s) and what they reach."""

    state: str
    file: str = ""
    symbol: str | None = None
    failure: str = ""
    line: int = 0
    defs: dict[_Key, tuple[Any, ...]] = field(default_factory=dict)
    reached: dict[_Key, tuple[Any, ...]] = field(default_factory=dict)
    where: dict[_Key, tuple[str, int, str]] = field(default_factory=dict)


@dataclass
class _Mirror:
    """The C++ half at one revision: the mirror file's content and the named symbol."""

    state: str
    file: str = ""
    symbol: str | None = None
    failure: str = ""
    line: int = 0
    digest: str | None = None


@dataclass(frozen=True)
class _Break:
    """A half the profile names that is missing at the new revision, and whether it was
    missing so at the base too (`moved`: it was not)."""

    reason: Reason
    half: str  # _PYTHON_HALF or _MIRROR_HALF
    moved: bool


_PYTHON_HALF, _MIRROR_HALF = "python", "mirror"


@dataclass
class _Verdict:
    breaks: list[_Break] = field(default_factory=list)
    changes: list[Reason] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)


class LaunchSurfaceCheck(Check):
    """What it checks:
        Every `launch_surface:` entry of an IngestorGenerator tool profile
        (`configs/<slug>.profile.yaml`): its `python_source` (a host-side function such as
        the grid, block or a guard, resolved as the generator resolves it: every function of
        that name anywhere in the module, at module level, under `if`/`try`/`with` or as a
        `Class.method`; or, with a path only, the whole module) together with every def,
        class and assignment it reaches by name, against its hand-written `cpp_mirror`.

    Why a break hurts at run time:
        The C++ pack restates the Python launch surface by hand (grid order, block size,
        applicability rules). When one half moves and the other does not, the engine
        launches rows twice or never, or serves shapes the kernel was not built for; nothing
        fails on the host, the answer is silently wrong on the device.

    Example:
        Breaks (`mismatch`): `attention_dense_grid` is renamed while the profile still names
        it, or `gfx950AttentionDenseGeometry` disappears from `Gfx950AttentionDenseGeometry.hpp`.
        Does not break, but needs a device run (`changed`): the grid's persistent branch, or
        the `ceil_div` it reaches through `kernels.common`, changes; the geometry header
        alone changes. Quiet: a comment or docstring edit in the grid function.

    When it says changed instead:
        Whenever the two halves cannot be shown to agree statically: the Python side changed
        (its mirror must restate it; if the mirror changed too, only a device run can tell),
        the mirror changed alone, the mirror is declared `none`, the profile entry was added,
        edited or removed, or a module or mirror stops parsing (the reason is given).

    Evidence:
        The Python definition(s) with their def lines, each reached definition whose digest
        changed ("reached helper X changed"), and the mirror file with the line of the named
        symbol (0 when not found); the profile entry when the profile itself changed.
    """

    name: ClassVar[str] = "launch-surface"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset({SurfaceKind.LAUNCH_SURFACE_PROFILE})
    # The host-side functions its entries name run before lowering: an equal IR says
    # nothing of them, so no row of a file they name is folded.
    blocks_fold: ClassVar[bool] = True

    def rows(self, scope: Scope) -> Iterator[Row]:
        old_entries = _entries(scope.ctx.graph(scope.old))
        new_entries = _entries(scope.ctx.graph(scope.new))
        for key in sorted(set(old_entries) | set(new_entries)):
            if key not in new_entries:
                yield self._removed(scope, old_entries[key])
                continue
            row = self._entry(scope, old_entries.get(key), new_entries[key])
            if row is not None:
                yield row

    # ------------------------------------------------------------------ one entry
    def _removed(self, scope: Scope, entry: Entry) -> Row:
        ctx, profile = scope.ctx, entry.profile
        failure = ctx.parse_failure(ctx.facts(scope.new, profile))
        details: dict[str, Any] = {"entry": entry.name, "profile": profile,
                                   "profile_failure": None}
        if profile not in scope.new:
            reason, hop = Reason.PROFILE_REMOVED, Hop.of(profile, entry.line,
                                                         Step.PROFILE_REMOVED_WITH_ENTRY)
        elif failure is not None:
            details["profile_failure"] = str(failure.data.get("reason", ""))
            reason = Reason.PROFILE_UNREADABLE
            hop = Hop.of(profile, entry.line, Step.PROFILE_DOES_NOT_PARSE,
                         failure=details["profile_failure"])
        else:
            reason, hop = Reason.LAUNCH_ENTRY_REMOVED, Hop.of(
                profile, entry.line, Step.LAUNCH_ENTRY_REMOVED_FROM_PROFILE)
        # The profile's copy of the entry went: that is the change this row is charged to.
        sides = [Side(profile, entry.line, ViewName.BASE, Role.CHANGED, entry.name)]
        for locator in (entry.python_source, entry.cpp_mirror):
            if locator is not None:
                sides.append(Side(locator.file, 0, ViewName.BASE, Role.COUNTERPART,
                                  locator.symbol or ""))
        anchor = entry.python_source.file if entry.python_source is not None else profile
        return scope.row(f"{profile}:{entry.name}", Status.CHANGED, reason,
                         archs=scope.archs_for(anchor), sides=tuple(sides), evidence=(hop,),
                         details=details)

    def _entry(self, scope: Scope, old_entry: Entry | None, new_entry: Entry) -> Row | None:
        ctx, view, old, new = scope.ctx, scope.view, scope.old, scope.new
        profile, name = new_entry.profile, new_entry.name
        edited = old_entry is None or _edited(old_entry, new_entry)
        reference = old_entry if old_entry is not None else new_entry
        py_old = _python_side(ctx, old, reference.python_source)
        py_new = _python_side(ctx, new, new_entry.python_source)
        mirror_old = _mirror_side(ctx, old, reference.cpp_mirror)
        mirror_new = _mirror_side(ctx, new, new_entry.cpp_mirror)

        verdict = _Verdict()
        py_changed = _python_verdict(py_old, py_new, verdict)
        mirror_changed = _mirror_verdict(mirror_old, mirror_new, verdict)
        _pairing(py_new, mirror_new, py_changed, mirror_changed, verdict)
        if edited:
            added = old_entry is None
            verdict.changes.append(Reason.LAUNCH_ENTRY_ADDED if added
                                   else Reason.LAUNCH_ENTRY_EDITED)
            verdict.hops.append(Hop.of(profile, new_entry.line,
                                       Step.LAUNCH_ENTRY_ADDED_TO_PROFILE if added
                                       else Step.LAUNCH_ENTRY_EDITED_IN_PROFILE))

        # A break this view made (a half went missing, or the entry naming it was edited)
        # outranks a change; a change outranks a break both revisions have, which is
        # reported only when the view touched a file of the entry.
        made = [b for b in verdict.breaks if b.moved or edited]
        kept = [b for b in verdict.breaks if not (b.moved or edited)]
        touched = scope.changed & {profile, py_new.file, py_old.file, mirror_new.file,
                                   mirror_old.file}
        if made:
            status, reason = Status.MISMATCH, made[0].reason
        elif verdict.changes:
            status, reason = Status.CHANGED, verdict.changes[0]
        elif kept and touched:
            status, reason = Status.MISMATCH, kept[0].reason
        else:
            return None
        # A half's copy changed, as this row reads it: for a break, whether that half
        # went missing in this view; for a change, whether its content changed.
        if status == Status.MISMATCH:
            moved = {b.half for b in verdict.breaks if b.moved}
            py_role, mirror_role = _PYTHON_HALF in moved, _MIRROR_HALF in moved
        else:
            py_role, mirror_role = py_changed, mirror_changed

        revision = view.name
        sides = []
        if py_new.state != _NONE:
            sides.append(Side(py_new.file, py_new.line or py_old.line,
                              revision if py_new.file in new else ViewName.BASE,
                              _role(py_role), py_new.symbol or ""))
        if mirror_new.state != _NONE:
            sides.append(Side(mirror_new.file, mirror_new.line or mirror_old.line,
                              revision if mirror_new.file in new else ViewName.BASE,
                              _role(mirror_role), mirror_new.symbol or ""))
        if edited:
            sides.append(Side(profile, new_entry.line, revision, Role.CHANGED, name))
        anchor = py_new.file or mirror_new.file or profile
        claim = None
        if status == Status.CHANGED and not verdict.breaks and not edited and (
                not mirror_changed) and set(verdict.changes) <= _HOST_ONLY:
            claim = _build_claim(ctx, old, new, py_old, py_new)
        return scope.row(
            f"{profile}:{name}", status, reason, archs=scope.archs_for(anchor),
            sides=tuple(sides), evidence=tuple(verdict.hops),
            # The profile's own device check for this surface, when it names one.
            device_test=new_entry.test or "",
            details={
                "entry": name, "profile": profile,
                "python_changed": py_changed, "mirror_changed": mirror_changed,
                "mirror": None if mirror_new.state == _NONE else mirror_new.file,
                "reasons": [str(r) for r in (*(b.reason for b in made), *verdict.changes,
                                             *(b.reason for b in kept))],
                # The values the reasons' sentences read.
                "host_side": py_new.symbol or py_new.file or None,
                "python_failure": py_new.failure or None,
                "mirror_locator": _raw(mirror_new) if mirror_new.state != _NONE else None,
                "mirror_symbol": mirror_new.symbol,
                "mirror_failure": mirror_new.failure or None,
                **({SETTLED_BY_BUILD: claim} if claim else {}),
            },
        )


# The reasons of a row on which only the Python half moved: what an equal build may settle.
_HOST_ONLY = frozenset({Reason.HOST_SIDE_CHANGED_MIRROR_MUST_RESTATE,
                        Reason.HOST_SIDE_CHANGED_NO_MIRROR})


def _changed_definitions(ctx: CheckContext, old: Snapshot, new: Snapshot, py_old: _Python,
                         py_new: _Python) -> set[_Key] | None:
    """The definitions whose digest differs between the revisions, as the row compared
    them; None when the change is not one of definitions (a whole module whose top-level
    statements moved, say)."""
    if py_old.state != _OK or py_new.state != _OK:
        return None
    if py_new.symbol:
        keys = set()
        for old_map, new_map in ((py_old.defs, py_new.defs), (py_old.reached, py_new.reached)):
            keys |= {k for k in set(old_map) | set(new_map) if old_map.get(k) != new_map.get(k)}
        return keys or None
    changed: set[_Key] = set()
    for snapshot, other in ((old, new), (new, old)):
        graph, other_graph = ctx.graph(snapshot).python, ctx.graph(other).python
        module = graph.module_at(py_new.file)
        other_module = other_graph.module_at(py_new.file)
        if module is None or other_module != module:
            return None
        theirs = {d.name: _digests(d) for d in other_graph.definitions(module)}
        for definition in graph.definitions(module):
            if theirs.get(definition.name) != _digests(definition):
                changed.add((module, definition.name))
    return changed or None


def _digests(definition: Any) -> tuple[Any, ...]:
    """A definition's content at every site, its lines aside (code above it may move it)."""
    return (definition.kind, *sorted(str(site.digest) for site in definition.sites))


def _ships(descriptors: Any, node: str) -> bool:
    """Whether a shipped variant builds with the definition `node`."""
    return bool(descriptors.variants_building(node))


def _build_claim(ctx: CheckContext, old: Snapshot, new: Snapshot, py_old: _Python,
                 py_new: _Python) -> dict[str, Any] | None:
    """What an equal build must prove for this row to settle: every definition through
    which a changed definition can run (`PythonGraph.entry_points`), as [module, name]
    pairs, and the files of the changed definitions. None when a changed definition runs
    through something that is not a definition (nothing could answer for it)."""
    keys = _changed_definitions(ctx, old, new, py_old, py_new)
    if not keys:
        return None
    builders: set[tuple[str, str]] = set()
    files: set[str] = set()
    for snapshot in (old, new):
        symbols = ctx.graph(snapshot)
        graph = symbols.python
        builds = partial(_ships, symbols.descriptors)
        for module, name in keys:
            definition = graph.definition(module, name)
            if definition is None:
                continue
            roots = graph.entry_points(definition, builds)
            if roots is None:
                return None
            files.add(definition.path)
            builders |= {(root.module, root.name) for root in roots}
    if not builders:
        return None
    return {"builders": [list(b) for b in sorted(builders)], "files": sorted(files)}


def _role(changed: bool) -> str:
    return Role.CHANGED if changed else Role.COUNTERPART


# ---------------------------------------------------------------------- entries
def _entries(graph: SymbolGraph) -> dict[tuple[str, str], Entry]:
    """(profile path, entry name) -> the entry, for every launch-surface entry."""
    return {(entry.profile, entry.name): entry for entry in graph.descriptors.launch_surfaces()}


def _edited(old: Entry, new: Entry) -> bool:
    """Whether the profile restates the entry differently (its line alone may move)."""
    return (old.python_source, old.cpp_mirror, old.kmd_fields, old.guard, old.test) != (
        new.python_source, new.cpp_mirror, new.kmd_fields, new.guard, new.test)


# ----------------------------------------------------------------- python side
def _names_match(qualname: str, symbol: str) -> bool:
    """As the generator resolves a name: that function anywhere in the module, a method
    or nested function included (`a.b` matches `a.b`, `C.a.b` and `f.<locals>.a.b`)."""
    return qualname == symbol or qualname.endswith("." + symbol)


def _python_side(ctx: CheckContext, snapshot: Snapshot, locator: Locator | None) -> _Python:
    if locator is None:
        return _Python(_NONE)
    file, symbol = locator.file, locator.symbol
    side = _Python(_OK, file=file, symbol=symbol)
    if file not in snapshot:
        side.state = _NO_FILE
        return side
    facts = ctx.facts(snapshot, file)
    broken = ctx.parse_failure(facts)
    if broken is not None:
        side.state, side.failure = _UNPARSED, str(broken.data.get("reason", ""))
        return side
    if not symbol:
        side.defs[(file, "")] = (ctx.content(facts),)
        return side
    graph = ctx.graph(snapshot).python
    module = graph.module_at(file)
    found = [d for d in (graph.definitions(module) if module is not None else [])
             if d.kind == FactKind.FUNCTION and _names_match(d.name, symbol)]
    if not found:
        side.state = _NO_SYMBOL
        return side
    for definition in found:
        key = (definition.module, definition.name)
        sites = sorted(definition.sites, key=lambda s: (s.line, str(s.digest)))
        side.defs[key] = tuple(site.digest for site in sites)
        side.where[key] = (file, sites[0].line if sites else 0, definition.name)
    side.line = min(line for _file, line, _name in side.where.values())
    reached = {(r.module, r.name): r for d in found for r in graph.reached(d)}
    for key in sorted(set(reached) - set(side.defs)):
        helper = reached[key]
        sites = sorted(helper.sites, key=lambda s: s.line)
        side.reached[key] = (helper.kind, *(site.digest for site in sites))
        side.where[key] = (helper.path, sites[0].line if sites else 0,
                           f"{helper.module}.{helper.name}")
    return side


def _python_verdict(old: _Python, new: _Python, verdict: _Verdict) -> bool:
    """Record what happened to the Python half; True when it changed."""
    if new.state == _NONE:
        return False
    if new.state == _UNPARSED:
        verdict.changes.append(Reason.PYTHON_SOURCE_UNREADABLE)
        verdict.hops.append(Hop.of(new.file, 0, Step.PYTHON_SOURCE_DOES_NOT_PARSE,
                                   failure=new.failure))
        return True
    if new.state == _NO_FILE:
        verdict.breaks.append(_Break(Reason.PYTHON_SOURCE_FILE_MISSING, _PYTHON_HALF,
                                     old.state != _NO_FILE))
        verdict.hops.append(Hop.of(new.file, 0, Step.PYTHON_SOURCE_FILE_ABSENT))
        return old.state != _NO_FILE
    if new.state == _NO_SYMBOL:
        verdict.breaks.append(_Break(Reason.PYTHON_SOURCE_FUNCTION_MISSING, _PYTHON_HALF,
                                     old.state != _NO_SYMBOL))
        verdict.hops.append(Hop.of(new.file, 0, Step.NO_SUCH_FUNCTION_IN_MODULE,
                                   symbol=new.symbol))
        return old.state != _NO_SYMBOL
    if old.state == _UNPARSED:
        verdict.changes.append(Reason.PYTHON_SOURCE_UNREADABLE_AT_BASE)
        verdict.hops.append(Hop.of(new.file, 0, Step.PYTHON_SOURCE_DID_NOT_PARSE_AT_BASE))
        return True
    if old.state != _OK:
        return True  # it appears at this revision: the pairing reason says so
    if not new.symbol:
        if old.defs != new.defs:
            verdict.hops.append(Hop.of(new.file, 0, Step.MODULE_CONTENT_CHANGED))
            return True
        return False
    changed = False
    for key in sorted(set(old.defs) | set(new.defs)):
        if old.defs.get(key) == new.defs.get(key):
            continue
        changed = True
        file, line, qualname = new.where.get(key) or old.where[key]
        step = (Step.HOST_SIDE_ADDED if key not in old.defs else Step.HOST_SIDE_REMOVED
                if key not in new.defs else Step.HOST_SIDE_CHANGED)
        verdict.hops.append(Hop.of(file, line, step, qualname=qualname))
    for key in sorted(set(old.reached) | set(new.reached)):
        if old.reached.get(key) == new.reached.get(key):
            continue
        changed = True
        file, line, dotted = new.where.get(key) or old.where[key]
        step = (Step.REACHED_HELPER_NOW_REACHED if key not in old.reached
                else Step.REACHED_HELPER_NO_LONGER_REACHED if key not in new.reached
                else Step.REACHED_HELPER_CHANGED)
        verdict.hops.append(Hop.of(file, line, step, helper=dotted))
    return changed


# ------------------------------------------------------------------ mirror side
def _mirror_side(ctx: CheckContext, snapshot: Snapshot, locator: Locator | None) -> _Mirror:
    if locator is None:
        return _Mirror(_NONE)
    file, symbol = locator.file, locator.symbol
    side = _Mirror(_OK, file=file, symbol=symbol)
    if file not in snapshot:
        side.state = _NO_FILE
        return side
    facts = ctx.facts(snapshot, file)
    broken = ctx.parse_failure(facts)
    if broken is not None:
        side.state, side.failure = _UNPARSED, str(broken.data.get("reason", ""))
        return side
    side.digest = ctx.content(facts)
    if symbol:
        lines = [f.line for f in facts if _defines(f.kind, f.name, f.data, symbol)]
        if not lines:
            side.state = _NO_SYMBOL
        else:
            side.line = min(lines)
    return side


def _defines(kind: str, name: str, data: dict[str, Any], symbol: str) -> bool:
    """A function, a named constant or a KernelArgument list named `symbol` (namespaces and
    enclosing classes may prefix it: `ns::Cls::launch` defines `Cls::launch`)."""
    if kind in (FactKind.FUNCTION_DEFINITION, FactKind.CONSTANT_DEFINITION,
                FactKind.SYMBOL_DECLARATION):
        return _qualified_match(name, symbol)
    if kind == FactKind.KERNEL_ARGUMENT_LIST:
        return symbol in (name, str(data.get("function") or ""))
    return False


def _qualified_match(name: str, symbol: str) -> bool:
    """Whether the C++ name `name` (as declared, fully qualified) is `symbol` as a profile
    spells it: the same name, or its unqualified tail (`ns::Cls::launch` is `Cls::launch`),
    or `symbol` qualified from the global namespace (`::ns::f`); template arguments aside."""
    name, symbol = _untemplated(name), _untemplated(symbol).removeprefix("::")
    return name == symbol or name.endswith("::" + symbol)


def _untemplated(name: str) -> str:
    """`f<T>` as `f`, `Cls<int>::launch` as `Cls::launch` (angle brackets nest)."""
    out, depth = [], 0
    for char in name:
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(char)
    return "".join(out).replace(" ", "")


def _mirror_verdict(old: _Mirror, new: _Mirror, verdict: _Verdict) -> bool:
    """Record what happened to the C++ half; True when it changed."""
    if new.state == _NONE:
        return False
    if new.state == _NO_FILE:
        verdict.breaks.append(_Break(Reason.MIRROR_FILE_MISSING, _MIRROR_HALF,
                                     old.state != _NO_FILE))
        verdict.hops.append(Hop.of(new.file, 0, Step.MIRROR_FILE_ABSENT))
        return old.state != _NO_FILE
    if new.state == _UNPARSED:
        verdict.changes.append(Reason.MIRROR_UNREADABLE)
        verdict.hops.append(Hop.of(new.file, 0, Step.MIRROR_DOES_NOT_PARSE,
                                   failure=new.failure))
        return True
    if new.state == _NO_SYMBOL:
        verdict.breaks.append(_Break(Reason.MIRROR_SYMBOL_MISSING, _MIRROR_HALF,
                                     old.state != _NO_SYMBOL))
        verdict.hops.append(Hop.of(new.file, 0, Step.MIRROR_DEFINES_NO_SYMBOL,
                                   symbol=new.symbol))
        return old.state != _NO_SYMBOL or old.digest != new.digest
    if old.state == _UNPARSED:
        verdict.changes.append(Reason.MIRROR_UNREADABLE_AT_BASE)
        verdict.hops.append(Hop.of(new.file, new.line, Step.MIRROR_DID_NOT_PARSE_AT_BASE))
        return True
    return old.state != _OK or old.digest != new.digest


def _pairing(python: _Python, mirror: _Mirror, py_changed: bool, mirror_changed: bool,
             verdict: _Verdict) -> None:
    """The changed reason that pairs the two halves, when both are understood."""
    if python.state not in (_OK, _NONE) or mirror.state not in (_OK, _NONE):
        return
    if py_changed and python.state == _OK:
        if mirror.state == _NONE:
            verdict.changes.append(Reason.HOST_SIDE_CHANGED_NO_MIRROR)
        else:
            verdict.changes.append(Reason.HOST_SIDE_AND_MIRROR_CHANGED if mirror_changed
                                   else Reason.HOST_SIDE_CHANGED_MIRROR_MUST_RESTATE)
    elif mirror_changed and mirror.state == _OK:
        verdict.changes.append(Reason.MIRROR_CHANGED_WITHOUT_PYTHON_SOURCE)
    if mirror.state == _OK and (py_changed or mirror_changed):
        verdict.hops.append(Hop.of(mirror.file, mirror.line,
                                   Step.MIRROR_CHANGED if mirror_changed
                                   else Step.MIRROR_RESTATES_IT, mirror=_raw(mirror)))


def _raw(mirror: _Mirror) -> str:
    return f"{mirror.file}:{mirror.symbol}" if mirror.symbol else mirror.file
