"""Run one command of the revision under validation (a test target, a bench command, a
package install) in the emitter's jail (emit/sandbox.py), with the GPU's device nodes
passed through, and say truthfully how confined it was.

Maintainers: this is the only way `impact validate` starts code of a revision. What it
confines is emit/sandbox.py's: user, mount, PID, network, IPC and UTS namespaces as the
kernel grants them, the whole file system read-only except `writable`, the user's home,
/tmp, /run, /root and impact's own cache folder laid over by empty read-only tmpfs, a
minimal /dev (plus `devices`), a session keyring of its own, resource limits, its own
session and die-with-parent. The jail reports what it obtained, and the command's wait
status, on a pipe only the jail holds; where the kernel refuses namespaces the command
still runs, and `isolation_of` says so (never silently). Nothing here reads what the
command wrote except through the descriptors its caller opened.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emit.jail import HIDDEN, SANDBOX
from impact.factstore import default_cache_dir

END_GRACE = 10.0  # seconds the jail has to end its tree before SIGKILL to the group
GPU_DEVICE_GLOBS = ("/dev/nvidia*", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd")
"""The device nodes a GPU test needs: NVIDIA's, the DRM render nodes, AMD's KFD."""
ENV_NAMES = ("PATH", "LANG", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "ROCM_PATH",
             "ROCM_HOME", "HIP_PATH", "HIP_PLATFORM", "HSA_PATH", "TORCH_CUDA_ARCH_LIST",
             "PYTORCH_ROCM_ARCH", "MAX_JOBS", "CC", "CXX")
"""What a command inherits of the user's environment, besides `LC_*`: the locale, where
programs and the GPU toolkits are, the build's arch list, job count and compilers. Never a
token, a proxy, HOME or an XDG folder (`--env NAME=VALUE` passes anything else)."""
ENV_PREFIXES = ("LC_",)
REQUIRED = ("mount", "pid", "network", "ipc", "uts")
"""What `isolation_of` calls a full sandbox (network only where it was not let through)."""
LEVEL_FULL, LEVEL_PARTIAL, LEVEL_NONE, LEVEL_NOT_RUN = (
    "namespaces", "partial-namespaces", "unconfined", "not-run")


@dataclass(frozen=True)
class Jail:
    """Where one command may write and what it may reach, besides what every command
    gets (read access to the system, the interpreter and PATH)."""

    writable: tuple[Path, ...]
    devices: tuple[str, ...] = ()
    read_only: tuple[Path, ...] = ()  # brought back where a hidden folder covers them
    hide: tuple[Path, ...] = ()       # laid over by an empty tmpfs, besides the defaults
    network: bool = False             # a package install's download; never a test's
    isolate: bool = True              # False: namespaces off (the record says so)


@dataclass(frozen=True)
class Confined:
    """How one confined command ended."""

    exit: int | None  # its exit code; -N when signal N ended it; None: timed out / no start
    timed_out: bool
    seconds: float
    isolation: dict[str, Any] = field(default_factory=dict)  # the jail's record
    error: str = ""


def gpu_devices() -> list[str]:
    """The GPU device nodes present on this machine (none on a CPU-only one)."""
    found = {path for pattern in GPU_DEVICE_GLOBS for path in glob.glob(pattern)}
    return sorted(p for p in found if os.path.exists(p))


def minimal_environment(environ: Mapping[str, str], *, home: Path,
                        extra: Mapping[str, str] = ()) -> dict[str, str]:
    """The environment a command of the revision gets: ENV_NAMES and `LC_*` of
    `environ`, a HOME, TMPDIR and XDG folders of its own under `home` (never the user's:
    impact's caches live under the user's XDG_CACHE_HOME or ~/.cache), then `extra`
    (the claim's device variables, the side's caches)."""
    env = {k: v for k, v in environ.items() if k in ENV_NAMES or k.startswith(ENV_PREFIXES)}
    env.setdefault("PATH", os.defpath)
    folders = {"HOME": home, "TMPDIR": home / "tmp", "XDG_CACHE_HOME": home / ".cache",
               "XDG_CONFIG_HOME": home / ".config", "XDG_DATA_HOME": home / ".local/share",
               "XDG_STATE_HOME": home / ".local/state", "XDG_RUNTIME_DIR": home / "run"}
    for name, path in folders.items():
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    # No user site folder: a usercustomize.py or .pth an install or a test left in the
    # home would run in every later Python process of the side.
    env["PYTHONNOUSERSITE"] = "1"
    env.update(extra)
    return env


@functools.cache
def interpreter_paths(python: str) -> tuple[str, ...]:
    """The folders `python` runs from (its prefixes and import path), asked of it: they
    come back read-only where a hidden folder (a venv in the home) covers them."""
    probe = ("import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, "
             "sys.exec_prefix, sys.base_exec_prefix, *sys.path]))")
    exe = shutil.which(python) or python
    found = {os.path.dirname(exe), os.path.dirname(os.path.realpath(exe))}
    with contextlib.suppress(OSError, ValueError, subprocess.SubprocessError):
        done = subprocess.run([exe, "-I", "-c", probe], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=60, check=True)
        found.update(p for p in json.loads(done.stdout) if isinstance(p, str))
    return tuple(sorted(os.path.realpath(p) for p in found
                        if p and os.path.isabs(p) and os.path.isdir(p)))


def default_hidden(environ: Mapping[str, str] | None = None) -> list[str]:
    """What every confined command finds empty: the user's home (as the environment
    and the password database name it), the temporary folders, HIDDEN (/root, /run,
    /dev/shm ...) and impact's own cache folder (facts, emit and report stores)."""
    source = os.environ if environ is None else environ
    candidates = [source.get("HOME"), tempfile.gettempdir(), *HIDDEN,
                  source.get("XDG_CACHE_HOME"), str(default_cache_dir())]
    with contextlib.suppress(KeyError):
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    return sorted({os.path.realpath(p) for p in candidates
                   if p and os.path.isabs(p) and os.path.isdir(p)} - {"/"})


