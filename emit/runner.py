"""The emitter's parent: materialise each revision from git objects, run the child, bound it.

Maintainers: this module never imports analysed code. It writes the files the
child needs into a temporary folder it owns (the revision's roots, and the rules
file `emit.rules` builds: impact's readings, which the child may not import),
starts one child per revision (`python -I`, an allow-listed environment, its own
session and process group, resource limits, no stdin, and no network where the
OS allows a user and network namespace without privileges), and ends the whole
process group on timeout. The emit file is written by `emit_document` +
`write_emit_file` and read back by `load_emit_file`, which the tests hold to
each other.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore

from emit.rules import child_rules, write_rules
from impact.contracts import validate
from impact.errors import ImpactError
from impact.git import Snapshot, Views
from impact.surface import SurfaceMap
from impact.version import tool_version

EMIT_SCHEMA = "emit.schema.json"
CHILD_SCHEMA = "emit_child.schema.json"
SCHEMA_VERSION = 1
CHILD = Path(__file__).with_name("child.py")
RULES_FILE = "rules.json"  # beside the child's tree, in its own temporary folder
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ALLOWED_ENV = ("PATH", "LANG")
ALLOWED_ENV_PREFIXES = ("LC_", "ROCKE_", "HKP_")
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


class BadEmitFile(ImpactError):
    """An emit file of another schema, of a malformed shape, or made for other trees."""


@dataclass(frozen=True)
class Limits:
    """What one child may use."""

    timeout: float = 900.0          # wall clock, for the whole process group
    family_budget: float = 20.0     # per family, for the predicate probes
    address_space: int = 8 << 30    # bytes
    open_files: int = 1024


@dataclass
class _Run:
    label: str
    commit: str | None
    trees: dict[str, str]
    workdir: Path
    out: Path
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    status: str = "not-started"
    reason: str | None = None
    stderr: list[str] = field(default_factory=list)


def roots_of(surface: SurfaceMap) -> tuple[str, ...]:
    """The folders the child needs: the Python roots and the descriptor roots."""
    return tuple(sorted(set(surface.python_roots) | set(surface.descriptor_roots)))


def tree_ids(snapshot: Snapshot, roots: tuple[str, ...]) -> dict[str, str]:
    """The git tree id of each root folder in `snapshot` (the empty tree when absent)."""
    ids = {}
    for root in roots:
        prefix = root.rstrip("/") + "/"
        entries = [(p[len(prefix):].encode(), snapshot[p].sha.encode(), snapshot[p].mode)
                   for p in snapshot if p.startswith(prefix)]
        ids[root] = commit_tree(MemoryObjectStore(), entries).decode() if entries else EMPTY_TREE
    return ids


def expected_trees(views: Views, surface: SurfaceMap) -> dict[str, dict[str, str]]:
    roots = roots_of(surface)
    return {"base": tree_ids(views.base, roots), "head": tree_ids(views.head, roots)}


def materialise(snapshot: Snapshot, roots: tuple[str, ...], into: Path) -> None:
    """Write every file under `roots` from git objects into `into` (symlinks as files)."""
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    for path in snapshot:
        if not path.startswith(prefixes) or snapshot[path].is_submodule:
            continue
        target = into / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(snapshot.read(path))


def child_environment(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-list: PATH, LANG, LC_*, the ROCKE_* and HKP_* knobs; HOME and TMPDIR
    point into the child's own folder. Nothing else: no tokens, credentials or proxies."""
    source = os.environ if environ is None else environ
    env = {k: v for k, v in source.items()
           if k in ALLOWED_ENV or k.startswith(ALLOWED_ENV_PREFIXES)}
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env["TMPDIR"] = str(home / "tmp")
    return env


def _unshare() -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.unshare(CLONE_NEWUSER | CLONE_NEWNET))


