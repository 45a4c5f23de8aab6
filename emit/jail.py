"""What the child's jail is set up with: the allow-listed environment, the folders laid over
with an empty tmpfs, the folders brought back read-only, and the child's import path.

Maintainers: computes lists and starts at most one interpreter (to ask it its import
path); it confines nothing itself (emit/sandbox.py does, in the child's process). The
environment allow-list is impact's own and never comes from a surface map: a map must not
be able to hand a child a credential.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from impact.git import Views

EMIT = Path(__file__).parent                # the child's and the jail's sources
CHILD = EMIT / "child" / "__main__.py"      # run by path (emit/child/__main__.py says how)
SANDBOX = EMIT / "sandbox.py"
ALLOWED_ENV = ("PATH", "LANG")
ALLOWED_ENV_PREFIXES = ("LC_", "ROCKE_", "HKP_")
# Folders laid over with an empty read-only tmpfs inside the sandbox (besides the user's
# home, the temporary folders and the analysed repository): where credentials and UNIX
# sockets live.
HIDDEN = ("/root", "/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")


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
          str(EMIT), *child_import_path()}
    ro = {os.path.realpath(p) for p in ro if p and os.path.isabs(p) and os.path.isdir(p)}
    return [(str(workdir), True), *((p, False) for p in sorted(ro - {"/"}))]
