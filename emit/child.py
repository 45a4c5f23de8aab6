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

Enumeration: the tree's own enumerator (``TREE_ENUMERATORS``) when it has one that runs,
read leniently (objects or dicts, either spelling of a field); whatever it lacks for a
variant (a field, or the variant itself) comes from the KDP JSON reading of that variant
in the rules file, and the variant records that (``enumerated_by``,
``enumeration_gap``).  With no enumerator that runs, every variant comes from the JSON
(``enumerator: "kdp-json"``, the error recorded).  Descriptors impact could not read go to
``not_inspected``; launches of any kind but rocke, which rocKE does not build, go to
``skipped``.

``--only FILE`` (JSON ``{"families": [family id, ...]}``, written by the parent) builds
and probes only the enumerated families it names; enumeration, ``skipped`` and
``not_inspected`` are as without it. The document always lists every family enumerated
(``enumerated``: id, source, arch, variant count), so the parent can plan, split and
check that its children's documents cover each family exactly once.

Build: the packer's way, through the tree's own producer
(``hkp_pack.rocke_compile.compile_rocke_variant``) called with the UKD's kernel_source
(``source``, ``builder``, ``spec``) and the arch, so the tree's own code resolves the
module, the builder, the spec class and the support predicate.  The child only watches:
it wraps the builder the UKD names (to see the spec object the producer built and what
the builder returned) and the tree's ``compile_kernel`` (to see each kernel lowered, with
its IR text captured for the chosen flavor).  A producer error before the builder ran is
a refusal of that arch; after, a failure.  Nothing here knows a name of a particular
tree's (no spec-class attribute, no registry attribute).

