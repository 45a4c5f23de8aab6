"""The emitter's parent: materialise each revision from git objects, run the child, bound it.

Maintainers: this module never imports analysed code. It writes the files the
child needs into a temporary folder it owns (the revision's roots, and the rules
file `emit.rules` builds: impact's readings, which the child may not import),
and starts one child per revision through the jail `emit/sandbox.py` (`python -I`,
an allow-listed environment, its own session, resource limits within the hard
limits, no stdin; where the OS allows it without privileges, new user, mount, PID
and network namespaces: a read-only file system with the folders that hold secrets
hidden, and no process that outlives the child). What the jail obtained is read back
from a pipe the child cannot reach and recorded per revision (`protections`). The
child's stderr is kept through a bounded buffer. A timeout, SIGINT, SIGTERM or SIGHUP
end every child tree and remove the temporary folder; a watchdog process removes it
when this process dies without a chance to. The emit file is written by
`emit_document` + `write_emit_file` and read back by `load_emit_file`, which the
tests hold to each other.

At scale (`run_emit`): `jobs` children run at once. A revision is written out once (its
tree and rules, read-only to each of its children); each child has its own scratch folder,
jail, stderr buffer and protections record. With more jobs than revisions, or a
`--shard`, a first child per revision lists its families (`--only` with none), and
emit/shard.py deals the groups of families out among children or slices; the children's
documents are joined back and must cover each enumerated family exactly once. Groups
already built for the same key come from emit/cache.py (never the head's under
`untrusted_head`), and complete groups a child built are stored there.

The warm path: the cache key is computed from what is known without reading a blob (the
blob ids of the files the rules are read from, the environment, the tool versions), and
each cached plan and group is taken only when the manifest of what its child read holds
for the revision's tree, checked from git objects (emit/manifest.py: no child, no
parser, no temporary folder); when the cache holds every group wanted for both revisions
the emit file is joined from it at once. Only a revision that needs a child is written
out, has its rules built, and gets a jail; its children record what they read
(`--reads`), so only the groups that missed are built, and a revision whose plan the cache
holds for other trees only is first planned by a child, then built group by group.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from dulwich.index import commit_tree
from dulwich.object_store import MemoryObjectStore

from emit.cache import EmitStore, revision_key, tool_fingerprint
from emit.manifest import States, holds, manifest_of
from emit.rules import child_rules, rules_inputs, write_rules
from emit.sandbox import remove
from emit.shard import (
    REVISION_FIELDS,
    STATUS_ORDER,
    Group,
    Uncovered,
    assemble,
    assign,
    complete,
    coverage,
    describe,
    groups_of,
    merge_files,
    merge_protections,
    pieces_of,
)
from impact.contracts import validate
from impact.errors import ImpactError
from impact.factstore import FactStore
from impact.git import Snapshot, Views
from impact.surface import SurfaceMap
from impact.version import tool_version

EMIT_SCHEMA = "emit.schema.json"
CHILD_SCHEMA = "emit_child.schema.json"
SCHEMA_VERSION = 1
CHILD = Path(__file__).with_name("child.py")
SANDBOX = Path(__file__).with_name("sandbox.py")
RULES_FILE = "rules.json"  # beside the child's tree, in its own temporary folder
ONLY_FILE = "only.json"    # the families one child builds, in its scratch folder
READS_FILE = "reads.json"  # what its tree code read, per window, in its scratch folder
READS_SCHEMA = "emit_reads.schema.json"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ALLOWED_ENV = ("PATH", "LANG")
ALLOWED_ENV_PREFIXES = ("LC_", "ROCKE_", "HKP_")
# Folders laid over with an empty read-only tmpfs inside the sandbox (besides the user's
# home, the temporary folders and the analysed repository): where credentials and UNIX
# sockets live.
HIDDEN = ("/root", "/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")
KEEP_BYTES = 64 * 1024          # of the child's stderr: the first and the last
READ_PER_TICK = 16 << 20        # the most of a child's stderr read before the next check
END_GRACE = 10.0                # seconds the jail has to end its tree before SIGKILL


class BadEmitFile(ImpactError):
    """An emit file of another schema, of a malformed shape, or made for other trees."""


@dataclass(frozen=True)
class Limits:
    """What one child may use."""

    timeout: float = 900.0          # wall clock, for the whole process group
    family_budget: float = 20.0     # CPU seconds per family build and per probe table
    address_space: int = 8 << 30    # bytes
    open_files: int = 1024


class BoundedOutput:
    """A child's stream as its first and last `keep` bytes, whatever it writes: a child
    that writes gigabytes costs the parent no more than twice `keep`."""

    PROGRESS = re.compile(rb"(?:^|\n)progress (\d+/\d+)")

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.progress: str | None = None
        self._line = b""  # the last partial line, for the progress lines only

    def feed(self, chunk: bytes) -> None:
        scan = self._line + chunk
        found = self.PROGRESS.findall(scan)
        if found:
            self.progress = found[-1].decode()
        self._line = scan[scan.rfind(b"\n") + 1:][-256:]
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.keep:
            cut = len(self.tail) - self.keep
            self.dropped += cut
            del self.tail[:cut]

    def lines(self) -> list[str]:
        """The kept text as lines (a line cut by the gap reads as two)."""
        text = self.head.decode("utf-8", "replace")
        if self.dropped:
            text += f"\n[{self.dropped} bytes left out]\n"
        return (text + self.tail.decode("utf-8", "replace")).splitlines()


def unprotected(why: str) -> dict[str, Any]:
    """The protections record of a child that ran with none (or never ran)."""
    return {"user": False, "network": False, "pid": False, "mount": False, "detail": why}


@dataclass
class _Run:
    label: str
    commit: str | None
    trees: dict[str, str]
    workdir: Path
    out: Path
    source: Path | None = None       # the folder holding the revision's tree and rules
    only: list[str] | None = None    # the families to build (None: every one)
    reads: Path | None = None        # where the child records what it read (the cache's)
    cost: int = 0                    # variants it builds, for the order children start in
    process: subprocess.Popen[bytes] | None = None
    status_fd: int | None = None     # the jail's report on what it obtained
    started: float = 0.0
    status: str = "not-started"
    reason: str | None = None
    stderr: BoundedOutput = field(default_factory=lambda: BoundedOutput(KEEP_BYTES))
    protections: dict[str, Any] = field(default_factory=lambda: unprotected("never started"))


def roots_of(surface: SurfaceMap) -> tuple[str, ...]:
    """The folders the child needs: the Python roots and the descriptor roots."""
    return tuple(sorted(set(surface.python_roots) | set(surface.descriptor_roots)))


def tree_ids(snapshot: Snapshot, roots: tuple[str, ...]) -> dict[str, str]:
    """The git tree id of each root folder in `snapshot` (the empty tree when absent): a
    committed tree's own id for the folder (one folder read per path level), else the id
    its files would have, computed from the files under that folder only."""
    ids = {}
    for root in roots:
        folder = root.strip("/")
        found = snapshot.folder(folder) if snapshot.lazy else None
        if found is not None and found.tree_id is not None:
            ids[root] = found.tree_id
            continue
        prefix = folder + "/"
        entries = [(p[len(prefix):].encode(), entry.sha.encode(), entry.mode)
                   for p, entry in snapshot.walk(folder)]
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


def allowed_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-list: PATH, LANG, LC_*, the ROCKE_* and HKP_* knobs."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items()
            if k in ALLOWED_ENV or k.startswith(ALLOWED_ENV_PREFIXES)}


def child_environment(home: Path, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-list: PATH, LANG, LC_*, the ROCKE_* and HKP_* knobs; HOME and TMPDIR
    point into the child's own folder. Nothing else: no tokens, credentials or proxies."""
    env = allowed_environment(environ)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env["TMPDIR"] = str(home / "tmp")
    return env


