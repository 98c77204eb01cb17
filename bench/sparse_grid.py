"""A 3-D sparse grid with about 1% of its cells active: qdlab vs Quadrants, time and peak memory.

Why: a sparse SNode is a dense array in qdlab plus a hidden activity field per sparse level, and a
struct-for walks the index space testing activity, where Quadrants allocates active blocks only
and lists them before a struct-for. This measures what that costs on the two layouts Quadrants
programs use for sparse grids:

- `pointer`: `qd.root.pointer(qd.ijk, N // B).dense(qd.ijk, B)`, 1% of the blocks active (whole
  blocks: a narrow band of material, as in a fluid or MPM grid);
- `bitmasked`: `qd.root.pointer(qd.ijk, N // B).bitmasked(qd.ijk, B)`, 1% of the cells active,
  scattered in 10% of the blocks.

Each step runs a 7-point stencil struct-for over the active cells of `x` into `y` and a
struct-for reduction of `y`. Reported: the first step (compile included), the median of the warm
steps (wall time), the CPU time per step (all threads: steadier when other work shares the host;
qdlab's warm steps are timed once the optimised objects it builds in a background thread after
the first step are in, so that thread's CPU time is not counted as a step's),
the checksum (the same on both), and the worker process' peak RSS. Each backend runs in a
worker subprocess (both bundle LLVM): qdlab under this Python, Quadrants under
`$QDLAB_BENCH_QUADRANTS_PYTHON` (default: this interpreter).
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import sys
import time
from typing import Any

import numpy as np
from _common import fmt, markdown_table, median_time_s, report, run_worker, worker_main

N, B = int(os.environ.get("SPARSE_GRID_N", "256")), 8
STEPS = 10


def active_cells(layout: str) -> np.ndarray:
    """The cells to activate (k, 3), the same on both backends."""
    rng = np.random.default_rng(0)
    nb = N // B
    inner = nb - 2  # blocks off the grid's faces: the stencil reads one cell beyond each
    if layout == "pointer":  # 1% of the blocks, whole
        blocks = rng.choice(inner**3, size=nb**3 // 100, replace=False)
        bi = np.stack(np.unravel_index(blocks, (inner,) * 3), 1) + 1
        local = np.stack(np.unravel_index(np.arange(B**3), (B,) * 3), 1)
        cells = (bi[:, None, :] * B + local[None, :, :]).reshape(-1, 3)
    else:  # 1% of the cells, in 10% of the blocks
        blocks = rng.choice(inner**3, size=nb**3 // 10, replace=False)
        bi = np.stack(np.unravel_index(blocks, (inner,) * 3), 1) + 1
        picks = rng.integers(0, B, size=(len(bi), B**3 // 10, 3))
        cells = (bi[:, None, :] * B + picks).reshape(-1, 3)
    return np.ascontiguousarray(cells, dtype=np.int32)


def body(qd: Any) -> dict[str, Any]:
    globals()["qd"] = qd  # the kernels' annotations name `qd`, read from this module's globals
    layout = os.environ["SPARSE_GRID_LAYOUT"]
    x, y = qd.field(qd.f32), qd.field(qd.f32)
    blocks = qd.root.pointer(qd.ijk, N // B)
    cells = blocks.dense(qd.ijk, B) if layout == "pointer" else blocks.bitmasked(qd.ijk, B)
    cells.place(x, y)

    @qd.kernel
    def activate(idx: qd.types.ndarray(dtype=qd.i32, ndim=2)):
        for p in range(idx.shape[0]):
            i, j, k = idx[p, 0], idx[p, 1], idx[p, 2]
            x[i, j, k] = qd.cast((i * 7 + j * 3 + k) % 11, qd.f32)

    @qd.kernel
    def step() -> qd.f64:
        for i, j, k in x:
            y[i, j, k] = 6.0 * x[i, j, k] - (
                x[i - 1, j, k]
                + x[i + 1, j, k]
                + x[i, j - 1, k]
                + x[i, j + 1, k]
                + x[i, j, k - 1]
                + x[i, j, k + 1]
            )
        total = qd.cast(0.0, qd.f64)  # the sum of whole numbers: exact, in any order
        for i, j, k in y:
            total += qd.cast(y[i, j, k] * y[i, j, k], qd.f64)
        return total

    idx = active_cells(layout)
    activate(idx)
    t0 = time.perf_counter()
    checksum = step()
    first = time.perf_counter() - t0
    tiers = sys.modules.get("qdlab.compiler.runtime.tiers")
    if tiers is not None:  # qdlab: the optimised objects it builds in the background are in
        tiers.settle_all()
    warm = median_time_s(step, reps=STEPS)
    c0 = time.process_time()  # the CPU time of every thread: steadier than wall time on a busy host
    for _ in range(STEPS):
        step()
    cpu = (time.process_time() - c0) / STEPS
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "active": len(np.unique(idx, axis=0)),
        "first_ms": first * 1e3,
        "step_ms": warm * 1e3,
        "cpu_ms": cpu * 1e3,
        "checksum": float(checksum),
        "rss_mb": rss_mb,
    }


def median_round(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over a backend's rounds (its first error, if a round failed)."""
    for r in results:
        if "error" in r:
            return r
    return {
        k: float(np.median([r[k] for r in results])) if isinstance(v, (int, float)) else v
        for k, v in results[0].items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker")
    parser.add_argument(
        "--rounds", type=int, default=3, help="worker runs per backend, alternating (median kept)"
    )
    args = parser.parse_args()
    if args.worker:
        worker_main(args.worker, body)
        return
    ref_python = os.environ.get("QDLAB_BENCH_QUADRANTS_PYTHON", sys.executable)
    rows, notes = [], []
    for layout in ("pointer", "bitmasked"):
        os.environ["SPARSE_GRID_LAYOUT"] = layout
        rounds: dict[str, list[dict[str, Any]]] = {"qdlab": [], "quadrants": []}
        for _ in range(args.rounds):  # the backends alternate: a swing of the host's load hits both
            rounds["qdlab"].append(run_worker(__file__, "qdlab"))
            rounds["quadrants"].append(run_worker(__file__, "quadrants", python=ref_python))
        res = {b: median_round(r) for b, r in rounds.items()}
        if args.rounds > 1 and all("error" not in r for r in res.values()):
            each = [
                fmt(a["step_ms"] / b["step_ms"]) + "x"
                for a, b in zip(rounds["qdlab"], rounds["quadrants"])
            ]
            notes.append(f"{layout}: warm step vs Quadrants in each round: {', '.join(each)}.")
        for b, r in res.items():
            if "error" in r:
                rows.append([layout, b, r["error"], "", "", "", "", "", "", ""])
                continue
            ref = res["quadrants"]
            ok = "error" not in ref
            rows.append(
                [
                    layout,
                    b,
                    str(int(r["active"])),
                    fmt(r["first_ms"]) + " ms",
                    fmt(r["step_ms"]) + " ms",
                    (fmt(r["step_ms"] / ref["step_ms"]) + "x") if ok else "",
                    fmt(r["cpu_ms"]) + " ms",
                    (fmt(r["cpu_ms"] / ref["cpu_ms"]) + "x") if ok else "",
                    fmt(r["rss_mb"]) + " MB",
                    (fmt(r["rss_mb"] / ref["rss_mb"]) + "x") if ok else "",
                ]
            )
        if all("error" not in r for r in res.values()):
            a, b_ = res["qdlab"]["checksum"], res["quadrants"]["checksum"]
            notes.append(
                f"{layout}: checksums {a:.6g} (qdlab) and {b_:.6g} (Quadrants), "
                f"{'equal' if a == b_ else 'DIFFERENT'}."
            )
    header = [
        "layout",
        "backend",
        "active cells",
        "first step",
        f"warm step (median of {STEPS})",
        "time vs Quadrants",
        "CPU time per step",
        "CPU vs Quadrants",
        "peak RSS",
        "RSS vs Quadrants",
    ]
    notes.append(
        f"Grid {N}^3 ({N**3} cells) in {B}^3 blocks; a step is a 7-point stencil struct-for "
        "over x's active cells into y and a struct-for reduction of y; ratios are qdlab / "
        f"Quadrants (below 1 is better for qdlab); each figure is the median of {args.rounds} "
        "worker runs per backend, the two backends alternating."
    )
    report(
        f"{datetime.date.today()}-sparse-grid",  # dated: each run is kept beside the earlier
        f"A 3-D sparse grid with about 1% of its cells active ({N}^3)",
        markdown_table(header, rows),
        notes,
    )


if __name__ == "__main__":
    main()
