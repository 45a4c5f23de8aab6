"""Claim one idle GPU: every sample of a window at or below the thresholds, then a
non-blocking `flock` on that GPU's lock file, held on an open descriptor for the whole run.

Maintainers: `select_idle` is pure (recorded samples in, a decision out) so it is tested
without a GPU; `claim_gpu` adds the sampling, the lock and the activity before/after.
A metric that cannot be read never counts as idle, unless the caller explicitly chose
the `vram-only` basis, and then the report records that choice.
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from impact.validate.gpus import Backend, GpuSample, visible_env

GIB = 1024 ** 3
NO_GPU = "NO_GPU"
ACTIVITY_AND_VRAM = "activity+vram"
VRAM_ONLY = "vram-only"
BASES = (ACTIVITY_AND_VRAM, VRAM_ONLY)


@dataclass(frozen=True)
class Thresholds:
    """What idle means (aiter's picker: 2 % activity, at most 2 GiB used, 16 GiB free)."""

    util_pct: float = 2.0
    vram_used_max: int = 2 * GIB
    vram_free_min: int = 16 * GIB
    basis: str = ACTIVITY_AND_VRAM


@dataclass(frozen=True)
class Judgement:
    """One GPU over the window: idle or not, and every reason it is not."""

    index: int
    idle: bool
    reasons: tuple[str, ...]
    peak_util_pct: float | None
    peak_vram_used: int | None


def judge(window: list[GpuSample], limits: Thresholds) -> Judgement:
    """Whether one GPU's samples (all of one index) are idle at every step."""
    reasons: list[str] = []
    utils = [s.util_pct for s in window]
    used = [s.vram_used for s in window]
    free = [s.vram_free for s in window]
    if any(u is None for u in utils):
        if limits.basis != VRAM_ONLY:
            reasons.append("utilisation unreadable (unknown is never idle)")
    elif max(u for u in utils if u is not None) > limits.util_pct:
        reasons.append(f"utilisation peaked at {max(u for u in utils if u is not None):g}% "
                       f"(> {limits.util_pct:g}%)")
    if any(u is None for u in used) or any(f is None for f in free):
        reasons.append("VRAM unreadable (unknown is never idle)")
    else:
        if max(u for u in used if u is not None) > limits.vram_used_max:
            reasons.append(f"VRAM used up to {max(u for u in used if u is not None)} bytes "
                           f"(> {limits.vram_used_max})")
        if min(f for f in free if f is not None) < limits.vram_free_min:
            reasons.append(f"VRAM free down to {min(f for f in free if f is not None)} bytes "
                           f"(< {limits.vram_free_min})")
    known_utils = [u for u in utils if u is not None]
    known_used = [u for u in used if u is not None]
    return Judgement(window[0].index, not reasons, tuple(reasons),
                     max(known_utils) if len(known_utils) == len(utils) else None,
                     max(known_used) if len(known_used) == len(used) else None)


def select_idle(steps: list[list[GpuSample]], limits: Thresholds) -> list[Judgement]:
    """Every GPU's judgement over the window (steps of samples), in index order. A GPU
    missing from any step is not idle: it was not seen the whole window."""
    indices = sorted({s.index for step in steps for s in step})
    out = []
    for index in indices:
        window = [s for step in steps for s in step if s.index == index]
        if len(window) < len(steps):
            out.append(Judgement(index, False, ("missing from some samples",), None, None))
        else:
            out.append(judge(window, limits))
    return out


@dataclass
class Claim:
    """The outcome of a claim: a GPU held under a lock, or `degraded_mode` NO_GPU."""

    gpu: GpuSample | None
    source: str | None
    reason: str
    degraded_mode: str | None = None
    lock_path: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    judgements: list[Judgement] = field(default_factory=list)
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    basis: str = ACTIVITY_AND_VRAM
    samples: int = 0
    interval: float = 0.0

    def detail(self) -> dict[str, Any]:
        """What the report's gpu_claim stage records."""
        return {
            "source": self.source,
            "gpu": self.gpu.to_json() if self.gpu else None,
            "lock": self.lock_path,
            "idleness_basis": self.basis,
            "samples": self.samples,
            "interval_s": self.interval,
            "visible_env": dict(sorted(self.env.items())),
            "activity_before": self.before,
            "activity_after": self.after,
            "candidates": [{"index": j.index, "idle": j.idle, "reasons": list(j.reasons),
                            "peak_util_pct": j.peak_util_pct,
                            "peak_vram_used": j.peak_vram_used} for j in self.judgements],
        }


def lock_path(lock_dir: Path, gpu: GpuSample) -> Path:
    """`<dir>/impact-gpu-<uuid or index>.lock`, with a file-name-safe id."""
    ident = re.sub(r"[^A-Za-z0-9_.-]", "_", gpu.uuid or str(gpu.index))
    return lock_dir / f"impact-gpu-{ident}.lock"


def try_lock(path: Path) -> int | None:
    """An open descriptor holding an exclusive non-blocking flock on `path`, or None
    when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _activity(gpu: GpuSample | None) -> dict[str, Any] | None:
    if gpu is None:
        return None
    return {"util_pct": gpu.util_pct, "vram_used": gpu.vram_used, "vram_free": gpu.vram_free,
            "processes": gpu.processes}


def _now(backend: Backend, index: int) -> GpuSample | None:
    try:
        return next((s for s in backend.sample() if s.index == index), None)
    except Exception:
        return None


@contextmanager
def claim_gpu(backend: Backend | None, *, samples: int = 10, interval: float = 1.0,
              lock_dir: Path = Path("/tmp"), limits: Thresholds = Thresholds(),
              tried: list[str] | None = None,
              sleep: Callable[[float], None] = time.sleep) -> Iterator[Claim]:
    """Sample, select, lock; yield the Claim; release the lock on exit. Never raises for
    a machine without GPUs: the Claim says NO_GPU and why."""
    if backend is None:
        why = "; ".join(tried or []) or "no GPU metric backend"
        yield Claim(None, None, f"no GPU backend on this machine ({why})", NO_GPU,
                    basis=limits.basis)
        return
    steps: list[list[GpuSample]] = []
    try:
        for n in range(samples):
            steps.append(backend.sample())
            if n + 1 < samples:
                sleep(interval)
    except Exception as exc:
        yield Claim(None, backend.name, f"{backend.name} cannot be queried "
                    f"({type(exc).__name__}: {exc})", NO_GPU, basis=limits.basis)
        return
    judgements = select_idle(steps, limits)
    base = {"source": backend.name, "judgements": judgements, "basis": limits.basis,
            "samples": samples, "interval": interval}
    if not judgements:
        yield Claim(None, reason=f"{backend.name} lists no GPU", degraded_mode=NO_GPU, **base)
        return
    last = {s.index: s for s in steps[-1]}
    idle = [j for j in judgements if j.idle]
    if not idle:
        yield Claim(None, reason=f"none of {len(judgements)} GPUs stayed idle over "
                    f"{samples} samples", degraded_mode=NO_GPU, **base)
        return
    lock_dir.mkdir(parents=True, exist_ok=True)
    for judgement in idle:
        gpu = last[judgement.index]
        path = lock_path(lock_dir, gpu)
        fd = try_lock(path)
        if fd is None:
            continue
        claim = Claim(gpu, reason=f"GPU {gpu.index} idle over {samples} samples and locked",
                      lock_path=str(path), env=visible_env(gpu), before=_activity(gpu), **base)
        try:
            yield claim
        finally:
            claim.after = _activity(_now(backend, gpu.index))
            os.close(fd)  # closing the descriptor releases the flock
        return
    yield Claim(None, reason=f"{len(idle)} idle GPU(s), each locked by another process "
                "(lost the race)", degraded_mode=NO_GPU, **base)