def hidden_paths(views: Views, temp_root: Path, environ: Mapping[str, str] | None = None,
                 extra: tuple[Path, ...] = ()) -> list[str]:
    """What the sandbox lays an empty read-only tmpfs over: the user's home (as the
    environment and the password database name it), the temporary folders (this run's
    included, so one revision's child cannot reach the other's scratch folder), the
    folders of HIDDEN, and the analysed repository: its git folders, and its work tree
    (untracked files such as a `.env`; the child reads only the trees materialised for it),
    and `extra` (the emit cache's folder, which a child must neither read nor poison)."""
    source = os.environ if environ is None else environ
    candidates = [source.get("HOME"), tempfile.gettempdir(), str(temp_root), *HIDDEN,
                  str(getattr(views.repository, "path", "") or ""), *map(str, extra)]
    with contextlib.suppress(KeyError):
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    repo = getattr(views.repository, "repo", None)
    for name in ("controldir", "commondir"):
        with contextlib.suppress(Exception):
            candidates.append(getattr(repo, name)())
    found = set()
    for path in candidates:
        if path and os.path.isabs(path) and os.path.isdir(path):
            real = os.path.realpath(path)
            if real != "/":
                found.add(real)
    return sorted(found)


@functools.cache
def child_import_path() -> tuple[str, ...]:
    """The import path of `python -I` as the child will have it (the standard library, the
    site folders, editable installs), asked of the interpreter itself: never this
    process's own path, whose first entry may be the current folder."""
    probe = [sys.executable, "-I", "-c", "import json, sys; print(json.dumps(sys.path))"]
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=60, check=True)
        return tuple(p for p in json.loads(done.stdout) if isinstance(p, str))
    except (OSError, ValueError, subprocess.SubprocessError):
        return ()


