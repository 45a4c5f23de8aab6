"""`impact validate` runs a revision's commands confined (impact/validate/confine.py, the
emitter's jail): each test here runs a small command through `confined_run` and checks,
from inside it, what it can reach. Where this system refuses a namespace the test that
needs it is skipped, naming what the jail reported (the record says it; `isolation_of`
turns it into the report's `environment.isolation`)."""

from __future__ import annotations

import ctypes
import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from impact.validate.confine import (
    LEVEL_FULL,
    LEVEL_NONE,
    LEVEL_NOT_RUN,
    Confined,
    confined_run,
    gpu_devices,
    isolation_of,
    minimal_environment,
)


def _run(tmp_path: Path, code: str, *, timeout: float = 60, **options) -> tuple[Confined, str]:
    """`python -c code` confined, only `tmp_path/side` writable; (result, its output)."""
    side = tmp_path / "side"
    side.mkdir(exist_ok=True)
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    log = logs / f"run-{time.monotonic_ns()}.log"
    env = options.pop("env", None) or minimal_environment({"PATH": "/usr/bin:/bin"},
                                                          home=side / "home")
    done = confined_run([sys.executable, "-c", code], cwd=side, env=env, writable=[side],
                        log=log, timeout=timeout, **options)
    return done, log.read_text()


def _require(done: Confined, *names: str) -> None:
    missing = [n for n in names if not done.isolation.get(n)]
    if missing:
        pytest.skip(f"this system refused the {', '.join(missing)} namespace(s) "
                    f"({done.isolation.get('detail')}); the record says so")


def test_a_confined_command_writes_only_its_scratch_folder(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # the analyser's own home
    outside = tmp_path / "outside"
    outside.mkdir()
    code = f"""
import json, os
seen = {{}}
for name, path in [("scratch", "ok.txt"), ("outside", {str(outside / 'x')!r}),
                   ("home", {str(home / 'planted')!r}), ("etc", "/etc/impact-planted")]:
    try:
        open(path, "w").write("x")
        seen[name] = "ok"
    except OSError as exc:
        seen[name] = type(exc).__name__
print(json.dumps(seen))
"""
    done, out = _run(tmp_path, code)
    _require(done, "mount")
    seen = json.loads(out.strip().splitlines()[-1])
    assert done.exit == 0 and seen["scratch"] == "ok", (done, out)
    assert {seen["outside"], seen["home"], seen["etc"]} & {"ok"} == set(), seen
    assert not (outside / "x").exists() and not (home / "planted").exists()
    assert (tmp_path / "side" / "ok.txt").exists()


def test_the_users_home_and_impacts_caches_are_hidden(tmp_path: Path, monkeypatch) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET-KEY")
    (xdg / "impact" / "facts").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    code = f"""
import os
for path in [{str(home / '.ssh' / 'id_rsa')!r}, {str(xdg / 'impact' / 'facts')!r}]:
    print(path, os.path.exists(path))
"""
    done, out = _run(tmp_path, code)
    _require(done, "mount")
    assert done.exit == 0 and out.count(" False") == 2 and "SECRET" not in out, out


def test_the_environment_is_minimal_and_its_home_is_the_sides(tmp_path: Path) -> None:
    user = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "HOME": "/root",
            "XDG_CACHE_HOME": "/root/.cache", "GITHUB_TOKEN": "ghp_secret",
            "HTTPS_PROXY": "http://proxy", "PYTHONPATH": "/elsewhere", "AWS_SECRET": "x"}
    env = minimal_environment(user, home=tmp_path / "home", extra={"HIP_VISIBLE_DEVICES": "3"})
    assert env["HOME"] == str(tmp_path / "home") and env["HIP_VISIBLE_DEVICES"] == "3"
    assert env["XDG_CACHE_HOME"].startswith(str(tmp_path / "home"))
    assert {"GITHUB_TOKEN", "HTTPS_PROXY", "PYTHONPATH", "AWS_SECRET"}.isdisjoint(env)
    assert env["LANG"] == "C.UTF-8" and env["LC_ALL"] == "C"
    _, out = _run(tmp_path, "import json, os; print(json.dumps(dict(os.environ)))", env=env)
    seen = json.loads(out.strip().splitlines()[-1])
    assert "GITHUB_TOKEN" not in seen and seen["HOME"] == env["HOME"]