def network_isolation_available() -> bool:
    """Whether a child can enter a new user and network namespace without privileges."""
    flags = CLONE_NEWUSER | CLONE_NEWNET
    probe = [sys.executable, "-I", "-c",
             "import ctypes,sys;"
             f"sys.exit(0 if ctypes.CDLL(None,use_errno=True).unshare({flags}) == 0 else 1)"]
    try:
        return subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=30, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _limiter(limits: Limits, isolate: bool) -> Callable[[], None]:
    def apply() -> None:  # runs in the child between fork and exec
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space, limits.address_space))
        cpu = int(limits.timeout) + 60
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
        if isolate and _unshare() != 0:
            raise OSError(ctypes.get_errno(), "unshare of the user and network namespace failed")

    return apply


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the child's whole process group, grandchildren included."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _start(run: _Run, roots_py: tuple[str, ...], roots_desc: tuple[str, ...], limits: Limits,
           isolate: bool, flavor: str | None) -> None:
    command = [sys.executable, "-I", "-B", str(CHILD), "--tree", str(run.workdir / "tree"),
               "--rules", str(run.workdir / RULES_FILE), "--out", str(run.out),
               "--family-budget", str(limits.family_budget)]
    for root in roots_py:
        command += ["--python-root", root]
    for root in roots_desc:
        command += ["--descriptor-root", root]
    if flavor:
        command += ["--flavor", flavor]
    run.process = subprocess.Popen(
        command, cwd=run.workdir, env=child_environment(run.workdir / "home"),
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True, preexec_fn=_limiter(limits, isolate))
    run.started = time.monotonic()
    os.set_blocking(run.process.stderr.fileno(), False)  # type: ignore[union-attr]


def _drain(run: _Run) -> None:
    stream = run.process.stderr if run.process else None
    if stream is None:
        return
    try:
        chunk = stream.read()
    except (BlockingIOError, ValueError):
        return
    if chunk:
        run.stderr.extend(chunk.decode("utf-8", "replace").splitlines())


def _progress(run: _Run) -> str:
    for line in reversed(run.stderr):
        if line.startswith("progress "):
            return f"{run.label} {line.split()[1]} families"
    return f"{run.label} {run.status}"


def run_children(runs: list[_Run], *, jobs: int, limits: Limits, isolate: bool,
                 roots_py: tuple[str, ...], roots_desc: tuple[str, ...],
                 flavor: str | None, bar: TextIO | None) -> None:
    """Run the children, `jobs` at a time, each bounded by `limits.timeout`."""
    pending, active = list(runs), []
    while pending or active:
        while pending and len(active) < max(1, jobs):
            run = pending.pop(0)
            try:
                _start(run, roots_py, roots_desc, limits, isolate, flavor)
                run.status = "running"
                active.append(run)
            except OSError as exc:
                run.status, run.reason = "crashed", f"child could not start: {exc}"
        time.sleep(0.05)
        for run in list(active):
            assert run.process is not None
            _drain(run)
            code = run.process.poll()
            if code is None and time.monotonic() - run.started > limits.timeout:
                _end_group(run.process)
                run.status = "timed-out"
                run.reason = f"child ran past {limits.timeout:g} s and was ended with its group"
            elif code is not None:
                _end_group(run.process)  # grandchildren left behind go too
                _drain(run)
                if code == 0 and run.out.exists():
                    run.status = "done"
                else:
                    tail = " | ".join(run.stderr[-3:])
                    run.status, run.reason = "crashed", f"child exited {code}: {tail}".strip()
            else:
                continue
            active.remove(run)
        if bar is not None:
            bar.write("\r\x1b[Kemit: " + ", ".join(_progress(r) for r in runs))
            bar.flush()
    if bar is not None:
        bar.write("\n")


