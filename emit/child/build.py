"""A family's build: each of its variants through the tree's own producer, on each concrete
arch, watched (emit/child/hooks.py) and recorded (emit/child/kernels.py).

The packer's way: the producer (`Emitter.producer`) is called with the UKD's kernel_source
(``source``, ``builder``, ``spec``) and the arch, so the tree's own code resolves the
module, the builder, the spec class and the support predicate. A producer error before the
builder ran is a refusal of that arch; after, a failure. Families are keyed by (source
module, builder, target arch, launch); each is built in a worker thread after the tree's
modules are dropped from ``sys.modules`` (so the recorded ``imports`` are the family's whole
closure).

Maintainers: runs tree code; never raises out of `build_family` (every failure is recorded
in the family). Spells no name of the library's: all come from the rules file.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import shutil
import tempfile
import time
from pathlib import Path

from emit.child.context import Context
from emit.child.hooks import Capture, install_builder, install_lowering, parameters, tree_predicate
from emit.child.kernels import kernel_record
from emit.child.vocabulary import BuildStatus, EnumeratedBy


def group_of(fam: Family) -> str:
    """The group a family is built and cached with (emit/shard.py: source module @ arch)."""
    return f"{fam.key[0]}@{fam.key[2]}"


def family_id(key: tuple) -> str:
    source, builder, arch, launch = key
    return f"{source}:{builder}@{arch}" + (f"#{launch}" if launch else "")


class Family:
    """One family's inputs and, once run, its records."""

    def __init__(self, key: tuple, entries: list[dict]) -> None:
        self.key = key
        self.id = family_id(key)
        self.entries = entries
        self.status = BuildStatus.BUILT
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
        self.loaded: dict = {}  # the tree modules its build left in sys.modules, by name


def _producer_call(ctx: Context, params: dict, e: dict, arch: str, out_dir: str,
                   flavor: str | None) -> dict:
    """The producer's arguments for one variant on one arch, by the names it declares;
    raises TypeError naming a required parameter nothing here can supply."""
    kernel_source = {"kind": ctx.emitter.source_kind, "source": e["source"],
                     "builder": e["builder"], "spec": dict(e["spec"])}
    offered = {"source": e["source"], "builder": e["builder"], "spec": dict(e["spec"]),
               "kernel_source": kernel_source, "arch": arch, "out_dir": Path(out_dir),
               "flavor": flavor, "llvm_flavor": flavor, "launch": e["launch"]}
    # Where the producer writes its artifacts: nothing here reads them, so an out_dir the
    # producer may go without (default None) is left out and nothing is written.
    kwargs = {k: v for k, v in offered.items() if k in params
              and not (k == "out_dir" and params[k].default is None)}
    needed = [n for n, p in params.items()
              if p.default is inspect.Parameter.empty and n not in kwargs
              and p.kind not in (inspect.Parameter.VAR_POSITIONAL,
                                 inspect.Parameter.VAR_KEYWORD)]
    if needed:
        module, function = ctx.emitter.producer
        raise TypeError(f"{module}.{function} needs {', '.join(needed)}, "
                        "which a UKD does not supply")
    return kwargs


def _dsl_module(ctx: Context):
    """The first of the DSL modules that imports (its argument types), or None."""
    for name in ctx.emitter.dsl_modules:
        try:
            return importlib.import_module(name)
        except Exception:
            continue
    return None