Families are keyed by (source module, builder, target arch, launch).  Each family runs in
a worker thread, after the tree's modules are dropped from ``sys.modules`` (so the recorded
``imports`` are the family's whole closure).  Predicate tables then put each family's
support predicate (as the tree's producer resolves it) to one-field variations of its
shipped specs; a variation's builder call is skipped once its (field, value) has its
finding and nothing later could change the table (the first finding per (field, value)
is the one kept, in the same order as probing every one). A family's table runs with the
tree modules its own build left in ``sys.modules`` (not the last family's), so what it
finds does not depend on which families a child built before it.

Budgets: ``--family-budget`` seconds of the worker thread's own CPU time, per family build
and per predicate table, checked between variants and between probes, so a loaded machine
does not turn a build that fits into a timeout.  Past it the worker stops where it is and
the family or table reads ``timed-out`` (Pack-time INCOMPLETE, never CLEAN).  A worker
that neither stops nor finishes (tree code that blocks) is abandoned after
``WALL_FACTOR`` times the budget of wall time; it reads ``timed-out`` too, and then every
later table reads ``timed-out`` as well.

Reads (``--reads FILE``, for the parent's cache of built groups): from its first line the
child records every path under ``--tree`` that Python code opens (the "open" audit
event: builtins, io, os.open, and the import system's source loads), stats (``os.stat``,
``os.lstat``, ``os.access`` and ``os.open`` wrapped, so existence checks and the import
system's probes count, and a path relative to a folder descriptor is read as the path it
names), lists (``os.listdir``: names) or scans (``os.scandir``: names, kinds and,
for files, content, as a DirEntry may stat them), in windows: ``plan`` (everything before
the first family: the flavor ladder, the enumerator) and one per group (source module and
arch) around each of its families' builds and predicate tables, the tree modules left in
``sys.modules`` added. A window in which a process was started, a foreign library called
(ctypes), a tree file opened for writing, or a descriptor that names no folder is
``opaque``: what it read cannot be listed, and the
parent keys it by the whole roots. The reads file is written beside ``--out`` and never
changes the document. Not seen: what a C extension outside the tree reads by itself.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

SCHEMA_VERSION = 1
RULES_VERSION = 1
DEFAULT_BUDGET = 20.0
# Wall-clock backstop of a worker, in family budgets (the budget itself is CPU time).
WALL_FACTOR = 4.0
# Probes between two looks at the worker's CPU clock.
CLOCK_EVERY = 32
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
        self._under: dict[str, bool] = {}  # a module file path -> under a root (resolved once)

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
        known = self._under.get(path)
        if known is None:
            try:
                real = Path(path).resolve()
            except (OSError, ValueError):
                return False
            known = self._under[path] = any(real == r or r in real.parents for r in self.roots)
        return known

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


class Reads:
    """What the tree code of each window read under the tree (module docstring)."""

    OPAQUE = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
              "os.forkpty", "os.spawn", "pty.spawn", "ctypes.dlopen", "ctypes.call_function",
              "ctypes.dlsym")

    def __init__(self, tree: Path) -> None:
        self.tree = str(tree)
        self.prefix = self.tree + os.sep
        self.windows: dict[str, dict] = {}
        self.current: dict | None = None
        self.window("plan")

    def window(self, name: str | None) -> None:
        """Record into window `name` from now (None: record nothing)."""
        if name is None:
            self.current = None
            return
        self.current = self.windows.setdefault(name, {
            "paths": set(), "listed": set(), "scanned": set(), "opaque": None})
        import linecache  # file text cached by one window must be read again by the next
        linecache.clearcache()

    def _rel(self, path) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return None
        full = os.path.normpath(os.path.join(os.getcwd(), path))
        if full == self.tree:
            return ""
        return full[len(self.prefix):] if full.startswith(self.prefix) else None

    def opaque(self, why: str) -> None:
        if self.current is not None and self.current["opaque"] is None:
            self.current["opaque"] = why

    def note(self, kind: str, path) -> None:
        if self.current is None:
            return
        if isinstance(path, int):
            if kind == "paths":  # a file already open: its opening was seen
                return
            try:  # a folder listed through a descriptor: the folder it names
                path = os.readlink(f"/proc/self/fd/{path}")
            except OSError:
                self.opaque(f"{kind} by a file descriptor that names no folder")
                return
        try:
            rel = self._rel(os.fspath(path))
        except (TypeError, ValueError, OSError):
            self.opaque("a path that cannot be read")
            return
        if rel is not None:
            self.current[kind].add(rel)

    def note_at(self, path, dir_fd) -> None:
        """A path given to a call that may take it relative to a folder descriptor."""
        if dir_fd is None or isinstance(path, int):
            self.note("paths", path)
            return
        try:
            path = os.fsdecode(path)
            if not os.path.isabs(path):
                path = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), path)
        except (OSError, TypeError, ValueError):
            self.opaque("a path relative to a folder descriptor that names no folder")
            return
        self.note("paths", path)

    def hook(self, event: str, args: tuple) -> None:
        if self.current is None:
            return
        if event == "open":
            path, flags = args[0], args[2] if len(args) > 2 else 0
            self.note("paths", path)
            writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
            if isinstance(flags, int) and flags & writing and not isinstance(path, int):
                try:
                    inside = self._rel(os.fspath(path)) is not None
                except (TypeError, ValueError):
                    inside = True
                if inside:
                    self.opaque("a tree file opened for writing")
        elif event == "os.listdir":
            self.note("listed", args[0] if args[0] is not None else ".")
        elif event == "os.scandir":
            self.note("scanned", args[0] if args[0] is not None else ".")
        elif event.startswith(self.OPAQUE):
            self.opaque(event)

    def install(self) -> None:
        """The audit hook, and the stat calls wrapped (in os and posix, where the import
        system calls them)."""
        sys.addaudithook(self.hook)
        import posix

        def wrap(real):
            @functools.wraps(real)
            def wrapped(path, *args, **kwargs):
                self.note_at(path, kwargs.get("dir_fd"))
                return real(path, *args, **kwargs)
            return wrapped

        for name in ("stat", "lstat", "access", "open"):
            real = getattr(posix, name)
            wrapped = wrap(real)
            setattr(posix, name, wrapped)
            if getattr(os, name, None) is real:
                setattr(os, name, wrapped)

    def add_modules(self, ctx: Context) -> None:
        """The files of the tree modules now in sys.modules (belt and braces: their loads
        were opened, so seen already)."""
        for name in ctx.tree_modules():
            self.note("paths", getattr(sys.modules.get(name), "__file__", None))

    def document(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "windows": {
            name: {"paths": sorted(w["paths"]), "listed": sorted(w["listed"]),
                   "scanned": sorted(w["scanned"]), "opaque": w["opaque"]}
            for name, w in sorted(self.windows.items())}}


