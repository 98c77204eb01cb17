"""Streaming bandwidth on the GPU: qdlab kernels against CuPy's device-to-device copy, a CuPy
elementwise kernel and Quadrants on CUDA, all in one run.

Why this script exists: the CUDA backend's parallel loops are grid-stride loops emitted through
llvmlite's NVPTX target; this checks they stream memory as fast as the vendor's own copy (target:
>= 80 % of its bandwidth). Every variant reads N float32 and writes N float32 (`y = 2 * x + 1`, or a
copy) on device arrays. In this process (CuPy, qdlab) batches of `--reps` launches are timed with
CUDA events around each batch (median over 5 batches, after a warm-up); Quadrants runs in a worker
process (it bundles its own LLVM) and is timed by the wall clock over `--reps` launches between two
syncs, median of 3. Launches queue back to back, so at this size both measure the device's time.
Bandwidth counts bytes read plus bytes written. Each qdlab result is checked against the expected
array (the output is poisoned first).

Usage: ``python bench/gpu_bandwidth.py [--n 268435456] [--reps 20] [--out report.md]
[--summary lines.txt] [--deadline UNIX_TIME]``
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gpu import (
    ROOT,
    arguments,
    device_line,
    device_or_skip,
    fmt,
    markdown_table,
    quadrants_on_cuda,
    run_worker,
    time_left,
    verdict,
    worker,
    write,
)

sys.path.insert(0, str(ROOT))


def events_ms(cupy: object, fn: object, reps: int, batches: int = 5) -> list[float]:
    """Milliseconds per launch of each of `batches` batches of `reps` launches, each batch between
    two CUDA events (launches queue back to back: the device's time, not the host's)."""
    fn()  # warm-up (and, for qdlab, the compile)
    cupy.cuda.get_current_stream().synchronize()  # type: ignore[attr-defined]
    out = []
    for _ in range(batches):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()  # type: ignore[attr-defined]
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        out.append(cupy.cuda.get_elapsed_time(start, end) / reps)  # type: ignore[attr-defined]
    return out


def quadrants_worker(n: int, reps: int) -> dict:
    qd = quadrants_on_cuda()

    @qd.kernel
    def axpb(x: qd.types.ndarray(), y: qd.types.ndarray()):
        for i in range(x.shape[0]):
            y[i] = 2.0 * x[i] + 1.0

    x, y = qd.ndarray(qd.f32, (n,)), qd.ndarray(qd.f32, (n,))
    x.fill(3.0)
    axpb(x, y)  # warm-up and compile
    qd.sync()
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            axpb(x, y)
        qd.sync()
        samples.append((time.perf_counter() - t0) / reps * 1e3)
    ok = bool(y[0] == 7.0 and y[n - 1] == 7.0)
    return {"ms": statistics.median(samples), "min": min(samples), "check": ok}


AXPB = "qdlab `y[i] = 2 * x[i] + 1` (CuPy arrays)"
COPY = "CuPy device-to-device copy"
QUADRANTS = "Quadrants on CUDA `y[i] = 2 * x[i] + 1` (qd.ndarray; wall clock)"


def measure_here(args: object, cupy: object, qd: object) -> dict[str, tuple[float, float, str]]:
    """CuPy's copy and elementwise kernel and qdlab's kernels, on two arrays freed on return:
    (median ms, min ms, note) per variant."""

    @qd.kernel
    def axpb(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = 2.0 * x[i] + 1.0

    @qd.kernel
    def copy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i]

    n = args.n
    x = cupy.arange(n, dtype=cupy.float32) % 1024
    y = cupy.empty_like(x)
    elementwise = cupy.ElementwiseKernel(
        "float32 x", "float32 y", "y = 2.0f * x + 1.0f", "qd_bench_axpb"
    )
    variants = [  # (name, launch, check of y after it)
        (COPY, lambda: y.data.copy_from_device_async(x.data, n * 4), None),
        ("CuPy ElementwiseKernel `y = 2x + 1`", lambda: elementwise(x, y), None),
        (AXPB, lambda: axpb(x, y), lambda: cupy.array_equal(y, 2 * x + 1)),
        ("qdlab `y[i] = x[i]` (CuPy arrays)", lambda: copy(x, y), lambda: cupy.array_equal(y, x)),
    ]
    rows: dict[str, tuple[float, float, str]] = {}
    for name, fn, check in variants:
        if not time_left(args, 10):
            rows[name] = (0.0, 0.0, "not run (time box)")
            continue
        try:
            y.fill(-1.0)
            ms = events_ms(cupy, fn, args.reps)
            ok = check is None or bool(check())
            rows[name] = (statistics.median(ms), min(ms), "" if ok else "WRONG RESULT")
        except Exception as e:  # noqa: BLE001 - reported in the table
            rows[name] = (0.0, 0.0, f"error: {type(e).__name__}: {str(e)[:120]}")
    return rows


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--n", type=int, default=256 * 1024 * 1024)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    if args.worker == "quadrants":
        worker(lambda: quadrants_worker(args.n, args.reps))
        return
    title = f"## Streaming bandwidth: {args.n:,} float32 ({args.n * 4 / 2**30:.1f} GiB per array)"
    cupy = device_or_skip(args, title)
    import qdlab as qd

    qd.init(arch=qd.cuda)
    rows = measure_here(args, cupy, qd)
    cupy.get_default_memory_pool().free_all_blocks()
    q = {"error": "not run (time box)"}
    if time_left(args, 30):
        q = run_worker(__file__, "quadrants", ["--n", str(args.n), "--reps", str(args.reps)], 120)
    if "error" in q:
        rows[QUADRANTS] = (0.0, 0.0, q["error"])
    else:
        rows[QUADRANTS] = (q["ms"], q["min"], "" if q["check"] else "WRONG RESULT")
    nbytes = 2 * args.n * 4
    copy_ms = rows[COPY][0]
    table = [
        [
            name,
            fmt(med) if med else "n/a",
            fmt(lo) if lo else "n/a",
            fmt(nbytes / med / 1e6, 4) if med else "n/a",
            f"{copy_ms / med:.0%}" if med and copy_ms else "n/a",
            note,
        ]
        for name, (med, lo, note) in rows.items()
    ]
    mine, theirs = rows[AXPB], rows[QUADRANTS]
    if mine[0] and copy_ms:
        share = copy_ms / mine[0]
        summary = [
            f"bandwidth: qdlab 2x+1 at {share:.0%} of the CuPy device-to-device copy "
            f"({fmt(nbytes / mine[0] / 1e6, 4)} vs {fmt(nbytes / copy_ms / 1e6, 4)} GB/s; "
            f"target >= 80%: {verdict(share >= 0.8 and not mine[2])}) {mine[2]}".rstrip()
        ]
    else:
        summary = [f"bandwidth: no qdlab figure (qdlab: {mine[2]}; copy: {rows[COPY][2]})"]
    if theirs[0] and mine[0]:
        summary.append(
            f"bandwidth: qdlab 2x+1 time / Quadrants on CUDA: {mine[0] / theirs[0]:.2f}x"
        )
    elif theirs[2]:
        summary.append(f"bandwidth: Quadrants on CUDA: {theirs[2]}")
    header = ["variant", "median ms", "min ms", "GB/s (read + write)", "vs copy", "note"]
    text = "\n".join(
        [title, "", device_line(), "", markdown_table(header, table), ""]
        + [f"- {line}" for line in summary]
    )
    write(args, text, summary)


if __name__ == "__main__":
    main()
