"""Launch surfaces: each profile `launch_surface:` entry, its Python half against its C++ mirror.

Maintainers: reads `surface:` nodes, function/class/assignment sites and `reach` of each
snapshot's SymbolGraph, and facts through the CheckContext; never parses source or touches
git. It compares digests only: what the two halves compute is left to a device run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from impact.checks.base import CheckContext
from impact.cpp.facts import FUNCTION_DEFINITION, KERNEL_ARGUMENT_LIST
from impact.git import Snapshot, View
from impact.graph import SymbolGraph, symbol_node
from impact.rows import Hop, Row, Side, Status

_SURFACE_KIND = "launch-surface"
_ENTRY_KEYS = ("python_source", "cpp_mirror", "kmd_fields", "guard", "test")
_DEVICE_ONLY = "the mirror changed too: only a device run can tell they agree"

# States of one side at one revision.
_OK = "ok"
_NONE = "none"            # declared absent (`none`)
_NO_FILE = "no-file"
_UNPARSED = "unparsed"
_NO_SYMBOL = "no-symbol"


@dataclass
class _Python:
    """The Python half at one revision: the named function(s) and what they reach."""

    state: str
    file: str = ""
    symbol: str | None = None
    reason: str = ""
    line: int = 0
    defs: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    reached: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    where: dict[str, tuple[str, int, str]] = field(default_factory=dict)


@dataclass
class _Mirror:
    """The C++ half at one revision: the mirror file's content and the named symbol."""

    state: str
    file: str = ""
    symbol: str | None = None
    reason: str = ""
    line: int = 0
    digest: str | None = None


@dataclass
class _Verdict:
    mismatches: list[tuple[str, bool]] = field(default_factory=list)  # (reason, charged)
    changes: list[str] = field(default_factory=list)
    hops: list[Hop] = field(default_factory=list)