def key_import_path() -> tuple[str, ...]:
    """For the cache key, without starting an interpreter: this process's import path
    less the entries `python -I` leaves out (the script's or current folder, PYTHONPATH).
    Every folder the child's path holds is here (the same interpreter, its site folders
    and .pth files), so every distribution it could import is in the key; an extra folder
    can only add names. A process started without its site folders asks the child's
    interpreter instead."""
    if sys.flags.no_site:
        return child_import_path()
    try:
        here = os.getcwd()
    except OSError:  # the current folder was removed
        here = ""
    left_out = {"", here, *os.environ.get("PYTHONPATH", "").split(os.pathsep)}
    return tuple(p for p in sys.path if p not in left_out and os.path.isabs(p))


def kept_paths(workdir: Path) -> list[tuple[str, bool]]:
    """What the child needs back where a hidden folder covers it: its scratch folder
    (writable) and, read-only, the Python installation, its import path and the emitter."""
    ro = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
          os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable)),
          str(CHILD.parent), *child_import_path()}
    ro = {os.path.realpath(p) for p in ro if p and os.path.isabs(p) and os.path.isdir(p)}
    return [(str(workdir), True), *((p, False) for p in sorted(ro - {"/"}))]


def _start(run: _Run, roots_py: tuple[str, ...], roots_desc: tuple[str, ...], limits: Limits,
           isolate: bool, flavor: str | None, hide: list[str]) -> None:
    source = run.source or run.workdir
    tree, rules = source / "tree", source / RULES_FILE
    read_only = [str(tree), str(rules)]
    command = [sys.executable, "-I", "-B", str(CHILD), "--tree", str(tree),
               "--rules", str(rules), "--out", str(run.out),
               "--family-budget", str(limits.family_budget)]
    if run.only is not None:
        only = run.workdir / ONLY_FILE
        only.write_text(json.dumps({"families": run.only}), encoding="utf-8")
        command += ["--only", str(only)]
        read_only.append(str(only))
    for root in roots_py:
        command += ["--python-root", root]
    for root in roots_desc:
        command += ["--descriptor-root", root]
    if flavor:
        command += ["--flavor", flavor]
    if run.reads is not None:
        command += ["--reads", str(run.reads)]
    status_r, status_w = os.pipe()
    config = {
        "parent": os.getpid(), "status_fd": status_w, "namespaces": isolate,
        "limits": {"as": limits.address_space, "cpu": int(limits.timeout) + 60,
                   "nofile": limits.open_files, "core": 0},
        "hide": hide, "cwd": str(run.workdir), "read_only": read_only,
        # The revision's tree and rules, when they lie outside this child's scratch folder
        # (a revision built by several children), come back read-only.
        "keep": kept_paths(run.workdir) + [(p, False) for p in read_only[:2]
                                           if source != run.workdir],
    }
    try:
        run.process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", str(SANDBOX), "run", json.dumps(config), "--",
             *command],
            cwd=run.workdir, env=child_environment(run.workdir / "home"),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, pass_fds=(status_w,))
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
    run.status_fd = status_r
    run.started = time.monotonic()
    os.set_blocking(run.process.stderr.fileno(), False)  # type: ignore[union-attr]


