"""The emitter child's resource limits (issue 25, robustness): besides its address space,
CPU time and open files, the jail bounds the processes its user may run (RLIMIT_NPROC: a
fork bomb stops) and the size of any file it writes (RLIMIT_FSIZE: a child cannot fill the
disk, and its documents stay small enough for the parent to read).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from emit.children import Limits
from emit.jail import SANDBOX
from emit.sandbox import within_hard


def _jailed(code: str, limits: dict[str, int], cwd: Path, python: str = sys.executable,
            **user: object) -> subprocess.CompletedProcess:
    """`python -c code` through the jail (emit/sandbox.py run), namespaces off."""
    status_r, status_w = os.pipe()
    config = {"parent": os.getpid(), "status_fd": status_w, "namespaces": False,
              "limits": limits, "hide": [], "cwd": str(cwd), "read_only": [], "keep": []}
    try:
        return subprocess.run(
            [python, "-I", "-S", "-B", str(SANDBOX), "run", json.dumps(config), "--",
             python, "-I", "-S", "-c", code],
            cwd=cwd, capture_output=True, text=True, timeout=60, pass_fds=(status_w,),
            **user)
    finally:
        os.close(status_w)
        os.close(status_r)


def test_the_child_limits_name_processes_and_file_size() -> None:
    limits = Limits().rlimits()
    assert limits["nproc"] == Limits().processes and limits["fsize"] == Limits().file_size
    for name in limits:
        assert hasattr(resource, "RLIMIT_" + name.upper()), name


def test_the_jail_sets_nproc_and_fsize(tmp_path: Path) -> None:
    limits = {**Limits().rlimits(), "nproc": 300, "fsize": 5 << 20}
    done = _jailed("import resource as r; print(r.getrlimit(r.RLIMIT_NPROC)[0], "
                   "r.getrlimit(r.RLIMIT_FSIZE)[0])", limits, tmp_path)
    assert done.returncode == 0, done.stderr
    want = [within_hard(limits[n], resource.getrlimit(getattr(resource, f"RLIMIT_{n.upper()}"))[1])
            for n in ("nproc", "fsize")]
    assert [int(v) for v in done.stdout.split()] == want


def test_a_child_writing_past_its_file_size_limit_is_ended(tmp_path: Path) -> None:
    limits = {**Limits().rlimits(), "fsize": 1 << 20}
    done = _jailed("open('big', 'wb').write(b'x' * (4 << 20))", limits, tmp_path)
    # killed by SIGXFSZ, or (Python ignores that signal) the write fails: "File too large"
    assert done.returncode == 128 + signal.SIGXFSZ or "File too large" in done.stderr, (
        done.returncode, done.stderr)
    assert done.returncode != 0 and (tmp_path / "big").stat().st_size <= 1 << 20


FORKS = """
import os, time
made = refused = 0
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        continue
    if pid == 0:
        time.sleep(3)
        os._exit(0)
    made += 1
print(made, refused)
"""


def test_a_fork_bomb_stops_at_the_process_limit() -> None:
    """RLIMIT_NPROC binds no process of the real root user (the kernel exempts it, in a
    user namespace too), so as root the jail is run as `nobody` here."""
    user: dict[str, object] = {}
    python = sys.executable
    if os.geteuid() == 0:
        user = {"user": 65534, "group": 65534, "extra_groups": []}
        python = "/usr/bin/python3"  # the user nobody may run it; a virtualenv's, maybe not
        if not os.access(python, os.X_OK) or not (os.stat(SANDBOX).st_mode & 0o004):
            pytest.skip("depends on a python and a sandbox.py the user nobody may read "
                        "(root is exempt from RLIMIT_NPROC)")
    limits = {**Limits().rlimits(), "nproc": 20}
    done = _jailed(FORKS, limits, Path("/"), python, **user)
    assert done.returncode == 0, done.stderr
    made, refused = map(int, done.stdout.split())
    assert made < 20 and refused > 40, (made, refused)