def emit_document(revisions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The emit file's content; the one function that shapes it."""
    return {"schema_version": SCHEMA_VERSION,
            "tool": {"name": "impact", "version": tool_version()},
            "revisions": {label: dict(revisions[label]) for label in ("base", "head")}}


def run_emit(views: Views, surface: SurfaceMap, *, jobs: int = 2, limits: Limits = Limits(),
             flavor: str | None = None, bar: TextIO | None = None) -> dict[str, Any]:
    """Build every shipped variant at the base and at the head; the emit document."""
    roots = roots_of(surface)
    trees = expected_trees(views, surface)
    isolate = network_isolation_available()
    commits = _commits(views)
    with tempfile.TemporaryDirectory(prefix="impact-emit-") as tmp:
        runs = []
        for label, snapshot in (("base", views.base), ("head", views.head)):
            workdir = Path(tmp) / label
            (workdir / "tree").mkdir(parents=True)
            materialise(snapshot, roots, workdir / "tree")
            write_rules(child_rules(snapshot, surface), workdir / RULES_FILE)
            runs.append(_Run(label, commits[label], trees[label], workdir,
                             workdir / "result.json"))
        run_children(runs, jobs=jobs, limits=limits, isolate=isolate,
                     roots_py=tuple(surface.python_roots),
                     roots_desc=tuple(surface.descriptor_roots), flavor=flavor, bar=bar)
        revisions = {}
        for run in runs:
            result = None
            if run.status == "done":
                try:
                    result = json.loads(run.out.read_text(encoding="utf-8"))
                    validate(result, CHILD_SCHEMA)
                except Exception as exc:  # unreadable JSON or a document off its schema
                    run.status, result = "crashed", None
                    run.reason = f"child document unusable: {getattr(exc, 'message', exc)}"
            revisions[run.label] = {"commit": run.commit, "trees": run.trees,
                                    "status": run.status, "reason": run.reason,
                                    "network_isolated": isolate, "result": result}
    return emit_document(revisions)


def _commits(views: Views) -> dict[str, str | None]:
    """The commit each built snapshot was read from (None for uncommitted work)."""
    merge_bases = views.merge_bases.get("base..head")
    base = views.revisions.get("base")
    head = views.revisions.get("head")
    return {"base": merge_bases[0] if merge_bases else (base.sha if base else None),
            "head": head.sha if head else None}


def write_emit_file(document: Mapping[str, Any], path: str | Path) -> None:
    """Validate and write the emit file whole (a temporary file renamed into place)."""
    validate(dict(document), EMIT_SCHEMA)
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=2, sort_keys=True)
            handle.write("\n")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_emit_file(path: str | Path, expected: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """Read an emit file and refuse one of another schema version, of a malformed shape,
    or made for other trees than `expected` (from `expected_trees`)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BadEmitFile(f"emit file '{path}' cannot be read ({exc})",
                          "give the path of an emit file impact emit wrote") from None
    return load_emit_bytes(data, str(path), expected)


def load_emit_bytes(data: bytes, path: str,
                    expected: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    """`load_emit_file` on bytes already read (so the caller can hash exactly what was
    judged); `path` only names the file in errors."""
    fix = "run impact emit (or report --run-emit) again for these revisions"
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BadEmitFile(f"emit file '{path}' cannot be read as JSON ({exc})", fix) from None
    version = document.get("schema_version") if isinstance(document, dict) else None
    if version != SCHEMA_VERSION:
        raise BadEmitFile(f"emit file '{path}' has schema version {version!r}, "
                          f"this impact reads {SCHEMA_VERSION}", fix)
    try:
        validate(document, EMIT_SCHEMA)
        for revision in document["revisions"].values():
            if revision["result"] is not None:
                validate(revision["result"], CHILD_SCHEMA)
    except Exception as exc:  # jsonschema.ValidationError and friends
        message = getattr(exc, "message", str(exc))
        raise BadEmitFile(f"emit file '{path}' is malformed: {message}", fix) from None
    for label in ("base", "head"):
        if document["revisions"][label]["trees"] != dict(expected[label]):
            raise BadEmitFile(f"emit file '{path}' was made for other trees than this "
                              f"{label}", fix)
    return document
