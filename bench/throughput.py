"""Throughput of a streaming, a compute-bound and a vector kernel: qdlab vs Quadrants, NumPy and
Numba.

Why this script exists: it checks that qdlab's generated loops run at memory bandwidth
(streaming ``y[i] = a*x[i] + y[i]``), use all cores (64 dependent ``v = v*v*0.5 + 0.25``
steps per element) and unroll vectors into code as fast (a particle step over vec3 ndarrays,
``p[i] += v[i] * dt; d[i] = p[i].norm()``), against the same kernels on Quadrants and the obvious
NumPy/Numba code (the vector step over (n, 3) arrays). qdlab and Quadrants each run in a worker
subprocess that times itself.

Usage: ``.venv/bin/python bench/throughput.py [--sizes 10000000 50000000] [--particles 1000000]
[--reps 7]``
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    fmt,
    markdown_table,
    median_time_s,
    report,
    run_worker,
    worker_main,
)

A = 1.5
STEPS = 64
DT = 0.01
BACKENDS = ("qdlab", "quadrants")


def streaming_bytes(n: int) -> int:
    """Bytes moved by ``y = a*x + y``: read x, read y, write y (float32)."""
    return 3 * 4 * n


def make_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)


# ----------------------------------------------------------------------------- Quadrants API


def qd_kernels(qd: Any) -> tuple[Any, Any]:
    """The two kernels, written once for any Quadrants-API backend."""

    @qd.kernel
    def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    @qd.kernel
    def compute(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            v = x[i]
            for _ in range(64):
                v = v * v * 0.5 + 0.25
            y[i] = v

    return saxpy, compute


def qd_particles(qd: Any) -> Any:
    """The vector kernel: one explicit Euler step of n particles and their distance from 0."""

    @qd.kernel
    def particles(
        p: qd.types.NDArray[qd.math.vec3, 1],
        v: qd.types.NDArray[qd.math.vec3, 1],
        d: qd.types.NDArray[qd.f32, 1],
        dt: qd.f32,
    ):
        for i in p:
            p[i] += v[i] * dt
            d[i] = p[i].norm()

    return particles


def time_fields(qd: Any, n: int, reps: int) -> dict[str, Any]:
    """The stream and compute kernels over two global `qd.field`s (ms per call, median)."""
    x = qd.field(qd.f32, shape=n)
    y = qd.field(qd.f32, shape=n)
    xs, ys = make_inputs(n)

    @qd.kernel
    def saxpy_fields(a: qd.f32):
        for i in x:
            y[i] = a * x[i] + y[i]

    @qd.kernel
    def compute_fields():
        for i in x:
            v = x[i]
            for _ in range(64):
                v = v * v * 0.5 + 0.25
            y[i] = v

    x.from_numpy(xs)
    y.from_numpy(ys)

    def run_saxpy() -> None:
        saxpy_fields(A)
        qd.sync()

    def run_compute() -> None:
        compute_fields()
        qd.sync()

    out = {f"stream_fields/{n}": median_time_s(run_saxpy, reps, warmup=2) * 1e3}
    out[f"compute_fields/{n}"] = median_time_s(run_compute, reps, warmup=2) * 1e3
    out[f"check/fields/{n}"] = bool(np.allclose(y.to_numpy()[:1000], _np_compute(xs[:1000])))
    return out


def particle_inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.random((n, 3), dtype=np.float32), rng.random((n, 3), dtype=np.float32)


def particle_bytes(n: int) -> int:
    """Bytes moved by the particle step: read p, v; write p, d (float32)."""
    return (3 + 3 + 3 + 1) * 4 * n


def time_particles(qd: Any, particles: int, reps: int) -> dict[str, Any]:
    kernel = qd_particles(qd)
    ps, vs = particle_inputs(particles)
    p = qd.Vector.ndarray(3, qd.f32, particles)
    v = qd.Vector.ndarray(3, qd.f32, particles)
    d = qd.ndarray(qd.f32, (particles,))
    p.from_numpy(ps)
    v.from_numpy(vs)

    def run(p: Any = p, v: Any = v, d: Any = d) -> None:
        kernel(p, v, d, DT)
        qd.sync()

    ms = median_time_s(run, reps, warmup=2) * 1e3
    p.from_numpy(ps)
    run()
    want = ps + vs * np.float32(DT)
    ok = np.allclose(p.to_numpy(), want, rtol=1e-6) and np.allclose(
        d.to_numpy(), np.linalg.norm(want, axis=1), rtol=1e-5
    )
    return {f"particles/{particles}": ms, f"check/particles/{particles}": bool(ok)}


def time_struct_particles(qd: Any, particles: int, reps: int) -> dict[str, Any]:
    """The particle step over one struct field `s` of (p: vec3, v: vec3, d: f32), its members
    reached through the element: `s[i].p += s[i].v * dt; s[i].d = s[i].p.norm()`."""
    vec3 = qd.types.vector(3, qd.f32)
    s = qd.types.struct(p=vec3, v=vec3, d=qd.f32).field(shape=particles)

    @qd.kernel
    def step(dt: qd.f32):
        for i in s:
            s[i].p += s[i].v * dt
            s[i].d = s[i].p.norm()

    ps, vs = particle_inputs(particles)
    s.p.from_numpy(ps)
    s.v.from_numpy(vs)

    def run() -> None:
        step(DT)
        qd.sync()

    ms = median_time_s(run, reps, warmup=2) * 1e3
    s.p.from_numpy(ps)
    run()
    want = ps + vs * np.float32(DT)
    ok = np.allclose(s.p.to_numpy(), want, rtol=1e-6) and np.allclose(
        s.d.to_numpy(), np.linalg.norm(want, axis=1), rtol=1e-5
    )
    return {f"struct_particles/{particles}": ms, f"check/struct_particles/{particles}": bool(ok)}


def worker_body(
    qd: Any, sizes: list[int], reps: int, particles: int = 0, field_sizes: tuple = ()
) -> dict[str, Any]:
    """Time both kernels with ``qd.ndarray`` arguments, then on fields (ms per call, median)."""
    saxpy, compute = qd_kernels(qd)
    out: dict[str, Any] = {}
    for n in sizes:
        xs, ys = make_inputs(n)
        x = qd.ndarray(qd.f32, (n,))
        y = qd.ndarray(qd.f32, (n,))
        x.from_numpy(xs)
        y.from_numpy(ys)

        def run_saxpy(x: Any = x, y: Any = y) -> None:
            saxpy(A, x, y)
            qd.sync()

        def run_compute(x: Any = x, y: Any = y) -> None:
            compute(x, y)
            qd.sync()

        out[f"stream/{n}"] = median_time_s(run_saxpy, reps, warmup=2) * 1e3
        out[f"compute/{n}"] = median_time_s(run_compute, reps, warmup=2) * 1e3
        got = y.to_numpy()[:1000]
        want = _np_compute(xs[:1000])
        out[f"check/{n}"] = bool(np.allclose(got, want, rtol=1e-4))
    if particles:
        out.update(time_particles(qd, particles, reps))
        out.update(time_struct_particles(qd, particles, reps))
    for n in field_sizes:
        out.update(time_fields(qd, n, reps))
    return out


# ----------------------------------------------------------------------------- NumPy / Numba


def _np_compute(x: np.ndarray, block: int = 1 << 16) -> np.ndarray:
    """Compute-bound kernel in NumPy, cache-blocked so each block stays in L2."""
    y = np.empty_like(x)
    for s in range(0, x.size, block):
        v = x[s : s + block].copy()
        for _ in range(STEPS):
            np.multiply(v, v, out=v)
            np.multiply(v, np.float32(0.5), out=v)
            np.add(v, np.float32(0.25), out=v)
        y[s : s + block] = v
    return y


def numba_kernels() -> tuple[Any, Any] | None:
    try:
        from numba import njit, prange
    except ImportError:
        return None

    @njit(parallel=True, fastmath=False)
    def saxpy(a: float, x: np.ndarray, y: np.ndarray) -> None:
        for i in prange(x.shape[0]):
            y[i] = a * x[i] + y[i]

    @njit(parallel=True, fastmath=False)
    def compute(x: np.ndarray, y: np.ndarray) -> None:
        for i in prange(x.shape[0]):
            v = x[i]
            for _ in range(64):
                v = v * v * np.float32(0.5) + np.float32(0.25)
            y[i] = v

    return saxpy, compute


def numba_particles() -> Any:
    try:
        from numba import njit, prange
    except ImportError:
        return None

    @njit(parallel=True, fastmath=False)
    def particles(p: np.ndarray, v: np.ndarray, d: np.ndarray, dt: float) -> None:
        for i in prange(p.shape[0]):
            for k in range(3):
                p[i, k] += v[i, k] * dt
            d[i] = np.sqrt(p[i, 0] * p[i, 0] + p[i, 1] * p[i, 1] + p[i, 2] * p[i, 2])

    return particles


def np_particles(p: np.ndarray, v: np.ndarray, d: np.ndarray, dt: np.float32, tmp: np.ndarray):
    np.multiply(v, dt, out=tmp)
    np.add(p, tmp, out=p)
    np.multiply(p, p, out=tmp)
    np.sqrt(tmp.sum(axis=1), out=d)


def local_particles(particles: int, reps: int) -> dict[str, dict[str, float]]:
    """The vector kernel's peers over (n, 3) arrays in this process (ms)."""
    ps, vs = particle_inputs(particles)
    d, tmp, dt = np.zeros(particles, np.float32), np.empty_like(ps), np.float32(DT)
    key = f"particles/{particles}"
    res = {"numpy": {key: median_time_s(lambda: np_particles(ps, vs, d, dt, tmp), reps) * 1e3}}
    nb = numba_particles()
    if nb is not None:
        res["numba"] = {key: median_time_s(lambda: nb(ps, vs, d, dt), reps, 2) * 1e3}
    return res