def _limits(timeout: float) -> dict[str, int]:
    """Bounds that leave a GPU test its address space (CUDA and ROCm reserve terabytes
    of virtual memory) but stop a fork bomb, a runaway file and core dumps."""
    return {"cpu": int(timeout) + 60, "nofile": 1 << 16, "nproc": 1 << 14,
            "fsize": 64 << 30, "core": 0}


def _program(argv: list[str] | str, env: Mapping[str, str]) -> list[str] | None:
    if isinstance(argv, str):  # a shell command (a bench line): /bin/sh -c, as a shell runs it
        return ["/bin/sh", "-c", argv]
    first = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0], path=env.get("PATH"))
    return [first, *argv[1:]] if first else None


def confined_run(argv: list[str] | str, *, cwd: Path, env: dict[str, str],
                 writable: Sequence[Path], log: Path, timeout: float,
                 devices: Sequence[str] = (), read_only: Iterable[Path] = (),
                 hide: Iterable[Path] = (), network: bool = False, isolate: bool = True,
                 pass_fds: Sequence[int] = ()) -> Confined:
    """Run `argv` (a shell command when a string) in `cwd` under exactly `env`, its
    stdout and stderr appended to `log` (opened here, by the parent), confined: it may
    write only `writable` (each an existing folder), reaches `devices` (/dev paths,
    e.g. `gpu_devices()`) besides /dev/null and the like, no network unless `network`,
    and ends with every process it started after `timeout` seconds. `pass_fds` reach it
    open (a results channel the caller reads). The result says how it ended and what
    the jail obtained (`isolation_of` turns records into a level)."""
    program = _program(argv, env)
    start = time.monotonic()
    if program is None:
        return Confined(None, False, 0.0, {}, f"{argv[0]}: not found on PATH")
    keep = [(os.path.realpath(p), True) for p in writable]
    ro = {*map(str, read_only), *interpreter_paths(sys.executable), str(SANDBOX.parent)}
    if os.path.isabs(program[0]) and Path(program[0]).name.startswith("python"):
        ro.update(interpreter_paths(program[0]))
    for name in ("python", "python3"):  # what a shell command's `python` runs
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            ro.update(interpreter_paths(found))
    ro.update(p for p in env.get("PATH", "").split(os.pathsep) if os.path.isabs(p))
    keep += [(os.path.realpath(p), False) for p in sorted(ro) if os.path.isdir(p)]
    status_r, status_w = os.pipe()
    config = {"parent": os.getpid(), "status_fd": status_w, "namespaces": isolate,
              "network": network, "limits": _limits(timeout), "cwd": str(cwd),
              "hide": sorted({*default_hidden(), *(os.path.realpath(p) for p in hide)}),
              "read_only": [], "keep": keep, "dev": list(devices), "shm": True}
    try:
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(SANDBOX), "run", json.dumps(config),
                 "--", *program],
                cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
                pass_fds=(status_w, *pass_fds))
    except OSError as exc:
        os.close(status_r)
        return Confined(None, False, 0.0, {}, f"the sandbox could not start: {exc}")
    finally:
        os.close(status_w)
    timed_out = False
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out, code = True, None
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)  # the jail ends its PID namespace
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(END_GRACE)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # what is left in its session goes too
        proc.wait()
    seconds = time.monotonic() - start
    record, waited = _read_status(status_r)
    if timed_out:
        return Confined(None, True, seconds, record, f"timed out after {timeout:g}s")
    if waited is None:
        return Confined(None, False, seconds, record,
                        f"the sandbox did not run the command (exit {code})")
    return Confined(waited, False, seconds, record)


