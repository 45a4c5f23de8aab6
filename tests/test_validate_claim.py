"""Idle GPU selection and locking, from recorded samples (tests/data/gpu_samples/): no GPU
needed. A metric that cannot be read is never idle; a lock another process holds is a lost
race, not a claim."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from impact.validate.claim import VRAM_ONLY, Thresholds, claim_gpu, lock_path, select_idle
from impact.validate.gpus import RecordedBackend, detect_backend, visible_env

SAMPLES = Path(__file__).parent / "data" / "gpu_samples"


def _steps(name: str) -> list:
    return RecordedBackend(SAMPLES / name).steps


def test_idle_gpus_are_idle() -> None:
    judged = select_idle(_steps("idle.json"), Thresholds())
    assert [(j.index, j.idle) for j in judged] == [(0, True), (1, True)]


def test_busy_gpus_are_not_and_say_why() -> None:
    judged = select_idle(_steps("busy.json"), Thresholds())
    assert not any(j.idle for j in judged)
    assert any("utilisation peaked at 97%" in r for r in judged[0].reasons)
    assert any("VRAM used" in r for r in judged[0].reasons)


def test_one_spike_in_the_window_rules_a_gpu_out() -> None:
    steps = _steps("neighbour_spike.json")
    judged = select_idle(steps, Thresholds())
    assert [(j.index, j.idle) for j in judged] == [(0, False), (1, True)]
    # one sample alone (the last one reads 0%) would have called it idle
    assert select_idle(steps[-1:], Thresholds())[0].idle


def test_an_unknown_metric_is_never_idle_unless_vram_only_is_chosen() -> None:
    steps = _steps("unknown_metric.json")
    judged = select_idle(steps, Thresholds())
    assert not any(j.idle for j in judged)
    assert "unknown is never idle" in judged[0].reasons[0]
    assert judged[0].peak_util_pct is None  # unknown, not 0
    relaxed = select_idle(steps, Thresholds(basis=VRAM_ONLY))
    # vram-only forgives unreadable utilisation, never unreadable VRAM
    assert [(j.index, j.idle) for j in relaxed] == [(0, True), (1, False)]


def test_claim_locks_the_first_idle_gpu_and_pins_it(tmp_path: Path) -> None:
    backend = RecordedBackend(SAMPLES / "neighbour_spike.json")
    with claim_gpu(backend, samples=10, interval=0, lock_dir=tmp_path) as claim:
        assert claim.degraded_mode is None and claim.gpu is not None
        assert claim.gpu.index == 1
        assert claim.env == visible_env(claim.gpu)
        assert claim.env["CUDA_VISIBLE_DEVICES"] == claim.gpu.uuid
        assert Path(claim.lock_path or "").exists()
    detail = claim.detail()
    assert detail["source"] == "recorded-samples" and detail["activity_after"] is not None


def test_busy_machine_is_no_gpu(tmp_path: Path) -> None:
    with claim_gpu(RecordedBackend(SAMPLES / "busy.json"), samples=3, interval=0,
                   lock_dir=tmp_path) as claim:
        assert claim.gpu is None and claim.degraded_mode == "NO_GPU"
        assert "none of 2 GPUs stayed idle" in claim.reason


def test_no_backend_is_no_gpu_with_what_was_tried() -> None:
    with claim_gpu(None, tried=["nvml: absent"]) as claim:
        assert claim.degraded_mode == "NO_GPU" and "nvml: absent" in claim.reason


def _hold(path: Path) -> subprocess.Popen:
    code = ("import fcntl, os, sys, time\n"
            f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_lock_held_by_another_process_moves_to_the_next_idle_gpu(tmp_path: Path) -> None:
    backend = RecordedBackend(SAMPLES / "idle.json")
    first = backend.steps[0][0]
    holder = _hold(lock_path(tmp_path, first))
    try:
        with claim_gpu(backend, samples=2, interval=0, lock_dir=tmp_path) as claim:
            assert claim.gpu is not None and claim.gpu.index == 1
    finally:
        holder.kill()
        holder.wait()


def test_every_idle_gpu_locked_elsewhere_is_a_lost_race(tmp_path: Path) -> None:
    backend = RecordedBackend(SAMPLES / "idle.json")
    holders = [_hold(lock_path(tmp_path, g)) for g in backend.steps[0]]
    try:
        with claim_gpu(backend, samples=2, interval=0, lock_dir=tmp_path) as claim:
            assert claim.gpu is None and claim.degraded_mode == "NO_GPU"
            assert "lost the race" in claim.reason
    finally:
        for h in holders:
            h.kill()
            h.wait()


def test_the_lock_is_held_for_the_run_and_released_after(tmp_path: Path) -> None:
    backend = RecordedBackend(SAMPLES / "idle.json")
    probe = ("import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\n"
             "try:\n    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    print('free')\n"
             "except BlockingIOError:\n    print('held')\n")
    with claim_gpu(backend, samples=1, interval=0, lock_dir=tmp_path) as claim:
        path = claim.lock_path or ""
        time.sleep(0.01)
        inside = subprocess.run([sys.executable, "-c", probe, path], capture_output=True,
                                text=True).stdout.strip()
    after = subprocess.run([sys.executable, "-c", probe, path], capture_output=True,
                           text=True).stdout.strip()
    assert (inside, after) == ("held", "free")


def test_recorded_samples_come_only_from_the_test_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IMPACT_GPU_SAMPLES", str(SAMPLES / "idle.json"))
    backend, _ = detect_backend()
    assert isinstance(backend, RecordedBackend) and backend.name == "recorded-samples"


def test_amd_pins_hip_and_rocr() -> None:
    gpu = RecordedBackend(SAMPLES / "idle.json").steps[0][0]
    from dataclasses import replace

    env = visible_env(replace(gpu, vendor="amd", index=3))
    assert env == {"HIP_VISIBLE_DEVICES": "3", "ROCR_VISIBLE_DEVICES": "3"}
