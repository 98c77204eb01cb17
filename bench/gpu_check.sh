#!/usr/bin/env bash
# The CUDA check a GPU machine runs from a copy of this repo, with no network, inside one time box
# (GPU_CHECK_BUDGET seconds, 390 by default), steps in order of value:
#   0. wheels carried in .whl/ (quadrants and the pure-Python packages the image lacks) unpacked to
#      /tmp/site; `libcuda.so` made findable for Quadrants when only libcuda.so.1 is
#   1. environment: device, driver, CUDA, packages, llvmlite's API and NVPTX target, PTX for the
#      device assembled by ptxas, libdevice, Quadrants on CUDA (bench/gpu_env.py)
#   2. the gpu-marked tests: every oracle kernel on CUDA against the CPU (split, whole kernel, host
#      arrays), the field programs and the struct solver (split and whole), device arrays, errors
#   3. streaming bandwidth against CuPy's device-to-device copy and Quadrants (bench/gpu_bandwidth.py)
#   4. launch overhead against Quadrants on CUDA and CuPy's own kernels (bench/gpu_launch.py)
#   5. the compile-cache ladder against Quadrants' per-task cache (bench/gpu_compile.py)
#   6. Genesis on the GPU, when the image has it (it cannot travel: see the report)
# Each step has its own time limit, cut to what is left of the box; a failing step does not stop
# the next. Results go to $OUT when set (else /tmp/qdlab_gpu_results/): gpu_report.md (written as the
# steps finish), gpu_check.log (everything printed), gpu_tests.xml (JUnit, once pytest ends) and
# gpu_tests.tsv (one line per test as it finishes). A short summary is printed last.
# Python: $PYTHON, else python3. Usage: bash bench/gpu_check.sh. For a shorter rerun:
# GPU_CHECK_STEPS (a comma list of tests,bandwidth,launch,compile; all by default; the environment
# always runs), GPU_CHECK_K (a pytest -k expression, e.g. "struct or forward"), GPU_CHECK_BUDGET.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
START=$(date +%s)
DEADLINE=$((START + ${GPU_CHECK_BUDGET:-390}))
DEST=${OUT:-/tmp/qdlab_gpu_results}
mkdir -p "$DEST"
REPORT=$DEST/gpu_report.md
LOG=$DEST/gpu_check.log
OUTCOMES=$DEST/gpu_tests.tsv
WORK=$(mktemp -d /tmp/qdlab_gpu_check.XXXXXX)
SUMMARY=$WORK/summary
STEPS=$WORK/steps
: >"$LOG"
: >"$OUTCOMES"
: >"$SUMMARY"
: >"$STEPS"
PY=${PYTHON:-python3}
STEPS_WANTED=",${GPU_CHECK_STEPS:-tests,bandwidth,launch,compile},"
wanted() { [[ $STEPS_WANTED == *",$1,"* ]]; }
# No compile server left running, and CPU references compiled in this process rather than by a
# worker pool forked from a process that holds a CUDA context.
export PYTHONUNBUFFERED=1 QDLAB_COMPILE_SERVER=0 QDLAB_COMPILE_WORKERS=1
export QDLAB_CACHE_DIR=$WORK/qdlab_cache
export CUDA_CACHE_PATH=$WORK/cuda_jit QDLAB_TEST_OUTCOMES=$OUTCOMES
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

log() { echo "$*" | tee -a "$LOG"; }

step() { # step NAME LIMIT COMMAND...: run under min(LIMIT, what is left), log, record the result
    local name=$1 limit=$2
    shift 2
    local left=$((DEADLINE - $(date +%s) - 10))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 10 ]; then
        echo "| $name | not run (time box) | 0 s |" >>"$STEPS"
        log "=== $name: not run (time box)"
        return
    fi
    log "=== $name (limit ${limit}s, $(($(date +%s) - START))s into the run) ==="
    local t0=$SECONDS
    timeout --kill-after=5 "$limit" "$@" >>"$LOG" 2>&1
    local rc=$?
    local what=ok
    [ "$rc" -ne 0 ] && what="FAILED (exit $rc)"
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && what="TIMED OUT after ${limit}s"
    echo "| $name | $what | $((SECONDS - t0)) s |" >>"$STEPS"
    log "--- $name: $what ($((SECONDS - t0)) s)"
}

{
    echo "# qdlab CUDA check, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo "Commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'); python: $PY"
    echo
} >"$REPORT"

