"""GPU metric backends: NVIDIA through NVML, AMD through amdsmi (then the amd-smi and
rocm-smi command lines), and recorded samples for tests.

Maintainers: a backend turns what the machine reports into `GpuSample`s and nothing
more; it decides nothing about idleness (impact.validate.claim does). A metric that
cannot be read is None, never 0. Vendor libraries are imported lazily: a machine without
them simply has no such backend.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

RECORDED_SAMPLES_ENV = "IMPACT_GPU_SAMPLES"
"""Tests only: a JSON file of recorded samples that stands in for the machine's GPUs."""


@dataclass(frozen=True)
class GpuSample:
    """One GPU at one instant. None means the metric could not be read."""

    index: int
    vendor: str
    name: str | None
    uuid: str | None
    bdf: str | None
    arch: str | None
    util_pct: float | None
    vram_used: int | None
    vram_free: int | None
    processes: int | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GpuSample:
        fields = ("index", "vendor", "name", "uuid", "bdf", "arch", "util_pct", "vram_used",
                  "vram_free", "processes")
        return cls(**{f: data.get(f) for f in fields})


class Backend(Protocol):
    """Where samples come from: `name` is recorded in the report as the claim's source."""

    name: str
    vendor: str

    def sample(self) -> list[GpuSample]:
        """Every GPU the backend sees, now."""
        ...


