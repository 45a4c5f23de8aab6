#!/usr/bin/env bash
# Make .venv-gpu at the repository root on a machine with no package index (the H200):
# a venv that sees the machine's own torch, triton, pytest and nvidia-ml-py
# (--system-site-packages) and holds impact and its dependencies, installed from the
# wheels in benchmarks/gpu/wheels/ (not in git; carry it along).
#
#   benchmarks/gpu/setup_device.sh              # on the device: make .venv-gpu
#   benchmarks/gpu/setup_device.sh --download   # where an index is reachable: fill wheels/
#
# The wheels are for CPython 3.12 on x86_64 Linux (the device's Python); --download needs
# pip and, for tree-sitter-cmake (published as a source archive only), a C compiler: its
# wheel is built here as an abi3 wheel that any CPython >= 3.10 installs.
# Exit 0 on success, 2 when the wheels folder is missing, else pip's status.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WHEELS="$HERE/wheels"
VENV="${VENV:-$ROOT/.venv-gpu}"
DEPS=("dulwich>=1.2.21" "merge3>=1.0.0" "libcst>=1.9.0" "tree-sitter>=0.26.1"
      "tree-sitter-cpp>=0.23.4" "tree-sitter-cmake>=0.7.2" "networkx>=3.6.1"
      "jsonschema>=4.26.0" "PyYAML>=6.0.4" "nvidia-ml-py" "setuptools>=68" "wheel")

if [ "${1:-}" = "--download" ]; then
    PIP="${PIP:-python3 -m pip}"
    mkdir -p "$WHEELS"
    $PIP wheel --no-deps -w "$WHEELS" "tree-sitter-cmake>=0.7.2"
    $PIP download -d "$WHEELS" --find-links "$WHEELS" --only-binary=:all: \
        --python-version 3.12 --implementation cp --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
        --platform linux_x86_64 "${DEPS[@]}"
    du -sh "$WHEELS"
    exit 0
fi

if [ ! -d "$WHEELS" ] || [ -z "$(ls "$WHEELS"/*.whl 2>/dev/null)" ]; then
    echo "setup_device: no wheels in $WHEELS; fill it where an index is reachable with" \
         "'benchmarks/gpu/setup_device.sh --download' and carry it along" >&2
    exit 2
fi
python3 -m venv --system-site-packages "$VENV"
"$VENV/bin/python" -m pip install -q --no-index --find-links "$WHEELS" "${DEPS[@]}"
"$VENV/bin/python" -m pip install -q --no-index --find-links "$WHEELS" --no-deps -e "$ROOT"
"$VENV/bin/python" - <<'PY'
import importlib
for name in ("impact", "dulwich", "libcst", "tree_sitter_cpp", "tree_sitter_cmake", "jsonschema",
             "networkx", "yaml", "torch", "triton", "pytest", "pynvml"):
    try:
        module = importlib.import_module(name)
        print(f"{name:18} {getattr(module, '__version__', '')}")
    except Exception as err:  # report every missing piece, then fail
        print(f"{name:18} MISSING ({type(err).__name__}: {err})")
        raise SystemExit(1)
PY
echo "setup_device: $VENV ready; run benchmarks/gpu/run_all.sh OUT"