READS: Reads | None = None


def reads_window(name: str | None) -> None:
    if READS is not None:
        READS.window(name)


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


# Enumerators a tree may offer, first found that runs wins: (module, function, reader).
# Each is called with the descriptor root; the reader turns what it returns into variant
# items, which are read leniently (objects or dicts, either spelling of a field), and
# whatever they lack for a variant comes from the KDP JSON.
def _listed_variants(found) -> list:
    return list(found)


def _flat_input_variants(flat) -> list:
    """The packer's flat input (`descriptors.load_flat_input`): its KDPs with their
    documents, UKDs inline or by id (`ukd_by_id()`), one item per launch."""
    by_id = flat.ukd_by_id() if callable(getattr(flat, "ukd_by_id", None)) else {}
    out = []
    for kdp in flat.kdps():
        doc = getattr(kdp, "doc", None)
        if not isinstance(doc, dict):
            raise TypeError("a KDP of the flat input has no document")
        path, rel_dir = getattr(kdp, "path", None), getattr(kdp, "rel_dir", None)
        rel = (Path(str(rel_dir)) / Path(str(path)).name).as_posix() \
            if path is not None and rel_dir is not None else None
        for entry in doc.get("kernelDescriptors", []):
            ukd = getattr(by_id.get(entry), "doc", None) if isinstance(entry, str) else entry
            if not isinstance(ukd, dict):
                continue
            arch = ukd.get("arch") or doc.get("arch") or []
            sources = ukd["sources"] if "sources" in ukd else [ukd.get("kernel_source")]
            for src in sources if isinstance(sources, list) else ():
                if not isinstance(src, dict):
                    continue
                item = {"name": ukd.get("name"), "id": ukd.get("id"), "arch": arch,
                        "launch": src.get("launch")}
                item.update({k: src[k] for k in ("kind", "source", "builder", "spec")
                             if k in src})
                if isinstance(item.get("source"), str) and item.get("kind") == ROCKE_KIND:
                    item["source"] = _dotted(item["source"])
                if rel is not None:
                    item["kdp_path"] = rel
                out.append(item)
    return out


TREE_ENUMERATORS = (
    ("hkp_pack.registry", "enumerate_variants", _listed_variants),
    ("hkp_pack.descriptors", "load_flat_input", _flat_input_variants),
)
# Field -> the spellings an enumerator's variant may use for it, first found wins.
_FIELD_SPELLINGS = {
    "kdp": ("kdp_path", "kdp"),
    "name": ("ukd_name", "name"),
    "ukd_id": ("ukd_id", "id"),
    "kind": ("kind", "source_kind", "origin_kind"),
    "source": ("source",),
    "builder": ("builder",),
    "spec": ("spec",),
    "arch": ("arch", "archs"),
    "launch": ("launch",),
}
# Fields an entry needs before the producer can build it.
_BUILD_FIELDS = ("kind", "source", "builder", "spec", "arch")
_MISSING = object()


def _field(item, spellings):
    """The first spelling `item` (an object or a dict) carries, else _MISSING."""
    for name in spellings:
        if isinstance(item, dict):
            if name in item:
                return item[name]
        else:
            try:
                return getattr(item, name)
            except AttributeError:
                continue
            except Exception:  # a property of the tree's that raises
                continue
    return _MISSING


def _usable(key: str, value) -> bool:
    if value is _MISSING:
        return False
    if key in ("kdp", "name", "ukd_id", "kind", "source", "builder"):
        return isinstance(value, str)
    if key == "spec":
        return isinstance(value, dict)
    if key == "arch":
        return isinstance(value, (list, tuple)) and all(isinstance(a, str) for a in value)
    if key == "launch":
        return value is None or isinstance(value, str)
    return True


