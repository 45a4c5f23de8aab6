"""Each side made importable the way its project is: the map's Python roots, else the
project's own packaging built into a folder of that side's own.

Maintainers: a side is one revision's tree in its scratch folder (materialise.Side). How it
is put on the import path is decided here once, from the tree itself, and recorded so the
report says which way was taken and why. A build runs the side's own build script
(`pip install --no-deps --no-build-isolation --no-index --target`), so it sees the
machine's torch and triton and nothing is fetched; its log is kept beside the side. A
side that does not build is a result, never a crash: the caller makes it a blocker at head
and an inconclusive base.
"""

from __future__ import annotations

import enum
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from impact.validate import logtail
from impact.validate.confine import Jail, confined_run


class How(enum.StrEnum):
    """Which way a side was put on the import path."""

    ROOTS = "python-roots"  # the map's (or --python-root's) folders, as they are in the tree
    BUILD = "build"  # the project's packaging, built and installed into the side's site folder
    TREE = "tree-root"  # neither: the tree's root, as a checkout on PYTHONPATH would be


class Choice(enum.StrEnum):
    """What the user asked for (`impact validate --install`)."""

    AUTO = "auto"
    BUILD = "build"
    ROOTS = "roots"


@dataclass(frozen=True)
class Plan:
    """How one side will be made importable, and why."""

    how: How
    reason: str
    roots: tuple[str, ...] = ()  # relative to the tree, for ROOTS


@dataclass
class Installed:
    """One side made importable: the import path it gets, and how that went."""

    how: How
    reason: str
    paths: list[Path] = field(default_factory=list)  # PYTHONPATH entries, first wins
    ok: bool = True
    error: str = ""
    command: list[str] = field(default_factory=list)
    log: str | None = None
    log_tail: list[str] = field(default_factory=list)
    seconds: float = 0.0
    skipped: str = ""  # why the plan was not carried out (nothing would run)
    isolation: dict[str, Any] = field(default_factory=dict)  # the jail's record of a build
    unshipped: list[str] = field(default_factory=list)  # the package's modules the build left out
    package_modules: int = 0  # how many modules the tree's package folder holds

    def to_json(self) -> dict[str, Any]:
        return {"how": str(self.how), "reason": self.reason, "ok": self.ok,
                "error": self.error or None, "paths": [str(p) for p in self.paths],
                "command": self.command, "log": self.log, "log_tail": self.log_tail,
                "seconds": round(self.seconds, 3), "skipped": self.skipped or None,
                **({"unshipped": self.unshipped, "package_modules": self.package_modules}
                   if self.package_modules else {})}


def packaging_file(root: Path) -> str | None:
    """The file that makes `root` a buildable project (a `pyproject.toml` with a
    `[build-system]`, or a `setup.py`), or None."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and not pyproject.is_symlink():
        try:
            if "build-system" in tomllib.loads(pyproject.read_text(encoding="utf-8")):
                return "pyproject.toml"
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return "pyproject.toml"  # unreadable here; the build says what is wrong with it
    setup = root / "setup.py"
    if setup.is_file() and not setup.is_symlink():
        return "setup.py"
    return None


def plan(root: Path, python_roots: tuple[str, ...], choice: Choice = Choice.AUTO) -> Plan:
    """How the tree at `root` is made importable. Roots other than the tree itself win
    (the map says where the Python lives, e.g. `src`); else a project with packaging is
    built as its own install would build it; else the tree's root is the import path."""
    roots = tuple(r.strip("/") for r in python_roots if r.strip("/") not in ("", "."))
    packaging = packaging_file(root)
    if choice == Choice.ROOTS or (choice == Choice.AUTO and roots):
        if not roots:
            return Plan(How.TREE, "--install roots and the map names no root but the tree's")
        return Plan(How.ROOTS, f"the map's python_roots ({', '.join(roots)})", roots)
    if choice == Choice.BUILD or packaging:
        if packaging is None:
            return Plan(How.BUILD, "--install build, yet the tree has no pyproject.toml "
                        "[build-system] or setup.py")
        why = "--install build" if choice == Choice.BUILD else "no python_roots in the map"
        return Plan(How.BUILD, f"the project's own packaging ({packaging}; {why})")
    return Plan(How.TREE, "no python_roots in the map and no packaging in the tree")