def build_family(ctx: Context, fam: Family, flavor: str | None, backend_fail: str | None,
                 duplicates: set, budget: float | None = None) -> None:
    """Runs in a worker thread; fills fam.*; never raises. Past `budget` seconds of this
    thread's CPU time it stops before the next variant, leaving fam.done False."""
    deadline = None if budget is None else time.thread_time() + budget
    source, builder, arch, _ = fam.key
    cap = Capture()
    try:
        ctx.purge()
        install_lowering(cap, flavor, ctx.emitter)
        module, builder_fn = install_builder(cap, source, builder)
        producer_module = importlib.import_module(ctx.emitter.producer[0])
        produce = getattr(producer_module, ctx.emitter.producer[1])
        params = parameters(produce)
        dsl = _dsl_module(ctx)
        fam.module = module
        fam.builder_fn = builder_fn
        fam.predicate = tree_predicate(producer_module, module, builder, ctx.emitter)
    except BaseException as exc:  # recorded, never raised
        fam.status, fam.reason = BuildStatus.FAILED, f"resolve: {ctx.describe(exc)}"
        fam.imports = ctx.tree_modules()
        fam.variants = [variant_record(e, [], BuildStatus.FAILED, fam.reason, [])
                        for e in fam.entries]
        fam.done = True
        return
    members = ctx.member_archs(arch)
    built_archs: set[str] = set()
    out_dir = tempfile.mkdtemp(prefix="emit-producer-")
    try:
        for e in fam.entries:
            if deadline is not None and time.thread_time() > deadline:
                return  # fam.done stays False: the family reads timed-out
            fam.variants.append(_build_variant(
                ctx, fam, e, members, cap, produce, params, dsl, out_dir, flavor,
                backend_fail, duplicates, built_archs))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    fam.built_archs = sorted(built_archs)
    failed = [v for v in fam.variants if v["status"] != BuildStatus.BUILT]
    if failed:
        fam.status = BuildStatus.FAILED
        fam.reason = f"{len(failed)} of {len(fam.variants)} variants failed"
    fam.imports = ctx.tree_modules()
    fam.done = True


def _build_variant(ctx: Context, fam: Family, e: dict, members: list[str], cap: Capture,
                   produce, params: dict, dsl, out_dir: str, flavor: str | None,
                   backend_fail: str | None, duplicates: set, built_archs: set) -> dict:
    """One variant through the tree's producer on each member arch; its record."""
    if backend_fail:
        return variant_record(e, [], BuildStatus.FAILED, backend_fail, [])
    if (e["name"], e["launch"]) in duplicates:
        return variant_record(
            e, [], BuildStatus.FAILED,
            "duplicate-name: another shipped variant has this name and a different spec", [])
    python = ctx.emitter.python_backend
    lowering_module, lowering = ctx.emitter.lowering
    kernels, archs, refusals, failure = [], [], [], None
    for member in members:
        cap.reset()
        try:
            kwargs = _producer_call(ctx, params, e, member, out_dir, flavor)
            produce(**kwargs)
        except BaseException as exc:
            if not cap.entered:
                # Refused before the builder ran: the spec, the predicate, or resolution.
                refusals.append(f"{member}: {ctx.describe(exc)}")
                continue
            failure = f"producer on {member}: {ctx.describe(exc)}"
            break
        foreign = sorted({str(b) for b in cap.backends if b is not None and b != python})
        if foreign:
            failure = f"the packer lowered with backend {','.join(foreign)!r}, not {python!r}"
            break
        if not cap.lowered:
            failure = (f"producer on {member}: lowered no kernel through "
                       f"{lowering_module}.{lowering}")
            break
        if cap.specs and fam.cls is None:
            cls = type(cap.specs[0])
            fam.cls = cls if dataclasses.is_dataclass(cls) else None
            fam.spec_class = f"{cls.__module__}.{cls.__qualname__}"
        try:
            kernels.extend(kernel_record(kernel, member, result, cap.built, e["launch"], dsl,
                                         lowering)
                           for kernel, _, result in cap.lowered)
        except BaseException as exc:
            failure = f"lower on {member}: {ctx.describe(exc)}"
            break
        archs.append(member)
    if failure is None and not archs:
        failure = "the producer refused every target: " + "; ".join(refusals)
    if failure is not None:
        return variant_record(e, [], BuildStatus.FAILED, failure, [])
    reason = ("not built for " + "; ".join(refusals)) if refusals else None
    built_archs.update(archs)
    return variant_record(e, archs, BuildStatus.BUILT, reason, kernels)


def variant_record(e: dict, archs, status, reason, kernels) -> dict:
    return {
        "name": e["name"], "ukd_id": e["ukd_id"], "kdp": e["kdp"],
        "archs": list(archs), "status": status, "reason": reason, "kernels": kernels,
        "enumerated_by": e.get("enumerated_by", EnumeratedBy.KDP_JSON),
        "enumeration_gap": e.get("enumeration_gap"),
    }
