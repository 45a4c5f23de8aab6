"""`impact verify`: one command on one locked idle GPU, one JSON artifact, the raw output
saved beside it.

Maintainers: the claim is impact.validate.claim's, the identity hook identity's and the
bench format perf's; this module runs the command, reads pytest's summary line, and
decides PASS (0), FAIL (1) or INCONCLUSIVE (2). A run without a real GPU, a timeout,
or output with no readable test counts is never a PASS.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from impact.errors import BadUsage, ImpactError
from impact.kinds import ViewName
from impact.safefile import read_regular
from impact.validate import identity, perf
from impact.validate.claim import claim_gpu
from impact.validate.document import clear, schema_problems, write_json
from impact.validate.gpus import Backend, GpuSample, RecordedBackend, detect_backend

SCHEMA = "verify.schema.json"


class VerifyVerdict(enum.StrEnum):
    """What one command on a claimed GPU showed."""

    PASS = "PASS"
    FAIL = "FAIL"
    INCONCLUSIVE = "INCONCLUSIVE"


EXIT = {VerifyVerdict.PASS: 0, VerifyVerdict.FAIL: 1, VerifyVerdict.INCONCLUSIVE: 2}
_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)")


@dataclass
class VerifyOptions:
    """What the command line asked for."""

    command: list[str]
    output: str = "verify.json"
    arch: str | None = None
    packages: list[str] = field(default_factory=list)
    samples: int = 10
    interval: float = 1.0
    lock_dir: str = "/tmp"
    timeout: float = 1800.0


class ArchFilter:
    """A backend that shows only the GPUs of one architecture."""

    def __init__(self, inner: Backend, arch: str) -> None:
        self.inner, self.arch = inner, arch
        self.name, self.vendor = inner.name, inner.vendor

    def sample(self) -> list[GpuSample]:
        return [s for s in self.inner.sample() if s.arch == self.arch]


def pytest_counts(text: str) -> dict[str, int] | None:
    """The counts of pytest's last summary line ('== 3 passed, 1 failed in 2.1s =='),
    or None when the output holds none."""
    lines = [ln for ln in text.splitlines()
             if re.search(r"\d+ (passed|failed|error)", ln) and " in " in ln]
    if not lines:
        return None
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for number, word in _SUMMARY.findall(lines[-1]):
        key = "errors" if word.startswith("error") else word
        if key in counts:
            counts[key] += int(number)
    return counts


def repo_state(folder: Path) -> list[dict[str, Any]]:
    """The repository at `folder`: HEAD's sha and whether the working tree differs."""
    from impact.git import open_views

    try:
        views = open_views(folder, worktree=True)
    except ImpactError:
        return []
    head = views.revisions.get(ViewName.BASE)
    return [{"path": str(views.location), "sha": head.sha if head else None,
             "dirty": views.head.tree_id != views.base.tree_id}]


