"""Build and solve a 2-D Poisson system with qd.linalg: qdlab vs Quadrants vs SciPy directly.

Why this script exists: `qd.linalg` in qdlab is SciPy's sparse arrays and SuperLU where Quadrants
has Eigen, so its cost is what matters next to the reference's. This times, on the 5-point
Laplacian of an N x N grid (N = 316: 99,856 unknowns, 499,280 triplets), each step a program
takes: a kernel that adds the triplets to a `SparseMatrixBuilder` (compiled beforehand), `build()`,
`SparseSolver.compute()` (ordering and factorization) and `solve()`, for the LLT, LDLT and LU
solvers in f64 with the AMD ordering; then the same matrix made and factored by SciPy directly
(`coo_array` -> CSC, `splu`), qdlab's floor. Each Quadrants-API backend runs in its own process
(Quadrants with `--quadrants-python`, default this Python); each time is the median of `--reps`.

Usage: ``.venv/bin/python bench/sparse_solve.py [--n 316] [--reps 3] [--quadrants-python PY]``
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.
import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt, markdown_table, report, run_worker, worker_main

SOLVERS = ("LLT", "LDLT", "LU")
STEPS = ("fill", "build", "compute", "solve")


def poisson_kernel(qd: Any, n: int) -> Any:
    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder()):
        for i, j in qd.ndrange(n, n):
            r = i * n + j
            A[r, r] += 4.0
            if i > 0:
                A[r, r - n] -= 1.0
            if i < n - 1:
                A[r, r + n] -= 1.0
            if j > 0:
                A[r, r - 1] -= 1.0
            if j < n - 1:
                A[r, r + 1] -= 1.0

    return fill


def worker_body(qd: Any, n: int, reps: int) -> dict[str, Any]:
    size = n * n
    fill = poisson_kernel(qd, n)
    warm = qd.linalg.SparseMatrixBuilder(size, size, max_num_triplets=5 * size, dtype=qd.f64)
    fill(warm)  # the compile
    warm.build()
    b = np.ones(size)
    out: dict[str, Any] = {}
    for solver_type in SOLVERS:
        times: dict[str, list[float]] = {s: [] for s in STEPS}
        residual = 0.0
        for _ in range(reps):
            builder = qd.linalg.SparseMatrixBuilder(
                size, size, max_num_triplets=5 * size, dtype=qd.f64
            )
            t0 = time.perf_counter()
            fill(builder)
            qd.sync()
            t1 = time.perf_counter()
            A = builder.build()
            t2 = time.perf_counter()
            solver = qd.linalg.SparseSolver(dtype=qd.f64, solver_type=solver_type)
            solver.compute(A)
            t3 = time.perf_counter()
            x = solver.solve(b)
            t4 = time.perf_counter()
            for step, dt in zip(STEPS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                times[step].append(dt)
            residual = float(np.abs(A @ x - b).max())
        out[solver_type] = {s: statistics.median(v) for s, v in times.items()}
        out[solver_type]["residual"] = residual
    return out


def scipy_direct(n: int, reps: int) -> dict[str, Any]:
    """The same matrix from NumPy triplets, factored by SuperLU as qdlab's LLT calls it."""
    import scipy.sparse as sp  # lazy: only the parent needs SciPy
    import scipy.sparse.linalg as spla

    size = n * n
    i, j = np.divmod(np.arange(size), n)
    r = np.arange(size)
    rows = [r]
    cols = [r]
    vals = [np.full(size, 4.0)]
    for ok, d in ((i > 0, -n), (i < n - 1, n), (j > 0, -1), (j < n - 1, 1)):
        rows.append(r[ok])
        cols.append(r[ok] + d)
        vals.append(np.full(int(ok.sum()), -1.0))
    rows_a, cols_a, vals_a = (np.concatenate(x) for x in (rows, cols, vals))
    b = np.ones(size)
    times: dict[str, list[float]] = {s: [] for s in STEPS}
    residual = 0.0
    for _ in range(reps):
        t1 = time.perf_counter()
        A = sp.coo_array((vals_a, (rows_a, cols_a)), shape=(size, size)).tocsc()
        t2 = time.perf_counter()
        f = spla.splu(
            A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True}
        )
        t3 = time.perf_counter()
        x = f.solve(b)
        t4 = time.perf_counter()
        for step, dt in zip(STEPS, (0.0, t2 - t1, t3 - t2, t4 - t3)):
            times[step].append(dt)
        residual = float(np.abs(A @ x - b).max())
    out = {s: statistics.median(v) for s, v in times.items()}
    out["residual"] = residual
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=316, help="grid side (unknowns: n*n)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quadrants-python", default=None, help="the Python that has quadrants")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker_main(args.worker, lambda qd: worker_body(qd, args.n, args.reps))
        return
    extra = ["--n", str(args.n), "--reps", str(args.reps)]
    results = {
        "qdlab": run_worker(__file__, "qdlab", extra),
        "quadrants": run_worker(__file__, "quadrants", extra, python=args.quadrants_python),
    }
    direct = scipy_direct(args.n, args.reps)
    rows = []
    for solver_type in SOLVERS:
        ours, ref = results["qdlab"].get(solver_type), results["quadrants"].get(solver_type)
        for step in (*STEPS, "total"):
            q = sum(ours[s] for s in STEPS) if ours and step == "total" else (ours or {}).get(step)
            r = sum(ref[s] for s in STEPS) if ref and step == "total" else (ref or {}).get(step)
            sp_t = sum(direct[s] for s in STEPS) if step == "total" else direct[step]
            rows.append(
                [
                    solver_type if step == "fill" else "",
                    step,
                    fmt(q * 1e3 if q is not None else None),
                    fmt(r * 1e3 if r is not None else None),
                    fmt(sp_t * 1e3) if solver_type == "LLT" else "",
                    fmt(q / r, 2) if q is not None and r else "n/a",
                ]
            )
    header = ["solver", "step", "qdlab ms", "quadrants ms", "scipy ms", "qdlab / quadrants"]
    notes = [
        f"2-D Poisson, {args.n}x{args.n} grid: {args.n**2} unknowns, f64, AMD ordering; median of "
        f"{args.reps}. Residuals max|Ax - b|: "
        + ", ".join(
            f"{k} {t}: {v.get('residual', float('nan')):.1e}"
            for k, res in results.items()
            if "error" not in res
            for t, v in res.items()
            if isinstance(v, dict)
        ),
        (
            "scipy: the same triplets as NumPy arrays (no kernel), `coo_array(...).tocsc()` and "
            "`splu` in symmetric mode, as qdlab's LLT calls it (its fill step is zero)."
        ),
        (
            "quadrants: Eigen's SimplicialLLT / SimplicialLDLT / SparseLU; qdlab: SciPy's SuperLU "
            "(docs/lang/linalg.md says why)."
        ),
    ]
    for k, res in results.items():
        if "error" in res:
            notes.append(f"{k}: {res['error']}")
    report(
        f"{time.strftime('%Y-%m-%d')}-sparse-solve",
        "Sparse build and solve: qdlab vs Quadrants vs SciPy",
        markdown_table(header, rows),
        notes,
    )


if __name__ == "__main__":
    main()
