"""`qd.algorithms.exclusive_scan_add` of an ndarray: qdlab, Quadrants (its worker runs under the
Python named by `QDLAB_BENCH_QUADRANTS_PYTHON`, default this one) and NumPy's `cumsum`, on the
same data, in one run.

Quadrants' CPU backend refuses the scan (the kernel fails to compile), so its column records
that refusal rather than a time. qdlab's scan is one serial loop inside the caller's kernel and
NumPy's `cumsum` one serial loop too; the table checks that qdlab's result is NumPy's cumsum
shifted by one, bit for bit (floats too: both add left to right in the dtype). Each timing is the
best of `--reps` calls after one untimed (compiling) call.

    python bench/scan.py [--sizes 1000000,10000000] [--reps 5] [--out NAME]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import JSON_MARK, emit, fmt, markdown_table, report

QUADRANTS_PYTHON = os.environ.get("QDLAB_BENCH_QUADRANTS_PYTHON", sys.executable)
DTYPES = ("i32", "f32", "f64")


def make(dtype: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    if dtype == "i32":
        return rng.integers(-1000, 1000, n, dtype=np.int32)
    return rng.uniform(-1, 1, n).astype(np.float32 if dtype == "f32" else np.float64)


def worker(backend: str, dtype: str, n: int, reps: int, save: str) -> None:
    """Time the scan `reps` times after one untimed call; save the result to `save`."""
    if backend == "qdlab":
        import qdlab as qd
    else:
        import quadrants as qd  # lazy: the worker of the reference
    qd.init(arch=qd.cpu)
    dt = getattr(qd, dtype)
    wide = qd.u32 if dtype != "f64" else qd.u64
    arr, out = qd.ndarray(dt, n), qd.ndarray(dt, n)
    depth = 1
    while 256**depth < n:
        depth += 1
    scratch = qd.ndarray(wide, qd.algorithms.exclusive_scan_scratch_slots(n, depth))
    arr.from_numpy(make(dtype, n))

    @qd.kernel
    def scan(arr: qd.types.ndarray(), out: qd.types.ndarray(), scratch: qd.types.ndarray()):
        qd.algorithms.exclusive_scan_add(arr, out, scratch, n, dt, depth)

    try:
        scan(arr, out, scratch)
    except Exception as e:  # noqa: BLE001 - the reference's CPU backend refuses: recorded
        emit({"refused": f"{type(e).__name__}: {str(e).strip().splitlines()[-1]}"})
        return
    best = float("inf")
    for _ in range(reps):
        qd.sync()
        start = time.perf_counter()
        scan(arr, out, scratch)
        qd.sync()
        best = min(best, time.perf_counter() - start)
    np.save(save, out.to_numpy())
    emit({"seconds": best})


def run(python: str, backend: str, dtype: str, n: int, reps: int, save: str) -> dict:
    cmd = [python, __file__, "--worker", backend, dtype, str(n), str(reps), save]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith(JSON_MARK):
            return json.loads(line[len(JSON_MARK) :])
    return {"refused": f"the worker died: {done.stderr.strip().splitlines()[-1:]}"}


def numpy_time(dtype: str, n: int, reps: int) -> tuple[float, np.ndarray]:
    host = make(dtype, n)
    best = float("inf")
    total = host
    for _ in range(reps):
        start = time.perf_counter()
        total = np.cumsum(host, dtype=host.dtype)
        best = min(best, time.perf_counter() - start)
    return best, np.concatenate([[host.dtype.type(0)], total[:-1]])


def measure(dtype: str, n: int, reps: int, tmp: str) -> list[str]:
    path = os.path.join(tmp, "qdlab.npy")
    ours = run(sys.executable, "qdlab", dtype, n, reps, path)
    theirs = run(QUADRANTS_PYTHON, "quadrants", dtype, n, reps, os.path.join(tmp, "q.npy"))
    numpy_s, want = numpy_time(dtype, n, reps)
    if "seconds" not in ours:
        raise RuntimeError(f"qdlab: {ours}")
    same = np.array_equal(np.load(path), want)
    quadrants = fmt(theirs["seconds"]) if "seconds" in theirs else "refused on the CPU"
    return [
        f"{n:,}",
        dtype,
        fmt(ours["seconds"]),
        quadrants,
        fmt(numpy_s),
        fmt(ours["seconds"] / numpy_s),
        "yes" if same else "NO",
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", default=None, help="write bench/results/<OUT>.md")
    args = parser.parse_args()
    rows = []
    refusal = ""
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            for dtype in DTYPES:
                rows.append(measure(dtype, n, args.reps, tmp))
                print(" | ".join(rows[-1]), flush=True)
        got = run(QUADRANTS_PYTHON, "quadrants", "i32", 1000, 1, os.path.join(tmp, "q.npy"))
        refusal = got.get("refused", "")
    header = ["n", "dtype", "qdlab s", "quadrants s", "numpy s", "qdlab/numpy"]
    table = markdown_table(header + ["= shifted cumsum"], rows)
    notes = [
        "Best of the timed calls after one compiling call; each backend in its own process.",
        "numpy: `np.cumsum(a, dtype=a.dtype)` (an inclusive scan; qdlab's is exclusive).",
        f"Quadrants 1.3.3 on the CPU: `{refusal}`" if refusal else "Quadrants ran the scan.",
    ]
    if args.out:
        report(args.out, "exclusive_scan_add: qdlab vs Quadrants vs NumPy", table, notes)
    else:
        print(table)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        backend, dtype, n, reps, save = sys.argv[2:7]
        worker(backend, dtype, int(n), int(reps), save)
    else:
        main()