def _drain(run: _Run) -> None:
    """Read what the child wrote to stderr since the last call, at most READ_PER_TICK."""
    stream = run.process.stderr if run.process else None
    if stream is None or stream.closed:
        return
    read = 0
    while read < READ_PER_TICK:
        try:
            chunk = os.read(stream.fileno(), 1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            return
        run.stderr.feed(chunk)
        read += len(chunk)


def _end(run: _Run) -> None:
    """End the child's whole tree: the jail kills its PID namespace (or process group) and
    waits for it; SIGKILL to the group when the jail does not answer in time."""
    process = run.process
    if process is None:
        return
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(END_GRACE)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # grandchildren left in the group go too
    process.wait()
    _drain(run)
    if process.stderr is not None:
        process.stderr.close()
    run.protections = _protections(run)


def _protections(run: _Run) -> dict[str, Any]:
    """The jail's record of what it obtained, read from the pipe only the jail held."""
    if run.status_fd is None:
        return run.protections
    data = b""
    os.set_blocking(run.status_fd, False)
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(run.status_fd, 4096):
            data += chunk
            if len(data) > 65536:
                break
    os.close(run.status_fd)
    run.status_fd = None
    try:
        record = json.loads(data.decode().splitlines()[0])
        return {key: record[key] for key in ("user", "network", "pid", "mount", "detail")}
    except (ValueError, IndexError, KeyError, UnicodeDecodeError):
        return unprotected("the sandbox reported nothing: it did not start")


def _progress(run: _Run) -> str:
    if run.stderr.progress:
        return f"{run.label} {run.stderr.progress} families"
    return f"{run.label} {run.status}"


def _crash_reason(run: _Run, code: int) -> str:
    tail = " | ".join(line[:500] for line in run.stderr.lines()[-3:])
    return f"child exited {code}: {tail}".strip()


def run_children(runs: list[_Run], *, jobs: int, limits: Limits, isolate: bool,
                 roots_py: tuple[str, ...], roots_desc: tuple[str, ...],
                 flavor: str | None, bar: TextIO | None, hide: list[str]) -> None:
    """Run the children, `jobs` at a time, each bounded by `limits.timeout`; whatever
    interrupts this (a signal, an error), every child tree started is ended first."""
    pending, active = list(runs), []
    try:
        while pending or active:
            while pending and len(active) < max(1, jobs):
                run = pending.pop(0)
                try:
                    _start(run, roots_py, roots_desc, limits, isolate, flavor, hide)
                    run.status = "running"
                    active.append(run)
                except (OSError, subprocess.SubprocessError) as exc:
                    run.status, run.reason = "crashed", f"child could not start: {exc}"
            time.sleep(0.05)
            for run in list(active):
                assert run.process is not None
                _drain(run)
                code = run.process.poll()
                if code is None and time.monotonic() - run.started > limits.timeout:
                    _end(run)
                    run.status = "timed-out"
                    run.reason = (f"child ran past {limits.timeout:g} s and was ended "
                                  "with every process it started")
                elif code is not None:
                    _end(run)  # what it left behind goes too
                    if code == 0 and run.out.exists():
                        run.status = "done"
                    else:
                        run.status, run.reason = "crashed", _crash_reason(run, code)
                else:
                    continue
                active.remove(run)
            if bar is not None:
                bar.write("\r\x1b[Kemit: " + ", ".join(_progress(r) for r in runs))
                bar.flush()
    finally:
        for run in active:
            _end(run)
    if bar is not None:
        bar.write("\n")


class _Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where SIGINT raises KeyboardInterrupt."""


@contextlib.contextmanager
def _signals_end_the_run() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP interrupt the run once (the children are ended and the
    temporary folder removed on the way out); a second signal does not cut that short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    seen = []

    def interrupt(number: int, _frame: object) -> None:
        if not seen:
            seen.append(number)
            raise KeyboardInterrupt if number == signal.SIGINT else _Interrupted

    numbers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {n: signal.signal(n, interrupt) for n in numbers}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextlib.contextmanager
def _temp_root() -> Iterator[Path]:
    """A temporary folder removed on the way out, and by a watchdog (emit/sandbox.py
    watch) once this process is gone, however it went."""
    root = Path(tempfile.mkdtemp(prefix="impact-emit-"))
    watchdog, lifeline = None, None
    try:
        read_end, lifeline = os.pipe()
        try:
            watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(SANDBOX), "watch", str(root)],
                stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True)
        finally:
            os.close(read_end)
        yield root
    finally:
        with contextlib.suppress(OSError):
            remove(str(root))
        if lifeline is not None:
            os.close(lifeline)
        if watchdog is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                watchdog.wait(15)


def emit_document(revisions: Mapping[str, Mapping[str, Any]],
                  slice_of: tuple[int, int] | None = None) -> dict[str, Any]:
    """The emit file's content; the one function that shapes it (`slice_of`: (K, N) of
    `impact emit --shard K/N`)."""
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "tool": {"name": "impact", "version": tool_version()},
        "revisions": {label: dict(revisions[label]) for label in ("base", "head")}}
    if slice_of is not None:
        document["slice"] = {"index": slice_of[0], "count": slice_of[1]}
    return document


@dataclass
class _Revision:
    """One revision's work: its cache key, what the cache held, the children it needs."""

    label: str
    commit: str | None
    trees: dict[str, str]
    folder: Path | None = None            # tree/ and rules.json, read by every child
    key: dict[str, Any] | None = None     # None: the cache is not used for this revision
    plan: dict[str, Any] | None = None    # the revision fields, `enumerated` included
    pieces: dict[str, dict[str, Any]] = field(default_factory=dict)  # group id -> piece
    protections: list[dict[str, Any]] = field(default_factory=list)  # of cached pieces
    plan_run: _Run | None = None
    runs: list[_Run] = field(default_factory=list)
    wanted: list[Group] | None = None     # the groups this emit covers (None: unknown yet)
    cache_state: str = "off"
    snapshot: Snapshot | None = None      # written out only when a child runs
    roots: tuple[str, ...] = ()
    rules: dict[str, Any] = field(default_factory=dict)
    states: States | None = None          # its paths' states in git, for the manifests
    plan_seen: bool = False               # the cache holds plans of other trees for its key

    def new_run(self, name: str, only: list[str] | None, cost: int = 0) -> _Run:
        assert self.folder is not None
        if self.snapshot is not None:  # the first child: write the tree and the rules
            (self.folder / "tree").mkdir(parents=True)
            materialise(self.snapshot, self.roots, self.folder / "tree")
            write_rules(self.rules, self.folder / RULES_FILE)
            self.snapshot = None
        workdir = self.folder.parent / f"{self.label}-{name}"
        workdir.mkdir()
        return _Run(self.label if name == "all" else f"{self.label}[{name}]", self.commit,
                    self.trees, workdir, workdir / "result.json", source=self.folder,
                    only=only, cost=cost,
                    reads=workdir / READS_FILE if self.key is not None else None)


