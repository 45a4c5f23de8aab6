"""Native symbol strings named by descriptors against the constexpr strings the packs declare."""

# Maintainers: reads the symbol strings descriptors name and packs declare as SymbolGraph
# records, the files of each kind from the tree index, and parse failures through the
# CheckContext; never parses files itself. A side is `changed` when that copy names or
# declares the row's string differently from the base; `run_checks` charges from that.
# Its sentences live in `impact/render/words/`.

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from impact.archs import archs_of_descriptor, descriptor_type
from impact.checks.base import CheckContext
from impact.checks.check import Check, Scope
from impact.git import Snapshot
from impact.graph import SymbolString
from impact.kinds import DescriptorType, Language, SurfaceKind, ViewName
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status

# The descriptor types that name a native symbol C++ must register.
SYMBOL_TYPES = frozenset({DescriptorType.UED, DescriptorType.UMD, DescriptorType.UDD,
                          DescriptorType.UHD})
PACK_SUFFIXES = (".graph_match", ".kernel_match", ".score", ".dispatch")

_Site = SymbolString


@dataclass
class _Symbols:
    """Who names and who declares each symbol string in one snapshot."""

    named: dict[str, list[_Site]]
    declared: dict[str, list[_Site]]
    broken_packs: dict[str, str]

    def naming(self, value: str) -> set[str]:
        return {s.path for s in self.named.get(value, [])}

    def declaring(self, value: str) -> set[str]:
        return {s.path for s in self.declared.get(value, [])}


def _symbol_descriptors(ctx: CheckContext, snapshot: Snapshot) -> list[str]:
    return [p for p in ctx.paths(snapshot, SurfaceKind.DESCRIPTOR)
            if descriptor_type(p) in SYMBOL_TYPES]


def _packs(ctx: CheckContext, snapshot: Snapshot) -> list[str]:
    index = ctx.index(snapshot)
    cpp = set(index.language_paths(Language.CPP))
    return [p for p in index.paths(SurfaceKind.INGESTOR_PACK) if p in cpp]


def _symbols(ctx: CheckContext, snapshot: Snapshot) -> _Symbols:
    strings = ctx.graph(snapshot).strings
    named: dict[str, list[_Site]] = {}
    declared: dict[str, list[_Site]] = {}
    broken: dict[str, str] = {}
    for site in strings.symbol_names(_symbol_descriptors(ctx, snapshot)):
        named.setdefault(site.value, []).append(site)
    packs = _packs(ctx, snapshot)
    for path in packs:
        failure = ctx.parse_failure(ctx.facts(snapshot, path))
        if failure is not None:
            broken[path] = str(failure.data.get("reason", ""))
    for site in strings.symbol_declarations(packs):
        declared.setdefault(site.value, []).append(site)
    return _Symbols(named, declared, broken)


def _family(value: str) -> str:
    """`hipkernel.gfx950_attention_dense.graph_match` -> `hipkernel.gfx950_attention_dense.`"""
    return value.rsplit(".", 1)[0] + "." if "." in value else value


def _where(site: _Site) -> tuple[str, int, str]:
    return (site.path, site.line, site.holder)


def _role(changed: bool) -> str:
    return Role.CHANGED if changed else Role.COUNTERPART


