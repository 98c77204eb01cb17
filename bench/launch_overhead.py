"""Per-call launch overhead of a tiny kernel: qdlab vs Quadrants, NumPy and Numba.

Why this script exists: in notebooks and simulation loops many kernels touch few elements, so
the fixed cost of a call (argument checking, packing, the native call, sync) dominates.  This
times ``c[i] = a[i] + b[i]`` on 16 float32 elements, with ``qd.ndarray`` and with NumPy
arguments.  Calls are timed in batches and Quadrants-API backends ``qd.sync()`` once at the end
of each batch (Quadrants launches asynchronously), so queued work is paid for.

Usage: ``.venv/bin/python bench/launch_overhead.py [--calls 20000] [--batch 500]``
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.
import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt, markdown_table, report, run_worker, worker_main

N = 16
BACKENDS = ("qdlab", "quadrants")
ROUNDS = 5
"""The struct rows are timed in this many interleaved rounds; each row reports its best round."""
STRUCT_ROWS = ("12 plain ndarrays", "dataclass of 12 ndarrays", "data-oriented, 12 ndarrays")


def per_call_us(call: Callable[[], Any], sync: Callable[[], Any], calls: int, batch: int) -> float:
    """Median over batches of (batch time / batch size), in microseconds."""
    for _ in range(min(batch, 1000)):  # warm-up, includes compilation
        call()
    sync()
    samples = []
    for _ in range(max(1, calls // batch)):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        sync()
        samples.append((time.perf_counter() - t0) / batch)
    return statistics.median(samples) * 1e6


def worker_body(qd: Any, calls: int, batch: int) -> dict[str, Any]:
    @qd.kernel
    def add(
        a: qd.types.NDArray[qd.f32, 1],
        b: qd.types.NDArray[qd.f32, 1],
        c: qd.types.NDArray[qd.f32, 1],
    ):
        for i in range(c.shape[0]):
            c[i] = a[i] + b[i]

    an, bn, cn = (np.arange(N, dtype=np.float32) * k for k in (1, 2, 0))
    nd = [qd.ndarray(qd.f32, (N,)) for _ in range(3)]
    for dst, src in zip(nd, (an, bn, cn)):
        dst.from_numpy(src)
    out: dict[str, Any] = {}
    out["qd.ndarray"] = per_call_us(lambda: add(nd[0], nd[1], nd[2]), qd.sync, calls, batch)
    out["numpy"] = per_call_us(lambda: add(an, bn, cn), qd.sync, calls, batch)
    fa, fb, fc = (qd.field(qd.f32, shape=N) for _ in range(3))
    fa.from_numpy(an)
    fb.from_numpy(bn)

    @qd.kernel
    def add_fields():
        for i in fc:
            fc[i] = fa[i] + fb[i]

    out["3 global fields"] = per_call_us(add_fields, qd.sync, calls, batch)
    out["check"] = bool(
        np.array_equal(cn, an + bn)
        and np.array_equal(nd[2].to_numpy(), an + bn)
        and np.array_equal(fc.to_numpy(), an + bn)
    )
    rows = struct_rows(qd, calls, batch)
    out["check"] = out["check"] and rows.pop("check")
    out.update(rows)
    return out


A1 = "qd.types.NDArray[qd.f32, 1]"
MEMBERS = [f"a{k}" for k in range(12)]


def struct_kernels(module: str) -> str:
    """The source of the 12-array kernels (written out, since a kernel needs its source in a
    file): 12 plain parameters, a frozen dataclass of 12 ndarrays, a data-oriented method."""

    def total(prefix: str) -> str:
        return " + ".join(f"{prefix}{m}[i]" for m in MEMBERS[:11])

    fields = "".join(f"    {m}: {A1}\n" for m in MEMBERS)
    members = "".join(f"        self.{m} = arrays[{k}]\n" for k, m in enumerate(MEMBERS))
    return (
        f"import dataclasses\nimport {module} as qd\n\n\n"
        f"@qd.kernel\ndef plain({', '.join(f'{m}: {A1}' for m in MEMBERS)}):\n"
        f"    for i in range(a11.shape[0]):\n        a11[i] = {total('')}\n\n\n"
        f"@dataclasses.dataclass(frozen=True)\nclass Twelve:\n{fields}\n\n"
        "@qd.kernel\ndef struct(s: Twelve):\n"
        f"    for i in range(s.a11.shape[0]):\n        s.a11[i] = {total('s.')}\n\n\n"
        "@qd.data_oriented\nclass State:\n    def __init__(self, arrays):\n"
        f"{members}\n    @qd.kernel\n    def step(self):\n"
        f"        for i in range(self.a11.shape[0]):\n            self.a11[i] = {total('self.')}\n"
    )


def struct_rows(qd: Any, calls: int, batch: int) -> dict[str, Any]:
    """The same 12-array kernel with 12 plain parameters, one frozen dataclass of 12 ndarrays, and
    as a method of a data-oriented class with 12 ndarray members."""
    path = Path(tempfile.mkdtemp()) / "struct_kernels.py"
    path.write_text(struct_kernels(qd.__name__))
    spec = importlib.util.spec_from_file_location("struct_kernels", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    env = vars(mod)
    arrays = [qd.ndarray(qd.f32, (N,)) for _ in MEMBERS]
    for k, a in enumerate(arrays[:11]):
        a.from_numpy(np.full(N, k, np.float32))
    s, state = env["Twelve"](*arrays), env["State"](arrays)
    calls_of = {
        "12 plain ndarrays": lambda: env["plain"](*arrays),
        "dataclass of 12 ndarrays": lambda: env["struct"](s),
        "data-oriented, 12 ndarrays": state.step,
    }
    out: dict[str, Any] = {name: float("inf") for name in calls_of}
    for _ in range(ROUNDS):  # interleaved, so a busy spell of a shared machine hits all three
        for name, call in calls_of.items():
            out[name] = min(out[name], per_call_us(call, qd.sync, calls // ROUNDS, batch))
    out["check"] = bool(np.array_equal(arrays[11].to_numpy(), np.full(N, 55, np.float32)))
    return out


def local_peers(calls: int, batch: int) -> dict[str, float]:
    a, b = np.arange(N, dtype=np.float32), np.arange(N, dtype=np.float32) * 2
    c = np.zeros(N, np.float32)
    res = {
        "NumPy `np.add(a, b, out=c)`": per_call_us(lambda: np.add(a, b, out=c), _noop, calls, batch)
    }
    try:
        from numba import njit, prange
    except ImportError:
        return res

    @njit(parallel=True)
    def add_par(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        for i in prange(c.shape[0]):
            c[i] = a[i] + b[i]

    @njit
    def add_ser(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        for i in range(c.shape[0]):
            c[i] = a[i] + b[i]

    res["Numba `@njit(parallel=True)` prange"] = per_call_us(
        lambda: add_par(a, b, c), _noop, calls, batch
    )
    res["Numba `@njit` (serial)"] = per_call_us(lambda: add_ser(a, b, c), _noop, calls, batch)
    return res


def _noop() -> None:
    pass


def build_report(calls: int, batch: int) -> str:
    argv = ["--calls", str(calls), "--batch", str(batch)]
    workers = {b: run_worker(__file__, b, argv) for b in BACKENDS}
    ref = workers["quadrants"]
    rows: list[list[str]] = []
    for backend, label in (("qdlab", "qdlab"), ("quadrants", "Quadrants (CPU)")):
        for arg_kind in ("qd.ndarray", "numpy", "3 global fields", *STRUCT_ROWS):
            data = workers[backend]
            if "error" in data:
                rows.append([label, arg_kind, data["error"], ""])
                continue
            us = data[arg_kind]
            name = label if data.get("check", True) else label + " (WRONG RESULT)"
            rows.append(
                [
                    name,
                    arg_kind,
                    fmt(us),
                    fmt(ref[arg_kind] / us) + "×" if arg_kind in ref else "n/a",
                ]
            )
    ref_np = ref.get("numpy")  # the fields row compares with Quadrants' fields row
    for label, us in local_peers(calls, batch).items():
        rows.append([label, "numpy", fmt(us), fmt(ref_np / us) + "×" if ref_np else "n/a"])
    table = markdown_table(
        ["implementation", "arguments", "µs per call (median)", "speedup vs Quadrants (same args)"],
        rows,
    )
    notes = [
        (
            f"kernel `c[i] = a[i] + b[i]`, {N} float32 elements, 3 array arguments; the fields "
            "row: the same kernel over 3 global `qd.field`s, no arguments"
        ),
        (
            f"{calls} timed calls in batches of {batch}; per-call time = batch time / {batch}, "
            "median over batches; Quadrants-API backends `qd.sync()` at the end of each batch"
        ),
        "peers without a Quadrants API are compared with Quadrants' NumPy-argument time",
        (
            "12-array rows: `a11[i] = a0[i] + ... + a10[i]` with 12 `qd.ndarray` parameters, one "
            "frozen dataclass of 12 ndarray members, and a `@qd.data_oriented` method with 12 "
            f"ndarray members on `self`; timed in {ROUNDS} interleaved rounds, best round"
        ),
    ]
    for backend in BACKENDS:
        if workers[backend].get("detail"):
            notes.append(f"{backend}: {workers[backend]['detail']}")
    return report("launch_overhead", "Launch overhead: 16-element kernel", table, notes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.worker, lambda qd: worker_body(qd, args.calls, args.batch))
    else:
        build_report(args.calls, args.batch)


if __name__ == "__main__":
    main()