class LaunchSurfaceCheck:
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
    surfaces: ClassVar[frozenset[str]] = frozenset({"launch-surface-profile"})

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            yield from self._view(ctx, view)

    def _view(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        old_entries = _entries(ctx.graph(view.old))
        new_entries = _entries(ctx.graph(view.new))
        for key in sorted(set(old_entries) | set(new_entries)):
            if key not in new_entries:
                yield self._removed(ctx, view, key, old_entries[key])
                continue
            row = self._entry(ctx, view, key, old_entries.get(key), new_entries[key])
            if row is not None:
                yield row

    # ------------------------------------------------------------------ one entry
    def _removed(self, ctx: CheckContext, view: View, key: tuple[str, str],
                 data: Mapping[str, Any]) -> Row:
        assert view.new is not None
        profile, name = key
        if profile not in view.new:
            reason = "profile removed: its launch-surface entry went with it"
        elif profile in ctx.graph(view.new).parse_failures:
            reason = ("profile cannot be understood: "
                      f"{ctx.graph(view.new).parse_failures[profile]}")
        else:
            reason = "launch-surface entry removed from the profile"
        source, mirror = data.get("python_source"), data.get("cpp_mirror")
        sides = [Side(profile, int(data.get("line") or 0), "base", "changed", name)]
        for locator in (source, mirror):
            if isinstance(locator, dict):
                sides.append(Side(str(locator["file"]), 0, "base", "counterpart",
                                  str(locator.get("symbol") or "")))
        anchor = str(source["file"]) if isinstance(source, dict) else profile
        return Row(
            contract=self.name, view=view.name, subject=f"{profile}:{name}",
            status=Status.CHANGED, reason=reason,
            archs=ctx.archs_for(anchor, view.old, view.new), sides=tuple(sides),
            evidence=(Hop(profile, int(data.get("line") or 0), reason),),
            details={"entry": name, "profile": profile},
        )

    def _entry(self, ctx: CheckContext, view: View, key: tuple[str, str],
               old_data: Mapping[str, Any] | None, new_data: Mapping[str, Any]) -> Row | None:
        assert view.new is not None
        old, new = view.old, view.new
        profile, name = key
        edited = old_data is None or any(
            old_data.get(k) != new_data.get(k) for k in _ENTRY_KEYS)
        reference = old_data if old_data is not None else new_data
        py_old = _python_side(ctx, old, reference.get("python_source"))
        py_new = _python_side(ctx, new, new_data.get("python_source"))
        mirror_old = _mirror_side(ctx, old, reference.get("cpp_mirror"))
        mirror_new = _mirror_side(ctx, new, new_data.get("cpp_mirror"))

        verdict = _Verdict()
        py_changed = _python_verdict(py_old, py_new, edited, verdict)
        mirror_changed = _mirror_verdict(mirror_old, mirror_new, edited, verdict)
        _pairing(py_new, mirror_new, py_changed, mirror_changed, verdict)
        if edited:
            verdict.changes.append("launch-surface entry added to the profile"
                                   if old_data is None else
                                   "launch-surface entry edited in the profile")
            verdict.hops.append(Hop(profile, int(new_data.get("line") or 0),
                                    verdict.changes[-1]))

        charged = [reason for reason, was_charged in verdict.mismatches if was_charged]
        carried = [reason for reason, was_charged in verdict.mismatches if not was_charged]
        touched = set(view.diff.paths) & {profile, py_new.file, py_old.file,
                                          mirror_new.file, mirror_old.file}
        preexisting = False
        if charged:
            status, reason = Status.MISMATCH, charged[0]
        elif verdict.changes:
            status, reason = Status.CHANGED, verdict.changes[0]
        elif carried and touched:
            status, reason, preexisting = Status.MISMATCH, carried[0], True
        else:
            return None

        revision = view.name
        sides = []
        if py_new.state != _NONE:
            py_line = py_new.line or py_old.line
            sides.append(Side(py_new.file, py_line, revision if py_new.file in new else "base",
                              "changed" if py_changed else "counterpart",
                              py_new.symbol or ""))
        if mirror_new.state != _NONE:
            sides.append(Side(mirror_new.file, mirror_new.line or mirror_old.line,
                              revision if mirror_new.file in new else "base",
                              "changed" if mirror_changed else "counterpart",
                              mirror_new.symbol or ""))
        if edited:
            sides.append(Side(profile, int(new_data.get("line") or 0), revision, "changed",
                              name))
        anchor = py_new.file or mirror_new.file or profile
        return Row(
            contract=self.name, view=view.name, subject=f"{profile}:{name}",
            status=status, reason=reason, archs=ctx.archs_for(anchor, old, new),
            sides=tuple(sides), evidence=tuple(verdict.hops), preexisting=preexisting,
            details={
                "entry": name, "profile": profile,
                "python_changed": py_changed, "mirror_changed": mirror_changed,
                "mirror": None if mirror_new.state == _NONE else mirror_new.file,
                "reasons": [*charged, *verdict.changes, *carried],
                # The profile's own device check for this surface, when it names one.
                "test": new_data.get("test") if isinstance(new_data.get("test"), str) else None,
            },
        )


# ---------------------------------------------------------------------- entries
def _entries(graph: SymbolGraph) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(profile path, entry name) -> the entry's node data, for every launch-surface node."""
    found = {}
    for node, data in graph.graph.nodes(data=True):
        if data.get("kind") == _SURFACE_KIND:
            path = str(data.get("path"))
            found[(path, node[len(f"surface:{path}:"):])] = data
    return found


# ----------------------------------------------------------------- python side
def _names_match(qualname: str, symbol: str) -> bool:
    """As the generator resolves a name: that function anywhere in the module, a method
    or nested function included (`a.b` matches `a.b`, `C.a.b` and `f.<locals>.a.b`)."""
    return qualname == symbol or qualname.endswith("." + symbol)


def _site_digest(kind: str, site: Mapping[str, Any]) -> Any:
    return site.get("value_digest") if kind == "assignment" else site.get("digest")


def _python_side(ctx: CheckContext, snapshot: Snapshot, locator: Any) -> _Python:
    if not isinstance(locator, dict):
        return _Python(_NONE)
    file, symbol = str(locator.get("file")), locator.get("symbol")
    side = _Python(_OK, file=file, symbol=symbol)
    if file not in snapshot:
        side.state = _NO_FILE
        return side
    facts = ctx.facts(snapshot, file)
    broken = ctx.parse_failure(facts)
    if broken is not None:
        side.state, side.reason = _UNPARSED, str(broken.data.get("reason", ""))
        return side
    if not symbol:
        side.defs[f"module:{file}"] = (ctx.content(facts),)
        return side
    graph = ctx.graph(snapshot)
    module = ctx.module_of(file) or f"<{file}>"
    sites: dict[str, list[tuple[int, Any]]] = {}
    for fact in facts:
        if fact.kind == "function" and _names_match(fact.name, str(symbol)):
            sites.setdefault(symbol_node(module, fact.name), []).append(
                (fact.line, fact.data.get("digest")))
    if not sites:
        side.state = _NO_SYMBOL
        return side
    for node, found in sites.items():
        found.sort(key=lambda pair: pair[0])
        side.defs[node] = tuple(digest for _line, digest in found)
        side.where[node] = (file, found[0][0], node.rsplit(":", 1)[-1])
    side.line = min(found[0][0] for found in sites.values())
    reached: set[str] = set()
    for node in sites:
        if node in graph.graph:
            reached |= graph.reach(node)
    for node in sorted(reached - set(sites)):
        data = graph.graph.nodes[node]
        kind = str(data.get("kind"))
        node_sites = sorted(data.get("sites", []), key=lambda s: int(s.get("line", 0)))
        side.reached[node] = (kind, *(_site_digest(kind, s) for s in node_sites))
        line = int(node_sites[0].get("line", 0)) if node_sites else 0
        side.where[node] = (str(data.get("path")), line,
                            f"{data.get('module')}.{data.get('name')}")
    return side


def _python_verdict(old: _Python, new: _Python, edited: bool, verdict: _Verdict) -> bool:
    """Record what happened to the Python half; True when it changed."""
    if new.state == _NONE:
        return False
    if new.state == _UNPARSED:
        reason = f"python_source module cannot be understood: {new.reason}"
        verdict.changes.append(reason)
        verdict.hops.append(Hop(new.file, 0, reason))
        return True
    if new.state == _NO_FILE:
        reason = "python_source file does not exist"
        verdict.mismatches.append((reason, edited or old.state != _NO_FILE))
        verdict.hops.append(Hop(new.file, 0, reason))
        return old.state != _NO_FILE
    if new.state == _NO_SYMBOL:
        reason = "python_source names a function that does not exist"
        verdict.mismatches.append((reason, edited or old.state != _NO_SYMBOL))
        verdict.hops.append(Hop(new.file, 0, f"no function {new.symbol!r} in the module"))
        return old.state != _NO_SYMBOL
    if old.state == _UNPARSED:
        reason = "python_source module could not be understood at the base"
        verdict.changes.append(reason)
        verdict.hops.append(Hop(new.file, 0, reason))
        return True
    if old.state != _OK:
        return True  # it appears at this revision: the pairing reason says so
    if not new.symbol:
        if old.defs != new.defs:
            verdict.hops.append(Hop(new.file, 0, "module content changed"))
            return True
        return False
    changed = False
    for node in sorted(set(old.defs) | set(new.defs)):
        if old.defs.get(node) == new.defs.get(node):
            continue
        changed = True
        file, line, qualname = new.where.get(node) or old.where[node]
        what = ("added" if node not in old.defs else "removed" if node not in new.defs
                else "changed")
        verdict.hops.append(Hop(file, line, f"host-side {qualname} {what}"))
    for node in sorted(set(old.reached) | set(new.reached)):
        if old.reached.get(node) == new.reached.get(node):
            continue
        changed = True
        file, line, dotted = new.where.get(node) or old.where[node]
        what = ("now reached" if node not in old.reached else "no longer reached"
                if node not in new.reached else "changed")
        verdict.hops.append(Hop(file, line, f"reached helper {dotted} {what}"))
    return changed


# ------------------------------------------------------------------ mirror side
def _mirror_side(ctx: CheckContext, snapshot: Snapshot, locator: Any) -> _Mirror:
    if not isinstance(locator, dict):
        return _Mirror(_NONE)
    file, symbol = str(locator.get("file")), locator.get("symbol")
    side = _Mirror(_OK, file=file, symbol=symbol)
    if file not in snapshot:
        side.state = _NO_FILE
        return side
    facts = ctx.facts(snapshot, file)
    broken = ctx.parse_failure(facts)
    if broken is not None:
        side.state, side.reason = _UNPARSED, str(broken.data.get("reason", ""))
        return side
    side.digest = ctx.content(facts)
    if symbol:
        lines = [f.line for f in facts if _defines(f.kind, f.name, f.data, str(symbol))]
        if not lines:
            side.state = _NO_SYMBOL
        else:
            side.line = min(lines)
    return side


def _defines(kind: str, name: str, data: Mapping[str, Any], symbol: str) -> bool:
    """A function definition or KernelArgument list named `symbol` (namespaces and
    enclosing classes may prefix it: `ns::Cls::launch` defines `Cls::launch`)."""
    if kind == FUNCTION_DEFINITION:
        return name == symbol or name.endswith("::" + symbol)
    if kind == KERNEL_ARGUMENT_LIST:
        return symbol in (name, str(data.get("function") or ""))
    return False


def _mirror_verdict(old: _Mirror, new: _Mirror, edited: bool, verdict: _Verdict) -> bool:
    """Record what happened to the C++ half; True when it changed."""
    if new.state == _NONE:
        return False
    if new.state == _NO_FILE:
        reason = "C++ mirror file does not exist"
        verdict.mismatches.append((reason, edited or old.state != _NO_FILE))
        verdict.hops.append(Hop(new.file, 0, reason))
        return old.state != _NO_FILE
    if new.state == _UNPARSED:
        reason = f"C++ mirror cannot be understood: {new.reason}"
        verdict.changes.append(reason)
        verdict.hops.append(Hop(new.file, 0, reason))
        return True
    if new.state == _NO_SYMBOL:
        reason = f"C++ mirror does not define {new.symbol}"
        verdict.mismatches.append((reason, edited or old.state != _NO_SYMBOL))
        verdict.hops.append(Hop(new.file, 0, reason))
        return old.state != _NO_SYMBOL or old.digest != new.digest
    if old.state == _UNPARSED:
        reason = "C++ mirror could not be understood at the base"
        verdict.changes.append(reason)
        verdict.hops.append(Hop(new.file, new.line, reason))
        return True
    return old.state != _OK or old.digest != new.digest


def _pairing(py: _Python, mirror: _Mirror, py_changed: bool, mirror_changed: bool,
             verdict: _Verdict) -> None:
    """The changed reason that pairs the two halves, when both are understood."""
    if py.state not in (_OK, _NONE) or mirror.state not in (_OK, _NONE):
        return
    what = py.symbol or py.file
    if py_changed and py.state == _OK:
        if mirror.state == _NONE:
            verdict.changes.append(f"host-side {what} changed; no C++ mirror declared")
        else:
            reason = f"host-side {what} changed; its C++ mirror {_raw(mirror)} must restate it"
            verdict.changes.append(f"{reason} ({_DEVICE_ONLY})" if mirror_changed else reason)
    elif mirror_changed and mirror.state == _OK:
        verdict.changes.append("C++ mirror changed without its Python source")
    if mirror.state == _OK and (py_changed or mirror_changed):
        says = f"C++ mirror {_raw(mirror)} " + ("changed" if mirror_changed else "restates it")
        verdict.hops.append(Hop(mirror.file, mirror.line, says))


def _raw(mirror: _Mirror) -> str:
    return f"{mirror.file}:{mirror.symbol}" if mirror.symbol else mirror.file
