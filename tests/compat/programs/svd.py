"""`qd.svd` and `qd.polar_decompose` (3x3 and 2x2, f32 and f64) on random, diagonal, singular,
repeated-value, negative-determinant, zero and badly scaled matrices, on ndarrays, on fields, in a
`@qd.func` and at a kernel's top level (Quadrants' serial sweep loop outside any parallel loop).
Fast-math off, as qdlab computes: each line (a digest of every output's bits, and the first
matrix's singular values) must be Quadrants'. QD_WHOLE=1 runs qdlab's whole-kernel path."""

import hashlib
import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
WHOLE = {"per_offload": False} if os.environ.get("QD_WHOLE") == "1" else {}


def battery(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    mats = list(rng.standard_normal((40, n, n)))
    mats += [np.zeros((n, n)), np.eye(n), -np.eye(n), np.ones((n, n)), np.eye(n)[::-1]]
    for d in ([3, 2, 1], [1, 2, 3], [-1, 2, 3], [2, -2, 2], [0, 1, 0], [1, 5, 5], [0, 0, 7]):
        mats.append(np.diag(np.array(d[:n], float)))
    for k in range(6):
        q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
        q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
        mats.append(q1)
        mats.append(q1 @ np.diag([2.0, 2.0, 0.5][:n]) @ q2.T)
        r = 1 + k % (n - 1)
        mats.append(rng.standard_normal((n, r)) @ rng.standard_normal((r, n)))
    for scale in (1e-12, 1e-6, 1e6, 1e12):
        mats.append(scale * rng.standard_normal((n, n)))
    return np.array(mats)


def show(name: str, outs: list[np.ndarray]) -> None:
    digest = hashlib.sha256(b"".join(np.ascontiguousarray(o).tobytes() for o in outs))
    print(name, digest.hexdigest()[:24], [float(x) for x in np.diag(outs[1][0])])


def decompose(dt: object, n: int) -> None:
    name = "f32" if dt == qd.f32 else "f64"
    a = battery(n).astype(np.float32 if dt == qd.f32 else np.float64)
    M = qd.types.NDArray[qd.types.matrix(n, n, dt), 1]

    @qd.kernel
    def on_arrays(a: M, u: M, s: M, v: M, r: M, p: M):
        for i in a:
            u[i], s[i], v[i] = qd.svd(a[i])
            r[i], p[i] = qd.polar_decompose(a[i])

    outs = [np.zeros_like(a) for _ in range(5)]
    on_arrays(a, *outs)
    show(f"{name} {n}x{n} ndarray", outs)

    fa = qd.Matrix.field(n, n, dt, shape=len(a))
    fo = [qd.Matrix.field(n, n, dt, shape=len(a)) for _ in range(5)]
    fa.from_numpy(a)

    @qd.func
    def both(m):
        U, S, V = qd.svd(m, dt)
        R, P = qd.polar_decompose(m, dt)
        return U, S, V, R, P

    @qd.kernel
    def on_fields():
        for i in fa:
            fo[0][i], fo[1][i], fo[2][i], fo[3][i], fo[4][i] = both(fa[i])

    on_fields()
    show(f"{name} {n}x{n} field, func", [f.to_numpy() for f in fo])

    @qd.kernel
    def top_level(i: qd.i32):
        fo[0][i], fo[1][i], fo[2][i] = qd.svd(fa[i])

    for i in range(3):
        top_level(i)
    show(f"{name} {n}x{n} top level", [f.to_numpy()[:3] for f in fo[:3]])


def in_the_other_dt(dt: object) -> None:
    """3x3 decompositions in the dt unlike the input's."""
    name = "f32" if dt == qd.f32 else "f64"
    other = qd.f64 if dt == qd.f32 else qd.f32
    a = battery(3).astype(np.float32 if dt == qd.f32 else np.float64)
    M = qd.types.NDArray[qd.types.matrix(3, 3, dt), 1]

    @qd.kernel
    def run(a: M, u: M, s: M, v: M):
        for i in a:
            U, S, V = qd.svd(a[i], other)
            u[i], s[i], v[i] = U, S, V

    outs = [np.zeros_like(a) for _ in range(3)]
    run(a, *outs)
    show(f"{name} 3x3 in the other dt", outs)


for dt in (qd.f32, qd.f64):
    qd.init(arch=qd.cpu, offline_cache=False, fast_math=False, default_fp=dt, **WHOLE)
    decompose(dt, 2)
    decompose(dt, 3)
    in_the_other_dt(dt)
