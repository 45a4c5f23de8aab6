"""The shipped variant set against its census pins, and every native pack against its
registration (the `s_packs` row and the `target_sources` entry)."""

# Maintainers: reads the KDP families the symbol graph's descriptor domain resolves, facts
# through the CheckContext (census names are C++ string-literal facts) and the map's
# conventions (census file names, the pack folder, its table, its build file, the
# register function); a map without them has nothing here to check. A side is `changed`
# when that copy's facts for the family or pack changed in the view.

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from impact.archs import archs_of_pack_family
from impact.checks.base import CheckContext
from impact.checks.check import Check, Scope
from impact.facts import Fact
from impact.git import Snapshot
from impact.graph import Family, family_key
from impact.kinds import FactKind, SurfaceKind
from impact.reasons import Reason, Step
from impact.rows import Hop, Role, Row, Side, Status
from impact.surface import Conventions

_KERNEL_NAME = re.compile(r"^[A-Za-z_]\w*\.\w+\.gfx[0-9a-z]+$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _role(changed: bool) -> str:
    return Role.CHANGED if changed else Role.COUNTERPART


def census_family(path: str, conventions: Conventions) -> str | None:
    """`TestGfx950AttentionDensePacks.cpp` -> `gfx950_attention_dense` (by the map's
    `census_file` convention); None for any other file or without the convention."""
    pattern = conventions.census_file
    match = pattern.fullmatch(posixpath.basename(path)) if pattern is not None else None
    return _CAMEL.sub("_", match.group(1)).lower() if match else None


def census_literals(facts: Iterable[Fact]) -> list[tuple[str, int]]:
    """Every string literal outside comments, with its line (the C++ extractor's facts)."""
    return [(f.name, f.line) for f in facts if f.kind == FactKind.STRING_LITERAL]


def _kdps(ctx: CheckContext, snapshot: Snapshot) -> dict[str, Family]:
    """Every KDP family of a snapshot by family key, with the names of the variants it
    ships (inline UKDs and standalone UKDs it names by id), as the graph resolves them."""
    return ctx.graph(snapshot).descriptors.families()


def _spellings(known: set[str]) -> dict[str, str]:
    """Each way a census may pin a variant, to the variant's name: the UKD name itself, or
    the kernel name inside a `family.<kernel>.gfxNNN` UKD name (what a pack's census
    reports as `kernelNames`). A full name wins over another variant's inner one."""
    out: dict[str, str] = {}
    for name in sorted(known):
        if _KERNEL_NAME.match(name):
            out.setdefault(name.split(".")[1], name)
    out.update({name: name for name in known})
    return out


def _census_names(facts: list[Fact], known: set[str]) -> dict[str, int]:
    """The variants a census file pins, with the line of each: its literals equal to a
    variant name the KDP ships at either revision (or that variant's kernel name), or
    shaped like one (`family.tags.gfxNNN`)."""
    spelled = _spellings(known)
    names: dict[str, int] = {}
    for literal, line in census_literals(facts):
        if literal in spelled:
            names.setdefault(spelled[literal], line)
        elif _KERNEL_NAME.match(literal):
            names.setdefault(literal, line)
    return names


class VariantSetCheck(Check):
    """What it checks:
        The variant names a KDP ships (inline UKDs and the standalone UKDs it names) against
        the census test that pins them (`TestGfx950AttentionDensePacks.cpp` pins the
        `gfx950_attention_dense` KDP), and every `packs/*Native.cpp` against its
        registration: a `target_sources` entry in the engine's build file and an
        `s_packs` row in the engine's pack table naming its `register<Name>Symbols` (the
        map's conventions name the folder, the table, the build file and the census files).

    Why a break hurts at run time:
        An unpinned variant ships without the census noticing (or the census CTest fails
        where production packaging runs); a pinned variant that is gone is a kernel users
        lose. A pack without its `s_packs` row is dropped by the static-archive linker, so
        it vanishes from unit tests while the `.so` still works, with no build error.

    Example:
        Breaks: a new inline UKD `attention_dense.bf16_..._new.gfx950` added to the KDP
        while the census list stays as it was; a new `packs/Gfx950ConvFwdNative.cpp` added
        to `target_sources` without an `s_packs` row. Does not break: the UKD and its census
        name added together (still `changed`: pack time and the census must run), or the
        pack added with both its row and its source entry.

    When it says changed instead:
        The KDP and the census changed together and agree (the shipped set changed); a KDP
        that does not parse; a census file in which no kernel name can be found, or whose
        family has no KDP; a pack in which no `register<Name>Symbols` definition is found;
        a census, pack, build file or pack table that cannot be read.

    Evidence:
        The census file:line of each name it pins and the KDP file:line of each variant the
        other side lacks; for a pack, the pack's register function, the build file and
        the pack table. A gap the base already had, on copies that did not move, is
        pre-existing.
    """

    name: ClassVar[str] = "variant-set"
    surfaces: ClassVar[frozenset[SurfaceKind]] = frozenset(
        {SurfaceKind.DESCRIPTOR, SurfaceKind.INGESTOR_PACK, SurfaceKind.TEST_PIN})

    def rows(self, scope: Scope) -> Iterator[Row]:
        yield from self._census(scope)
        yield from self._packs(scope)

    # ------------------------------------------------------------------ census
    def _census(self, scope: Scope) -> Iterator[Row]:
        ctx, changed = scope.ctx, scope.changed
        rules = ctx.surface.conventions
        censuses = [p for p in ctx.paths(scope.new, SurfaceKind.TEST_PIN)
                    if census_family(p, rules) is not None]
        if not censuses:
            return
        old_kdps, new_kdps = _kdps(ctx, scope.old), _kdps(ctx, scope.new)
        for census in censuses:
            family = family_key(str(census_family(census, rules)))
            old_kdp, new_kdp = old_kdps.get(family), new_kdps.get(family)
            kdp_files = set()
            for kdp in (old_kdp, new_kdp):
                if kdp is not None:
                    kdp_files |= {kdp.path} | {p for p, _ in kdp.variants.values()}
            if not ({census} | kdp_files) & changed:
                continue
            row = self._census_row(scope, census, old_kdp, new_kdp, changed)
            if row is not None:
                yield row

    def _census_row(self, scope: Scope, census: str, old_kdp: Family | None,
                    new_kdp: Family | None, changed: frozenset[str]) -> Row | None:
        ctx, view, subject = scope.ctx, scope.view, f"census:{census}"
        if new_kdp is None:
            if census not in changed:
                return None
            return self._row(scope, subject, Status.CHANGED, Reason.CENSUS_WITHOUT_KDP,
                             census, (Side(census, 0, view.name, Role.CHANGED),), ())
        census_facts = ctx.facts(scope.new, census)
        unreadable = ctx.parse_failure(census_facts)
        if unreadable is not None:  # a blob a partial clone lacks, a file that does not parse
            return self._row(scope, subject, Status.CHANGED, Reason.CENSUS_NOT_UNDERSTOOD,
                             census, (Side(census, unreadable.line, view.name, Role.CHANGED),), (),
                             {"failure": str(unreadable.data.get("reason", ""))})
        shipped_new = set(new_kdp.variants)
        shipped_old = set(old_kdp.variants) if old_kdp is not None and not old_kdp.broken \
            else set()
        kdp_moved = (old_kdp is None or old_kdp.broken is not None
                     or (new_kdp.broken is not None and new_kdp.path in changed)
                     or shipped_old != shipped_new)
        kdp_side = Side(new_kdp.path, new_kdp.line, view.name, _role(kdp_moved))
        if new_kdp.broken is not None:
            return self._row(scope, subject, Status.CHANGED, Reason.KDP_NOT_UNDERSTOOD,
                             new_kdp.path, (kdp_side,),
                             (Hop.of(new_kdp.path, new_kdp.line, Step.KDP_DOES_NOT_PARSE),),
                             {"failure": new_kdp.broken})
        known = shipped_new | shipped_old
        pins_new = _census_names(census_facts, known)
        old_facts = ctx.facts(scope.old, census)
        pins_old = _census_names(old_facts, known) if census in scope.old else {}
        census_moved = (census not in scope.old or ctx.parse_failure(old_facts) is not None
                        or set(pins_old) != set(pins_new))
        census_side = Side(census, min(pins_new.values(), default=0), view.name,
                           _role(census_moved))
        if not pins_new:
            return self._row(scope, subject, Status.CHANGED, Reason.CENSUS_HAS_NO_NAMES,
                             new_kdp.path, (census_side, kdp_side), ())
        unpinned = sorted(shipped_new - set(pins_new))
        gone = sorted(set(pins_new) - shipped_new)
        hops = tuple(
            [Hop.of(*new_kdp.variants[n], Step.KDP_SHIPS_UNPINNED, variant=n) for n in unpinned]
            + [Hop.of(census, pins_new[n], Step.CENSUS_PINS_UNSHIPPED, variant=n)
               for n in gone])
        details: dict[str, Any] = {"unpinned": unpinned, "not_shipped": gone}
        sides = (census_side, kdp_side)
        if not unpinned and not gone:
            if kdp_moved:
                return self._row(scope, subject, Status.CHANGED,
                                 Reason.SHIPPED_SET_CHANGED_CENSUS_AGREES, new_kdp.path,
                                 sides, (), details)
            return None
        if unpinned and not gone:
            reason = Reason.VARIANT_ADDED_NOT_PINNED if kdp_moved else Reason.CENSUS_DROPPED_PIN
        elif gone and not unpinned:
            reason = Reason.PINNED_VARIANT_NO_LONGER_SHIPPED if kdp_moved else \
                Reason.PINNED_VARIANT_NOT_SHIPPED
        else:
            reason = Reason.CENSUS_AND_KDP_DIFFER
        # A gap the base already had, on copies whose lists did not move, is pre-existing:
        # run_checks reads that from the sides' roles.
        return self._row(scope, subject, Status.MISMATCH, reason, new_kdp.path, sides, hops,
                         details)

    # ------------------------------------------------------------------- packs
    def _packs(self, scope: Scope) -> Iterator[Row]:
        ctx, rules = scope.ctx, scope.ctx.surface.conventions
        if not (rules.pack_folder and rules.pack_suffix and rules.pack_table
                and rules.build_file and rules.register_function is not None):
            return  # the map names no native-pack registration to check
        changed = scope.changed
        folder = f"/{rules.pack_folder}/"
        for path in ctx.paths(scope.new, SurfaceKind.INGESTOR_PACK):
            stem = posixpath.basename(path).removesuffix(rules.pack_suffix)
            if folder not in path or not path.endswith(rules.pack_suffix) \
                    or not stem.isidentifier():
                continue
            engine = path.rsplit(folder, 1)[0]
            cmake, table = f"{engine}/{rules.build_file}", f"{engine}/{rules.pack_table}"
            if not {path, cmake, table} & changed:
                continue
            row = self._pack_row(scope, path, engine, cmake, table)
            if row is not None:
                yield row

    def _pack_row(self, scope: Scope, path: str, engine: str, cmake: str,
                  table: str) -> Row | None:
        ctx, view, old, new = scope.ctx, scope.view, scope.old, scope.new
        subject, archs = f"pack:{path}", archs_of_pack_family(ctx, path, old, new)
        old_register = _register(ctx, old, path) if path in old else None
        for where in (path, cmake, table):
            failure = ctx.parse_failure(ctx.facts(new, where))
            if failure is not None:  # unread: its registration cannot be settled
                return self._row(scope, subject, Status.CHANGED,
                                 Reason.PACK_REGISTRATION_NOT_UNDERSTOOD, path,
                                 (Side(where, failure.line, view.name, Role.CHANGED),), (),
                                 {"file": where,
                                  "failure": str(failure.data.get("reason", ""))}, archs=archs)
        register = _register(ctx, new, path)
        if register is None:
            moved = old_register is not None or path not in old
            return self._row(scope, subject, Status.CHANGED, Reason.PACK_REGISTER_NOT_FOUND,
                             path, (Side(path, 0, view.name, _role(moved)),), (), archs=archs)
        name, line = register
        relative = path[len(engine) + 1:]
        listed = _listed(ctx, new, cmake, relative)
        rowed = _rowed(ctx, new, table, name)
        gaps = [gap for gap, kept in (("target_sources", listed), ("s_packs", rowed)) if not kept]
        if not gaps:
            return None
        pack_moved = old_register is None or old_register[0] != name
        cmake_moved = _listed(ctx, old, cmake, relative) != listed
        table_moved = _rowed(ctx, old, table, name) != rowed
        # The copies of the gaps left, and only those: a registration the view completed
        # is not a copy of the gap that remains, so fixing half a pre-existing gap is not
        # charged as a break.
        sides = (Side(path, line, view.name, _role(pack_moved), name),
                 *([Side(cmake, 0, view.name, _role(cmake_moved))]
                   if "target_sources" in gaps else []),
                 *([Side(table, 0, view.name, _role(table_moved))] if "s_packs" in gaps else []))
        hops = [Hop.of(path, line, Step.PACK_DEFINES_REGISTER, register=name)]
        if "target_sources" in gaps:
            hops.append(Hop.of(cmake, 0, Step.TARGET_SOURCES_LACKS_PACK))
        if "s_packs" in gaps:
            hops.append(Hop.of(table, 0, Step.NO_S_PACKS_ROW, register=name))
        reason = {("s_packs",): Reason.PACK_WITHOUT_S_PACKS_ROW,
                  ("target_sources",): Reason.PACK_WITHOUT_TARGET_SOURCES}.get(
            tuple(gaps), Reason.PACK_WITHOUT_REGISTRATION)
        return self._row(scope, subject, Status.MISMATCH, reason, path, sides,
                         tuple(hops), {"missing": gaps}, archs=archs)

    def _row(self, scope: Scope, subject: str, status: Status, reason: Reason,
             archs_of: str, sides: tuple[Side, ...], evidence: tuple[Hop, ...],
             details: dict[str, Any] | None = None, *,
             archs: tuple[str, ...] | None = None) -> Row:
        return scope.row(subject, status, reason, sides=sides, evidence=evidence,
                         details=details,
                         archs=scope.archs_for(archs_of) if archs is None else archs)


def _register(ctx: CheckContext, snapshot: Snapshot, pack: str) -> tuple[str, int] | None:
    """The pack's register function (by the map's `register_function` convention) and its
    line, or None when it defines none."""
    pattern = ctx.surface.conventions.register_function
    if pattern is None:
        return None
    return next(((f.name.split("::")[-1], f.line) for f in ctx.facts(snapshot, pack)
                 if f.kind == FactKind.FUNCTION_DEFINITION
                 and pattern.fullmatch(f.name.split("::")[-1])), None)


def _listed(ctx: CheckContext, snapshot: Snapshot, cmake: str, relative: str) -> bool:
    """Whether the engine's build file lists the pack in `target_sources`."""
    return relative in {f.name.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")
                        for f in ctx.facts(snapshot, cmake)
                        if f.kind == FactKind.TARGET_SOURCES}


def _rowed(ctx: CheckContext, snapshot: Snapshot, table: str, register: str) -> bool:
    """Whether the pack table holds a row naming `register`."""
    return register in {str(f.data.get("register", "")).split("::")[-1]
                        for f in ctx.facts(snapshot, table) if f.kind == FactKind.PACK_ROW}
