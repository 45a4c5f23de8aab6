"""What the test process really ran: the package's path and version, the interpreter,
the source tree, and a sha256 of every native library it loaded.

Maintainers: the record is written from inside the test process by a `sitecustomize`
hook this module places on PYTHONPATH (an atexit hook that reads /proc/self/maps), so it
names what that process loaded, not what we expected it to load. Each process writes
its own file; `read_identity` merges them. The import check also lives here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from impact.safefile import read_regular
from impact.validate.confine import Jail, confined_run

# The most one runtime-identity record may hold (the test process writes it).
RECORD_LIMIT_BYTES = 16 << 20
IDENTITY_DIR_ENV = "IMPACT_IDENTITY_DIR"
IDENTITY_PACKAGE_ENV = "IMPACT_IDENTITY_PACKAGE"
HASH_CACHE_ENV = "IMPACT_IDENTITY_HASH_CACHE"

_HOOK = '''\
"""Written by impact validate: records what this process loaded, at exit."""
import atexit, os


def _impact_identity():
    import hashlib, json, sys
    out = os.environ.get("IMPACT_IDENTITY_DIR")
    if not out:
        return
    libs = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and ".so" in parts[5]:
                    path = parts[5].strip()
                    if path.endswith(".so") or ".so." in path:
                        libs.add(path)
    except OSError:
        libs = None
    cache_path = os.environ.get("IMPACT_IDENTITY_HASH_CACHE")
    cache = {}
    if cache_path:
        try:
            with open(cache_path) as fh:
                cache = json.load(fh)
        except (OSError, ValueError):
            cache = {}
    artifacts = []
    for path in sorted(libs or ()):
        try:
            st = os.stat(path)
        except OSError:
            artifacts.append({"path": path, "sha256": None})
            continue
        key = f"{path}|{st.st_size}|{st.st_mtime_ns}"
        digest = cache.get(key)
        if digest is None:
            h = hashlib.sha256()
            try:
                with open(path, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        h.update(block)
                digest = cache[key] = h.hexdigest()
            except OSError:
                digest = None
        artifacts.append({"path": path, "sha256": digest})
    if cache_path:
        try:
            tmp = f"{cache_path}.{os.getpid()}"
            with open(tmp, "w") as fh:
                json.dump(cache, fh)
            os.replace(tmp, cache_path)
        except OSError:
            pass
    package = os.environ.get("IMPACT_IDENTITY_PACKAGE") or ""
    module = sys.modules.get(package) if package else None
    versions = {}
    for name in ("torch", "triton", package):
        loaded = sys.modules.get(name) if name else None
        if loaded is not None:
            versions[name] = str(getattr(loaded, "__version__", "")) or None
    torch = sys.modules.get("torch")
    if torch is not None:
        version = getattr(torch, "version", None)
        versions["torch.cuda"] = getattr(version, "cuda", None)
        versions["torch.hip"] = getattr(version, "hip", None)
    record = {
        "pid": os.getpid(),
        "loaded_versions": versions,
        "argv": list(sys.argv),
        "python_executable": sys.executable,
        "python_version": sys.version.split()[0],
        "module": package or None,
        "module_path": getattr(module, "__file__", None),
        "module_version": str(getattr(module, "__version__", "")) or None,
        "maps_readable": libs is not None,
        "native_artifacts": artifacts,
    }
    try:
        with open(os.path.join(out, f"{os.getpid()}.json"), "w") as fh:
            json.dump(record, fh)
    except OSError:
        pass


atexit.register(_impact_identity)
'''


def install_hook(folder: Path) -> Path:
    """Write the sitecustomize hook into `folder` (a folder of its own, put on
    PYTHONPATH after the tree under test) and return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_HOOK)
    return folder


def read_identity(folder: Path, source_tree: str) -> dict[str, Any] | None:
    """The runtime identity of the runs whose records are in `folder`: the record that
    imported the package (else the first), with the libraries of every record merged.
    None when no process wrote one (the test process never ran Python to its exit)."""
    records = []
    for path in sorted(folder.glob("*.json")):
        try:
            # the test process wrote it: only a bounded regular file, never a FIFO or link
            records.append(json.loads(read_regular(path, limit=RECORD_LIMIT_BYTES)))
        except (OSError, ValueError):
            continue
    if not records:
        return None
    main = next((r for r in records if r.get("module_path")), records[0])
    libs: dict[str, str | None] = {}
    for record in records:
        for item in record.get("native_artifacts", []):
            libs[item["path"]] = item["sha256"]
    return {
        "module": main.get("module"),
        "module_path": main.get("module_path"),
        "module_version": main.get("module_version"),
        "python_executable": main.get("python_executable"),
        "python_version": main.get("python_version"),
        "source_sha": source_tree,
        "processes": len(records),
        "loaded_versions": main.get("loaded_versions", {}),
        "native_artifacts": [{"path": p, "sha256": d} for p, d in sorted(libs.items())],
    }


def import_origin(python: str, package: str, env: dict[str, str],
                  timeout: float = 120.0, jail: Jail | None = None,
                  log: Path | None = None) -> tuple[str | None, str]:
    """Where `package` resolves under `env`, found by a child run from '/' (so the cwd is
    not on sys.path) without importing it (no JIT build runs): (origin, error). With a
    `jail` (and a `log` of the parent's for its output) the child runs confined, as
    every command that starts with a revision's files on its path does."""
    code = ("import importlib.util as u, sys\n"
            f"s = u.find_spec({package!r})\n"
            "print(s.origin if s and s.origin else (list(s.submodule_search_locations)[0] "
            "if s and s.submodule_search_locations else ''))")
    if jail is not None and log is not None:
        return _confined_origin([python, "-c", code], env, timeout, jail, log)
    try:
        done = subprocess.run([python, "-c", code], cwd="/", env=env, capture_output=True,
                              text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    origin = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not origin:
        return None, (done.stderr.strip().splitlines() or ["not found"])[-1]
    return origin, ""


def _confined_origin(argv: list[str], env: dict[str, str], timeout: float, jail: Jail,
                     log: Path) -> tuple[str | None, str]:
    log.unlink(missing_ok=True)
    done = confined_run(argv, cwd=Path("/"), env=env, writable=jail.writable, log=log,
                        timeout=timeout, devices=(), read_only=jail.read_only, hide=jail.hide,
                        isolate=jail.isolate)
    try:
        lines = read_regular(log, limit=1 << 20).decode(errors="replace").strip().splitlines()
    except OSError as exc:
        return None, f"its output cannot be read ({exc})"
    if done.error or done.exit != 0 or not lines:
        return None, done.error or (lines or ["not found"])[-1]
    return lines[-1], ""


def arch_coverage(arch: str | None, head_executed: int, real_device: bool
                  ) -> tuple[dict[str, str], str]:
    """`runtime` for the claimed GPU's arch only when a head test executed with it
    visible on a real device; a recording or a run that executed nothing earns nothing."""
    if arch is None:
        return {}, "no GPU claimed"
    if not real_device:
        return {arch: "not-covered"}, "recorded-samples: a recording is not a device"
    if head_executed < 1:
        return {arch: "not-covered"}, "no head test executed"
    return {arch: "runtime"}, f"head-executed:{head_executed}"