def read_tree_enumeration(ctx: Context) -> tuple[str, list[dict]]:
    """(enumerator name, the tree's variants as partial entries: the fields it gave)."""
    errors = []
    for module_name, function, reader in TREE_ENUMERATORS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            errors.append(ctx.describe(exc))
            continue
        enumerate_fn = getattr(module, function, None)
        if not callable(enumerate_fn):
            errors.append(f"{module_name} has no {function}()")
            continue
        try:
            items = reader(enumerate_fn(ctx.descriptor_root))
        except Exception as exc:  # this enumerator fails on this tree: try the next
            errors.append(f"{module_name}.{function}: {ctx.describe(exc)}")
            continue
        out = []
        for item in items:
            got = {}
            for key, spellings in _FIELD_SPELLINGS.items():
                value = _field(item, spellings)
                if _usable(key, value):
                    got[key] = value
            if "kdp" in got:
                got["kdp"] = ctx.kdp_rel(str(got["kdp"]).replace(os.sep, "/"))
            if "arch" in got:
                got["arch"] = tuple(got["arch"])
            if "spec" in got:
                got["spec"] = dict(got["spec"])
            out.append(got)
        return module_name, out
    raise LookupError("the tree offers no enumerator: " + "; ".join(errors))


def merge_enumerations(json_entries: list[dict], not_inspected: list[dict],
                       tree: list[dict]) -> tuple[list[dict], list[dict]]:
    """The tree's variants, each completed from the KDP JSON reading of that same variant
    (matched by UKD id and launch, and KDP when both name it); a JSON variant the tree did
    not list is kept from the JSON. Each entry says which reading it came from and, when
    the JSON filled in, what the tree's enumerator lacked."""
    by_key: dict = {}
    for e in json_entries:
        by_key.setdefault((e["ukd_id"], e["launch"]), []).append(e)
    used: set = set()
    out = []
    for got in tree:
        candidates = by_key.get((got.get("ukd_id"), got.get("launch")), [])
        if "kdp" in got:
            candidates = [c for c in candidates if c["kdp"] == got["kdp"]] or candidates
        candidates = [c for c in candidates if id(c) not in used]
        base = candidates[0] if candidates else None
        if base is not None:
            used.add(id(base))
        needed = _BUILD_FIELDS if got.get("kind", ROCKE_KIND) == ROCKE_KIND else ("kind", "arch")
        lacked = [k for k in ("kdp", "name", "ukd_id", *needed) if k not in got]
        if base is None and lacked:
            continue  # listed by the tree without enough to build it, and not in the JSON
        entry = dict(base) if base is not None else {"launch": None}
        entry.update(got)
        entry["enumerated_by"] = "tree" if not lacked else "kdp-json"
        entry["enumeration_gap"] = (
            "the tree's enumerator gives no " + ", ".join(lacked) if lacked else None)
        out.append(entry)
    for e in json_entries:
        if id(e) not in used:
            out.append(dict(e, enumerated_by="kdp-json",
                            enumeration_gap="not listed by the tree's enumerator"))
    listed = {(e["kdp"], e["ukd_id"]) for e in out if e["enumerated_by"] == "tree"}
    left = [r for r in not_inspected if (r["kdp"], r["ukd_id"]) not in listed]
    return out, left


# ---------------------------------------------------------------------------
# Build: through the tree's own producer
# ---------------------------------------------------------------------------

# The tree's rocKE producer: the packer's own build of one variant from a UKD's
# kernel_source (source, builder, spec) for one arch.
PRODUCER = ("hkp_pack.rocke_compile", "compile_rocke_variant")
# The lowering entry point the producer calls, wrapped to see what it lowers.
LOWERING = ("rocke.helpers.compile", "compile_kernel")
LOWERING_REEXPORTS = ("rocke.helpers",)
# The support predicate for the probe tables: the producer's own resolver when it has one
# (either of these names), else the packer's naming rules.
PREDICATE_RESOLVERS = ("_resolve_support_predicate", "resolve_predicate")


def _spec_json(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, default=repr)


def _spec_key(spec: dict):
    """A hashable stand-in for `_spec_json(spec)`, equal exactly when the JSON texts are
    (each value with its type, so 1, 1.0 and True stay apart), without encoding JSON: a
    family of 900 variants makes some 10^5 of these."""
    try:
        key = tuple((k, type(v), v) for k, v in sorted(spec.items()))
        hash(key)
    except TypeError:  # a list or dict value (or keys that do not sort): the JSON text
        return _spec_json(spec)
    if any(type(v) not in _PLAIN for _, _, v in key):
        return _spec_json(spec)
    return key


