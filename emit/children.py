"""The emitter's children: each started through the jail, its stderr kept through a bounded
buffer, bounded in wall time, and ended with every process it started.

Maintainers: starts only `python -I` on emit/sandbox.py (which runs the child by path,
emit/child/__main__.py); never imports analysed code. A timeout, SIGINT, SIGTERM or SIGHUP
end every child tree and remove the run's temporary folder; a watchdog process removes it
when this process dies without a chance to. What the jail obtained is read back from a
pipe the child cannot reach and recorded per child (`protections`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from emit.child.vocabulary import RunStatus
from emit.jail import CHILD, SANDBOX, child_environment, kept_paths
from emit.sandbox import remove

RULES_FILE = "rules.json"  # beside the child's tree, in its own temporary folder
ONLY_FILE = "only.json"    # the families one child builds, in its scratch folder
KEEP_BYTES = 64 * 1024          # of the child's stderr: the first and the last
READ_PER_TICK = 16 << 20        # the most of a child's stderr read before the next check
END_GRACE = 10.0                # seconds the jail has to end its tree before SIGKILL


@dataclass(frozen=True)
class Limits:
    """What one child may use."""

    timeout: float = 900.0          # wall clock, for the whole process group
    family_budget: float = 20.0     # CPU seconds per family build and per probe table
    address_space: int = 8 << 30    # bytes
    open_files: int = 1024
    # Processes and threads of the child's user (RLIMIT_NPROC: a fork bomb stops here;
    # counted per user, so inside the jail's user namespace it counts the child's own)
    processes: int = 4096
    file_size: int = 1 << 30        # bytes, the largest file the child may write (SIGXFSZ)

    def rlimits(self) -> dict[str, int]:
        """The resource limits the jail sets (emit/sandbox.py `apply_limits`), by the
        name after `RLIMIT_`; the cache key holds them (emit/reuse.py)."""
        return {"as": self.address_space, "cpu": int(self.timeout) + 60,
                "nofile": self.open_files, "nproc": self.processes,
                "fsize": self.file_size, "core": 0}


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


OPTIONAL_PROTECTIONS = ("ipc", "uts", "keyring")
"""Protections recorded since the jail obtained them (absent from older emit files)."""


def unprotected(why: str) -> dict[str, Any]:
    """The protections record of a child that ran with none (or never ran)."""
    return {"user": False, "network": False, "pid": False, "mount": False, "detail": why,
            **dict.fromkeys(OPTIONAL_PROTECTIONS, False)}


@dataclass
class Run:
    """One child: what it builds and where, and how it ended."""

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
    status: RunStatus = RunStatus.NOT_STARTED
    reason: str | None = None
    stderr: BoundedOutput = field(default_factory=lambda: BoundedOutput(KEEP_BYTES))
    protections: dict[str, Any] = field(default_factory=lambda: unprotected("never started"))


def _start(run: Run, roots_py: tuple[str, ...], roots_desc: tuple[str, ...], limits: Limits,
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
        "limits": limits.rlimits(),
        "hide": hide, "cwd": str(run.workdir), "read_only": read_only,
        "dev": [],  # a minimal /dev: no tty, console, kvm or disks
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


def _drain(run: Run) -> None:
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


def _end(run: Run) -> None:
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


def _protections(run: Run) -> dict[str, Any]:
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
        found = {key: record[key] for key in ("user", "network", "pid", "mount", "detail")}
        return found | {key: bool(record.get(key)) for key in OPTIONAL_PROTECTIONS}
    except (ValueError, IndexError, KeyError, UnicodeDecodeError):
        return unprotected("the sandbox reported nothing: it did not start")


def _progress(run: Run) -> str:
    if run.stderr.progress:
        return f"{run.label} {run.stderr.progress} families"
    return f"{run.label} {run.status}"


def _crash_reason(run: Run, code: int) -> str:
    tail = " | ".join(line[:500] for line in run.stderr.lines()[-3:])
    return f"child exited {code}: {tail}".strip()


def run_children(runs: list[Run], *, jobs: int, limits: Limits, isolate: bool,
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
                    run.status = RunStatus.RUNNING
                    active.append(run)
                except (OSError, subprocess.SubprocessError) as exc:
                    run.status, run.reason = RunStatus.CRASHED, f"child could not start: {exc}"
            time.sleep(0.05)
            for run in list(active):
                assert run.process is not None
                _drain(run)
                code = run.process.poll()
                if code is None and time.monotonic() - run.started > limits.timeout:
                    _end(run)
                    run.status = RunStatus.TIMED_OUT
                    run.reason = (f"child ran past {limits.timeout:g} s and was ended "
                                  "with every process it started")
                elif code is not None:
                    _end(run)  # what it left behind goes too
                    if code == 0 and run.out.exists():
                        run.status = RunStatus.DONE
                    else:
                        run.status, run.reason = RunStatus.CRASHED, _crash_reason(run, code)
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
def signals_end_the_run() -> Iterator[None]:
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
def temp_root() -> Iterator[Path]:
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

