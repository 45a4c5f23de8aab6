"""The shipped variant set against its census pins, and every native pack against its
registration (the `s_packs` row and the `target_sources` entry)."""

# Maintainers: reads facts through the CheckContext; the one exception is the census test's
# string literals, which no extractor lists, so they are found with a regex over the file's
# text (comments blanked first). A mismatch is charged only when it is new in the view.

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from impact.checks.base import CheckContext
from impact.descriptors.facts import descriptor_type
from impact.git import Snapshot, View
from impact.rows import ALL_ARCHS, Hop, Row, Side, Status

PACK_KIND = "ingestor-pack"
PIN_KIND = "test-pin"
DESCRIPTOR_KIND = "descriptor"
_CENSUS_FILE = re.compile(r"^Test(\w+)Packs\.cpp$")
_NATIVE_FILE = re.compile(r"^\w+Native\.cpp$")
_REGISTER = re.compile(r"^register\w+Symbols$")
_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"', re.DOTALL)
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_KERNEL_NAME = re.compile(r"^[A-Za-z_]\w*\.\w+\.gfx[0-9a-z]+$")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ARCH = re.compile(r"^(gfx[0-9]+[a-z]?)(?:_|$)")


def family_key(name: str) -> str:
    """A comparable family key: `Gfx950AttentionTiled2d` and `gfx950_attention_tiled_2d`
    both give `gfx950attentiontiled2d`."""
    return _CAMEL.sub("_", name).lower().replace("_", "")


def census_family(path: str) -> str | None:
    """`TestGfx950AttentionDensePacks.cpp` -> `gfx950_attention_dense`; None otherwise."""
    match = _CENSUS_FILE.match(posixpath.basename(path))
    return _CAMEL.sub("_", match.group(1)).lower() if match else None


def census_literals(text: str) -> list[tuple[str, int]]:
    """Every string literal outside comments, with its line."""
    def blank(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0).startswith('"') else re.sub(r"[^\n]", " ", m.group(0))

    code = _COMMENT.sub(blank, text)
    return [(m.group(1), code.count("\n", 0, m.start()) + 1) for m in _LITERAL.finditer(code)]


@dataclass
class _Kdp:
    name: str
    path: str
    line: int
    variants: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (path, line)
    broken: str | None = None


def _kdps(ctx: CheckContext, snapshot: Snapshot) -> dict[str, _Kdp]:
    """Every KDP of a snapshot by family key, with the names of the variants it ships
    (inline UKDs and standalone UKDs it names by id)."""
    out: dict[str, _Kdp] = {}
    standalone: dict[str, tuple[str, str, int]] = {}
    refs: dict[str, list[str]] = {}
    for path in snapshot:
        if ctx.surface.describe(path).kind != DESCRIPTOR_KIND:
            continue
        kind = descriptor_type(path)
        if kind not in ("kdp", "ukd"):
            continue
        facts = ctx.facts(snapshot, path)
        if kind == "ukd":
            for fact in facts:
                if fact.kind == "variant" and fact.data.get("id"):
                    standalone[str(fact.data["id"])] = (fact.name, path, fact.line)
            continue
        failure = ctx.parse_failure(facts)
        if failure is not None:
            stem = posixpath.basename(path).split(".")[0]
            out[family_key(stem)] = _Kdp(stem, path, failure.line,
                                         broken=str(failure.data.get("reason", "")))
            continue
        for fact in facts:
            if fact.kind == "kdp":
                kdp = _Kdp(fact.name, path, fact.line)
                out[family_key(fact.name)] = kdp
                refs[fact.name] = [str(r) for r in fact.data.get("ukd_refs", [])]
            elif fact.kind == "variant" and fact.data.get("kdp"):
                kdp = out.setdefault(family_key(str(fact.data["kdp"])),
                                     _Kdp(str(fact.data["kdp"]), path, 0))
                kdp.variants[fact.name] = (path, fact.line)
    for kdp in out.values():
        for ref in refs.get(kdp.name, []):
            if ref in standalone:
                name, path, line = standalone[ref]
                kdp.variants[name] = (path, line)
    return out


def _census_names(text: str, known: set[str]) -> dict[str, int]:
    """The literals of a census file that are kernel names: those equal to a variant name
    the KDP ships at either revision, or shaped like one (`family.tags.gfxNNN`)."""
    names: dict[str, int] = {}
    for literal, line in census_literals(text):
        if literal in known or _KERNEL_NAME.match(literal):
            names.setdefault(literal, line)
    return names