_PLAIN = frozenset({int, bool, str, type(None)})


def _dotted(source: str) -> str:
    """A rocke source as a module path: slashes to dots, `.py` dropped."""
    stem = source[:-3] if source.endswith(".py") else source
    return ".".join(part for part in stem.split("/") if part)


def _parameters(fn) -> dict:
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}


class Capture:
    """What one producer call handed the builder and the lowering (see install_probes)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.entered = False
        self.specs: list = []
        self.built: list = []
        self.lowered: list = []  # (kernel, arch, result)
        self.backends: list = []


def install_lowering(cap: Capture, flavor: str | None):
    """Wrap the tree's compile_kernel so each kernel the producer lowers is recorded, its
    IR text captured and lowered for `flavor`; returns the tree's original function."""
    module = importlib.import_module(LOWERING[0])
    original = getattr(module, LOWERING[1])
    params = _parameters(original)

    @functools.wraps(original)
    def lowering(kernel, *args, **kwargs):
        cap.backends.append(kwargs.get("backend"))
        if "capture_ir_text" in params:
            kwargs["capture_ir_text"] = True
        if flavor:
            for name in ("flavor", "llvm_flavor"):
                if name in params:
                    kwargs[name] = flavor
        result = original(kernel, *args, **kwargs)
        cap.lowered.append((kernel, kwargs.get("arch"), result))
        return result

    setattr(module, LOWERING[1], lowering)
    for name in LOWERING_REEXPORTS:
        try:
            reexport = importlib.import_module(name)
        except Exception:
            continue
        if getattr(reexport, LOWERING[1], None) is original:
            setattr(reexport, LOWERING[1], lowering)
    return original


def install_builder(cap: Capture, source: str, builder: str):
    """Wrap the builder the UKD names, in the module the UKD names, so the spec object the
    producer builds (and what the builder returns) is seen; returns (module, the tree's
    builder), or (None, None) when the module or the builder is not there (the producer
    then says so itself)."""
    try:
        module = importlib.import_module(_dotted(source))
    except Exception:
        return None, None
    original = getattr(module, builder, None)
    if not callable(original):
        return module, None

    @functools.wraps(original)
    def building(spec_obj, *args, **kwargs):
        cap.entered = True
        cap.specs.append(spec_obj)
        built = original(spec_obj, *args, **kwargs)
        cap.built.append(built)
        return built

    setattr(module, builder, building)
    return module, original


def tree_predicate(producer_module, module, builder: str):
    """The builder's support predicate as the tree resolves it, or None."""
    for name in PREDICATE_RESOLVERS:
        resolve = getattr(producer_module, name, None)
        if not callable(resolve) or module is None:
            continue
        try:
            found = resolve(module, builder)
        except Exception:
            continue
        if isinstance(found, tuple) and len(found) == 2:
            found = found[1]
        if callable(found):
            return found
    if module is None:
        return None
    derived = "supports_" + builder[len("build_"):] if builder.startswith("build_") else None
    for name in ("is_valid_spec", derived):
        fn = getattr(module, name, None) if name else None
        if callable(fn):
            return fn
    return None


def verdict(result) -> tuple[bool, str]:
    """A predicate's answer: `(ok, why)` or a bare truth value."""
    if isinstance(result, tuple) and len(result) == 2:
        return bool(result[0]), str(result[1])
    return bool(result), ""


def group_of(fam) -> str:
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
        self.loaded: dict = {}  # the tree modules its build left in sys.modules, by name


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


def _launch_of(kernel, built: list, default):
    """The launch name a kernel has in what the builder returned (a module of named
    kernels), else the UKD's own launch."""
    for item in built:
        kernels = getattr(item, "kernels", None)
        if isinstance(kernels, dict):
            for name, candidate in kernels.items():
                if candidate is kernel:
                    return str(name)
    return default


# Where a lowering result may carry its LLVM IR text, first found wins.
_IR_TEXT = ("ir_text", "llvm_ir", "ir")