def default_jobs() -> int:
    """Children at once by default: the cores this process may run on."""
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def run_emit(views: Views, surface: SurfaceMap, *, jobs: int | None = None,
             limits: Limits = Limits(), flavor: str | None = None, bar: TextIO | None = None,
             isolate: bool = True, store: EmitStore | None = None,
             untrusted_head: bool = False,
             shard: tuple[int, int] | None = None,
             fact_store: FactStore | None = None) -> dict[str, Any]:
    """Build every shipped variant at the base and at the head (or slice K of N of them,
    `shard`); the emit document.

    `jobs` children run at once (default: the cores). With more jobs than revisions to
    build, or a shard, each revision is first asked for its families (a child that builds
    none) and its groups are split among children (emit/shard.py). `store` is the cache
    of built variants (emit/cache.py); with `untrusted_head` the head's results are
    neither read from it nor written to it, as the head's own code produced them. When
    the cache holds every group wanted, no child starts and no file is parsed.
    `fact_store`, the persistent fact cache the rules of a revision that needs a child
    are read through (None: the one the caller made active, if any).
    `isolate=False` runs the children without namespaces (the emit file records every
    protection as missing): for tests of that record, and callers that know the OS
    refuses them."""
    jobs = max(1, jobs or default_jobs())
    roots = roots_of(surface)
    trees = expected_trees(views, surface)
    commits = _commits(views)
    if store is not None and not store.enabled:
        store = None
    revisions = []
    for label, snapshot in (("base", views.base), ("head", views.head)):
        revision = _Revision(label, commits[label], trees[label], snapshot=snapshot,
                             roots=roots)
        if store is not None and untrusted_head and label == "head":
            revision.cache_state = "not used: the head is untrusted"
        elif store is not None:
            revision.key = _revision_key(revision, snapshot, surface, flavor, limits, isolate)
            if revision.key is not None:
                revision.cache_state = "used"
                revision.states = States(snapshot, trees[label])
                _load_cached(store, revision)
        revisions.append(revision)
    try:
        if not any(_needs_child(r, shard) for r in revisions):
            records = {r.label: _finish(r, store, shard) for r in revisions}
            return emit_document(records, shard)
        with _signals_end_the_run(), _temp_root() as tmp:
            _build(revisions, tmp, surface, jobs=jobs, limits=limits, isolate=isolate,
                   flavor=flavor, bar=bar, shard=shard, fact_store=fact_store, store=store,
                   hide=hidden_paths(views, tmp, extra=(store.root,) if store is not None else ()))
            records = {r.label: _finish(r, store, shard) for r in revisions}
        return emit_document(records, shard)
    finally:
        if store is not None:
            store.close()


def _needs_child(revision: _Revision, shard: tuple[int, int] | None) -> bool:
    """Whether the cache lacks the plan or a group this emit wants of `revision`."""
    if revision.plan is None:
        return True
    groups = groups_of(revision.plan["enumerated"])
    revision.wanted = assign(groups, shard[1])[shard[0] - 1] if shard else groups
    return any(g.id not in revision.pieces for g in revision.wanted)


