"""`qd.algorithms.parallel_sort` of key/value fields: qdlab, Quadrants (its worker runs under the
Python named by `QDLAB_BENCH_QUADRANTS_PYTHON`, default this one) and NumPy's
stable argsort plus a gather, on the same data, in one run.

Two inputs per size: random i32 keys in [0, 2**31) with their index as the value (equal keys
with different values occur: qdlab runs Quadrants' sorting network as kernels, to give its order
of equal keys), and a random permutation of 0..n-1 (distinct keys: every sort gives the same
bits, qdlab sorts on the host). Each backend's best of `--reps` timed calls after one untimed
(compiling) call; the two backends' workers are called in turn, so both meet the same load on a
shared machine. Each saves its sorted arrays and the parent checks qdlab's are Quadrants' bit for
bit.

    python bench/sort.py [--sizes 1000000,10000000] [--reps 3] [--out NAME]
"""

from __future__ import annotations

import argparse
import json
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

QUADRANTS_PYTHON = os.environ.get("QDLAB_BENCH_QUADRANTS_PYTHON", sys.executable)
CASES = ("ties", "distinct")


def make(case: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    if case == "ties":
        keys = rng.integers(0, 2**31 - 1, n, dtype=np.int32)
    else:
        keys = rng.permutation(n).astype(np.int32)
    return keys, np.arange(n, dtype=np.int32)


def worker(backend: str, case: str, n: int) -> None:
    """Sort on each `run` line of stdin (the same input each time) and print the seconds; on
    `save PATH`, save the last result there; stop at the end of input."""
    warnings.simplefilter("ignore", DeprecationWarning)
    if backend == "qdlab":
        import qdlab as qd
    else:
        import quadrants as qd  # lazy: the worker of the reference
    qd.init(arch=qd.cpu)
    keys_np, values_np = make(case, n)
    keys, values = qd.field(qd.i32, n), qd.field(qd.i32, n)
    for line in sys.stdin:
        if line.startswith("save "):
            np.save(line[5:].strip(), np.stack([keys.to_numpy(), values.to_numpy()]))
            emit({"saved": True})
            continue
        keys.from_numpy(keys_np)
        values.from_numpy(values_np)
        qd.sync()
        start = time.perf_counter()
        qd.algorithms.parallel_sort(keys, values)
        qd.sync()
        emit({"seconds": time.perf_counter() - start})


class Worker:
    """A backend's worker process, asked for one timed sort at a time."""

    def __init__(self, python: str, backend: str, case: str, n: int) -> None:
        cmd = [python, __file__, "--worker", backend, case, str(n)]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )

    def ask(self, line: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        for out in self.proc.stdout:
            if out.startswith(JSON_MARK):
                return json.loads(out[len(JSON_MARK) :])
        return {"error": "the worker died"}

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def numpy_time(case: str, n: int, reps: int) -> float:
    keys, values = make(case, n)
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        order = np.argsort(keys, kind="stable")
        keys[order], values[order]
        best = min(best, time.perf_counter() - start)
    return best


def measure(case: str, n: int, reps: int, tmp: str) -> list[str]:
    workers = {
        "qdlab": Worker(sys.executable, "qdlab", case, n),
        "quadrants": Worker(QUADRANTS_PYTHON, "quadrants", case, n),
    }
    best = dict.fromkeys(workers, float("inf"))
    for rep in range(reps + 1):  # in turn; the first call compiles
        for name, w in workers.items():
            got = w.ask("run")
            if "seconds" not in got:
                raise RuntimeError(f"{name}: {got}")
            if rep:
                best[name] = min(best[name], got["seconds"])
    paths = {name: os.path.join(tmp, f"{name}.npy") for name in workers}
    for name, w in workers.items():
        w.ask(f"save {paths[name]}")
        w.close()
    same = np.array_equal(np.load(paths["qdlab"]), np.load(paths["quadrants"]))
    numpy_s = numpy_time(case, n, reps)
    ours, theirs = best["qdlab"], best["quadrants"]
    return [
        f"{n:,}",
        case,
        fmt(ours),
        fmt(theirs),
        fmt(numpy_s),
        fmt(ours / theirs),
        fmt(ours / numpy_s),
        "yes" if same else "NO",
    ]


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
                rows.append(measure(case, n, args.reps, tmp))
                print(" | ".join(rows[-1]), flush=True)
    header = ["n", "keys", "qdlab s", "quadrants s", "numpy s", "qdlab/quadrants", "qdlab/numpy"]
    table = markdown_table(header + ["same bits"], rows)
    notes = [
        (
            "Best of the timed calls after one compiling call; each backend in its own process, "
            "the two called in turn."
        ),
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
        backend, case, n = sys.argv[2:5]
        worker(backend, case, int(n))
    else:
        main()
