#!/usr/bin/env bash
# The H200 proof on real third-party packages: impact gate / impact validate on
# Liger-Kernel (src layout) and fast-hadamard-transform (setup.py CUDA extension).
#
#   benchmarks/gpu/thirdparty/run_device.sh REPOS OUT [liger-bug] [liger-fix] [fht]
#
# REPOS is what make_repos.py wrote (carry it to the device); run from anywhere on a
# machine where benchmarks/gpu/setup_device.sh has made .venv-gpu. Writes under OUT, per
# step: the gate or report and validation documents, <step>.log (stdout and stderr) and one
# line per step in timings.txt (step seconds exit-code).
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
REPOS=$(cd "$1" && pwd) || exit 2
OUT=$(mkdir -p "$2" && cd "$2" && pwd) || exit 2
shift 2
STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(liger-bug liger-fix fht)
IMPACT="$ROOT/.venv-gpu/bin/impact"
[ -x "$IMPACT" ] || IMPACT=impact
COMMON=(--samples "${GPU_SAMPLES:-3}" --interval "${GPU_INTERVAL:-0.5}" --timeout 420)
BENCH=(--env "IMPACT_BENCH_DIR=$HERE")

step() {  # step NAME CMD...: run, log, time
    local name=$1; shift
    local start=$SECONDS
    "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name $((SECONDS - start)) rc=$rc" | tee -a "$OUT/timings.txt"
    head -c 1500 "$OUT/$name.log"
}

for s in "${STEPS[@]}"; do
    case "$s" in
    liger-bug)  # base: the fix; head: the kernel put back to the bug, the fix's test kept
        step liger-bug "$IMPACT" gate --repo "$REPOS/liger" --base fix --head bug \
            --surface-map "$HERE/liger.surface.toml" -o "$OUT/liger-bug.json" --no-cache \
            "${COMMON[@]}" "${BENCH[@]}" ;;
    liger-fix-roots)  # the same, the package found through the map's python_roots
        "$IMPACT" report --repo "$REPOS/liger" --base fix-base --head fix --no-cache \
            --surface-map "$HERE/liger.surface.toml" --format json -o "$OUT/liger-fix.report.json" \
            --fail-on never
        step liger-fix "$IMPACT" validate --from-report "$OUT/liger-fix.report.json" \
            -o "$OUT/liger-fix.validation.json" "${COMMON[@]}" "${BENCH[@]}" ;;
    liger-fix)  # the real fix against its parent, the project built with its own packaging
        "$IMPACT" report --repo "$REPOS/liger" --base fix-base --head fix --no-cache \
            --surface-map "$HERE/liger.surface.toml" --format json -o "$OUT/liger-fix.report.json" \
            --fail-on never
        step liger-fix "$IMPACT" validate --from-report "$OUT/liger-fix.report.json" \
            -o "$OUT/liger-fix.validation.json" --install build "${COMMON[@]}" "${BENCH[@]}" ;;
    fht)  # a setup.py CUDA extension, built per side (no prebuilt wheel fetched)
        step fht "$IMPACT" gate --repo "$REPOS/fht" --base base --head head --no-cache \
            --surface-map "$HERE/fht.surface.toml" -o "$OUT/fht.json" "${COMMON[@]}" \
            --env FAST_HADAMARD_TRANSFORM_FORCE_BUILD=TRUE --env NVCC_THREADS=9 \
            --env MAX_JOBS=2 ;;
    fht-bug)  # both sides build: e7706fa against the log_N dispatch bug put back
        step fht-bug "$IMPACT" gate --repo "$REPOS/fht" --base head --head bug --no-cache \
            --surface-map "$HERE/fht.surface.toml" -o "$OUT/fht-bug.json" "${COMMON[@]}" \
            --env FAST_HADAMARD_TRANSFORM_FORCE_BUILD=TRUE --env NVCC_THREADS=9 \
            --env MAX_JOBS=2 ;;
    *) echo "run_device: no step '$s'" >&2; exit 2 ;;
    esac
done