def _build(revisions: list[_Revision], tmp: Path, surface: SurfaceMap, *, jobs: int,
           limits: Limits, isolate: bool, flavor: str | None, bar: TextIO | None,
           shard: tuple[int, int] | None, fact_store: FactStore | None,
           store: EmitStore | None, hide: list[str]) -> None:
    """Write out each revision that needs a child (its tree and rules), plan and run the
    children; the revisions the cache serves whole get none. A revision whose plan the
    cache holds for other trees only is planned by a child first, so that the groups
    whose reads are unchanged come from the cache."""
    building = [r for r in revisions if _needs_child(r, shard)]
    built = {r.label for r in building}
    with contextlib.ExitStack() as facts:
        if fact_store is not None:
            from impact.extract import persistent_facts  # the parsers, for the rules only

            facts.enter_context(persistent_facts(fact_store))
        for revision in revisions:
            revision.folder = tmp / revision.label
            if revision.label in built:
                assert revision.snapshot is not None
                revision.rules = child_rules(revision.snapshot, surface)
            else:
                revision.snapshot = None  # nothing of it is written out
    common = {"limits": limits, "isolate": isolate, "roots_py": tuple(surface.python_roots),
              "roots_desc": tuple(surface.descriptor_roots), "flavor": flavor,
              "bar": bar, "hide": hide}
    split = shard is not None or jobs > len(revisions)
    planning = [r for r in building if r.plan is None and (split or r.plan_seen)]
    for revision in planning:
        revision.plan_run = revision.new_run("plan", [])
    if planning:
        run_children([r.plan_run for r in planning if r.plan_run], jobs=jobs, **common)
        for revision in planning:
            _read_plan(revision)
            if store is not None and revision.key is not None and revision.plan is not None:
                _load_groups(store, revision)
    _plan_children(revisions, jobs, shard)
    builds = sorted((run for r in revisions for run in r.runs), key=lambda r: -r.cost)
    if builds:
        run_children(builds, jobs=jobs, **common)


def _revision_key(revision: _Revision, snapshot: Snapshot, surface: SurfaceMap,
                  flavor: str | None, limits: Limits, isolate: bool) -> dict[str, Any] | None:
    """The cache key of `revision` (emit/cache.py), or None when impact's own sources
    cannot be read to version the rules (the cache is then not used)."""
    try:
        inputs = rules_inputs(snapshot, surface)
    except OSError:
        return None
    return revision_key(
        python_roots=surface.python_roots,
        descriptor_roots=surface.descriptor_roots, rules_inputs=inputs, flavor=flavor,
        environment=allowed_environment(),
        limits={"as": limits.address_space, "nofile": limits.open_files}, isolate=isolate,
        tool=tool_fingerprint(key_import_path()))


def _load_cached(store: EmitStore, revision: _Revision) -> None:
    """The plan and the pieces the cache holds for `revision`: the first candidate of each
    whose manifest holds for the revision's tree, its value checked before use."""
    assert revision.key is not None and revision.states is not None
    candidates = store.candidates(store.entry_key(revision.key, "plan"))
    revision.plan_seen = bool(candidates)
    for candidate in candidates:
        plan = candidate.get("plan")
        if _valid(plan, {"families": [], "predicate_tables": []}) \
                and isinstance(candidate.get("protections"), dict) \
                and holds(revision.states, candidate["manifest"]):
            revision.plan = plan
            revision.protections.append(candidate["protections"])
            break
    if revision.plan is not None:
        _load_groups(store, revision)


def _load_groups(store: EmitStore, revision: _Revision) -> None:
    """The pieces the cache holds for the groups of the revision's plan."""
    assert revision.key is not None and revision.states is not None
    plan = revision.plan
    assert plan is not None
    for group in groups_of(plan["enumerated"]):
        for candidate in store.candidates(store.entry_key(revision.key, f"group:{group.id}")):
            piece = candidate.get("piece")
            if _valid(plan, piece) and complete(piece, group) \
                    and isinstance(candidate.get("protections"), dict) \
                    and holds(revision.states, candidate["manifest"]):
                revision.pieces[group.id] = piece
                revision.protections.append(candidate["protections"])
                break


def _valid(plan: Any, piece: Any) -> bool:
    """`plan` has every revision field and a well-formed `enumerated` list, and `piece`
    holds lists of families and tables (their content is checked by `complete`)."""
    try:
        return (isinstance(plan, dict) and all(name in plan for name in REVISION_FIELDS)
                and all(isinstance(f["id"], str) and isinstance(f["source"], str)
                        and isinstance(f["arch"], str) and type(f["variants"]) is int
                        for f in plan["enumerated"])
                and isinstance(piece, dict) and isinstance(piece["families"], list)
                and isinstance(piece["predicate_tables"], list))
    except (TypeError, KeyError):
        return False


