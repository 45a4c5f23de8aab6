#!/usr/bin/env bash
# Run every GPU scenario end to end: build the scenario repository, then for each scenario
# `impact report` (JSON) and `impact validate --from-report`, timing each stage.
#
#   benchmarks/gpu/run_all.sh OUT [SCENARIO ...]
#
# Run from anywhere; it works from the repository root. Needs `impact` with its
# dependencies (benchmarks/gpu/setup_device.sh makes .venv-gpu on a machine without an
# index); uses .venv-gpu/bin when it exists, else what is on PATH. Writes, under OUT:
#   repo/                      the scenario repository (benchmarks/gpu/scenarios.py)
#   <s>.report.json            impact report --format json
#   <s>.validation.json        impact validate -o
#   <s>.report.log, <s>.validate.log   stderr (and validate's stdout)
#   timings.txt                one line per stage: scenario stage seconds exit-code
#   summary.txt                each scenario's verdicts against expected.json
# Exit 0 when every verdict matches expected.json, 1 when one does not, 2 on bad usage.
# Environment: GPU_SAMPLES / GPU_INTERVAL (the idle-GPU window, default 10 x 1 s).
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
cd "$ROOT" || exit 2
if [ $# -lt 1 ]; then
    echo "usage: benchmarks/gpu/run_all.sh OUT [SCENARIO ...]" >&2
    exit 2
fi
OUT=$(mkdir -p "$1" && cd "$1" && pwd) || { echo "run_all: cannot create $1" >&2; exit 2; }
shift
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -eq 0 ] && SCENARIOS=(swap-args slow-kernel consistent both-fail no-gpu)

BIN=""
[ -x "$ROOT/.venv-gpu/bin/impact" ] && BIN="$ROOT/.venv-gpu/bin/"
IMPACT="${BIN}impact"
PY="${BIN:+${BIN}python}"
PY="${PY:-python3}"
command -v "$IMPACT" >/dev/null || { echo "run_all: no impact command; run benchmarks/gpu/setup_device.sh or pip install -e ." >&2; exit 2; }

REPO="$OUT/repo"
TIMINGS="$OUT/timings.txt"
rm -rf "$REPO"
: > "$TIMINGS"

# stage NAME SCENARIO -- COMMAND...: run COMMAND, append "SCENARIO NAME SECONDS rc=N".
stage() {
    local name=$1 scenario=$2 start end rc
    shift 3
    start=$(date +%s.%N)
    "$@"
    rc=$?
    end=$(date +%s.%N)
    awk -v s="$scenario" -v n="$name" -v a="$start" -v b="$end" -v r="$rc" \
        'BEGIN { printf "%s %s %.2f rc=%d\n", s, n, b - a, r }' >> "$TIMINGS"
    return $rc
}

stage build-repo - -- "$PY" "$HERE/scenarios.py" --out "$REPO" > "$OUT/repo.log" 2>&1 \
    || { echo "run_all: the scenario repository did not build (see $OUT/repo.log)" >&2; exit 1; }

for s in "${SCENARIOS[@]}"; do
    gpu=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["scenarios"][sys.argv[2]]["gpu"])' \
          "$HERE/expected.json" "$s") || { echo "run_all: no scenario $s in expected.json" >&2; exit 2; }
    # The report's exit code is its verdict (1 BREAKS, 2 NEEDS-DEVICE): not a failure here.
    stage report "$s" -- "$IMPACT" report --repo "$REPO" --base base --head "$s" --format json \
        -o "$OUT/$s.report.json" 2> "$OUT/$s.report.log"
    env_prefix=()
    if [ "$gpu" = "False" ]; then
        # No GPU: torch sees no device and NVML cannot be imported, as on a machine without one.
        env_prefix=(env CUDA_VISIBLE_DEVICES= PYTHONPATH="$HERE/nogpu${PYTHONPATH:+:$PYTHONPATH}")
    fi
    # The report names the repository, base and head. The package is named here: the map
    # that made benchmarks/gpu/h200 predates [[device_tests]] `package`, and naming it there
    # would change the scenario commits those reports are bound to.
    stage validate "$s" -- "${env_prefix[@]}" "$IMPACT" validate \
        --from-report "$OUT/$s.report.json" --package gpukern \
        --samples "${GPU_SAMPLES:-10}" --interval "${GPU_INTERVAL:-1}" \
        -o "$OUT/$s.validation.json" > "$OUT/$s.validate.log" 2>&1
done

"$PY" "$HERE/summary.py" "$OUT" "${SCENARIOS[@]}" | tee "$OUT/summary.txt"
exit "${PIPESTATUS[0]}"
