"""Run time of a `@qd.real_func` with early returns, called in a parallel loop: qdlab vs Quadrants.

Why: qdlab lowers a real_func at each call (a loop that runs once, each `return` a store and a
break), where Quadrants makes a real call; this measures what that costs or saves. The kernel
counts Collatz steps for 2**20 starting values (at most 1000 steps, a `return` inside the loop).
A second kernel calls a recursive real_func (which both make real calls, each checking its depth
in qdlab: `abi.MAX_CALL_DEPTH`) 2**20 times, 32 calls deep on average.
Each backend runs in its own worker subprocess (both bundle LLVM).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from _common import fmt, markdown_table, median_time_s, report, run_worker, worker_main

N = 1 << 20


def body(qd: Any) -> dict[str, Any]:
    globals()["qd"] = qd  # the kernels' annotations name `qd`, read from this module's globals

    @qd.real_func
    def collatz(n: qd.i32) -> qd.i32:
        m = n
        for s in range(1000):
            if m == 1:
                return s
            m = m // 2 if m % 2 == 0 else 3 * m + 1
        return -1

    @qd.kernel
    def steps(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(out.shape[0]):
            out[i] = collatz(i % 1000 + 1)

    @qd.real_func
    def tri(n: qd.i32) -> qd.i32:
        if n <= 0:
            return 0
        return tri(n - 1) + n

    @qd.kernel
    def tris(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(out.shape[0]):
            out[i] = tri(i % 64)

    out = qd.ndarray(qd.i32, shape=(N,))
    t0 = time.perf_counter()
    steps(out)
    first = time.perf_counter() - t0
    run = median_time_s(lambda: steps(out), reps=5)
    total = int(out.to_numpy().sum(dtype=np.int64))
    tris(out)
    return {
        "first_ms": first * 1e3,
        "run_ms": run * 1e3,
        "sum": total,
        "rec_ms": median_time_s(lambda: tris(out), reps=5) * 1e3,
        "rec_sum": int(out.to_numpy().sum(dtype=np.int64)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker")
    args = parser.parse_args()
    if args.worker:
        worker_main(args.worker, body)
        return
    res = {b: run_worker(__file__, b) for b in ("qdlab", "quadrants")}
    rows = []
    for b, r in res.items():
        if "error" in r:
            rows.append([b, r["error"], "", "", "", ""])
        else:
            rows.append(
                [b, fmt(r["first_ms"]) + " ms", fmt(r["run_ms"]) + " ms", str(r["sum"])]
                + [fmt(r["rec_ms"]) + " ms", str(r["rec_sum"])]
            )
    notes = []
    if all("error" not in r for r in res.values()):
        ratio = res["quadrants"]["run_ms"] / res["qdlab"]["run_ms"]
        notes.append(
            f"qdlab runs the kernel {fmt(ratio)}x as fast as Quadrants (same sum: "
            f"{res['qdlab']['sum'] == res['quadrants']['sum']})."
        )
    header = [
        "backend",
        "first call",
        "run (median of 5)",
        "checksum",
        "recursive: run",
        "checksum",
    ]
    table = markdown_table(header, rows)
    report(
        "real_func", f"A real_func with early returns in a parallel loop ({N} calls)", table, notes
    )


if __name__ == "__main__":
    main()
