#!/usr/bin/env bash
# The CUDA check a GPU machine runs from a copy of this repo, in under 8 minutes, with no network:
#   1. environment: which Python, and whether llvmlite (with NVPTX), numpy, cupy, pytest import; nvidia-smi
#   2. the gpu-marked tests (every oracle kernel on CUDA against the CPU, device arrays, device errors)
#   3. the edit-one-construct compile benchmark on CUDA (bench/gpu_compile.py)
#   4. the streaming bandwidth benchmark, 256M float32 (bench/gpu_bandwidth.py)
# Each step has its own timeout, and a failing step does not stop the next. Results (Markdown) go to
# $OUT/gpu_results.md when OUT is set, else bench/results/gpu_results.md; logs sit beside them.
# Python: the repo's .venv if it is there and works, else $PYTHON, else python3 with the repo on PYTHONPATH.
# pip is never called (no index is reachable there): missing packages are reported, not installed.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DEST=${OUT:-$ROOT/bench/results}
mkdir -p "$DEST"
MD=$DEST/gpu_results.md
LOG=$DEST/gpu_check.log
: >"$MD"
: >"$LOG"
export PYTHONUNBUFFERED=1 PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"

if [ -x .venv/bin/python ] && .venv/bin/python -c "import llvmlite, numpy" 2>/dev/null; then
    PY=.venv/bin/python
else
    PY=${PYTHON:-python3}
fi
# Wheels carried in .whl/ (e.g. llvmlite 0.50 for the machine's Python, when its own llvmlite is older than the
# new-pass-manager API qdlab uses) are unpacked to /tmp/site, ahead of the installed packages.
if ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH="/tmp/site:$PYTHONPATH"
fi
if [ -z "${QDLAB_LIBDEVICE:-}" ]; then  # a CUDA toolkit outside the usual places: find its libdevice once
    found=$(timeout 30 find /usr/local /opt /usr/lib -name libdevice.10.bc 2>/dev/null | head -1)
    [ -n "$found" ] && export QDLAB_LIBDEVICE=$found
fi

step() {  # step NAME SECONDS COMMAND...: run one part with a time limit, log it, record its status
    local name=$1 limit=$2
    shift 2
    echo "=== $name (limit ${limit}s) ===" | tee -a "$LOG"
    local t0=$SECONDS
    timeout --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$LOG"
    local rc=${PIPESTATUS[0]}
    local what=ok
    [ "$rc" -ne 0 ] && what="FAILED (exit $rc)"
    [ "$rc" -eq 124 ] && what="TIMED OUT after ${limit}s"
    echo "| $name | $what | $((SECONDS - t0)) s |" >>"$DEST/.steps"
    echo "--- $name: $what" | tee -a "$LOG"
}

rm -f "$DEST/.steps"
{
    echo "# qdlab CUDA check, $(date -u +%Y-%m-%dT%H:%MZ)"
    echo
    echo '```'
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1 || echo "nvidia-smi failed"
    echo "python: $PY ($($PY --version 2>&1))"
    $PY - <<'PYEOF' 2>&1
import importlib
for name in ("llvmlite", "numpy", "cupy", "pytest", "nvidia.cuda_nvcc"):
    try:
        m = importlib.import_module(name)
        print(f"{name}: {getattr(m, '__version__', 'present')}")
    except Exception as e:  # noqa: BLE001
        print(f"{name}: MISSING ({type(e).__name__}: {e})")
try:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.Target.from_triple("nvptx64-nvidia-cuda")
    print("llvmlite NVPTX target: present; LLVM", ".".join(map(str, llvm.llvm_version_info)))
except Exception as e:  # noqa: BLE001
    print(f"llvmlite NVPTX target: MISSING ({e})")
try:
    import cupy
    print("cupy.is_available():", cupy.is_available())
except Exception:  # noqa: BLE001
    pass
from qdlab.compiler.codegen import nvptx_jit
print("libdevice:", nvptx_jit.libdevice_path() or "NOT FOUND (set QDLAB_LIBDEVICE)")
PYEOF
    echo '```'
    echo
} | tee -a "$LOG" >>"$MD"
nvidia-smi 2>&1 | tee -a "$LOG" >/dev/null

step "gpu tests (pytest -m gpu tests/cuda)" 200 \
    "$PY" -m pytest -q -m gpu tests/cuda -p no:cacheprovider -o addopts="" --junitxml="$DEST/gpu_tests.xml"
step "compile benchmark (edit one construct)" 120 "$PY" bench/gpu_compile.py --loops 1 5 20 50 --out "$MD"
step "bandwidth benchmark (256M float32)" 80 "$PY" bench/gpu_bandwidth.py --n $((256 * 1024 * 1024)) --out "$MD"

{
    echo "## gpu tests"
    echo
    echo '```'
    grep -E "passed|failed|error|skipped" "$LOG" | grep -E "^[0-9]+ |^=+ .*(passed|failed)" | tail -3
    grep -E "^FAILED " "$LOG" | head -40
    echo '```'
    echo
    echo "## steps"
    echo
    echo "| step | result | time |"
    echo "|---|---|---|"
    cat "$DEST/.steps"
} >>"$MD"
rm -f "$DEST/.steps"
echo
cat "$MD"