class DescriptorSymbolCheck(Check):
    """What it checks:
        Every native symbol a descriptor names (UED `graph_match.native`, UMD `match_symbol`,
        UHD `payload`, UDD `dispatch_symbol`) against the `constexpr` strings of the native
        packs (`packs/*Native.cpp`). Checked whenever a view touches a symbol-bearing
        descriptor or any pack file.

    Why a break hurts at run time:
        The descriptor loader's symbol pre-flight drops the whole engine when one named
        symbol is not registered, with one LOG_ERROR at a level hidden by default: the
        engine is simply absent and every graph it served is declined, on flags-ON builds
        only.

    Example:
        Breaks: the UED's `graph_match.native` becomes
        `hipkernel.gfx950_attention_dense.graph_match_v2` while the pack still declares
        `...graph_match` (or the pack renames its constant alone). Does not break: the
        descriptor and the pack's constant renamed to the same string in one change.

    When it says changed instead:
        A changed UED/UMD/UDD/UHD that does not parse (its symbols cannot be read); a symbol
        no pack declares while some pack does not parse; and a pack constant ending in
        `.graph_match`, `.kernel_match`, `.score` or `.dispatch` that a descriptor named at
        the base and none names any more (the engine may now bind another hook).

    Evidence:
        The descriptor file:line naming the string, and the pack file:line that declared it
        at the base (or that declares its sibling symbols), and a pack that does not parse.
        A side is `changed` when that copy's naming or declaring of the string differs from
        the base, so a mismatch the base already had is listed as pre-existing and moves
        nothing.
    """

    name: ClassVar[str] = "descriptor-symbol"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.DESCRIPTOR, SurfaceKind.INGESTOR_PACK})

    def rows(self, scope: Scope) -> Iterator[Row]:
        ctx, changed = scope.ctx, scope.changed
        descriptors = {p for p in changed if _kind(scope, p) == SurfaceKind.DESCRIPTOR
                       and descriptor_type(p) in SYMBOL_TYPES}
        packs = {p for p in changed if _kind(scope, p) == SurfaceKind.INGESTOR_PACK}
        if not descriptors and not packs:
            return
        old, new = _symbols(ctx, scope.old), _symbols(ctx, scope.new)
        unreadable = set()
        for path in sorted(descriptors):
            if path not in scope.new:
                continue
            failure = ctx.parse_failure(ctx.facts(scope.new, path))
            if failure is not None:
                unreadable.add(path)
                yield self._row(
                    scope, f"descriptor:{path}", Status.CHANGED,
                    Reason.DESCRIPTOR_UNREADABLE_SYMBOLS_UNCHECKED,
                    (Side(path, failure.line, scope.view.name, Role.CHANGED),),
                    (Hop.of(path, failure.line, Step.DESCRIPTOR_DOES_NOT_PARSE),), path,
                    failure=str(failure.data.get("reason", "")))
        for value in sorted(new.named):
            sites = new.named[value]
            if value in new.declared:
                continue
            if not packs and not any(s.path in descriptors for s in sites):
                continue
            yield self._undeclared(scope, value, sites, old, new)
        for value in sorted(old.named):
            if value in new.named or value not in new.declared:
                continue
            if old.naming(value) <= unreadable:
                continue  # the parse-failure row of the descriptor stands in for it
            if not value.endswith(PACK_SUFFIXES):
                continue
            yield self._unnamed(scope, value, old, new)

    def _undeclared(self, scope: Scope, value: str, sites: list[_Site],
                    old: _Symbols, new: _Symbols) -> Row:
        """A symbol a descriptor names at the new revision and no pack declares. A
        descriptor side changed when it did not name the string at the base; a pack that
        declared it at the base changed (none declares it now); a sibling's pack is
        context."""
        named_before = old.naming(value)
        at_base = sorted(old.declared.get(value, []), key=_where)
        siblings: list[_Site] = []
        if not at_base:
            family = _family(value)
            siblings = sorted((s for v, found in new.declared.items()
                               if v.startswith(family) for s in found), key=_where)
        sites = sorted(sites, key=_where)
        view = scope.view
        sides = [Side(s.path, s.line, view.name, _role(s.path not in named_before), value)
                 for s in sites]
        sides += [Side(s.path, s.line, ViewName.BASE, Role.CHANGED, s.holder) for s in at_base]
        sides += [Side(s.path, s.line, view.name, Role.COUNTERPART, s.holder) for s in siblings]
        hops = [Hop.of(s.path, s.line, Step.DESCRIPTOR_NAMES_SYMBOL, symbol=value, role=s.holder)
                for s in sites]
        hops += [Hop.of(s.path, s.line, Step.PACK_DECLARED_IT_AT_BASE, constant=s.holder)
                 for s in at_base]
        if new.broken_packs:
            broken = sorted(new.broken_packs)[0]
            # The pack that stopped parsing is a copy this row reads: it changed when it
            # parsed (or was absent) at the base.
            sides.append(Side(broken, 0, view.name, _role(broken not in old.broken_packs)))
            hops.append(Hop.of(broken, 0, Step.PACK_DOES_NOT_PARSE))
            return self._row(scope, f"symbol:{value}", Status.CHANGED,
                             Reason.SYMBOL_NAMED_UNDECLARED_PACK_UNREADABLE, tuple(sides),
                             tuple(hops), sites[0].path, symbol=value)
        return self._row(scope, f"symbol:{value}", Status.MISMATCH,
                         Reason.SYMBOL_NAMED_NO_PACK_DECLARES, tuple(sides), tuple(hops),
                         sites[0].path, symbol=value)

    def _unnamed(self, scope: Scope, value: str, old: _Symbols, new: _Symbols) -> Row:
        """A pack hook a descriptor named at the base and no descriptor names any more:
        every descriptor that named it changed; a pack side changed when it did not
        declare the string at the base."""
        named = sorted(old.named[value], key=_where)
        declared = sorted(new.declared[value], key=_where)
        declared_before = old.declaring(value)
        sides = tuple(
            [Side(s.path, s.line, ViewName.BASE, Role.CHANGED, value) for s in named]
            + [Side(s.path, s.line, scope.view.name, _role(s.path not in declared_before),
                    s.holder)
               for s in declared])
        hops = tuple(
            [Hop.of(s.path, s.line, Step.SYMBOL_NAMED_AT_BASE, symbol=value) for s in named]
            + [Hop.of(s.path, s.line, Step.PACK_STILL_DECLARES_IT, constant=s.holder)
               for s in declared])
        return self._row(scope, f"symbol:{value}", Status.CHANGED,
                         Reason.PACK_SYMBOL_NO_LONGER_NAMED, sides, hops, named[0].path,
                         symbol=value)

    def _row(self, scope: Scope, subject: str, status: Status, reason: Reason,
             sides: tuple[Side, ...], evidence: tuple[Hop, ...], descriptor: str,
             **details: str) -> Row:
        return scope.row(subject, status, reason, sides=sides, evidence=evidence,
                         details=dict(details),
                         archs=archs_of_descriptor(scope.ctx, descriptor, scope.old, scope.new))


def _kind(scope: Scope, path: str) -> str:
    """The surface kind of a changed path, from the side of the view that holds it."""
    return scope.ctx.index(scope.holding(path)).kind(path)