def _kernel_record(kernel, arch: str, result, built: list, launch, ir) -> dict:
    """One lowered kernel as the document records it; raises when the lowering's result
    lacks what the record needs."""
    ir_text = next((text for text in (getattr(result, name, None) for name in _IR_TEXT)
                    if isinstance(text, str) and text), None)
    if ir_text is None:
        raise ValueError("the tree's compile_kernel returned no IR text")
    symbol = getattr(result, "kernel_name", None) or getattr(kernel, "name", None)
    if not isinstance(symbol, str):
        raise ValueError("the lowered kernel has no name")
    return {
        "arch": arch,
        "launch": _launch_of(kernel, built, launch),
        "symbol": symbol,
        "args": _arg_records(kernel, ir),
        "ir_sha256": hashlib.sha256(ir_text.encode("utf-8")).hexdigest(),
        "compiler": {
            "isa": str(getattr(result, "isa", "")),
            "options": [str(o) for o in (getattr(result, "options", None) or ())],
            "fresh_process": True,
        },
    }


def _producer_call(produce, params: dict, e: dict, arch: str, out_dir: str,
                   flavor: str | None) -> dict:
    """The producer's arguments for one variant on one arch, by the names it declares;
    raises TypeError naming a required parameter nothing here can supply."""
    kernel_source = {"kind": "rocke", "source": e["source"], "builder": e["builder"],
                     "spec": dict(e["spec"])}
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
        raise TypeError(f"{PRODUCER[0]}.{PRODUCER[1]} needs {', '.join(needed)}, "
                        "which a UKD does not supply")
    return kwargs


def build_family(ctx: Context, fam: Family, flavor: str | None, backend_fail: str | None,
                 duplicates: set, budget: float | None = None) -> None:
    """Runs in a worker thread; fills fam.*; never raises. Past `budget` seconds of this
    thread's CPU time it stops before the next variant, leaving fam.done False."""
    deadline = None if budget is None else time.thread_time() + budget
    source, builder, arch, _ = fam.key
    cap = Capture()
    try:
        ctx.purge()
        install_lowering(cap, flavor)
        module, builder_fn = install_builder(cap, source, builder)
        producer_module = importlib.import_module(PRODUCER[0])
        produce = getattr(producer_module, PRODUCER[1])
        params = _parameters(produce)
        try:
            ir = importlib.import_module("rocke.core.ir")
        except Exception:
            ir = None
        fam.module = module
        fam.builder_fn = builder_fn
        fam.predicate = tree_predicate(producer_module, module, builder)
    except BaseException as exc:  # recorded, never raised
        fam.status, fam.reason = "failed", f"resolve: {ctx.describe(exc)}"
        fam.imports = ctx.tree_modules()
        fam.variants = [_variant_record(e, [], "failed", fam.reason, []) for e in fam.entries]
        fam.done = True
        return
    members = member_archs(ctx, arch)
    built_archs: set[str] = set()
    out_dir = tempfile.mkdtemp(prefix="emit-producer-")
    try:
        for e in fam.entries:
            if deadline is not None and time.thread_time() > deadline:
                return  # fam.done stays False: the family reads timed-out
            fam.variants.append(_build_variant(
                ctx, fam, e, members, cap, produce, params, ir, out_dir, flavor, backend_fail,
                duplicates, built_archs))
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    fam.built_archs = sorted(built_archs)
    failed = [v for v in fam.variants if v["status"] != "built"]
    if failed:
        fam.status = "failed"
        fam.reason = f"{len(failed)} of {len(fam.variants)} variants failed"
    fam.imports = ctx.tree_modules()
    fam.done = True


