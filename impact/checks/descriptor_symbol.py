"""Native symbol strings named by descriptors against the constexpr strings the packs declare."""

# Maintainers: reads descriptor `symbol` facts and pack `constexpr-string` facts through the
# CheckContext only; never parses files itself. A symbol row is charged to the change only when
# the mismatch is new in the view; one the base already had is listed as pre-existing.

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from impact.checks.base import CheckContext
from impact.descriptors.facts import descriptor_type
from impact.git import Snapshot, View
from impact.rows import Hop, Row, Side, Status

PACK_KIND = "ingestor-pack"
DESCRIPTOR_KIND = "descriptor"
SYMBOL_TYPES = frozenset({"ued", "umd", "udd", "uhd"})
PACK_SUFFIXES = (".graph_match", ".kernel_match", ".score", ".dispatch")


@dataclass(frozen=True, order=True)
class _Site:
    path: str
    line: int
    name: str  # descriptor role, or the C++ constant's name


@dataclass
class _Symbols:
    """Who names and who declares each symbol string in one snapshot."""

    named: dict[str, list[_Site]]
    declared: dict[str, list[_Site]]
    broken_packs: dict[str, str]


def _symbols(ctx: CheckContext, snapshot: Snapshot) -> _Symbols:
    named: dict[str, list[_Site]] = {}
    declared: dict[str, list[_Site]] = {}
    broken: dict[str, str] = {}
    for path in snapshot:
        kind = ctx.surface.describe(path).kind
        if kind == DESCRIPTOR_KIND and descriptor_type(path) in SYMBOL_TYPES:
            for fact in ctx.facts(snapshot, path):
                if fact.kind == "symbol":
                    named.setdefault(fact.name, []).append(
                        _Site(path, fact.line, str(fact.data.get("role", ""))))
        elif kind == PACK_KIND and ctx.surface.describe(path).language == "cpp":
            facts = ctx.facts(snapshot, path)
            failure = ctx.parse_failure(facts)
            if failure is not None:
                broken[path] = str(failure.data.get("reason", ""))
            for fact in facts:
                if fact.kind == "constexpr-string":
                    declared.setdefault(str(fact.data.get("value")), []).append(
                        _Site(path, fact.line, fact.name))
    return _Symbols(named, declared, broken)


def _family(value: str) -> str:
    """`hipkernel.gfx950_attention_dense.graph_match` -> `hipkernel.gfx950_attention_dense.`"""
    return value.rsplit(".", 1)[0] + "." if "." in value else value