def local_peers(sizes: list[int], reps: int) -> dict[str, dict[str, float]]:
    """NumPy and Numba timings in this process (ms)."""
    res: dict[str, dict[str, float]] = {"numpy": {}, "numba": {}, "copyto": {}}
    nb = numba_kernels()
    a32 = np.float32(A)
    for n in sizes:
        x, y = make_inputs(n)
        tmp = np.empty_like(x)

        def np_saxpy(x: np.ndarray = x, y: np.ndarray = y, tmp: np.ndarray = tmp) -> None:
            np.multiply(x, a32, out=tmp)
            np.add(tmp, y, out=y)

        res["numpy"][f"stream/{n}"] = median_time_s(np_saxpy, reps) * 1e3
        res["numpy"][f"compute/{n}"] = median_time_s(lambda x=x: _np_compute(x), reps) * 1e3
        res["copyto"][f"stream/{n}"] = (
            median_time_s(lambda tmp=tmp, x=x: np.copyto(tmp, x), reps) * 1e3
        )
        if nb is not None:
            saxpy, compute = nb
            res["numba"][f"stream/{n}"] = (
                median_time_s(lambda saxpy=saxpy, x=x, y=y: saxpy(a32, x, y), reps, 2) * 1e3
            )
            res["numba"][f"compute/{n}"] = (
                median_time_s(lambda compute=compute, x=x, y=y: compute(x, y), reps, 2) * 1e3
            )
    return res