def test_ipc_uts_dev_and_tty_from_inside(tmp_path: Path) -> None:
    """Host SysV shared memory is not visible, the hostname is the jail's, /dev holds
    only the basic nodes (no kvm, console, tty), stdin is not a terminal, and the session
    keyring is not the analyser's."""
    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(0, 4096, 0o600 | 0o1000)  # IPC_PRIVATE, IPC_CREAT
    assert shmid >= 0
    try:
        code = f"""
import json, os, socket, ctypes
libc = ctypes.CDLL(None, use_errno=True)
shm = open("/proc/sysvipc/shm").read().split()
keyring = libc.syscall(250, 0, -3, 0) if os.uname().machine == "x86_64" else None
print(json.dumps({{"shm": "{shmid}" in shm, "host": socket.gethostname(),
                   "dev": sorted(os.listdir("/dev")), "tty": [os.isatty(i) for i in range(3)],
                   "keyring": keyring}}))
"""
        done, out = _run(tmp_path, code)
    finally:
        libc.shmctl(shmid, 0, None)  # IPC_RMID
    _require(done, "ipc", "uts", "mount")
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["shm"] is False
    assert seen["host"] != socket.gethostname()
    assert not {"kvm", "console", "tty", "pts", "mem", "kmsg"} & set(seen["dev"]), seen["dev"]
    assert {"null", "zero", "urandom", "shm"} <= set(seen["dev"])
    assert seen["tty"] == [False, False, False]
    if seen["keyring"] is not None and done.isolation.get("keyring"):
        assert seen["keyring"] != libc.syscall(250, 0, -3, 0)


def test_device_nodes_named_by_the_caller_pass_through(tmp_path: Path) -> None:
    """The GPU's nodes come through (/dev/kvm stands in for one here where it exists)."""
    code = "import os; print(sorted(os.listdir('/dev')))"
    wanted = [p for p in ("/dev/kvm", *gpu_devices()) if os.path.exists(p)]
    if not wanted:
        pytest.skip("no device node on this machine to pass through")
    done, out = _run(tmp_path, code, devices=wanted)
    _require(done, "mount")
    listed = out.strip().splitlines()[-1]
    for path in wanted:
        assert repr(path.split("/")[2]) in listed, (path, listed)


def test_no_network_unless_asked(tmp_path: Path) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("connected")
except OSError as exc:
    print("refused", exc)
"""
    try:
        done, out = _run(tmp_path, code)
        _require(done, "network")
        assert "refused" in out
        allowed, out = _run(tmp_path, code, network=True)  # a package install's download
        assert "connected" in out and not allowed.isolation["network"]
    finally:
        server.close()


def test_a_signal_reads_as_the_signal_and_a_timeout_ends_the_tree(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, "import os; os.abort()")
    assert done.exit == -6 and not done.timed_out
    done, _ = _run(tmp_path, "raise SystemExit(3)")
    assert done.exit == 3
    marker = f"impact-confine-{os.getpid()}"
    code = ("import subprocess, sys, time\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}],"
            " start_new_session=True)\ntime.sleep(600)\n")
    done, _ = _run(tmp_path, code, timeout=2)
    assert done.timed_out and done.exit is None
    time.sleep(0.5)
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit()
            and marker.encode() in _cmdline(p)]
    assert left == []


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


def test_without_namespaces_the_level_says_so(tmp_path: Path) -> None:
    done, _ = _run(tmp_path, "print('ran')", isolate=False)
    assert done.exit == 0 and done.isolation["mount"] is False
    level = isolation_of([done.isolation])
    assert level["level"] == LEVEL_NONE and "turned off" in level["reason"]
    assert isolation_of([])["level"] == LEVEL_NOT_RUN
    full = {n: True for n in ("user", "mount", "pid", "network", "ipc", "uts")}
    assert isolation_of([full])["level"] == LEVEL_FULL
    assert isolation_of([full, {**full, "pid": False, "detail": "x"}])["level"] != LEVEL_FULL


def test_the_levels_are_the_schemas() -> None:
    from impact.contracts import load_schema
    from impact.validate.confine import LEVEL_PARTIAL

    schema = load_schema("validation_report.schema.json")
    levels = schema["properties"]["environment"]["properties"]["isolation"]["properties"][
        "level"]["enum"]
    # and the level reports written before validate confined anything carry
    assert sorted(levels) == sorted([LEVEL_FULL, LEVEL_PARTIAL, LEVEL_NONE, LEVEL_NOT_RUN,
                                     "scratch-folders"])