def _read_result(run: _Run) -> dict[str, Any] | None:
    """The document a finished child wrote, checked against its schema (else crashed)."""
    if run.status != "done":
        return None
    try:
        result = json.loads(run.out.read_text(encoding="utf-8"))
        validate(result, CHILD_SCHEMA)
        return result
    except Exception as exc:  # unreadable JSON or a document off its schema
        run.status = "crashed"
        run.reason = f"child document unusable: {getattr(exc, 'message', exc)}"
        return None


def _read_plan(revision: _Revision) -> None:
    run = revision.plan_run
    assert run is not None
    result = _read_result(run)
    if result is not None and "enumerated" not in result:
        run.status, run.reason = "crashed", "the child did not list the families it enumerated"
        result = None
    if result is not None:
        revision.plan = {name: result[name] for name in REVISION_FIELDS}


def _plan_children(revisions: list[_Revision], jobs: int, shard: tuple[int, int] | None
                   ) -> None:
    """Which children each revision needs: none when the cache holds every group wanted;
    one building everything when no plan is known; else the missing groups split into
    as many children as the jobs allow."""
    missing: dict[str, list[Group]] = {}
    for revision in revisions:
        if revision.plan_run is not None and revision.plan is None:
            continue  # its planning child failed; the revision reads as that child did
        if revision.plan is None:
            revision.runs.append(revision.new_run("all", None))
            continue
        groups = groups_of(revision.plan["enumerated"])
        revision.wanted = assign(groups, shard[1])[shard[0] - 1] if shard else groups
        missing[revision.label] = [g for g in revision.wanted if g.id not in revision.pieces]
    building = [label for label, groups in missing.items() if groups] + [
        r.label for r in revisions if r.runs]
    per_revision = max(1, jobs // max(1, len(building)))
    for revision in revisions:
        groups = missing.get(revision.label)
        if not groups:
            continue
        for number, part in enumerate(assign(groups, min(per_revision, len(groups)))):
            if part:
                revision.runs.append(revision.new_run(
                    str(number), [fid for g in part for fid in g.families],
                    sum(g.variants for g in part)))


def _finish(revision: _Revision, store: EmitStore | None, shard: tuple[int, int] | None
            ) -> dict[str, Any]:
    """The revision's record in the emit file; what it built goes to the cache."""
    ran = [r for r in ([revision.plan_run] if revision.plan_run else []) + revision.runs]
    documents = [(run, _read_result(run)) for run in revision.runs]
    protections = merge_protections([r.protections for r in ran] + revision.protections)
    record: dict[str, Any] = {
        "commit": revision.commit, "trees": revision.trees, "status": "done", "reason": None,
        "network_isolated": protections["network"], "protections": protections,
        "result": None,
        "work": {"children": len(ran), "groups_cached": len(revision.pieces),
                 "groups_built": 0, "cache": revision.cache_state}}
    failed = [r for r in ran if r.status != "done"]
    if failed:
        worst = min(failed, key=lambda r: STATUS_ORDER.index(r.status))
        prefix = "" if worst.label == revision.label else f"{worst.label}: "
        record.update(status=worst.status, reason=prefix + (worst.reason or worst.status))
        return record
    results = [doc for _, doc in documents if doc is not None]
    plan = revision.plan or {name: results[0][name] for name in REVISION_FIELDS
                             if name in results[0]}
    wanted = revision.wanted
    if wanted is None and "enumerated" in plan:
        wanted = groups_of(plan["enumerated"])
    pieces = [revision.pieces[g.id] for g in wanted or [] if g.id in revision.pieces]
    try:
        result = assemble(plan, [*pieces, *results],
                          exact=shard is None and "enumerated" in plan)
        if shard is not None:
            _check_slice(result, wanted or [])
    except Uncovered as exc:
        record.update(status="crashed", reason=str(exc))
        return record
    record["result"] = result
    record["work"]["groups_built"] = len({f"{f['source']}@{f['arch']}"
                                          for doc in results for f in doc["families"]})
    if store is not None and revision.key is not None and result.get("error") is None \
            and "enumerated" in plan:
        _store_built(store, revision, plan, documents)
    return record


def _check_slice(result: Mapping[str, Any], wanted: list[Group]) -> None:
    """A slice holds exactly the families of the groups assigned to it."""
    got = [f["id"] for f in result["families"]]
    want = [fid for g in wanted for fid in g.families]
    if sorted(got) != sorted(want):
        lost = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want)) + sorted({f for f in got if got.count(f) > 1})
        raise Uncovered(f"the slice's children did not build its families exactly once "
                        f"(missing {lost[:3]}, unexpected or doubled {extra[:3]})")


