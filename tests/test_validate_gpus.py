"""The GPU backends turn what a vendor library or tool reports into samples; anything it
cannot read is None (unknown), never 0. Fakes stand in for NVML and rocm-smi."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from impact.validate import gpus


class FakeNvml:
    """The few pynvml calls the backend makes; utilisation unreadable on GPU 1."""

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetUtilizationRates(self, h: int):
        if h == 1:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return SimpleNamespace(gpu=0)

    def nvmlDeviceGetMemoryInfo(self, h: int):
        return SimpleNamespace(used=1 << 20, free=140 << 30)

    def nvmlDeviceGetCudaComputeCapability(self, h: int):
        return (9, 0)

    def nvmlDeviceGetComputeRunningProcesses(self, h: int):
        return []

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: int):
        return []

    def nvmlDeviceGetPciInfo(self, h: int):
        return SimpleNamespace(busId=b"00000000:1B:00.0")

    def nvmlDeviceGetName(self, h: int) -> bytes:
        return b"NVIDIA H200"

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return f"GPU-{h}"


def test_nvml_reads_arch_as_sm_and_unreadable_utilisation_as_none() -> None:
    first, second = gpus.NvmlBackend(FakeNvml()).sample()
    assert (first.arch, first.util_pct, first.name, first.bdf) == (
        "sm_90", 0.0, "NVIDIA H200", "00000000:1B:00.0")
    assert second.util_pct is None and second.vram_free == 140 << 30


def test_rocm_smi_json_with_na_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"card0": {"GPU use (%)": "N/A", "VRAM Total Memory (B)": "206141652992",
                      "VRAM Total Used Memory (B)": "297791488", "GFX Version": "gfx942",
                      "Card Series": "AMD Instinct MI300X", "PCI Bus": "0000:05:00.0"},
            "system": {"Driver version": "6.8"}}
    monkeypatch.setattr(gpus, "_run_json", lambda argv: json.loads(json.dumps(data)))
    [gpu] = gpus.RocmSmiBackend("rocm-smi").sample()
    assert gpu.util_pct is None and gpu.arch == "gfx942"
    assert gpu.vram_free == 206141652992 - 297791488


def test_amd_smi_cli_reads_value_unit_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    static = [{"gpu": 0, "asic": {"market_name": "MI355X", "target_graphics_version": "gfx950"},
               "bus": {"bdf": "0000:75:00.0"}}]
    metric = [{"gpu": 0, "usage": {"gfx_activity": {"value": 1, "unit": "%"}},
               "mem_usage": {"used_vram": {"value": 100, "unit": "MB"},
                             "total_vram": {"value": 262144, "unit": "MB"}}}]
    monkeypatch.setattr(gpus, "_run_json", lambda argv: static if "static" in argv else metric)
    [gpu] = gpus.AmdSmiCliBackend("amd-smi").sample()
    assert (gpu.arch, gpu.util_pct, gpu.bdf) == ("gfx950", 1.0, "0000:75:00.0")
    assert gpu.vram_used == 100 * 1024 * 1024


def test_without_any_backend_every_reason_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(gpus.RECORDED_SAMPLES_ENV, raising=False)
    for name in ("_nvml", "_amdsmi", "_amd_smi_cli", "_rocm_smi"):
        monkeypatch.setattr(gpus, name, lambda n=name: (None, f"{n}: hidden"))
    backend, tried = gpus.detect_backend()
    assert backend is None and len(tried) == 4