def _read_status(fd: int) -> tuple[dict[str, Any], int | None]:
    """The jail's record and the command's wait status (-N for signal N), from the pipe
    only the jail held; ({}, None) for what it did not say."""
    data = b""
    os.set_blocking(fd, False)
    with contextlib.suppress(BlockingIOError, OSError):
        while (chunk := os.read(fd, 4096)) and len(data) < 65536:
            data += chunk
    os.close(fd)
    lines = data.decode(errors="replace").splitlines()
    record: dict[str, Any] = {}
    waited = None
    with contextlib.suppress(ValueError, IndexError, AttributeError):
        record = dict(json.loads(lines[0]))
        last = json.loads(lines[1])
        waited = -int(last["signal"]) if "signal" in last else int(last["code"])
    return record, waited


def isolation_of(records: Iterable[Mapping[str, Any]], *,
                 network_allowed: bool = False) -> dict[str, str]:
    """`environment.isolation` of a validation report from the jail records of every
    command it ran: the weakest of them, and what each missing protection means."""
    records = [r for r in records if r]
    if not records:
        return {"level": LEVEL_NOT_RUN, "reason": "no command of the revision ran"}
    wanted = [n for n in REQUIRED if not (network_allowed and n == "network")]
    missing = sorted({n for r in records for n in wanted if not r.get(n)})
    details = sorted({r["detail"] for r in records if r.get("detail")})
    said = "; ".join(details)
    if not any(r.get("mount") for r in records) or "mount" in missing:
        return {"level": LEVEL_NONE, "reason": "tests ran with the file system as impact "
                "sees it (writable wherever the user can write) and only a minimal "
                f"environment, limits and their own session: {said or 'no mount namespace'}"}
    if missing:
        return {"level": LEVEL_PARTIAL, "reason": "tests ran read-only except their own "
                f"scratch folder, without {', '.join(missing)} namespace(s): {said}"}
    return {"level": LEVEL_FULL, "reason": "each command ran in its own user, mount, PID, "
            "network, IPC and UTS namespaces: read-only except its side's scratch folder, "
            "the user's home, /tmp and impact's caches hidden, a minimal /dev with the "
            "GPU's nodes, a minimal environment" + (f" ({said})" if said else "")}