def _build_variant(ctx: Context, fam: Family, e: dict, members: list[str], cap: Capture,
                   produce, params: dict, ir, out_dir: str, flavor: str | None,
                   backend_fail: str | None, duplicates: set, built_archs: set) -> dict:
    """One variant through the tree's producer on each member arch; its record."""
    if backend_fail:
        return _variant_record(e, [], "failed", backend_fail, [])
    if (e["name"], e["launch"]) in duplicates:
        return _variant_record(
            e, [], "failed",
            "duplicate-name: another shipped variant has this name and a different spec", [])
    kernels, archs, refusals, failure = [], [], [], None
    for member in members:
        cap.reset()
        try:
            kwargs = _producer_call(produce, params, e, member, out_dir, flavor)
            produce(**kwargs)
        except BaseException as exc:
            if not cap.entered:
                # Refused before the builder ran: the spec, the predicate, or resolution.
                refusals.append(f"{member}: {ctx.describe(exc)}")
                continue
            failure = f"producer on {member}: {ctx.describe(exc)}"
            break
        foreign = sorted({str(b) for b in cap.backends if b is not None and b != "python"})
        if foreign:
            failure = f"the packer lowered with backend {','.join(foreign)!r}, not 'python'"
            break
        if not cap.lowered:
            failure = (f"producer on {member}: lowered no kernel through "
                       f"{LOWERING[0]}.{LOWERING[1]}")
            break
        if cap.specs and fam.cls is None:
            cls = type(cap.specs[0])
            fam.cls = cls if dataclasses.is_dataclass(cls) else None
            fam.spec_class = f"{cls.__module__}.{cls.__qualname__}"
        try:
            kernels.extend(_kernel_record(kernel, member, result, cap.built, e["launch"], ir)
                           for kernel, _, result in cap.lowered)
        except BaseException as exc:
            failure = f"lower on {member}: {ctx.describe(exc)}"
            break
        archs.append(member)
    if failure is None and not archs:
        failure = "the producer refused every target: " + "; ".join(refusals)
    if failure is not None:
        return _variant_record(e, [], "failed", failure, [])
    reason = ("not built for " + "; ".join(refusals)) if refusals else None
    built_archs.update(archs)
    return _variant_record(e, archs, "built", reason, kernels)


def _variant_record(e: dict, archs, status, reason, kernels) -> dict:
    return {
        "name": e["name"], "ukd_id": e["ukd_id"], "kdp": e["kdp"],
        "archs": list(archs), "status": status, "reason": reason, "kernels": kernels,
        "enumerated_by": e.get("enumerated_by", "kdp-json"),
        "enumeration_gap": e.get("enumeration_gap"),
    }


def run_bounded(fn, budget: float) -> bool:
    """Run fn in a daemon worker thread; False when it is still running after
    WALL_FACTOR times `budget` of wall time (fn itself stops at `budget` of its CPU time;
    this backstop is for tree code that blocks)."""
    worker = threading.Thread(target=fn, daemon=True)
    worker.start()
    worker.join(budget * WALL_FACTOR)
    return not worker.is_alive()


# ---------------------------------------------------------------------------
# Predicate tables
# ---------------------------------------------------------------------------