def install(plan_: Plan, root: Path, site: Path, python: str, env: dict[str, str],
            log: Path, timeout: float, jail: Jail | None = None) -> Installed:
    """Carry out `plan_` for the tree at `root`: a build goes into `site` (a folder of
    this side's own), with its log at `log`. With a `jail` the build (the revision's own
    setup.py or build backend) runs confined (impact/validate/confine.py): no network
    (nothing is fetched anyway), writable only where the jail says."""
    done = Installed(plan_.how, plan_.reason)
    if plan_.how == How.TREE:
        done.paths = [root]
        return done
    if plan_.how == How.ROOTS:
        missing = [r for r in plan_.roots if not (root / r).is_dir()]
        done.paths = [root / r for r in plan_.roots] + [root]
        if missing:
            done.ok = False
            done.error = f"python root(s) {', '.join(missing)} not in the tree"
        return done
    if packaging_file(root) is None:
        done.ok = False
        done.error = "nothing to build: no pyproject.toml [build-system] or setup.py"
        return done
    site.mkdir(parents=True, exist_ok=True)
    done.command = [python, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                    "--no-index", "--no-cache-dir", "--disable-pip-version-check",
                    "--no-input", "--target", str(site), "."]
    done.log = str(log)
    start = time.monotonic()
    if jail is not None:
        _confined_build(done, root, env, log, timeout, jail)
        done.seconds = time.monotonic() - start
        done.paths = [site, root]
        if not done.ok:
            done.log_tail = logtail.tail(log)
        return done
    try:
        with log.open("wb") as out:
            finished = subprocess.run(done.command, cwd=root, env=env, stdout=out,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      timeout=timeout, check=False)
        if finished.returncode != 0:
            done.ok = False
            done.error = f"the build exited {finished.returncode}"
    except subprocess.TimeoutExpired:
        done.ok = False
        done.error = f"the build ran past {timeout:g}s"
    except OSError as exc:
        done.ok = False
        done.error = f"the build could not start ({exc.strerror})"
    done.seconds = time.monotonic() - start
    done.paths = [site, root]  # the built package first; the tree for its test helpers
    if not done.ok:
        done.log_tail = logtail.tail(log)
    return done


def _confined_build(done: Installed, root: Path, env: dict[str, str], log: Path,
                    timeout: float, jail: Jail) -> None:
    log.unlink(missing_ok=True)
    ran = confined_run(done.command, cwd=root, env=env, writable=jail.writable, log=log,
                       timeout=timeout, devices=jail.devices, read_only=jail.read_only,
                       hide=jail.hide, network=jail.network, isolate=jail.isolate)
    done.isolation = ran.isolation
    if ran.timed_out:
        done.ok, done.error = False, f"the build ran past {timeout:g}s"
    elif ran.error:
        done.ok, done.error = False, f"the build could not start ({ran.error})"
    elif ran.exit != 0:
        done.ok, done.error = False, f"the build exited {ran.exit}"


def unshipped_modules(tree: Path, site: Path, package: str,
                      roots: tuple[str, ...] = ()) -> tuple[list[str], int]:
    """The package's modules the tree holds that its build did not install, and how many
    the tree holds: (missing, total), both as paths under the package's folder. Nothing
    is known (([], 0)) when the package is not a folder in the tree under a root."""
    for root in (*roots, "src", ""):
        folder = tree / root / package if root else tree / package
        if folder.is_dir() and not folder.is_symlink():
            break
    else:
        return [], 0
    built = site / package
    mine = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.py")
                  if p.is_file() and not p.is_symlink())
    missing = [m for m in mine if not (built / m).is_file()]
    return missing, len(mine)
