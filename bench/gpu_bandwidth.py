"""Streaming bandwidth on the GPU: a qdlab kernel against CuPy's device-to-device copy and a CuPy
elementwise kernel.

Why this script exists: the CUDA backend's parallel loops are grid-stride loops emitted through
llvmlite's NVPTX target; this checks they stream memory as fast as the vendor's own copy (target:
>= 80 % of its bandwidth). All three read N float32 and write N float32 (`y = 2 * x + 1`, or a
copy) on device arrays, timed with CUDA events over `--reps` launches after a warm-up, in one
process. Bandwidth counts bytes read plus bytes written.

Usage: ``python bench/gpu_bandwidth.py [--n 268435456] [--reps 20] [--out results.md]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import qdlab as qd
from qdlab.compiler import cuda_runtime


@qd.kernel
def stream(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = 2.0 * x[i] + 1.0


def timed_ms(cupy: object, fn: object, reps: int) -> list[float]:
    fn()  # warm-up (and, for qdlab, the compile)
    cupy.cuda.get_current_stream().synchronize()  # type: ignore[attr-defined]
    out = []
    for _ in range(reps):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()  # type: ignore[attr-defined]
        start.record()
        fn()
        end.record()
        end.synchronize()
        out.append(cupy.cuda.get_elapsed_time(start, end))  # type: ignore[attr-defined]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=256 * 1024 * 1024)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cupy = cuda_runtime.require()
    qd.init(arch=qd.cuda)
    n = args.n
    x = cupy.arange(n, dtype=cupy.float32) % 1024
    y = cupy.empty_like(x)
    nbytes = 2 * n * 4
    elementwise = cupy.ElementwiseKernel(
        "float32 x", "float32 y", "y = 2.0f * x + 1.0f", "qd_bench_axpb"
    )
    rows = []
    for name, fn in (
        ("CuPy device-to-device copy", lambda: y.data.copy_from_device_async(x.data, n * 4)),
        ("CuPy elementwise `2x+1`", lambda: elementwise(x, y)),
        ("qdlab kernel `2x+1` (cupy arrays)", lambda: stream(x, y)),
    ):
        ms = timed_ms(cupy, fn, args.reps)
        med = statistics.median(ms)
        rows.append((name, med, min(ms), nbytes / med / 1e6))
    want = 2.0 * (cupy.arange(n, dtype=cupy.float32) % 1024) + 1.0
    stream(x, y)
    ok = bool(cupy.array_equal(y, want))
    copy_bw = rows[0][3]
    dev = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    lines = [
        f"## Streaming bandwidth, {n:,} float32 ({n * 4 / 2**30:.1f} GiB per array) on {dev}",
        "",
        "| variant | median ms | min ms | GB/s (read+write) | vs copy |",
        "|---|---|---|---|---|",
    ]
    for name, med, lo, bw in rows:
        lines.append(f"| {name} | {med:.3f} | {lo:.3f} | {bw:.0f} | {bw / copy_bw:.0%} |")
    lines += [
        "",
        (
            f"qdlab result correct: {ok}; target: qdlab >= 80 % of the copy "
            f"({'met' if rows[2][3] >= 0.8 * copy_bw else 'NOT met'})."
        ),
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n\n")


if __name__ == "__main__":
    main()
