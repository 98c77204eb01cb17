"""`qd.algorithms.parallel_sort` of key/value fields: qdlab, Quadrants (its worker runs under the
Python named by `QDLAB_BENCH_QUADRANTS_PYTHON`, default /work/gvenv/bin/python) and NumPy's
stable argsort plus a gather, on the same data, in one run.

Two inputs per size: random i32 keys in [0, 2**31) with their index as the value (equal keys
with different values occur: qdlab runs Quadrants' sorting network as kernels, to give its order
of equal keys), and a random permutation of 0..n-1 (distinct keys: every sort gives the same
bits, qdlab sorts on the host). Each backend's best of `--reps` timed calls after one untimed
(compiling) call; each worker saves its sorted arrays and the parent checks qdlab's are Quadrants'
bit for bit.

    python bench/sort.py [--sizes 1000000,10000000] [--reps 3] [--out NAME]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import JSON_MARK, emit, fmt, markdown_table, report

QUADRANTS_PYTHON = os.environ.get("QDLAB_BENCH_QUADRANTS_PYTHON", "/work/gvenv/bin/python")
CASES = ("ties", "distinct")


def make(case: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    if case == "ties":
        keys = rng.integers(0, 2**31 - 1, n, dtype=np.int32)
    else:
        keys = rng.permutation(n).astype(np.int32)
    return keys, np.arange(n, dtype=np.int32)


def worker(backend: str, case: str, n: int, reps: int, out: str) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    if backend == "qdlab":
        import qdlab as qd
    else:
        import quadrants as qd  # lazy: the worker of the reference
    qd.init(arch=qd.cpu)
    keys_np, values_np = make(case, n)
    keys, values = qd.field(qd.i32, n), qd.field(qd.i32, n)
    best = float("inf")
    for rep in range(reps + 1):
        keys.from_numpy(keys_np)
        values.from_numpy(values_np)
        qd.sync()
        start = time.perf_counter()
        qd.algorithms.parallel_sort(keys, values)
        qd.sync()
        if rep:  # the first call compiles
            best = min(best, time.perf_counter() - start)
    np.save(out, np.stack([keys.to_numpy(), values.to_numpy()]))
    emit({"seconds": best})


def run(python: str, backend: str, case: str, n: int, reps: int, out: str) -> dict:
    cmd = [python, __file__, "--worker", backend, case, str(n), str(reps), out]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for line in proc.stdout.splitlines():
        if line.startswith(JSON_MARK):
            import json  # lazy: only the parent reads JSON

            return json.loads(line[len(JSON_MARK) :])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"worker failed: {tail[:120]}"}


def numpy_time(case: str, n: int, reps: int) -> float:
    keys, values = make(case, n)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        order = np.argsort(keys, kind="stable")
        keys[order], values[order]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", default=None, help="write bench/results/<OUT>.md")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            for case in CASES:
                got = {}
                for backend, python in (("qdlab", sys.executable), ("quadrants", QUADRANTS_PYTHON)):
                    out = os.path.join(tmp, f"{backend}.npy")
                    got[backend] = run(python, backend, case, n, args.reps, out)
                    got[backend]["out"] = out
                same = "?"
                if "seconds" in got["qdlab"] and "seconds" in got["quadrants"]:
                    a, b = np.load(got["qdlab"]["out"]), np.load(got["quadrants"]["out"])
                    same = "yes" if np.array_equal(a, b) else "NO"
                numpy_s = numpy_time(case, n, args.reps)
                ours, theirs = got["qdlab"].get("seconds"), got["quadrants"].get("seconds")
                rows.append(
                    [
                        f"{n:,}",
                        case,
                        fmt(ours) if ours else got["qdlab"]["error"],
                        fmt(theirs) if theirs else got["quadrants"]["error"],
                        fmt(numpy_s),
                        fmt(ours / theirs) if ours and theirs else "-",
                        fmt(ours / numpy_s) if ours else "-",
                        same,
                    ]
                )
                print(" | ".join(rows[-1]), flush=True)
    header = ["n", "keys", "qdlab s", "quadrants s", "numpy s", "qdlab/quadrants", "qdlab/numpy"]
    table = markdown_table(header + ["same bits"], rows)
    notes = [
        "Best of the timed calls after one compiling call, per backend, in its own process.",
        "numpy: `np.argsort(keys, kind='stable')` and a gather of keys and values.",
        (
            "ties: random i32 keys (equal keys with different values occur), the value an index; "
            "distinct: a random permutation."
        ),
    ]
    if args.out:
        report(args.out, "parallel_sort: qdlab vs Quadrants vs NumPy", table, notes)
    else:
        print(table)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        backend, case, n, reps, out = sys.argv[2:7]
        worker(backend, case, int(n), int(reps), out)
    else:
        main()
