"""Build and solve a 2-D Poisson system with qd.linalg: qdlab, Quadrants, the libraries directly.

Why this script exists: `qd.linalg` in qdlab is SciPy's sparse arrays, CHOLMOD (LLT, LDLT) and
SuperLU (LU) where Quadrants has Eigen, so its cost is what matters next to the reference's. This
times, on the 5-point Laplacian of an N x N grid (N = 316: 99,856 unknowns, 499,280 triplets), each
step a program takes: a kernel that adds the triplets to a `SparseMatrixBuilder` (compiled
beforehand), `build()`, `SparseSolver.compute()` (ordering and factorization) and `solve()`, for the
LLT, LDLT and LU solvers in f64 with the AMD ordering; then the same matrix made from NumPy triplets
(`coo_array` -> CSC) and factored by the libraries directly: CHOLMOD's supernodal L L^T through
`cvxopt.cholmod` (qdlab's floor for LLT and LDLT) and SuperLU's `splu` in symmetric mode (what
qdlab's LLT and LDLT called before). Each Quadrants-API backend runs in its own process (Quadrants
with `--quadrants-python`, default this Python); each time is the median of `--reps`.

Usage: ``.venv/bin/python bench/sparse_solve.py [--n 316] [--reps 3] [--quadrants-python PY]``
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.
import argparse
import os
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


def direct(n: int, reps: int, library: str) -> dict[str, Any]:
    """The same matrix from NumPy triplets, factored by `library` ('cholmod' or 'superlu')."""
    import cvxopt  # lazy: only the parent needs them
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from cvxopt import cholmod

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
        if library == "cholmod":
            low = sp.tril(A, format="coo")
            m = cvxopt.spmatrix(
                cvxopt.matrix(low.data),
                cvxopt.matrix(low.row.astype(np.int64)),
                cvxopt.matrix(low.col.astype(np.int64)),
                (size, size),
            )
            f = cholmod.symbolic(m, uplo="L")
            cholmod.numeric(m, f)
        else:
            f = spla.splu(
                A,
                permc_spec="MMD_AT_PLUS_A",
                diag_pivot_thresh=0.0,
                options={"SymmetricMode": True},
            )
        t3 = time.perf_counter()
        if library == "cholmod":
            xc = cvxopt.matrix(b)
            cholmod.solve(f, xc)
            x = np.array(xc).reshape(-1)
        else:
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
    load0 = os.getloadavg()
    results = {
        "qdlab": run_worker(__file__, "qdlab", extra),
        "quadrants": run_worker(__file__, "quadrants", extra, python=args.quadrants_python),
    }
    libs = {lib: direct(args.n, args.reps, lib) for lib in ("cholmod", "superlu")}
    load1 = os.getloadavg()
    rows = []
    for solver_type in SOLVERS:
        ours, ref = results["qdlab"].get(solver_type), results["quadrants"].get(solver_type)
        for step in (*STEPS, "total"):
            q = sum(ours[s] for s in STEPS) if ours and step == "total" else (ours or {}).get(step)
            r = sum(ref[s] for s in STEPS) if ref and step == "total" else (ref or {}).get(step)
            lib_t = {
                lib: sum(d[s] for s in STEPS) if step == "total" else d[step]
                for lib, d in libs.items()
            }
            rows.append(
                [
                    solver_type if step == "fill" else "",
                    step,
                    fmt(q * 1e3 if q is not None else None),
                    fmt(r * 1e3 if r is not None else None),
                    *(fmt(t * 1e3) if solver_type == "LLT" else "" for t in lib_t.values()),
                    fmt(q / r, 2) if q is not None and r else "n/a",
                ]
            )
    header = [
        "solver",
        "step",
        "qdlab ms",
        "quadrants ms",
        "cholmod ms",
        "superlu ms",
        "qdlab / quadrants",
    ]
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
            "cholmod, superlu: the same triplets as NumPy arrays (no kernel, so no fill step), "
            "`coo_array(...).tocsc()`, then CHOLMOD's supernodal L L^T on the lower triangle "
            "(`cvxopt.cholmod`, as qdlab's LLT and LDLT call it on a positive definite matrix) "
            "or `splu` in symmetric mode (as they called it before)."
        ),
        (
            "quadrants: Eigen's SimplicialLLT / SimplicialLDLT / SparseLU; qdlab: CHOLMOD for "
            "LLT and LDLT, SciPy's SuperLU for LU (docs/lang/linalg.md says why)."
        ),
        (
            f"Load average (1, 5, 15 min) at the start: {', '.join(f'{x:.1f}' for x in load0)}; "
            f"at the end: {', '.join(f'{x:.1f}' for x in load1)} ({os.cpu_count()} cores, "
            "shared with other work)."
        ),
    ]
    for k, res in results.items():
        if "error" in res:
            notes.append(f"{k}: {res['error']}")
    report(
        f"{time.strftime('%Y-%m-%d')}-sparse-solve",
        "Sparse build and solve: qdlab vs Quadrants vs the libraries directly",
        markdown_table(header, rows),
        notes,
    )


if __name__ == "__main__":
    main()
