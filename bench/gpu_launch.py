"""Launch overhead on the GPU: a tiny kernel (`c[i] = a[i] + b[i]` over 16 float32) called in a
loop, qdlab against Quadrants on CUDA and against CuPy's own kernels doing the same work.

Why this script exists: in simulation loops many kernels touch few elements, so the fixed cost of a
call dominates; the target is qdlab at most 0.5x Quadrants' time per call on the same GPU. Calls are
timed in batches of `--batch`, each batch ending with a device sync, median over batches, in µs per
call. qdlab rows: `qd.ndarray`s on the device, CuPy arrays, and, to place the cost, the raw CuPy
launch of qdlab's own compiled task (what qdlab adds on top of it is argument binding, the words'
upload and the header's). Quadrants runs in a worker process (it bundles its own LLVM).

Usage: ``python bench/gpu_launch.py [--calls 20000] [--batch 500] [--out report.md]
[--summary lines.txt] [--deadline UNIX_TIME]``
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _gpu import (
    ROOT,
    arguments,
    device_line,
    device_or_skip,
    fmt,
    markdown_table,
    per_call_us,
    quadrants_on_cuda,
    ratio,
    run_worker,
    time_left,
    verdict,
    worker,
    write,
)

sys.path.insert(0, str(ROOT))
N = 16
UPLOAD = "CuPy `set` of 64 bytes (one host-to-device upload; qdlab makes 1 + units per call)"
ADD = r"""
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        c[i] = a[i] + b[i];
}
"""


def quadrants_worker(calls: int, batch: int) -> dict:
    qd = quadrants_on_cuda()

    @qd.kernel
    def add(a: qd.types.ndarray(), b: qd.types.ndarray(), c: qd.types.ndarray()):
        for i in range(c.shape[0]):
            c[i] = a[i] + b[i]

    a, b, c = (qd.ndarray(qd.f32, (N,)) for _ in range(3))
    a.from_numpy(np.arange(N, dtype=np.float32))
    b.from_numpy(np.arange(N, dtype=np.float32) * 2)
    us = per_call_us(lambda: add(a, b, c), qd.sync, calls, batch)
    return {"us": us, "check": bool(np.array_equal(c.to_numpy(), np.arange(N) * 3.0))}


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=500)
    args = ap.parse_args()
    if args.worker == "quadrants":
        worker(lambda: quadrants_worker(args.calls, args.batch))
        return
    title = f"## Launch overhead: `c[i] = a[i] + b[i]` over {N} float32, µs per call"
    cupy = device_or_skip(args, title)
    import qdlab as qd

    qd.init(arch=qd.cuda)

    @qd.kernel
    def add(
        a: qd.types.NDArray[qd.f32, 1],
        b: qd.types.NDArray[qd.f32, 1],
        c: qd.types.NDArray[qd.f32, 1],
    ):
        for i in range(c.shape[0]):
            c[i] = a[i] + b[i]

    want = np.arange(N, dtype=np.float32) * 3
    nd = [qd.ndarray(qd.f32, (N,)) for _ in range(3)]
    nd[0].from_numpy(np.arange(N, dtype=np.float32))
    nd[1].from_numpy(np.arange(N, dtype=np.float32) * 2)
    ca, cb = cupy.arange(N, dtype=cupy.float32), cupy.arange(N, dtype=cupy.float32) * 2
    cc = cupy.zeros(N, cupy.float32)
    raw = cupy.RawKernel(ADD, "add")
    elementwise = cupy.ElementwiseKernel("float32 a, float32 b", "float32 c", "c = a + b", "qd_add")

    def qdlab_task() -> object:
        """The raw CuPy launch of qdlab's compiled task, with the words of the last call."""
        add(ca, cb, cc)
        launcher = add.latest.launcher
        unit = launcher.units[0]
        fn, bd = unit.fns[0], unit.block_dims[0]
        grid, argv = (launcher.grid(bd),), (launcher.words_dev, launcher.tmp_dev)
        return lambda: fn(grid, (bd,), argv)

    variants = [
        ("qdlab, qd.ndarray on the device", lambda: add(*nd), lambda: nd[2].to_numpy()),
        ("qdlab, CuPy arrays", lambda: add(ca, cb, cc), lambda: cc.get()),
        ("qdlab's compiled task, raw CuPy launch", qdlab_task, lambda: cc.get()),
        (
            "CuPy RawKernel (CUDA C++)",
            lambda: raw((1,), (128,), (ca, cb, cc, np.int32(N))),
            lambda: cc.get(),
        ),
        ("CuPy ElementwiseKernel", lambda: elementwise(ca, cb, cc), lambda: cc.get()),
        (UPLOAD, lambda: words.set(host_words), None),
    ]
    words, host_words = cupy.zeros(8, cupy.int64), np.arange(8, dtype=np.int64)
    sync = cupy.cuda.get_current_stream().synchronize
    rows: dict[str, tuple[float | None, str]] = {}
    for name, make, result in variants:
        if not time_left(args, 15):
            rows[name] = (None, "not run (time box)")
            continue
        try:
            call = make() if name.startswith("qdlab's compiled") else make
            cc.fill(0)
            us = per_call_us(call, sync, args.calls, args.batch)
            ok = result is None or np.array_equal(np.asarray(result()), want)
            rows[name] = (us, "" if ok else "WRONG RESULT")
        except Exception as e:  # noqa: BLE001 - reported in the table
            rows[name] = (None, f"error: {type(e).__name__}: {str(e)[:120]}")
    q: dict = {"error": "not run (time box)"}
    if time_left(args, 25):
        q = run_worker(
            __file__, "quadrants", ["--calls", str(args.calls), "--batch", str(args.batch)], 90
        )
    qname = "Quadrants on CUDA, qd.ndarray"
    rows[qname] = (q.get("us"), q.get("error", "" if q.get("check") else "WRONG RESULT"))
    ref = rows[qname][0]
    table = [
        [name, fmt(us) if us else "n/a", ratio(us, ref), note] for name, (us, note) in rows.items()
    ]
    summary = []
    for name in ("qdlab, qd.ndarray on the device", "qdlab, CuPy arrays"):
        us = rows[name][0]
        if us and ref:
            summary.append(
                f"launch: {name}: {fmt(us)} µs vs Quadrants {fmt(ref)} µs = {us / ref:.2f}x "
                f"(target <= 0.5x: {verdict(us / ref <= 0.5 and not rows[name][1])})"
            )
        else:
            summary.append(
                f"launch: {name}: {fmt(us) if us else 'n/a'} µs; Quadrants: "
                f"{fmt(ref) if ref else rows[qname][1]}"
            )
    for name in ("qdlab's compiled task, raw CuPy launch", "CuPy RawKernel (CUDA C++)", UPLOAD):
        if rows[name][0]:
            summary.append(f"launch: {name}: {fmt(rows[name][0])} µs")
    text = "\n".join(
        [
            title,
            "",
            device_line(),
            "",
            markdown_table(["variant", "µs per call (median)", "vs Quadrants", "note"], table),
            "",
            (
                f"Batches of {args.batch} calls, each ending with a device sync; median over "
                f"{max(1, args.calls // args.batch)} batches after a warm-up."
            ),
            "",
            *(f"- {line}" for line in summary),
        ]
    )
    write(args, text, summary)


if __name__ == "__main__":
    main()