def _abandoned_work(document: Mapping[str, Any]) -> bool:
    """Whether the child left a timed-out family or table behind: its worker thread may
    still have run tree code while later families were built, so nothing that child
    built is kept."""
    return any(f["status"] == "timed-out" for f in document["families"]) or any(
        t["status"] == "timed-out" for t in document["predicate_tables"])


def _read_reads(run: _Run) -> dict[str, Any] | None:
    """The reads file a finished child wrote, checked against its schema (None: absent,
    unreadable or off its schema; then nothing that child built is stored)."""
    if run.reads is None or run.status != "done":
        return None
    try:
        reads = json.loads(run.reads.read_text(encoding="utf-8"))
        validate(reads, READS_SCHEMA)
        return reads
    except Exception:  # no file (the recorder did not start), bad JSON, off the schema
        return None


def _store_built(store: EmitStore, revision: _Revision, plan: Mapping[str, Any],
                 documents: list[tuple[_Run, dict[str, Any] | None]]) -> None:
    """Each complete group a child built, and the plan, with the manifest of what the
    child read for it (a group's with the plan's reads: its variants come from the
    enumeration); what was built without a record of its reads is not stored."""
    assert revision.key is not None and revision.states is not None
    groups = {g.id: g for g in groups_of(plan["enumerated"])}
    for run, document in documents:
        reads = _read_reads(run)
        if document is None or "enumerated" not in document or _abandoned_work(document) \
                or reads is None or "plan" not in reads["windows"]:
            continue
        windows = reads["windows"]
        for gid, piece in pieces_of(document).items():
            if gid in groups and gid in windows and complete(piece, groups[gid]):
                store.add_candidate(store.entry_key(revision.key, f"group:{gid}"), {
                    "manifest": manifest_of(revision.states, [windows["plan"], windows[gid]]),
                    "piece": piece, "protections": run.protections})
    # The plan (what the tree enumerates, skips and cannot read) is settled before any
    # family is built, so it is kept even when no group was.
    origin = revision.plan_run or (documents[0][0] if documents else None)
    if origin is None:
        return  # every group came from the cache, the plan with them
    reads = _read_reads(origin)
    if reads is None or "plan" not in reads["windows"]:
        return
    store.add_candidate(store.entry_key(revision.key, "plan"), {
        "manifest": manifest_of(revision.states, [reads["windows"]["plan"]]),
        "plan": dict(plan), "protections": origin.protections})


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
            # Compact: the C encoder (an indent turns it off) writes 900 variants in a blink.
            handle.write(json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n")
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
    document = _checked(data, path)
    fix = "run impact emit (or report --run-emit) again for these revisions"
    for label in ("base", "head"):
        if document["revisions"][label]["trees"] != dict(expected[label]):
            raise BadEmitFile(f"emit file '{path}' was made for other trees than this "
                              f"{label}", fix)
    for label in ("base", "head"):
        result = document["revisions"][label]["result"]
        if result is not None and "enumerated" not in result and (
                "slice" in document or "merged" in document):
            raise BadEmitFile(f"emit file '{path}' is a slice or a merge whose {label} "
                              "does not list the families enumerated", fix)
        # A result without `enumerated` comes from a child before it: one child built
        # the whole revision, so there is nothing to cover.
        checked = result is not None and "enumerated" in result
        missing, doubled = coverage(result) if checked else ([], [])
        if missing or doubled:
            part = document.get("slice")
            what = f"is slice {part['index']}/{part['count']} and " if part else ""
            raise BadEmitFile(
                f"emit file '{path}' {what}does not cover every {label} variant exactly "
                f"once: {describe(missing, doubled)}",
                "join every slice of impact emit --shard K/N with impact emit merge, or "
                "run impact emit without --shard")
    return document


def _checked(data: bytes, path: str) -> dict[str, Any]:
    """An emit file's bytes as a document of this schema version, its results valid."""
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
    return document


def merge_emit_files(paths: list[str]) -> dict[str, Any]:
    """The emit document joining the slice files at `paths` (`impact emit merge`): each read
    and checked as `report --emit` would, then joined by emit.shard.merge_files; a set
    that is not every slice 1..N of the same trees once each is refused in one line."""
    fix = "give every file of impact emit --shard K/N for K = 1..N, made for the same revisions"
    documents = []
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise BadEmitFile(f"emit file '{path}' cannot be read ({exc.strerror})", fix) from None
        documents.append(_checked(data, path))
    try:
        merged = merge_files(documents, paths)
    except Uncovered as exc:
        raise BadEmitFile(f"cannot merge the slices: {exc}", fix) from None
    validate(merged, EMIT_SCHEMA)
    return merged