class DescriptorSymbolCheck:
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
        at the base (or that declares its sibling symbols). A mismatch the base already had
        is marked pre-existing and moves nothing.
    """

    name: ClassVar[str] = "descriptor-symbol"
    surfaces: ClassVar[frozenset[str]] = frozenset({"descriptor", "ingestor-pack"})

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            yield from self._view(ctx, view)

    def _view(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        changed = set(view.diff.paths)
        descriptors = {p for p in changed if ctx.surface.describe(p).kind == DESCRIPTOR_KIND
                       and descriptor_type(p) in SYMBOL_TYPES}
        packs = {p for p in changed if ctx.surface.describe(p).kind == PACK_KIND}
        if not descriptors and not packs:
            return
        old, new = _symbols(ctx, view.old), _symbols(ctx, view.new)
        for path in sorted(descriptors):
            if path not in view.new:
                continue
            failure = ctx.parse_failure(ctx.facts(view.new, path))
            if failure is not None:
                yield self._row(
                    ctx, view, f"descriptor:{path}", Status.CHANGED,
                    f"descriptor cannot be understood ({failure.data.get('reason', '')}); "
                    "its native symbols cannot be checked",
                    (Side(path, failure.line, view.name, "changed"),),
                    (Hop(path, failure.line, "descriptor does not parse"),), path)
        for value in sorted(new.named):
            sites = new.named[value]
            if value in new.declared:
                continue
            if not packs and not any(s.path in descriptors for s in sites):
                continue
            yield self._undeclared(ctx, view, value, sites, old, new, changed)
        unreadable = {p for p in descriptors
                      if p in view.new and ctx.parse_failure(ctx.facts(view.new, p))}
        for value in sorted(old.named):
            if value in new.named or value not in new.declared:
                continue
            if {s.path for s in old.named[value]} <= unreadable:
                continue  # the parse-failure row of the descriptor stands in for it
            if not value.endswith(PACK_SUFFIXES):
                continue
            yield self._unnamed(ctx, view, value, old.named[value], new.declared[value], changed)

    def _undeclared(self, ctx: CheckContext, view: View, value: str, sites: list[_Site],
                    old: _Symbols, new: _Symbols, changed: set[str]) -> Row:
        """A symbol a descriptor names at the new revision and no pack declares."""
        counterparts = [(s, "base") for s in old.declared.get(value, [])]
        if not counterparts:
            family = _family(value)
            counterparts = [(s, view.name) for v, found in sorted(new.declared.items())
                            if v.startswith(family) for s in found]
        sides = [Side(s.path, s.line, view.name,
                      "changed" if s.path in changed else "counterpart", value)
                 for s in sorted(sites)]
        sides += [Side(s.path, s.line, rev, "changed" if s.path in changed else "counterpart",
                       s.name) for s, rev in sorted(counterparts)]
        hops = [Hop(s.path, s.line, f"descriptor names symbol '{value}' ({s.name})")
                for s in sorted(sites)]
        hops += [Hop(s.path, s.line, f"pack declared it as {s.name} at the base")
                 for s, rev in sorted(counterparts) if rev == "base"]
        if new.broken_packs:
            broken = sorted(new.broken_packs)[0]
            hops.append(Hop(broken, 0, "this pack does not parse"))
            return self._row(ctx, view, f"symbol:{value}", Status.CHANGED,
                             f"descriptor names symbol '{value}'; no pack that parses declares "
                             "it, and a pack does not parse", tuple(sides), tuple(hops),
                             sites[0].path)
        already = (value not in old.declared
                   and {s.path for s in sites} <= {s.path for s in old.named.get(value, [])})
        return self._row(ctx, view, f"symbol:{value}", Status.MISMATCH,
                         f"descriptor names symbol '{value}'; no pack declares it "
                         "(the loader drops the whole engine)", tuple(sides), tuple(hops),
                         sites[0].path, preexisting=already)

    def _unnamed(self, ctx: CheckContext, view: View, value: str, named: list[_Site],
                 declared: list[_Site], changed: set[str]) -> Row:
        """A pack hook a descriptor named at the base and no descriptor names any more."""
        sides = tuple(
            [Side(s.path, s.line, "base", "changed" if s.path in changed else "counterpart",
                  value) for s in sorted(named)]
            + [Side(s.path, s.line, view.name,
                    "changed" if s.path in changed else "counterpart", s.name)
               for s in sorted(declared)])
        hops = tuple(
            [Hop(s.path, s.line, f"named '{value}' at the base") for s in sorted(named)]
            + [Hop(s.path, s.line, f"pack still declares it as {s.name}")
               for s in sorted(declared)])
        return self._row(ctx, view, f"symbol:{value}", Status.CHANGED,
                         f"pack symbol '{value}' is no longer named by any descriptor",
                         sides, hops, named[0].path)

    def _row(self, ctx: CheckContext, view: View, subject: str, status: Status, reason: str,
             sides: tuple[Side, ...], evidence: tuple[Hop, ...], descriptor: str, *,
             preexisting: bool = False) -> Row:
        return Row(contract=self.name, view=view.name, subject=subject, status=status,
                   reason=reason, archs=_archs(ctx, view, descriptor), sides=sides,
                   evidence=evidence, preexisting=preexisting)


def _archs(ctx: CheckContext, view: View, descriptor: str) -> tuple[str, ...]:
    """The archs of the KDPs beside a descriptor (a UED holds no variants itself), else
    what `archs_for` finds from its path."""
    assert view.new is not None
    folder = posixpath.dirname(descriptor)
    kdps = sorted({p for snap in (view.old, view.new) for p in snap
                   if posixpath.dirname(p) == folder and descriptor_type(p) == "kdp"})
    archs: set[str] = set()
    for kdp in kdps:
        for snap in (view.old, view.new):
            if kdp in snap:
                archs |= ctx.graph(snap).archs_of_descriptor(kdp)
    return tuple(sorted(archs)) if archs else ctx.archs_for(descriptor, view.old, view.new)