# 0. wheels and libcuda.so
if ls .whl/*.whl >/dev/null 2>&1; then
    log "=== wheels: $(ls .whl | tr '\n' ' ')"
    if timeout 90 "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl >>"$LOG" 2>&1; then
        export PYTHONPATH="/tmp/site:$PYTHONPATH"
        echo "| install carried wheels | ok | $(($(date +%s) - START)) s |" >>"$STEPS"
    else
        echo "| install carried wheels | FAILED (see log) | $(($(date +%s) - START)) s |" >>"$STEPS"
    fi
fi
CUDA_PROBE='import ctypes,sys
try: sys.exit(ctypes.CDLL("libcuda.so").cuInit(0) != 0)
except OSError: sys.exit(1)'
if "$PY" -c "$CUDA_PROBE" 2>/dev/null; then
    export QDLAB_LIBCUDA_NOTE="libcuda.so loads and cuInit succeeds"
else # Quadrants opens `libcuda.so`, which only a toolkit's dev files (or its stub) provide
    real=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print $NF; exit}')
    [ -z "$real" ] && real=$(find /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 \
        -name libcuda.so.1 2>/dev/null | head -1) # not cuda/compat's: a second driver library
    if [ -n "$real" ]; then
        mkdir -p "$WORK/libcuda" && ln -sf "$real" "$WORK/libcuda/libcuda.so"
        export LD_LIBRARY_PATH="$WORK/libcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        export QDLAB_LIBCUDA_NOTE="not loadable as such; linked $WORK/libcuda/libcuda.so -> $real"
    else
        export QDLAB_LIBCUDA_NOTE="neither libcuda.so nor libcuda.so.1 found"
    fi
fi
if [ -z "${QDLAB_LIBDEVICE:-}" ]; then # the toolkit's, else the first one found
    f=/usr/local/cuda/nvvm/libdevice/libdevice.10.bc
    [ -f "$f" ] || f=$(timeout 20 find /usr /opt -name libdevice.10.bc 2>/dev/null | head -1)
    [ -n "$f" ] && export QDLAB_LIBDEVICE=$f
fi
export PATH="$PATH:/usr/local/cuda/bin"
nvidia-smi >>"$LOG" 2>&1

# 1. environment
step "environment" 60 "$PY" bench/gpu_env.py --out "$REPORT" --summary "$SUMMARY"

# 2. gpu tests, one line per test in gpu_tests.tsv as they finish
PYTEST_TIMEOUT=()
"$PY" -c "import pytest_timeout" 2>/dev/null && PYTEST_TIMEOUT=(--timeout=90)
PYTEST_MORE=()
[ -n "${GPU_CHECK_K:-}" ] && PYTEST_MORE=(-k "$GPU_CHECK_K")
wanted tests && step "gpu tests" 170 "$PY" -m pytest -q -m gpu tests/cuda -p no:cacheprovider \
    -o addopts="" --tb=short -rfE --maxfail=100 --junitxml="$DEST/gpu_tests.xml" \
    ${PYTEST_TIMEOUT[@]+"${PYTEST_TIMEOUT[@]}"} ${PYTEST_MORE[@]+"${PYTEST_MORE[@]}"}
wanted tests && {
    echo "## gpu tests (\`pytest -m gpu tests/cuda\`)"
    echo
    awk -F'\t' '{n[$1]++} END {for (k in n) printf "%s %d; ", k, n[k]; print ""}' "$OUTCOMES"
    echo
    awk -F'\t' '{split($3, p, "::"); f[p[1] " " $1]++} END {for (k in f) print "- " k ": " f[k]}' \
        "$OUTCOMES" | sort
    echo
    if grep -qv '^passed' "$OUTCOMES"; then
        echo '```'
        grep -v '^passed' "$OUTCOMES" | grep -v '^skipped' | cut -f1,3,4 | head -80
        grep '^skipped' "$OUTCOMES" | cut -f4 | sort | uniq -c | head -10
        echo '```'
    fi
    echo
} >>"$REPORT"
wanted tests && awk -F'\t' '{n[$1]++} END {printf "tests:"; for (k in n) printf " %s %d", k, n[k]
    print ""}' "$OUTCOMES" >>"$SUMMARY"

# 3-5. benchmarks, each with its peers from this run
bench() { # bench NAME LIMIT SCRIPT ARGS...
    local name=$1 limit=$2 script=$3
    shift 3
    local left=$((DEADLINE - $(date +%s) - 10))
    [ "$left" -lt "$limit" ] && limit=$left
    step "$name" "$limit" "$PY" "$script" --out "$REPORT" --summary "$SUMMARY" \
        --deadline $(($(date +%s) + limit - 8)) "$@"
}
wanted bandwidth && bench "bandwidth" 50 bench/gpu_bandwidth.py
wanted launch && bench "launch overhead" 45 bench/gpu_launch.py
wanted compile && bench "compile-cache ladder" 120 bench/gpu_compile.py

# 6. Genesis
if "$PY" -c "import genesis" >/dev/null 2>&1; then
    note="Genesis is importable here, but bench/genesis_scene.py runs its scenes on the CPU only: not run"
else
    note="Genesis: not run: genesis-world is not on the image and cannot travel (its 1.4.5 wheel \
alone is 83.6 MB; the carried tree may hold 64 MiB, and its dependencies (mujoco, vtk, pymeshlab, \
libigl, ...) are larger still)"
fi
echo "| genesis | skipped | 0 s |" >>"$STEPS"
printf '## Genesis\n\n%s\n\n' "$note" >>"$REPORT"
echo "genesis: skipped (not installable here)" >>"$SUMMARY"

{
    echo "## Steps"
    echo
    echo "| step | result | time |"
    echo "|---|---|---|"
    cat "$STEPS"
    echo
    echo "Total $(($(date +%s) - START)) s of a ${GPU_CHECK_BUDGET:-390} s box."
} >>"$REPORT"
{
    echo
    echo "==================== SUMMARY ($(($(date +%s) - START)) s) ===================="
    grep -E '^\*\*|^- BLOCKER' "$REPORT" | head -5
    cat "$STEPS"
    cat "$SUMMARY"
    echo "failed tests (first 15):"
    grep -E '^(failed|error)' "$OUTCOMES" | cut -f3,4 | cut -c1-220 | head -15
    echo "report: $REPORT"
} | tee -a "$LOG"
rm -rf "$WORK"
