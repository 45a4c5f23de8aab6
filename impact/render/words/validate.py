"""What `impact validate` and `impact gate` say: how a side was made importable, why a
stage could not run and the exact thing to add so it can, and the gate's lines.

Maintainers: the validators decide; this module only words their decisions, so a user
reads the same sentence in the report's stages, the gate document and the terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol


class _Install(Protocol):
    how: Any
    reason: str
    error: str
    log: str | None


NO_PACKAGE = ("no package named: pass --package NAME, or name `package` in the map's "
              "[[device_tests]], so the import check can prove which tree runs")

NOT_BUILT_NO_GPU = ("not built: no GPU was claimed, so nothing would run what the build "
                    "makes")

ADD_TESTS = ("no test target: add `tests = [\"tests/test_{stem}.py\"]` to the [[device_tests]] "
             "entry of the surface map whose `paths` match the changed files, or pass --test T")

ADD_BENCH = ("no bench command named, so the perf stage cannot pass: add "
             "`bench = [\"python bench/bench.py\"]` to the map's [[device_tests]] entry "
             "(a command printing JSON lines {\"label\": ..., \"us\": ...}), or pass --bench CMD")


def install_failed(side: str, done: _Install) -> str:
    """One line for a side that could not be made importable, with where its log is."""
    where = f"; its log: {done.log}" if done.log else ""
    return f"{side} could not be installed ({done.how}: {done.reason}): {done.error}{where}"


def import_elsewhere(side: str, package: str, origin: str, folder: Path,
                     done: _Install) -> str:
    """The import check's failure: where the package resolved instead, and how the side
    was put on the path, so the fix (a python root, --install build) is in view."""
    return (f"{side}: {package} resolves to {origin}, outside {folder} (installed as "
            f"{done.how}: {done.reason}; name the package's folder in the map's "
            "python_roots, pass --python-root DIR, or --install build)")


def inconclusive_advice(unsatisfied: list[tuple[str, str, str]]) -> list[str]:
    """For each required stage that did not pass (name, status, reason), the stage and
    what to add or run so it can: the lines `impact validate` prints under INCONCLUSIVE."""
    return [f"{name} is {status}: {reason}" for name, status, reason in unsatisfied]


def gate_line(verdict: str, static: str, device: list[dict[str, Any]],
              pending: list[str]) -> str:
    """The gate's one line: its verdict, the static verdict and each arch's evidence."""
    runs = ", ".join(f"{d['arch']} {d['verdict']}" for d in device) or "no device run"
    waiting = f"; waiting for {', '.join(pending)}" if pending else ""
    return f"Gate: {verdict} (static {static}; device {runs}{waiting})"


def gate_reason_static(static: str, breaks: bool = False) -> str:
    """Why no device run was needed for a static verdict (`breaks`: it is a break)."""
    if breaks:
        return "the report shows a break statically; no device run can clear it"
    return f"the report reads {static}: no device run is needed"


GATE_BASIS_NAMED = "the archs the report's NEEDS-DEVICE verdict names"
GATE_NO_ARCH = "the report needs a device run and no arch was given or present"


def gate_basis_static(static: str) -> str:
    """Why a gate needs no arch: the report's verdict needs no device."""
    return f"the report reads {static}"


def gate_basis_wide(named: list[str], archs: list[str], given: bool) -> str:
    """Which archs a gate requires where the report needs every arch the map ships."""
    source = "the archs given (--require-arch or the validations)" if given \
        else "no arch was given"
    return (f"the report needs every arch the map ships ({', '.join(named)}); this gate "
            f"requires {', '.join(archs) or 'none'}: {source}")


def gate_pending(arch: str) -> str:
    """An arch the gate needs evidence on that no validation covers."""
    return f"no validation on {arch}"


def gate_pending_command(arch: str) -> str:
    """What would give the evidence a pending arch lacks."""
    return (f"impact validate --from-report REPORT.json -o validation-{arch}.json  "
            f"# on a GPU of {arch}")


def gate_run(arch: str, verdict: str, reasons: list[str]) -> str:
    """One validation that did not pass, as a gate's reason."""
    return f"{arch}: {verdict} ({'; '.join(reasons)})"


def log_unreadable(exc: OSError) -> str:
    """Where a log's tail would be: why it could not be read."""
    return f"(the log could not be read: {exc})"


def build_leaves_out(side: str, package: str, missing: list[str], total: int) -> str:
    """A build that installed without some of the package's own modules: tests of the build
    that import them fail, and the fault is the project's packaging, not its code."""
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return (f"{side}'s build of {package} leaves out {len(missing)} of the tree's "
            f"{total} module(s) of the package ({shown}): the project's packaging does not "
            "ship them (a folder without __init__.py under `namespaces = false`, or a "
            "package list that misses it); `--install roots` tests the tree as it is")


def build_drops_modules(package: str, missing: list[str]) -> str:
    """A head whose build no longer ships modules the base's build did: a packaging
    regression users who install the package would meet."""
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return (f"the head's build of {package} no longer ships {len(missing)} module(s) the "
            f"base's build does ({shown})")
