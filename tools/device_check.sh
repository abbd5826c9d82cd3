#!/usr/bin/env bash
# The device check: what fe does where users train (one GPU, 16 cores), written as a markdown report.
#
#   bash tools/device_check.sh [--cpu] OUTDIR
#
# Writes OUTDIR/device_check.md (and the full output in OUTDIR/device_check.log). Sections, each with its own time
# limit so the whole run fits in 8 minutes on a lent GPU machine:
#   1. Machine: GPU, CPUs, Python, torch, numpy, fe's source.
#   2. GPU tests: `pytest -m gpu tests/torch`.
#   3. fit vs a hand-written loop: fe's ResNet9 on 32x32x3 data, batch 512, AMP (tools/bench/device_workloads.py fit;
#      target >= 0.97x).
#   4. fit fed by the CIFAR-recipe Pipeline with 15 workers vs the slower of pipeline alone and step alone
#      (device_workloads.py overlap; target >= 0.9x).
#   5. Pipeline scaling: num_process 0/2/8/15 vs a torch DataLoader with 2/8/15 workers, with CPU per sample and the
#      workers' idle time (tools/bench/bench_pipeline_workers.py; target >= 0.95x the DataLoader at 2, 8 and 15).
#
# --cpu: a CPU-only machine, tiny sizes (well under a minute): CI runs it (tests/fe/test_device_check.py) so the
# script keeps working; its figures mean nothing.
#
# Interpreter: $PYTHON (default python3: on the lent machines the image's Python, which has torch). fe comes from
# wheels carried in .whl/ (installed with pip --no-index into a private folder: fe's own wheels from
# `python tools/build.py`, and what the image lacks, e.g. natsort and albumentations with its needs), or else from
# this tree's packages/*/src on PYTHONPATH. See tools/bench/README.md ("The device check").
set -u -o pipefail

cpu=0
if [ "${1:-}" = "--cpu" ]; then
    cpu=1
    shift
fi
if [ $# -ne 1 ]; then
    echo "usage: bash tools/device_check.sh [--cpu] OUTDIR" >&2
    exit 2
fi
out=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
report=$out/device_check.md
log=$out/device_check.log
: >"$log"
PYTHON=${PYTHON:-python3}
cd "$root" || exit 2
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
started=$(date +%s)

if ls "$root"/.whl/*.whl >/dev/null 2>&1; then
    site=$(mktemp -d /tmp/fe-device-site.XXXXXX)
    if "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" \
        "$root"/.whl/*.whl >>"$log" 2>&1; then
        export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    else
        echo "installing the wheels in .whl failed (see the log)" | tee -a "$log"
    fi
fi
if ! "$PYTHON" -c "import fe_core, fe_torch, fe" >/dev/null 2>&1; then
    source_path=$root/packages/fe-core/src:$root/packages/fe-torch/src:$root/packages/fe/src
    export PYTHONPATH=$source_path${PYTHONPATH:+:$PYTHONPATH}
fi

if [ $cpu = 1 ]; then
    mode="CPU smoke run (--cpu: tiny sizes, the figures mean nothing)"
    export CUDA_VISIBLE_DEVICES=""
    fit_args=(--cpu)
    overlap_args=(--cpu)
    scaling_args=(--samples 512 --images 64 --repeats 1 --only cifar --processes 0 2 --loader_workers 2
                  --cpu_processes 2 --cpu_loader_workers 2)
    tests=(tests/torch/test_gpu.py)
    limits=(60 60 60 60)
else
    mode="GPU run"
    fit_args=()
    overlap_args=(--processes 15)
    scaling_args=(--samples 16384 --images 2048 --repeats 3 --only cifar decode --processes 0 2 8 15
                  --loader_workers 2 8 15 --cpu_processes 2 8 15 --cpu_loader_workers 2 8 15)
    tests=(tests/torch)
    limits=(120 90 90 150)
fi

# section TITLE LIMIT COMMAND...: run COMMAND with a time limit, its output into the report (or its failure and tail)
failures=0
section() {
    local title=$1 limit=$2
    shift 2
    local begin output status
    begin=$(date +%s)
    echo "## $title" >>"$report"
    echo >>"$report"
    echo "\$ $*" | tee -a "$log" >/dev/null
    if declare -F "$1" >/dev/null; then
        output=$("$@" 2>>"$log")  # a function of this script (no time limit: it reads versions)
    else
        output=$(timeout --kill-after=10 "$limit" "$@" 2>>"$log")
    fi
    status=$?
    echo "$output" >>"$log"
    if [ $status -eq 0 ]; then
        echo "$output" >>"$report"
    else
        failures=$((failures + 1))
        if [ $status -eq 124 ] || [ $status -eq 137 ]; then
            echo "**FAILED: over its ${limit} s limit**" >>"$report"
        else
            echo "**FAILED (exit $status)**" >>"$report"
        fi
        echo >>"$report"
        echo '```' >>"$report"
        { echo "$output"; tail -n 30 "$log"; } | tail -n 40 >>"$report"
        echo '```' >>"$report"
    fi
    echo >>"$report"
    echo "($(($(date +%s) - begin)) s)" >>"$report"
    echo >>"$report"
}

machine() {
    echo "- mode: $mode"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- CPUs: $(nproc) ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//'))"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
    if command -v nvidia-smi >/dev/null 2>&1 && [ $cpu = 0 ]; then
        echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -n 1)"
    else
        echo "- GPU: none used"
    fi
    "$PYTHON" - <<'EOF'
import platform
import numpy
import torch
import fe_core
print(f"- Python {platform.python_version()}, numpy {numpy.__version__}, torch {torch.__version__} "
      f"(CUDA available: {torch.cuda.is_available()})")
print(f"- fe_core from {fe_core.__file__}")
try:
    import albumentations
    import cv2
    print(f"- albumentations {albumentations.__version__}, OpenCV {cv2.__version__}")
except ImportError as error:
    print(f"- missing: {error} (the Pipeline workloads need albumentations and OpenCV: carry wheels in .whl)")
EOF
}

{
    echo "# fe device check"
    echo
} >"$report"
section "Machine" 30 machine
# -m gpu: only the tests that need a GPU (on a CPU-only machine they are skipped, which still runs the command)
section "GPU tests" "${limits[0]}" "$PYTHON" -m pytest -m gpu ${tests[@]+"${tests[@]}"} -q -p no:cacheprovider
section "fit vs a hand-written loop (ResNet9, batch 512, AMP)" "${limits[1]}" \
    "$PYTHON" tools/bench/device_workloads.py fit ${fit_args[@]+"${fit_args[@]}"}
section "fit fed by the CIFAR-recipe Pipeline with workers vs the slower alone" "${limits[2]}" \
    "$PYTHON" tools/bench/device_workloads.py overlap ${overlap_args[@]+"${overlap_args[@]}"}
section "Pipeline scaling vs a torch DataLoader" "${limits[3]}" \
    "$PYTHON" tools/bench/bench_pipeline_workers.py ${scaling_args[@]+"${scaling_args[@]}"}

{
    echo "## Summary"
    echo
    echo "- sections failed: $failures"
    echo "- targets:"
    grep -E '^target: |target >= ' "$report" | sed 's/^ */  - /'
    echo "- total time: $(($(date +%s) - started)) s"
} >>"$report.tail"
cat "$report.tail" >>"$report"
rm -f "$report.tail"
echo "report: $report"
[ $failures -eq 0 ]
