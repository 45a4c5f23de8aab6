#!/usr/bin/env bash
# Make .venv-gpu/bin/{python,impact} at the repository root on a machine with no package
# index (the H200): wrappers around the machine's own python3 (its torch, triton, pytest and
# nvidia-ml-py) with impact's dependencies, installed from the wheels in
# benchmarks/gpu/wheels/ (not in git; carry it along) into .device-site/, first on PYTHONPATH.
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
DEPS=("dulwich>=1.2.21" "merge3>=1.0.0" "tree-sitter>=0.26.1"
      "tree-sitter-cpp>=0.23.4" "tree-sitter-cmake>=0.7.2" "tree-sitter-cuda>=0.21.2"
      "networkx>=3.6.1"
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
# Not a venv: the device's python3 is itself a venv's, and a venv made from it would not see
# its torch. Impact's dependencies go into a folder of their own, put first on PYTHONPATH by
# two small wrappers, .venv-gpu/bin/python and .venv-gpu/bin/impact.
SITE="$ROOT/.device-site"
PYTHON=$(command -v python3)
rm -rf "$SITE" "$VENV"
WANT=(dulwich merge3 tree_sitter tree_sitter_cpp tree_sitter_cmake tree_sitter_cuda jsonschema
      jsonschema_specifications referencing rpds_py pyyaml urllib3 networkx)
FILES=()
for name in "${WANT[@]}"; do
    FILES+=("$(ls "$WHEELS"/"$name"-*.whl | head -1)")
done
"$PYTHON" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" "${FILES[@]}"
mkdir -p "$VENV/bin"
printf '#!/usr/bin/env bash\nexport PYTHONPATH="%s:%s${PYTHONPATH:+:$PYTHONPATH}"\nexec "%s" "$@"\n' \
    "$SITE" "$ROOT" "$PYTHON" > "$VENV/bin/python"
printf '#!/usr/bin/env bash\nexec "%s" -m impact "$@"\n' "$VENV/bin/python" > "$VENV/bin/impact"
chmod +x "$VENV/bin/python" "$VENV/bin/impact"
"$VENV/bin/python" - <<'PY'
import importlib
for name in ("impact", "dulwich", "tree_sitter_cpp", "tree_sitter_cmake", "jsonschema",
             "networkx", "yaml", "torch", "triton", "pytest", "pynvml"):
    try:
        module = importlib.import_module(name)
        print(f"{name:18} {getattr(module, '__version__', '')}")
    except Exception as err:  # report every missing piece, then fail
        print(f"{name:18} MISSING ({type(err).__name__}: {err})")
        raise SystemExit(1)
PY
echo "setup_device: $VENV ready; run benchmarks/gpu/run_all.sh OUT"