def int_variations(v: int) -> list[int]:
    vals = {v - 1, v + 1, v * 2, v // 2, 0, -1, -v, 1, INT32_MAX, INT32_MAX + 1}
    vals.discard(v)
    return sorted(vals)


def spec_variations(cls, shipped: list[dict]):
    """(field, value, spec dict) for one-field variations of the shipped specs, each
    distinct spec dict once (as its JSON text would tell them apart).

    Two variations of one field are the same dict exactly when their values are (type
    included) and their shipped specs agree on every other key; `_rest_classes` numbers
    the shipped specs by the latter, so the set of variations seen holds small keys, not
    a spec per variation (a 900-variant family probes some 10^5)."""
    seen = set()
    fields = [f for f in dataclasses.fields(cls)]
    rest = _rest_classes(shipped, [f.name for f in fields])
    for index, spec in enumerate(shipped):
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
                key = (f.name, type(value), value, rest[f.name][index])
                if key in seen:
                    continue
                seen.add(key)
                var = dict(spec)
                var[f.name] = value
                yield f.name, value, var


def _rest_classes(shipped: list[dict], names: list[str]) -> dict[str, list[int]]:
    """For each field name, each shipped spec's class: the index of the first shipped spec
    that has the same keys and values (`_spec_key`) once that field is left out."""
    classes: dict[str, list[int]] = {}
    for name in names:
        first: dict = {}
        classes[name] = [first.setdefault(_spec_key({k: v for k, v in spec.items()
                                                      if k != name}), i)
                         for i, spec in enumerate(shipped)]
    return classes


class Table:
    def __init__(self, fam: Family) -> None:
        self.fam = fam
        self.status = "timed-out"
        self.probes = 0
        self.findings: list[dict] = []
        # (field, value) -> {"accepted": spec|None, "refused": (spec, why)|None}
        self.nonpositive: dict = {}
        self.done = False


def probe_family(ctx: Context, table: Table, budget: float | None = None) -> None:
    """Fill `table`: every one-field variation of the shipped specs through the predicate,
    and an accepted one through the builder. Per (field, value) the table keeps the first
    builder failure and, for a non-positive value, the first accepted and the first refused
    variation, all in variation order; once a (field, value) has all it can keep, its later
    variations are counted but not run (they could change nothing). Past `budget` seconds
    of this thread's CPU time it stops, leaving table.done False (the table reads
    timed-out)."""
    fam = table.fam
    shipped = sorted({_spec_json(e["spec"]): e["spec"] for e in fam.entries}.items())
    shipped = [s for _, s in shipped]
    archs = fam.built_archs
    builder_hits: dict = {}
    settled: set = set()  # (field, value) pairs nothing later can change
    deadline = None if budget is None else time.thread_time() + budget
    probes = 0
    for field, value, var in spec_variations(fam.cls, shipped):
        probes += 1
        if deadline is not None and probes % CLOCK_EVERY == 0 \
                and time.thread_time() > deadline:
            return  # table.done stays False
        if (field, value) in settled:
            continue
        try:
            spec_obj = fam.cls(**var)
        except BaseException:
            continue
        nonpositive = isinstance(value, int) and not isinstance(value, bool) and value <= 0
        for arch in archs:
            try:
                ok, why = verdict(fam.predicate(spec_obj, arch=arch))
            except BaseException:
                continue
            if nonpositive:
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
        if (field, value) in builder_hits:
            slot = table.nonpositive.get((field, value))
            if not nonpositive or (slot is not None and slot["accepted"] is not None
                                   and slot["refused"] is not None):
                settled.add((field, value))
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

    json_entries, not_inspected = rules_entries(ctx)
    try:
        enumerator, tree = read_tree_enumeration(ctx)
    except BaseException as exc:  # the whole tree's variants come from the KDP JSON
        enumerator, enumerator_error = "kdp-json", ctx.describe(exc)
        entries = [dict(e, enumerated_by="kdp-json", enumeration_gap=None)
                   for e in json_entries]
    else:
        enumerator_error = None
        entries, not_inspected = merge_enumerations(json_entries, not_inspected, tree)
    ctx.purge()
    if flavor:
        # The tree's lowering reads the flavor from here when no argument names it.
        os.environ[FLAVOR_ENV] = flavor

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
        reads_window(group_of(fam))
        finished = run_bounded(
            lambda fam=fam: build_family(ctx, fam, flavor, backend_fail, duplicates, budget),
            budget)
        if finished:
            fam.loaded = {name: sys.modules[name] for name in ctx.tree_modules()}
            if READS is not None:
                READS.add_modules(ctx)
        reads_window(None)
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
        # The family's probes run with its own build's modules, as if it had been built
        # last: a module they import is its build's, or imported afresh (and recorded).
        ctx.purge()
        sys.modules.update(fam.loaded)
        reads_window(group_of(fam))
        finished = run_bounded(lambda t=table: probe_family(ctx, t, budget), budget)
        reads_window(None)
        if not finished or not table.done:
            # A worker still running tree code takes the later tables with it; one that
            # stopped at its budget leaves them their own.
            abandoned = abandoned or not finished
            cut = cut or not finished
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
    p.add_argument("--reads", type=Path, default=None)
    return p.parse_args(argv)


def main(argv=None) -> int:
    global READS
    args = parse_args(argv)
    sys.dont_write_bytecode = True
    if args.reads is not None:
        try:  # before any tree code runs; without it no reads file is written
            recorder = Reads(args.tree.resolve())
            recorder.install()
            READS = recorder
        except Exception as exc:
            print(f"emit-child: cannot record reads: {exc}", file=sys.stderr)
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
        if READS is not None:
            READS.window(None)
            write_document(READS.document(), args.reads)
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