# ----------------------------------------------------------------------------- report


def build_report(sizes: list[int], reps: int, particles: int, field_sizes: list[int]) -> str:
    argv = _argv(sizes, reps, particles) + ["--field-sizes", *map(str, field_sizes)]
    workers = {b: run_worker(__file__, b, argv) for b in BACKENDS}
    local = local_peers(sizes, reps)
    if particles:
        for peer, data in local_particles(particles, reps).items():
            local[peer].update(data)
    ref = workers["quadrants"]
    rows: list[list[str]] = []
    for kind in ("stream", "compute"):
        for n in sizes:
            key = f"{kind}/{n}"
            ref_ms = ref.get(key)
            peers: list[tuple[str, dict[str, Any]]] = [
                ("qdlab", workers["qdlab"]),
                ("Quadrants (CPU)", workers["quadrants"]),
                ("NumPy", local["numpy"]),
                ("Numba parallel", local["numba"]),
            ]
            if kind == "stream":
                peers.append(("NumPy copyto (bandwidth ref.)", local["copyto"]))
            for label, data in peers:
                ms = data.get(key)
                if ms is None:
                    why = data.get("error", "n/a")
                    rows.append([kind, f"{n / 1e6:g}M", label, why, "", ""])
                    continue
                moved = 2 * 4 * n if "copyto" in label else streaming_bytes(n)
                gbs = fmt(moved / (ms * 1e-3) / 1e9) if kind == "stream" else ""
                ratio = fmt(ref_ms / ms) + "×" if ref_ms else "n/a"
                if data.get(f"check/{n}") is False:
                    label += " (WRONG RESULT)"
                rows.append([kind, f"{n / 1e6:g}M", label, fmt(ms), gbs, ratio])
    if particles:
        key = f"particles/{particles}"
        ref_ms = ref.get(key)
        for label, data in [
            ("qdlab", workers["qdlab"]),
            ("Quadrants (CPU)", workers["quadrants"]),
            ("NumPy (n, 3) arrays", local["numpy"]),
            ("Numba parallel (n, 3) arrays", local["numba"]),
        ]:
            ms = data.get(key)
            if ms is None:
                rows.append(["vec3 particles", f"{particles / 1e6:g}M", label, "n/a", "", ""])
                continue
            if data.get(f"check/{key}") is False:
                label += " (WRONG RESULT)"
            gbs = fmt(particle_bytes(particles) / (ms * 1e-3) / 1e9)
            ratio = fmt(ref_ms / ms) + "×" if ref_ms else "n/a"
            rows.append(["vec3 particles", f"{particles / 1e6:g}M", label, fmt(ms), gbs, ratio])
    if particles:
        key = f"struct_particles/{particles}"
        ref_ms = ref.get(key)
        for label, data in [("qdlab", workers["qdlab"]), ("Quadrants (CPU)", ref)]:
            ms = data.get(key)
            kind = "vec3 particles (struct field)"
            if ms is None:
                rows.append([kind, f"{particles / 1e6:g}M", label, "n/a", "", ""])
                continue
            if data.get(f"check/{key}") is False:
                label += " (WRONG RESULT)"
            gbs = fmt(particle_bytes(particles) / (ms * 1e-3) / 1e9)
            ratio = fmt(ref_ms / ms) + "×" if ref_ms else "n/a"
            rows.append([kind, f"{particles / 1e6:g}M", label, fmt(ms), gbs, ratio])
    for kind in ("stream_fields", "compute_fields"):
        for n in field_sizes:
            key, label_kind = f"{kind}/{n}", kind.replace("_fields", " (fields)")
            ref_ms = ref.get(key)
            for label, data in [("qdlab", workers["qdlab"]), ("Quadrants (CPU)", ref)]:
                ms = data.get(key)
                if ms is None:
                    rows.append([label_kind, f"{n / 1e6:g}M", label, "n/a", "", ""])
                    continue
                if data.get(f"check/fields/{n}") is False:
                    label += " (WRONG RESULT)"
                gbs = fmt(streaming_bytes(n) / (ms * 1e-3) / 1e9) if kind == "stream_fields" else ""
                ratio = fmt(ref_ms / ms) + "×" if ref_ms else "n/a"
                rows.append([label_kind, f"{n / 1e6:g}M", label, fmt(ms), gbs, ratio])
    table = markdown_table(
        ["kernel", "n (f32)", "implementation", "ms (median)", "GB/s", "speedup vs Quadrants"],
        rows,
    )
    notes = [
        f"median of {reps} after warm-up; qd.ndarray arguments; `qd.sync()` inside the timing",
        (
            "stream: `y[i] = a*x[i] + y[i]`, 12 bytes/element (read x, y; write y); "
            "copyto moves 8 bytes/element"
        ),
        (
            f"compute: {STEPS} steps of `v = v*v*0.5 + 0.25` per element; NumPy is cache-blocked "
            "(64K elements)"
        ),
        (
            "vec3 particles: `p[i] += v[i] * dt; d[i] = p[i].norm()` over ndarrays of vec3 "
            "(qd.Vector.ndarray), 40 bytes/particle; NumPy and Numba run the same arithmetic "
            "over (n, 3) float32 arrays"
        ),
        (
            "(struct field): the same step over one struct field of (p: vec3, v: vec3, d: f32), "
            "`s[i].p += s[i].v * dt; s[i].d = s[i].p.norm()`"
        ),
        (
            "(fields): the stream and compute kernels over two global `qd.field(qd.f32, n)`s "
            "read by name (`for i in x:`), no array arguments"
        ),
        "speedup vs Quadrants = Quadrants ms / implementation ms (> 1 is faster)",
        "Quadrants: " + _version(workers["quadrants"]) + "; qdlab: " + _version(workers["qdlab"]),
    ]
    return report("throughput", "Throughput: streaming and compute-bound f32 kernels", table, notes)


def _version(res: dict[str, Any]) -> str:
    if "error" in res:
        return res["error"] + (f" — {res['detail']}" if res.get("detail") else "")
    return str(res.get("version", "?"))


def _argv(sizes: list[int], reps: int, particles: int) -> list[str]:
    return ["--sizes", *map(str, sizes), "--reps", str(reps), "--particles", str(particles)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000_000, 50_000_000])
    parser.add_argument("--particles", type=int, default=1_000_000, help="0 skips the vector row")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--field-sizes", type=int, nargs="*", default=[10_000_000])
    parser.add_argument("--worker", choices=BACKENDS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(
            args.worker,
            lambda qd: worker_body(qd, args.sizes, args.reps, args.particles, args.field_sizes),
        )
    else:
        build_report(args.sizes, args.reps, args.particles, args.field_sizes)


if __name__ == "__main__":
    main()