class VariantSetCheck:
    """What it checks:
        The variant names a KDP ships (inline UKDs and the standalone UKDs it names) against
        the census test that pins them (`TestGfx950AttentionDensePacks.cpp` pins the
        `gfx950_attention_dense` KDP), and every `packs/*Native.cpp` against its
        registration: a `target_sources` entry in the engine's CMakeLists.txt and an
        `s_packs` row in IngestorPacks.cpp naming its `register<Name>Symbols`.

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
        family has no KDP; a pack in which no `register<Name>Symbols` definition is found.

    Evidence:
        The census file:line of each name it pins and the KDP file:line of each variant the
        other side lacks; for a pack, the pack's register function, the CMakeLists.txt and
        the IngestorPacks.cpp rows. A gap the base already had is marked pre-existing.
    """

    name: ClassVar[str] = "variant-set"
    surfaces: ClassVar[frozenset[str]] = frozenset({"descriptor", "ingestor-pack", "test-pin"})

    def check(self, ctx: CheckContext) -> Iterable[Row]:
        for view in ctx.available_views():
            yield from self._census(ctx, view)
            yield from self._packs(ctx, view)

    # ------------------------------------------------------------------ census
    def _census(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        changed = set(view.diff.paths)
        censuses = sorted(p for p in view.new if ctx.surface.describe(p).kind == PIN_KIND
                          and census_family(p) is not None)
        if not censuses:
            return
        old_kdps, new_kdps = _kdps(ctx, view.old), _kdps(ctx, view.new)
        for census in censuses:
            family = family_key(str(census_family(census)))
            old_kdp, new_kdp = old_kdps.get(family), new_kdps.get(family)
            kdp_files = set()
            for kdp in (old_kdp, new_kdp):
                if kdp is not None:
                    kdp_files |= {kdp.path} | {p for p, _ in kdp.variants.values()}
            if not ({census} | kdp_files) & changed:
                continue
            row = self._census_row(ctx, view, census, old_kdp, new_kdp, changed)
            if row is not None:
                yield row

    def _census_row(self, ctx: CheckContext, view: View, census: str, old_kdp: _Kdp | None,
                    new_kdp: _Kdp | None, changed: set[str]) -> Row | None:
        assert view.new is not None
        subject = f"census:{census}"
        if new_kdp is None:
            if census not in changed:
                return None
            return self._row(ctx, view, subject, Status.CHANGED,
                             "census changed, but no KDP of its family is found", census,
                             (Side(census, 0, view.name, "changed"),), ())
        kdp_side = Side(new_kdp.path, new_kdp.line, view.name,
                        "changed" if new_kdp.path in changed else "counterpart")
        if new_kdp.broken is not None:
            return self._row(ctx, view, subject, Status.CHANGED,
                             f"KDP cannot be understood ({new_kdp.broken}); its variant set "
                             "cannot be compared with the census", new_kdp.path,
                             (kdp_side,), (Hop(new_kdp.path, new_kdp.line, "KDP does not parse"),))
        shipped_new = set(new_kdp.variants)
        shipped_old = set(old_kdp.variants) if old_kdp is not None and not old_kdp.broken \
            else set()
        known = shipped_new | shipped_old
        pins_new = _census_names(view.new.read(census).decode("utf-8", "replace"), known)
        pins_old = _census_names(view.old.read(census).decode("utf-8", "replace"), known) \
            if census in view.old else {}
        census_side = Side(census, min(pins_new.values(), default=0), view.name,
                           "changed" if census in changed else "counterpart")
        if not pins_new:
            return self._row(ctx, view, subject, Status.CHANGED,
                             "no kernel names found in the census file; cannot compare it "
                             "with the KDP", new_kdp.path, (census_side, kdp_side), ())
        kdp_moved = old_kdp is None or old_kdp.broken is not None or shipped_old != shipped_new
        census_moved = set(pins_old) != set(pins_new)
        unpinned = sorted(shipped_new - set(pins_new))
        gone = sorted(set(pins_new) - shipped_new)
        hops = tuple(
            [Hop(*new_kdp.variants[n], f"KDP ships '{n}'; the census does not pin it")
             for n in unpinned]
            + [Hop(census, pins_new[n], f"census pins '{n}'; the KDP does not ship it")
               for n in gone])
        details = {"unpinned": unpinned, "not_shipped": gone}
        sides = (census_side, kdp_side)
        if not unpinned and not gone:
            if kdp_moved:
                return self._row(ctx, view, subject, Status.CHANGED,
                                 "the shipped variant set changed and the census agrees: "
                                 "pack time and the census run are needed", new_kdp.path,
                                 sides, (), details)
            return None
        if unpinned and not gone:
            reason = "variant added to the KDP but not to the census" if kdp_moved else \
                "census no longer pins a variant the KDP ships"
        elif gone and not unpinned:
            reason = "census pins a variant the KDP no longer ships" if kdp_moved else \
                "census pins a variant the KDP does not ship"
        else:
            reason = "census and KDP list different variants"
        preexisting = not kdp_moved and not census_moved  # the base had this very gap
        return self._row(ctx, view, subject, Status.MISMATCH, reason, new_kdp.path, sides, hops,
                         details, preexisting=preexisting)

    # ------------------------------------------------------------------- packs
    def _packs(self, ctx: CheckContext, view: View) -> Iterator[Row]:
        assert view.new is not None
        changed = set(view.diff.paths)
        for path in sorted(view.new):
            if ctx.surface.describe(path).kind != PACK_KIND or "/packs/" not in path:
                continue
            if not _NATIVE_FILE.match(posixpath.basename(path)):
                continue
            engine = path.rsplit("/packs/", 1)[0]
            cmake, table = f"{engine}/CMakeLists.txt", f"{engine}/IngestorPacks.cpp"
            if not {path, cmake, table} & changed:
                continue
            new_gaps = _registration(ctx, view.new, path, engine)
            if new_gaps is None:
                yield self._row(ctx, view, f"pack:{path}", Status.CHANGED,
                                "no register<Name>Symbols definition found in the pack; its "
                                "registration cannot be checked", path,
                                (Side(path, 0, view.name, "changed" if path in changed
                                      else "counterpart"),), (),
                                archs=_pack_archs(ctx, view, path))
                continue
            register, line, gaps = new_gaps
            if not gaps:
                continue
            old_gaps = _registration(ctx, view.old, path, engine) if path in view.old else None
            preexisting = old_gaps is not None and set(old_gaps[2]) >= set(gaps)
            role = {p: "changed" if p in changed else "counterpart" for p in (path, cmake, table)}
            sides = (Side(path, line, view.name, role[path], register),
                     Side(cmake, 0, view.name, role[cmake]),
                     Side(table, 0, view.name, role[table]))
            hops = [Hop(path, line, f"pack defines {register}")]
            if "target_sources" in gaps:
                hops.append(Hop(cmake, 0, "target_sources does not list the pack"))
            if "s_packs" in gaps:
                hops.append(Hop(table, 0, f"no s_packs row registers {register}"))
            reason = {("s_packs",): "pack declared without its s_packs row",
                      ("target_sources",): "pack declared without its target_sources entry"}.get(
                tuple(gaps), "pack declared without its s_packs row or target_sources entry")
            yield self._row(ctx, view, f"pack:{path}", Status.MISMATCH, reason, path, sides,
                            tuple(hops), {"missing": list(gaps)}, preexisting=preexisting,
                            archs=_pack_archs(ctx, view, path))

    def _row(self, ctx: CheckContext, view: View, subject: str, status: Status, reason: str,
             archs_of: str, sides: tuple[Side, ...], evidence: tuple[Hop, ...],
             details: dict | None = None, *, preexisting: bool = False,
             archs: tuple[str, ...] | None = None) -> Row:
        if archs is None:
            archs = ctx.archs_for(archs_of, view.old, view.new)
        return Row(contract=self.name, view=view.name, subject=subject, status=status,
                   reason=reason, archs=archs,
                   sides=sides, evidence=evidence, preexisting=preexisting,
                   details=details or {})


def _registration(ctx: CheckContext, snapshot: Snapshot, pack: str,
                  engine: str) -> tuple[str, int, list[str]] | None:
    """(register function, its line, what is missing of `target_sources` and `s_packs`), or
    None when the pack defines no register<Name>Symbols function."""
    register = next(((f.name.split("::")[-1], f.line) for f in ctx.facts(snapshot, pack)
                     if f.kind == "function-definition"
                     and _REGISTER.match(f.name.split("::")[-1])), None)
    if register is None:
        return None
    relative = pack[len(engine) + 1:]
    sources = {f.name.replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")
               for f in ctx.facts(snapshot, f"{engine}/CMakeLists.txt")
               if f.kind == "target-sources"}
    rows = {str(f.data.get("register", "")).split("::")[-1]
            for f in ctx.facts(snapshot, f"{engine}/IngestorPacks.cpp") if f.kind == "pack-row"}
    gaps = []
    if relative not in sources:
        gaps.append("target_sources")
    if register[0] not in rows:
        gaps.append("s_packs")
    return register[0], register[1], gaps


def _pack_archs(ctx: CheckContext, view: View, pack: str) -> tuple[str, ...]:
    """The archs of the KDP of the pack's family (`Gfx950AttentionDenseNative.cpp` ->
    `gfx950_attention_dense`), else the arch its snake-cased name gives, else every arch."""
    assert view.new is not None
    stem = posixpath.basename(pack).removesuffix("Native.cpp")
    archs: set[str] = set()
    for snapshot in (view.old, view.new):
        kdp = _kdps(ctx, snapshot).get(family_key(stem))
        if kdp is not None:
            archs |= ctx.graph(snapshot).archs_of_descriptor(kdp.path)
    if archs:
        return tuple(sorted(archs))
    named = _ARCH.match(_CAMEL.sub("_", stem).lower())
    return (named.group(1),) if named else (ALL_ARCHS,)