def visible_env(gpu: GpuSample) -> dict[str, str]:
    """The environment that pins a child process to `gpu` alone."""
    if gpu.vendor == "nvidia":
        return {"CUDA_VISIBLE_DEVICES": gpu.uuid or str(gpu.index),
                "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    return {"HIP_VISIBLE_DEVICES": str(gpu.index), "ROCR_VISIBLE_DEVICES": str(gpu.index)}


def _safe(call: Callable[[], Any]) -> Any:
    """The call's value, or None when the library cannot read it."""
    try:
        return call()
    except Exception:
        return None


class NvmlBackend:
    """NVIDIA GPUs through NVML (the `nvidia-ml-py` distribution, module `pynvml`)."""

    name = "nvml"
    vendor = "nvidia"

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        nvml.nvmlInit()

    def sample(self) -> list[GpuSample]:
        nv = self.nvml
        out = []
        for index in range(nv.nvmlDeviceGetCount()):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            util = _safe(lambda h=handle: float(nv.nvmlDeviceGetUtilizationRates(h).gpu))
            memory = _safe(lambda h=handle: nv.nvmlDeviceGetMemoryInfo(h))
            cc = _safe(lambda h=handle: nv.nvmlDeviceGetCudaComputeCapability(h))
            procs = _safe(lambda h=handle: len(nv.nvmlDeviceGetComputeRunningProcesses(h))
                          + len(nv.nvmlDeviceGetGraphicsRunningProcesses(h)))
            pci = _safe(lambda h=handle: nv.nvmlDeviceGetPciInfo(h).busId)
            out.append(GpuSample(
                index=index, vendor=self.vendor,
                name=_text(_safe(lambda h=handle: nv.nvmlDeviceGetName(h))),
                uuid=_text(_safe(lambda h=handle: nv.nvmlDeviceGetUUID(h))),
                bdf=_text(pci), arch=f"sm_{cc[0]}{cc[1]}" if cc else None, util_pct=util,
                vram_used=int(memory.used) if memory is not None else None,
                vram_free=int(memory.free) if memory is not None else None,
                processes=procs))
        return out


class AmdsmiBackend:
    """AMD GPUs through the `amdsmi` Python API."""

    name = "amdsmi"
    vendor = "amd"

    def __init__(self, amdsmi: Any) -> None:
        self.amd = amdsmi
        amdsmi.amdsmi_init()

    def sample(self) -> list[GpuSample]:
        amd = self.amd
        out = []
        for index, handle in enumerate(amd.amdsmi_get_processor_handles()):
            activity = _safe(lambda h=handle: amd.amdsmi_get_gpu_activity(h))
            util = activity.get("gfx_activity") if isinstance(activity, dict) else None
            vram = _safe(lambda h=handle: amd.amdsmi_get_gpu_vram_usage(h))
            used = total = None
            if isinstance(vram, dict):  # MiB
                used = _mib(vram.get("vram_used"))
                total = _mib(vram.get("vram_total"))
            asic = _safe(lambda h=handle: amd.amdsmi_get_gpu_asic_info(h)) or {}
            procs = _safe(lambda h=handle: amd.amdsmi_get_gpu_process_list(h))
            out.append(GpuSample(
                index=index, vendor=self.vendor, name=_text(asic.get("market_name")),
                uuid=_text(_safe(lambda h=handle: amd.amdsmi_get_gpu_device_uuid(h))),
                bdf=_text(_safe(lambda h=handle: amd.amdsmi_get_gpu_device_bdf(h))),
                arch=_text(asic.get("target_graphics_version")),
                util_pct=_number(util),
                vram_used=used,
                vram_free=total - used if used is not None and total is not None else None,
                processes=len(procs) if isinstance(procs, list) else None))
        return out


class AmdSmiCliBackend:
    """AMD GPUs through `amd-smi metric --json` and `amd-smi static --json`."""

    name = "amd-smi"
    vendor = "amd"

    def __init__(self, exe: str) -> None:
        self.exe = exe
        self.static = {int(g.get("gpu", i)): g for i, g in enumerate(
            _as_list(_run_json([exe, "static", "--asic", "--bus", "--json"])))}

    def sample(self) -> list[GpuSample]:
        metrics = _as_list(_run_json([self.exe, "metric", "--usage", "--mem-usage", "--json"]))
        out = []
        for i, gpu in enumerate(metrics):
            index = int(gpu.get("gpu", i))
            static = self.static.get(index, {})
            asic = static.get("asic", {}) if isinstance(static, dict) else {}
            usage = gpu.get("usage", {}) if isinstance(gpu.get("usage"), dict) else {}
            mem = gpu.get("mem_usage", {}) if isinstance(gpu.get("mem_usage"), dict) else {}
            used, total = _mib(_value(mem.get("used_vram"))), _mib(_value(mem.get("total_vram")))
            out.append(GpuSample(
                index=index, vendor=self.vendor, name=_text(asic.get("market_name")),
                uuid=_text(asic.get("asic_serial")),
                bdf=_text((static.get("bus") or {}).get("bdf")) if isinstance(static, dict)
                else None,
                arch=_text(asic.get("target_graphics_version")),
                util_pct=_number(_value(usage.get("gfx_activity"))), vram_used=used,
                vram_free=total - used if used is not None and total is not None else None,
                processes=None))
        return out


class RocmSmiBackend:
    """AMD GPUs through `rocm-smi --showuse --showmeminfo vram --json` (the oldest tool)."""

    name = "rocm-smi"
    vendor = "amd"

    def __init__(self, exe: str) -> None:
        self.exe = exe

    def sample(self) -> list[GpuSample]:
        data = _run_json([self.exe, "--showuse", "--showmeminfo", "vram", "--showbus",
                          "--showproductname", "--json"])
        out = []
        cards = sorted((k for k in (data if isinstance(data, dict) else {})
                        if k.startswith("card")), key=lambda k: int(k[4:] or 0))
        for key in cards:
            card = data[key]
            used = _int(card.get("VRAM Total Used Memory (B)"))
            total = _int(card.get("VRAM Total Memory (B)"))
            out.append(GpuSample(
                index=int(key[4:] or 0), vendor=self.vendor,
                name=_text(card.get("Card Series")), uuid=_text(card.get("Unique ID")),
                bdf=_text(card.get("PCI Bus")), arch=_text(card.get("GFX Version")),
                util_pct=_number(card.get("GPU use (%)")), vram_used=used,
                vram_free=total - used if used is not None and total is not None else None,
                processes=None))
        return out


class RecordedBackend:
    """Recorded samples from a JSON file (`{"samples": [[gpu, ...], ...]}`), returned one
    window step per call, the last one repeated. For tests: a recording is not a device."""

    name = "recorded-samples"

    def __init__(self, path: Path) -> None:
        data = json.loads(path.read_text())
        self.steps = [[GpuSample.from_json(g) for g in step] for step in data["samples"]]
        self.vendor = data.get("vendor", "nvidia")
        self.calls = 0

    def sample(self) -> list[GpuSample]:
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        return step


def detect_backend() -> tuple[Backend | None, list[str]]:
    """The first backend this machine has, and why each earlier one was passed over."""
    tried: list[str] = []
    recorded = os.environ.get(RECORDED_SAMPLES_ENV)
    if recorded:
        return RecordedBackend(Path(recorded)), tried
    for make in (_nvml, _amdsmi, _amd_smi_cli, _rocm_smi):
        backend, why = make()
        if backend is not None:
            return backend, tried
        tried.append(why)
    return None, tried


def _nvml() -> tuple[Backend | None, str]:
    try:
        import pynvml  # type: ignore[import-not-found]
    except ImportError:
        return None, "nvml: pynvml is not installed (pip install 'impact[gpu]')"
    try:
        return NvmlBackend(pynvml), ""
    except Exception as exc:
        return None, f"nvml: {type(exc).__name__}: {exc}"


def _amdsmi() -> tuple[Backend | None, str]:
    try:
        import amdsmi  # type: ignore[import-not-found]
    except ImportError:
        return None, "amdsmi: the amdsmi module is not installed"
    try:
        return AmdsmiBackend(amdsmi), ""
    except Exception as exc:
        return None, f"amdsmi: {type(exc).__name__}: {exc}"


def _amd_smi_cli() -> tuple[Backend | None, str]:
    exe = shutil.which("amd-smi")
    if exe is None:
        return None, "amd-smi: not on PATH"
    try:
        backend = AmdSmiCliBackend(exe)
        return (backend, "") if backend.sample() else (None, "amd-smi: lists no GPU")
    except Exception as exc:
        return None, f"amd-smi: {type(exc).__name__}: {exc}"


def _rocm_smi() -> tuple[Backend | None, str]:
    exe = shutil.which("rocm-smi")
    if exe is None:
        return None, "rocm-smi: not on PATH"
    try:
        backend = RocmSmiBackend(exe)
        return (backend, "") if backend.sample() else (None, "rocm-smi: lists no GPU")
    except Exception as exc:
        return None, f"rocm-smi: {type(exc).__name__}: {exc}"


def _run_json(argv: list[str]) -> Any:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)


def _as_list(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        data = data.get("gpu_data", [data])
    return [d for d in data if isinstance(d, dict)] if isinstance(data, list) else []


def _value(field: Any) -> Any:
    """amd-smi writes a metric as a bare value or as {"value": v, "unit": u}."""
    return field.get("value") if isinstance(field, dict) else field


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    text = str(value).strip()
    return text if text and text.upper() != "N/A" else None


def _number(value: Any) -> float | None:
    try:
        return float(str(value).strip().rstrip("%")) if value is not None else None
    except ValueError:
        return None  # "N/A": unknown, never 0


def _int(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _mib(value: Any) -> int | None:
    number = _number(value)
    return int(number * 1024 * 1024) if number is not None else None
