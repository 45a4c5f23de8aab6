"""Stands in for NVML in run_all.sh's no-gpu scenario: put first on PYTHONPATH, it makes
`import pynvml` fail as on a machine without the NVIDIA driver library."""

raise ImportError("pynvml hidden by benchmarks/gpu/run_all.sh (no-gpu scenario)")
