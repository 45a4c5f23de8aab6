"""Emitter child: build every shipped rocKE variant of one materialised revision on the CPU.

Run as a script inside the sandbox, on code from the analysed revision::

    python -I -B child.py --tree DIR --python-root REL [--python-root REL ...]
        --descriptor-root REL --rules FILE --out FILE [--family-budget SECONDS]
        [--flavor FLAVOR] [--only FILE]

It imports only the standard library and the tree's own modules (never ``impact``).
What impact knows it reads as data from ``--rules`` (written by emit.rules, schema
impact/contracts/emit_rules.schema.json): the generic-target table, the backend pins
the packer states, and the variants impact's descriptor reader found, rocke sources
already normalised.  It writes one JSON document (schema_version 1, see
impact/contracts/emit_child.schema.json) to ``--out`` through a temporary file and a
rename, and exits 0 once that document is written, even when variants failed.

Enumeration: ``hkp_pack.registry.enumerate_variants`` when the tree has it and it
succeeds (its sources as the packer resolves them), else the variants of the rules
file (``enumerator: "kdp-json"``, with the registry's error recorded).  Descriptors
impact could not read go to ``not_inspected``; launches of any kind but rocke, which
rocKE does not build, go to ``skipped``.

``--only FILE`` (JSON ``{"families": [family id, ...]}``, written by the parent) builds
and probes only the enumerated families it names; enumeration, ``skipped`` and
``not_inspected`` are as without it. The document always lists every family enumerated
(``enumerated``: id, source, arch, variant count), so the parent can plan, split and
check that its children's documents cover each family exactly once.

Families are keyed by (source module, builder, spec class, target arch, launch).  Each
family runs in a worker thread bounded by ``--family-budget`` seconds: it imports the
module afresh (the tree's modules are dropped from ``sys.modules`` first, so the
recorded ``imports`` are the family's whole closure), builds each variant as the packer
does (spec, support predicate, builder) and lowers every kernel with the tree's
``compile_kernel`` for the chosen LLVM flavor.  A family past its budget is abandoned and
reads ``timed-out``.  Predicate tables then put each family's support predicate to
one-field variations of its shipped specs, again under the budget per family; once one
table times out, it and every later table read ``timed-out``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import importlib
import json
import os
import re
import sys
import threading
from pathlib import Path

SCHEMA_VERSION = 1
RULES_VERSION = 1
DEFAULT_BUDGET = 20.0
FLAVOR_ENV = "ROCKE_LLVM_FLAVOR"
ROCKE_KIND = "rocke"
INT32_MAX = 2**31 - 1
# Where the tree states its LLVM flavor ladder (LLVM_FLAVORS), first found wins.
FLAVOR_MODULES = ("rocke.core.llvm_profile", "rocke.core.lower_llvm")


class Context:
    """What every stage needs: the tree, its python roots and the sanitiser."""

    def __init__(self, tree: Path, roots: list[Path], descriptor_rel: str,
                 rules: dict) -> None:
        self.tree = tree
        self.roots = roots
        self.rules = rules
        self.descriptor_rel = descriptor_rel.strip("/")
        self.descriptor_root = tree / self.descriptor_rel

    def clean(self, text: str) -> str:
        """Drop the temporary tree path from a message so documents are comparable."""
        text = text.replace(str(self.tree) + os.sep, "").replace(str(self.tree), "<tree>")
        return text if len(text) <= 2000 else text[:2000] + "..."

    def describe(self, exc: BaseException) -> str:
        return self.clean(f"{type(exc).__name__}: {exc}")

    def kdp_rel(self, rel: str) -> str:
        return f"{self.descriptor_rel}/{rel}" if self.descriptor_rel else rel

    # -- tree modules in sys.modules ------------------------------------------

    def _under_roots(self, path) -> bool:
        if not isinstance(path, str):
            return False
        try:
            real = Path(path).resolve()
        except (OSError, ValueError):
            return False
        return any(real == r or r in real.parents for r in self.roots)

    def is_tree_module(self, module) -> bool:
        if self._under_roots(getattr(module, "__file__", None)):
            return True
        return any(self._under_roots(p) for p in list(getattr(module, "__path__", None) or ()))

    def tree_modules(self) -> list[str]:
        return sorted(n for n, m in list(sys.modules.items())
                      if m is not None and self.is_tree_module(m))

    def purge(self) -> None:
        for name in self.tree_modules():
            sys.modules.pop(name, None)
        importlib.invalidate_caches()


# ---------------------------------------------------------------------------
# The rules file; the flavor ladder, read statically from the tree
# ---------------------------------------------------------------------------


def read_rules(path: Path) -> dict:
    """The data impact hands this child; anything else is refused (an error document)."""
    rules = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(rules, dict) or rules.get("schema_version") != RULES_VERSION:
        raise ValueError(f"rules file is not schema version {RULES_VERSION}")
    return rules


def _find_module_file(ctx: Context, module: str) -> Path | None:
    rel = module.replace(".", "/") + ".py"
    for root in ctx.roots:
        if (root / rel).is_file():
            return root / rel
    return None


def read_flavor_ladder(ctx: Context) -> tuple[list[str], str | None]:
    """LLVM_FLAVORS of the first FLAVOR_MODULES module the tree has (never imported)."""
    for rel in FLAVOR_MODULES:
        path = _find_module_file(ctx, rel)
        if path is None:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            targets, value = [], None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            if not any(isinstance(t, ast.Name) and t.id == "LLVM_FLAVORS" for t in targets):
                continue
            if isinstance(value, (ast.Tuple, ast.List)):
                names = [e.value for e in value.elts
                         if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                if names:
                    return names, rel
    return [], None


def _flavor_rank(name: str) -> tuple[int, str]:
    digits = re.findall(r"\d+", name)
    return (int(digits[0]) if digits else -1, name)


def choose_flavor(ctx: Context, pinned: str | None) -> str | None:
    if pinned:
        return pinned
    env = os.environ.get(FLAVOR_ENV)
    if env:
        return env
    ladder, _ = read_flavor_ladder(ctx)
    return max(ladder, key=_flavor_rank) if ladder else None


def member_archs(ctx: Context, arch: str) -> list[str]:
    """The concrete targets one descriptor arch stands for (a generic target's members)."""
    return list(ctx.rules["generic_targets"].get(arch, (arch,)))


# ---------------------------------------------------------------------------
# Enumeration
# ---------------------------------------------------------------------------


def _entry(kdp, name, ukd_id, src, arch, launch) -> dict:
    return {
        "kdp": kdp, "name": name, "ukd_id": ukd_id, "kind": src["kind"],
        "source": src.get("source"), "builder": src.get("builder"),
        "spec": src.get("spec") if isinstance(src.get("spec"), dict) else {},
        "arch": tuple(arch), "launch": launch,
    }


def rules_entries(ctx: Context) -> tuple[list[dict], list[dict]]:
    """The variants impact's descriptor reader found, one entry per launch, and the UKDs
    it could not read (not_inspected)."""
    entries = [_entry(v["kdp"], v["name"], v["ukd_id"], launch, v["arch"], launch["launch"])
               for v in ctx.rules["variants"] for launch in v["launches"]]
    return entries, [dict(r, reason=ctx.clean(r["reason"])) for r in ctx.rules["not_inspected"]]


def read_registry(ctx: Context) -> list[dict]:
    """hkp_pack.registry.enumerate_variants, converted to the child's entries."""
    registry = importlib.import_module("hkp_pack.registry")
    out = []
    for v in registry.enumerate_variants(ctx.descriptor_root):
        src = {"kind": v.kind, "source": v.source, "builder": v.builder,
               "spec": dict(v.spec or {})}
        out.append(_entry(ctx.kdp_rel(str(v.kdp_path)), v.ukd_name, v.ukd_id, src,
                          v.arch, v.launch))
    for e in out:
        for key in ("kind", "name", "ukd_id"):
            if not isinstance(e[key], str):
                raise TypeError(f"registry variant {key} is not a string: {e[key]!r}")
        if e["kind"] == ROCKE_KIND and not (
            isinstance(e["source"], str) and isinstance(e["builder"], str)
        ):
            raise TypeError(f"registry variant {e['name']}: source/builder not strings")
    return out


# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------


def _spec_json(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, default=repr)


class Resolver:
    """The packer's resolution rules: hkp_pack.rocke_compile when importable."""

    def __init__(self) -> None:
        try:
            self.rc = importlib.import_module("hkp_pack.rocke_compile")
        except Exception:  # the tree may have no packer
            self.rc = None

    def module(self, source: str):
        if self.rc is not None and hasattr(self.rc, "resolve_module"):
            return self.rc.resolve_module(source)
        return importlib.import_module(source)

    def builder(self, module, name: str):
        if self.rc is not None and hasattr(self.rc, "resolve_builder"):
            return self.rc.resolve_builder(module, name)
        fn = getattr(module, name, None)
        if not callable(fn):
            raise AttributeError(f"{module.__name__} has no builder {name!r}")
        return fn

    def spec_class(self, module, name: str):
        if self.rc is not None and hasattr(self.rc, "resolve_spec_class"):
            return self.rc.resolve_spec_class(module, name)
        classes = getattr(module, "SPEC_CLASSES", None)
        if classes and name in classes:
            return classes[name]
        cls = getattr(module, "SPEC_CLASS", None)
        if cls is None:
            raise AttributeError(f"{module.__name__} exposes no SPEC_CLASS for {name}")
        return cls

    def predicate(self, module, name: str):
        if self.rc is not None and hasattr(self.rc, "resolve_predicate"):
            return self.rc.resolve_predicate(module, name)
        if not name.startswith("build_"):
            return None
        return getattr(module, "supports_" + name[len("build_"):], None)

    def make_spec(self, module, name: str, spec: dict):
        if self.rc is not None and hasattr(self.rc, "make_spec"):
            return self.rc.make_spec(module, name, spec)
        cls = self.spec_class(module, name)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise TypeError(f"{cls.__name__}: unknown spec fields {unknown}")
        return cls(**spec)


def family_id(key: tuple) -> str:
    source, builder, arch, launch = key
    return f"{source}:{builder}@{arch}" + (f"#{launch}" if launch else "")


class Family:
    """One family's inputs and, once run, its records."""

    def __init__(self, key: tuple, entries: list[dict]) -> None:
        self.key = key
        self.id = family_id(key)
        self.entries = entries
        self.status = "built"
        self.reason = None
        self.spec_class = None
        self.imports: list[str] = []
        self.variants: list[dict] = []
        # Set by the build, read by the probes.
        self.module = None
        self.builder_fn = None
        self.predicate = None
        self.cls = None
        self.built_archs: list[str] = []
        self.done = False


def _arg_records(kernel, ir) -> list[dict]:
    ptr_type = getattr(ir, "PtrType", None)
    scalar_type = getattr(ir, "ScalarType", None)
    out = []
    for p in kernel.params:
        ty = p.type
        if ptr_type is not None and isinstance(ty, ptr_type):
            kind, size = "global_buffer", 8
        elif scalar_type is None or isinstance(ty, scalar_type):
            # The size the tree's own type states; 0 (unknown) when it states none.
            size = getattr(ty, "size", 0)
            kind, size = "by_value", size if isinstance(size, int) else 0
        else:
            kind, size = "unknown", 0
        out.append({"name": str(p.name), "kind": kind, "size": size})
    return out


def _kernels_of(built, ir, launch):
    module_cls = getattr(ir, "KernelModule", None)
    if module_cls is not None and isinstance(built, module_cls):
        return list(built.kernels.items())
    return [(launch, built)]


def build_family(ctx: Context, fam: Family, flavor: str | None, backend_fail: str | None,
                 duplicates: set) -> None:
    """Runs in a worker thread; fills fam.*; never raises."""
    source, builder, arch, launch = fam.key
    try:
        ctx.purge()
        resolver = Resolver()
        ir = importlib.import_module("rocke.core.ir")
        compile_mod = importlib.import_module("rocke.helpers.compile")
        module = resolver.module(source)
        fam.module = module
        fam.builder_fn = resolver.builder(module, builder)
        cls = resolver.spec_class(module, builder)
        fam.cls = cls
        fam.spec_class = f"{cls.__module__}.{cls.__qualname__}"
        fam.predicate = resolver.predicate(module, builder)
    except BaseException as exc:  # recorded, never raised
        fam.status, fam.reason = "failed", f"resolve: {ctx.describe(exc)}"
        fam.imports = ctx.tree_modules()
        fam.variants = [_variant_record(e, [], "failed", fam.reason, []) for e in fam.entries]
        fam.done = True
        return
    members = member_archs(ctx, arch)
    built_archs: set[str] = set()
    for e in fam.entries:
        if backend_fail:
            fam.variants.append(_variant_record(e, [], "failed", backend_fail, []))
            continue
        if (e["name"], e["launch"]) in duplicates:
            fam.variants.append(_variant_record(
                e, [], "failed",
                "duplicate-name: another shipped variant has this name and a different spec",
                []))
            continue
        kernels, archs, refusals, failure = [], [], [], None
        for member in members:
            try:
                spec_obj = resolver.make_spec(module, builder, dict(e["spec"]))
            except BaseException as exc:
                failure = f"spec: {ctx.describe(exc)}"
                break
            try:
                if fam.predicate is not None:
                    ok, why = fam.predicate(spec_obj, arch=member)
                    if not ok:
                        refusals.append(f"{member}: {ctx.clean(str(why))}")
                        continue
            except BaseException as exc:
                failure = f"predicate on {member}: {ctx.describe(exc)}"
                break
            try:
                built = fam.builder_fn(spec_obj, arch=member)
            except BaseException as exc:
                failure = f"builder on {member}: {ctx.describe(exc)}"
                break
            try:
                for launch_name, kernel in _kernels_of(built, ir, launch):
                    compiled = compile_mod.compile_kernel(
                        kernel, arch=member, backend="python", flavor=flavor)
                    kernels.append({
                        "arch": member,
                        "launch": launch_name,
                        "symbol": str(compiled.kernel_name),
                        "args": _arg_records(kernel, ir),
                        "ir_sha256": hashlib.sha256(
                            compiled.ir_text.encode("utf-8")).hexdigest(),
                        "compiler": {
                            "isa": str(compiled.isa),
                            "options": [str(o) for o in compiled.options],
                            "fresh_process": True,
                        },
                    })
            except BaseException as exc:
                failure = f"lower on {member}: {ctx.describe(exc)}"
                break
            archs.append(member)
        if failure is None and not archs:
            failure = "predicate refused every target: " + "; ".join(refusals)
        if failure is not None:
            fam.variants.append(_variant_record(e, [], "failed", failure, []))
            continue
        reason = ("not built for " + "; ".join(refusals)) if refusals else None
        built_archs.update(archs)
        fam.variants.append(_variant_record(e, archs, "built", reason, kernels))
    fam.built_archs = sorted(built_archs)
    failed = [v for v in fam.variants if v["status"] != "built"]
    if failed:
        fam.status = "failed"
        fam.reason = f"{len(failed)} of {len(fam.variants)} variants failed"
    fam.imports = ctx.tree_modules()
    fam.done = True


def _variant_record(e: dict, archs, status, reason, kernels) -> dict:
    return {
        "name": e["name"], "ukd_id": e["ukd_id"], "kdp": e["kdp"],
        "archs": list(archs), "status": status, "reason": reason, "kernels": kernels,
    }


def run_bounded(fn, budget: float) -> bool:
    """Run fn in a daemon worker thread; False when it is still running at the budget."""
    worker = threading.Thread(target=fn, daemon=True)
    worker.start()
    worker.join(budget)
    return not worker.is_alive()


# ---------------------------------------------------------------------------
# Predicate tables
# ---------------------------------------------------------------------------


def int_variations(v: int) -> list[int]:
    vals = {v - 1, v + 1, v * 2, v // 2, 0, -1, -v, 1, INT32_MAX, INT32_MAX + 1}
    vals.discard(v)
    return sorted(vals)


def spec_variations(cls, shipped: list[dict]):
    """(field, value, spec dict) for one-field variations of the shipped specs."""
    seen = set()
    fields = [f for f in dataclasses.fields(cls)]
    for spec in shipped:
        try:
            full = dataclasses.asdict(cls(**spec))
        except BaseException:  # a spec that does not construct is not probed
            continue
        for f in fields:
            cur = full.get(f.name)
            if isinstance(cur, bool):
                values = [not cur]
            elif isinstance(cur, int):
                values = int_variations(cur)
            else:
                continue
            for value in values:
                var = dict(spec)
                var[f.name] = value
                key = (f.name, _spec_json(var))
                if key in seen:
                    continue
                seen.add(key)
                yield f.name, value, var


class Table:
    def __init__(self, fam: Family) -> None:
        self.fam = fam
        self.status = "timed-out"
        self.probes = 0
        self.findings: list[dict] = []
        # (field, value) -> {"accepted": spec|None, "refused": (spec, why)|None}
        self.nonpositive: dict = {}
        self.done = False


def probe_family(ctx: Context, table: Table) -> None:
    fam = table.fam
    shipped = sorted({_spec_json(e["spec"]): e["spec"] for e in fam.entries}.items())
    shipped = [s for _, s in shipped]
    archs = fam.built_archs
    builder_hits: dict = {}
    probes = 0
    for field, value, var in spec_variations(fam.cls, shipped):
        probes += 1
        try:
            spec_obj = fam.cls(**var)
        except BaseException:
            continue
        for arch in archs:
            try:
                ok, why = fam.predicate(spec_obj, arch=arch)
            except BaseException:
                continue
            if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
                slot = table.nonpositive.setdefault((field, value), {"accepted": None,
                                                                     "refused": None})
                if ok and slot["accepted"] is None:
                    slot["accepted"] = var
                if not ok and slot["refused"] is None:
                    slot["refused"] = (var, ctx.clean(str(why)))
            if not ok or (field, value) in builder_hits:
                continue
            try:
                fam.builder_fn(spec_obj, arch=arch)
            except BaseException as exc:
                builder_hits[(field, value)] = {
                    "family": fam.id, "kind": "builder", "field": field, "value": value,
                    "spec": var,
                    "detail": f"predicate accepts on {arch}; builder raises "
                              f"{ctx.describe(exc)}",
                }
    table.probes = probes
    table.findings = [builder_hits[k] for k in sorted(builder_hits, key=_finding_key)]
    table.status = "done"
    table.done = True


def _finding_key(k):
    field, value = k
    return (field, str(type(value).__name__), value)


def sign_findings(tables: list[Table]) -> None:
    """A non-positive value all shipped specs keep positive, accepted by one predicate of a
    module and refused by another predicate of the same module (same arch)."""
    done = [t for t in tables if t.status == "done" and t.fam.predicate is not None]
    for a in done:
        for b in done:
            fa, fb = a.fam, b.fam
            if a is b or fa.key[0] != fb.key[0] or fa.key[2] != fb.key[2]:
                continue
            if fa.predicate is fb.predicate:
                continue
            hits = {}
            for (field, value), slot in a.nonpositive.items():
                if slot["accepted"] is None:
                    continue
                other = b.nonpositive.get((field, value))
                if not other or other["refused"] is None:
                    continue
                if not _defaults_positive(fa, fb, field):
                    continue
                pred_a = getattr(fa.predicate, "__name__", "predicate")
                pred_b = getattr(fb.predicate, "__name__", "predicate")
                hits[(field, value)] = {
                    "family": fa.id, "kind": "sign", "field": field, "value": value,
                    "spec": slot["accepted"],
                    "detail": f"{pred_a} accepts {field}={value}; {pred_b} of {fb.id} "
                              f"refuses it: {other['refused'][1]}",
                }
            a.findings.extend(hits[k] for k in sorted(hits, key=_finding_key))


def _defaults_positive(fa: Family, fb: Family, field: str) -> bool:
    """Shipped values of `field`, counting class defaults for specs that omit it."""
    values = []
    for fam in (fa, fb):
        default = None
        for f in dataclasses.fields(fam.cls):
            if f.name == field and f.default is not dataclasses.MISSING:
                default = f.default
        for e in fam.entries:
            values.append(e["spec"].get(field, default))
    return bool(values) and all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values)


# ---------------------------------------------------------------------------
# Document
# ---------------------------------------------------------------------------


def make_document(ctx: Context, flavor_pin: str | None, budget: float,
                  only: set[str] | None = None) -> tuple[dict, bool]:
    """Build the output document (only the families `only` names, when given); the bool
    says whether a worker was abandoned."""
    abandoned = False
    flavor = choose_flavor(ctx, flavor_pin)
    pins = list(ctx.rules["backend_pins"])
    foreign = [p for p in pins if p != "python"]
    backend_pin = pins[0] if len(pins) == 1 else (None if not pins else ",".join(pins))
    backend_fail = (f"packer pins lowering backend {','.join(foreign)!r}, not 'python'"
                    if foreign else None)

    own_entries, not_inspected = rules_entries(ctx)
    enumerator, enumerator_error = "hkp_pack.registry", None
    try:
        entries = read_registry(ctx)
    except BaseException as exc:  # fall back to the JSON reading
        enumerator, enumerator_error = "kdp-json", ctx.describe(exc)
        entries = own_entries
    else:
        not_inspected = []
    ctx.purge()

    skipped, rocke = [], []
    for e in entries:
        if e["kind"] == ROCKE_KIND:
            rocke.append(e)
        else:
            skipped.append({
                "kdp": e["kdp"], "name": e["name"], "ukd_id": e["ukd_id"],
                "launch": e["launch"], "kind": e["kind"], "archs": sorted(e["arch"]),
                "reason": f"{e['kind']} source: nothing for rocKE to build",
            })

    specs_by_name: dict = {}
    for e in rocke:
        specs_by_name.setdefault((e["name"], e["launch"]), set()).add(
            (e["source"], e["builder"], _spec_json(e["spec"])))
    duplicates = {k for k, v in specs_by_name.items() if len(v) > 1}

    groups: dict = {}
    for e in rocke:
        for arch in sorted(set(e["arch"])):
            key = (e["source"], e["builder"], arch, e["launch"])
            groups.setdefault(key, []).append(e)
    families = [Family(k, groups[k]) for k in sorted(groups, key=lambda k: (
        k[0], k[1], k[2], k[3] or ""))]
    enumerated = [{"id": fam.id, "source": fam.key[0], "arch": fam.key[2],
                   "variants": len(fam.entries)} for fam in families]
    if only is not None:
        families = [fam for fam in families if fam.id in only]

    for done, fam in enumerate(families):
        # The parent's progress bar reads these lines (families done of total).
        print(f"progress {done}/{len(families)}", file=sys.stderr, flush=True)
        fam.entries.sort(key=lambda e: (e["name"], e["kdp"], e["ukd_id"], _spec_json(e["spec"])))
        finished = run_bounded(
            lambda fam=fam: build_family(ctx, fam, flavor, backend_fail, duplicates), budget)
        if not finished or not fam.done:
            abandoned = abandoned or not finished
            fam.status = "timed-out"
            fam.reason = f"family build passed its budget of {budget:g} s"
            fam.imports = []
            fam.variants = [_variant_record(e, [], "timed-out", fam.reason, [])
                            for e in fam.entries]
            fam.module = None

    print(f"progress {len(families)}/{len(families)}", file=sys.stderr, flush=True)
    tables = []
    cut = False
    for fam in families:
        table = Table(fam)
        tables.append(table)
        if cut or fam.module is None or fam.predicate is None or fam.cls is None \
                or not fam.built_archs:
            if not cut and fam.status != "timed-out":
                table.status = "done"
            continue
        finished = run_bounded(lambda t=table: probe_family(ctx, t), budget)
        if not finished or not table.done:
            abandoned = abandoned or not finished
            cut = True
            table.status, table.probes, table.findings = "timed-out", 0, []
            table.nonpositive = {}
    sign_findings(tables)

    def _sort_variant(v):
        return (v["name"], v["kdp"], v["ukd_id"])

    doc = {
        "schema_version": SCHEMA_VERSION,
        "flavor": flavor,
        "backend_pin": backend_pin,
        "enumerator": enumerator,
        "enumerator_error": enumerator_error,
        "error": None,
        "families": [{
            "id": fam.id,
            "source": fam.key[0],
            "builder": fam.key[1],
            "spec_class": fam.spec_class,
            "arch": fam.key[2],
            "launch": fam.key[3],
            "status": fam.status,
            "reason": fam.reason,
            "imports": sorted(fam.imports),
            "variants": sorted(fam.variants, key=_sort_variant),
        } for fam in families],
        "skipped": sorted(skipped, key=lambda s: (s["kdp"], s["name"], s["launch"] or "")),
        "not_inspected": sorted(not_inspected, key=lambda s: (
            s["kdp"], -1 if s["index"] is None else s["index"])),
        "enumerated": enumerated,
        "predicate_tables": [{
            "family": t.fam.id,
            "status": t.status,
            "probes": t.probes,
            "findings": t.findings,
        } for t in tables],
    }
    return doc, abandoned


def error_document(message: str) -> dict:
    return {
        "schema_version": SCHEMA_VERSION, "flavor": None, "backend_pin": None,
        "enumerator": "kdp-json", "enumerator_error": None, "error": message,
        "families": [], "skipped": [], "not_inspected": [], "predicate_tables": [],
        "enumerated": [],
    }


def write_document(doc: dict, out: Path) -> None:
    text = json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=True) + "\n"
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out)


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="emit-child")
    p.add_argument("--tree", required=True, type=Path)
    p.add_argument("--python-root", action="append", default=[], dest="python_roots")
    p.add_argument("--descriptor-root", required=True)
    p.add_argument("--rules", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--family-budget", type=float, default=DEFAULT_BUDGET)
    p.add_argument("--flavor", default=None)
    p.add_argument("--only", type=Path, default=None)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    sys.dont_write_bytecode = True
    tree = args.tree.resolve()
    roots = []
    for rel in args.python_roots:
        root = (tree / rel).resolve()
        roots.append(root)
    sys.path[:0] = [str(r) for r in roots]
    abandoned = False
    ctx = Context(tree, roots, args.descriptor_root, {})
    try:
        ctx.rules = read_rules(args.rules)
        only = None
        if args.only is not None:
            only = set(json.loads(args.only.read_text(encoding="utf-8"))["families"])
        doc, abandoned = make_document(ctx, args.flavor, max(args.family_budget, 0.01), only)
    except BaseException as exc:  # still write a document
        doc = error_document(ctx.describe(exc))
    try:
        write_document(doc, args.out)
    except OSError as exc:
        print(f"emit-child: cannot write {args.out}: {exc}", file=sys.stderr)
        return 2
    if abandoned:
        # A worker thread is still running tree code: leave without waiting for it.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