def verify(options: VerifyOptions) -> dict[str, Any]:
    """Claim, run, record; returns the artifact written."""
    if not options.command:
        raise BadUsage("verify needs a command", "write it after '--': impact verify -- CMD")
    out = Path(options.output)
    clear(out)
    log = out.with_name(out.name + ".log")
    log.unlink(missing_ok=True)
    started = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    backend, tried = detect_backend()
    if backend is not None and options.arch:
        backend = ArchFilter(backend, options.arch)
    recorded = isinstance(getattr(backend, "inner", backend), RecordedBackend)
    scratch = Path(tempfile.mkdtemp(prefix="impact-verify-"))
    try:
        return _verify(options, out, log, started, backend, tried, recorded, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _verify(options: VerifyOptions, out: Path, log: Path, started: str,
            backend: Backend | None, tried: list[str], recorded: bool,
            scratch: Path) -> dict[str, Any]:
    hook = identity.install_hook(scratch / "hook")
    run: dict[str, Any] = {"exit": None, "timed_out": False, "seconds": 0.0}
    imports: dict[str, str | None] = {}
    with claim_gpu(backend, samples=options.samples, interval=options.interval,
                   lock_dir=Path(options.lock_dir), tried=tried) as claim:
        if claim.gpu is not None:
            env = dict(os.environ)
            env.update(claim.env)
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (os.environ.get("PYTHONPATH", ""), str(hook)) if p)
            env.update({identity.IDENTITY_DIR_ENV: str(scratch / "identity"),
                        identity.IDENTITY_PACKAGE_ENV: options.packages[0]
                        if options.packages else "",
                        identity.HASH_CACHE_ENV: str(hook / "hashes.json")})
            (scratch / "identity").mkdir()
            for package in options.packages:
                imports[package] = identity.import_origin(sys.executable, package, env)[0]
            start = time.monotonic()
            with log.open("wb") as sink:
                try:
                    done = subprocess.run(options.command, env=env, stdout=sink,
                                          stderr=subprocess.STDOUT, timeout=options.timeout,
                                          start_new_session=True)
                    run["exit"] = done.returncode
                except subprocess.TimeoutExpired:
                    run["timed_out"] = True
                except OSError as exc:
                    sink.write(f"impact verify: cannot run the command ({exc})\n".encode())
                    run["exit"] = 127
            run["seconds"] = round(time.monotonic() - start, 3)
    try:  # the command may have replaced its log (a FIFO, a link): a bounded regular file
        text = read_regular(log, limit=perf.LOG_LIMIT_BYTES).decode(errors="replace")
    except OSError:
        text = ""
    counts = pytest_counts(text)
    rows = [{"label": label, "us_median": statistics.median(v), "runs": len(v),
             "min_us": min(v), "max_us": max(v)}
            for label, v in sorted(perf.parse_bench(text).items())]
    verdict, reason = _verdict(claim.gpu is not None, recorded, run, counts)
    loaded = identity.read_identity(scratch / "identity", "0" * 40) if claim.gpu else None
    gpu = claim.gpu
    document = {
        "schema_version": 1,
        "ts": started,
        "host": socket.gethostname(),
        "gpu": ({"index": gpu.index, "name": gpu.name, "uuid": gpu.uuid, "bdf": gpu.bdf,
                 "arch": gpu.arch, "vendor": gpu.vendor} if gpu else None),
        "arch": gpu.arch if gpu else None,
        "arch_requested": options.arch,
        "degraded_mode": claim.degraded_mode,
        "claim": {"source": claim.source, "reason": claim.reason, "lock": claim.lock_path,
                  "visible_env": claim.env, "activity_before": claim.before,
                  "activity_after": claim.after},
        "versions": {"python": loaded.get("python_version") if loaded else None,
                     **(loaded.get("loaded_versions", {}) if loaded else {})},
        "python_executable": loaded.get("python_executable") if loaded else None,
        "native_artifacts": loaded.get("native_artifacts", []) if loaded else [],
        "repos": repo_state(Path.cwd()),
        "command": shlex.join(options.command),
        "argv": options.command,
        "imports": imports,
        "run": run,
        "correctness": ({**counts, "passed_all": counts["failed"] == 0 and counts["errors"] == 0
                         and counts["passed"] > 0} if counts else None),
        "perf": rows,
        "raw_output": str(log) if log.is_file() else None,
        "verdict": verdict,
        "reason": reason,
        "process_exit_code": EXIT[verdict],
    }
    problems = schema_problems(document, SCHEMA)
    if problems:
        document.update(verdict=VerifyVerdict.INCONCLUSIVE,
                        process_exit_code=EXIT[VerifyVerdict.INCONCLUSIVE],
                        reason=f"the artifact does not fit its schema: {problems[0]}")
    write_json(document, out)
    return document


def _verdict(claimed: bool, recorded: bool, run: dict[str, Any],
             counts: dict[str, int] | None) -> tuple[VerifyVerdict, str]:
    if not claimed:
        return VerifyVerdict.INCONCLUSIVE, "no idle GPU claimed (NO_GPU)"
    if recorded:
        return (VerifyVerdict.INCONCLUSIVE,
                "recorded samples stand in for the GPU: a recording is not a device")
    if run["timed_out"]:
        return VerifyVerdict.INCONCLUSIVE, "the command timed out"
    if run["exit"] != 0 or (counts and (counts["failed"] or counts["errors"])):
        return VerifyVerdict.FAIL, f"the command exited {run['exit']}" + (
            f" with {counts['failed']} failed, {counts['errors']} errors" if counts else "")
    if counts is None or counts["passed"] < 1:
        return VerifyVerdict.INCONCLUSIVE, ("exit 0, but the output shows no passed test "
                                            "(unchecked correctness is not a result)")
    return VerifyVerdict.PASS, f"{counts['passed']} passed on the claimed GPU"
