"""Quadrants' 3x3 `qd.svd` and `qd.polar_decompose` in NumPy scalars, operation for operation
(McAdams/Sifakis' method as Quadrants' `sifakis_svd_export` builds it, then `_svd3d`'s sort): an
oracle for the bits qdlab's kernels give, in f32 (5 sweeps) or f64 (8 sweeps). Each NumPy scalar
operation rounds once, as the kernels' uncontracted arithmetic does; the method's bit masks are
written as the values they select. Call it after `qd.init`, which flushes subnormals to zero in
NumPy as in kernels: some badly scaled matrices reach them (f32 entries near 1e12)."""

from __future__ import annotations

import numpy as np

F32_CONSTANTS = [float(np.float32(c)) for c in (5.82842712474619, 0.3826834323650897)]
FOUR_GAMMA_SQUARED, SINE_PI_8 = F32_CONSTANTS
COSINE_PI_8 = float(np.float32(0.9238795325112867))
TINY, SMALL = float(np.float32(1e-20)), float(np.float32(1e-12))


def _conjugate(t, S: dict, q: list, p: int, r: int, o: int) -> None:
    """Zero S[p, r] (S symmetric, keyed by the sorted pair) with the quaternion q = [x, y, z, w]
    updated; o is the third axis."""

    def key(i: int, j: int) -> tuple[int, int]:
        return (i, j) if i >= j else (j, i)

    half = t(0.5)
    sh = S[key(p, r)] * half
    gap = S[(p, p)] - S[(r, r)]
    if sh * sh >= t(TINY):
        ch = gap
    else:
        sh, ch = t(0.0), t(1.0)
    sh2, ch2 = sh * sh, ch * ch
    inv = t(1.0) / np.sqrt(sh2 + ch2)
    sh, ch = inv * sh, inv * ch
    if ch2 <= t(FOUR_GAMMA_SQUARED) * sh2:
        sh, ch = t(SINE_PI_8), t(COSINE_PI_8)
    sh2, ch2 = sh * sh, ch * ch
    c, s = ch2 - sh2, ch * sh
    s = s + s
    scale = sh2 + ch2
    S[(o, o)] = S[(o, o)] * scale * scale
    sop, sor = S[key(o, p)] * scale, S[key(o, r)] * scale
    S[key(o, p)] = c * sop + s * sor
    S[key(o, r)] = c * sor - s * sop
    ss, cc = s * s, c * c
    spp, srr, spr = S[(p, p)], S[(r, r)], S[key(p, r)]
    twice, cs = spr + spr, c * s
    S[(p, p)] = (spp * cc + srr * ss) + twice * cs
    S[(r, r)] = (srr * cc + spp * ss) - twice * cs
    S[key(p, r)] = spr * (cc - ss) - gap * cs
    tq = [sh * q[0], sh * q[1], sh * q[2]]
    shw = sh * q[3]
    q[:] = [ch * v for v in q]
    q[o] = q[o] + shw
    q[3] = q[3] - tq[o]
    q[p] = q[p] + tq[r]
    q[r] = q[r] - tq[p]


def _newton_rsqrt(t, x):
    r = t(1.0) / np.sqrt(x)
    h = r * t(0.5)
    return (r + h) - x * (r * (r * h))


def svd3(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(U, S as a diagonal matrix, V) of the 3x3 `a`, in `a`'s dtype (f32 or f64)."""
    t = a.dtype.type
    a = [[t(a[i, j]) for j in range(3)] for i in range(3)]
    S = {
        (i, j): (a[0][i] * a[0][j] + a[1][i] * a[1][j]) + a[2][i] * a[2][j]
        for i in range(3)
        for j in range(i + 1)
    }
    q = [t(0.0), t(0.0), t(0.0), t(1.0)]
    for _ in range(5 if t is np.float32 else 8):
        _conjugate(t, S, q, 0, 1, 2)
        _conjugate(t, S, q, 1, 2, 0)
        _conjugate(t, S, q, 2, 0, 1)
    inv = _newton_rsqrt(t, ((q[3] * q[3] + q[0] * q[0]) + q[1] * q[1]) + q[2] * q[2])
    x, y, z, w = (v * inv for v in q)
    V = [[t(0.0)] * 3 for _ in range(3)]
    V[0][0] = ((w * w + x * x) - y * y) - z * z
    V[1][1] = ((w * w - x * x) + y * y) - z * z
    V[2][2] = ((w * w - x * x) - y * y) + z * z
    x2, y2, z2 = x + x, y + y, z + z
    V[0][1], V[1][0] = y * x2 - w * z2, y * x2 + w * z2
    V[1][2], V[2][1] = z * y2 - w * x2, z * y2 + w * x2
    V[2][0], V[0][2] = x * z2 - w * y2, x * z2 + w * y2
    B = [
        [(a[i][0] * V[0][j] + a[i][1] * V[1][j]) + a[i][2] * V[2][j] for j in range(3)]
        for i in range(3)
    ]
    rho = [(B[0][j] * B[0][j] + B[1][j] * B[1][j]) + B[2][j] * B[2][j] for j in range(3)]
    for i, j, negated in ((0, 1, 1), (0, 2, 0), (1, 2, 2)):
        sign = t(1.0)
        if rho[i] < rho[j]:
            sign = t(-1.0)
            for m in (B, V):
                for k in range(3):
                    m[k][i], m[k][j] = m[k][j], m[k][i]
            rho[i], rho[j] = rho[j], rho[i]
        for m in (B, V):
            for k in range(3):
                m[k][negated] = m[k][negated] * sign
    U = [[t(1.0) if i == j else t(0.0) for j in range(3)] for i in range(3)]
    for p, r in ((0, 1), (0, 2), (1, 2)):
        app, arp = B[p][p], B[r][p]
        sh = arp if arp * arp >= t(SMALL) else t(0.0)
        ch = np.fmax(np.fmax(t(0.0) - app, app), t(SMALL))  # maxnum: NaN gives the other
        x = ch * ch + sh * sh
        ch = ch + _newton_rsqrt(t, x) * x
        if not app >= t(0.0):
            ch, sh = sh, ch
        inv = _newton_rsqrt(t, ch * ch + sh * sh)
        ch, sh = ch * inv, sh * inv
        c, s = ch * ch - sh * sh, sh * ch
        s = s + s
        for k in range(3):
            B[p][k], B[r][k] = c * B[p][k] + s * B[r][k], c * B[r][k] - s * B[p][k]
            U[k][p], U[k][r] = c * U[k][p] + s * U[k][r], c * U[k][r] - s * U[k][p]
    sig = [B[0][0], B[1][1], B[2][2]]
    swaps = 0
    for i in range(3):
        best = max(range(i, 3), key=lambda j: (sig[j], -j))  # the first of the largest
        if best != i:
            sig[i], sig[best] = sig[best], sig[i]
            for m in (U, V):
                for k in range(3):
                    m[k][i], m[k][best] = m[k][best], m[k][i]
            swaps ^= 1
    if swaps:
        for m in (U, V):
            for k in range(3):
                m[k][0] = -m[k][0]
    dt = type(sig[0])
    return np.array(U, dt), np.diag(np.array(sig, dt)), np.array(V, dt)


def polar3(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, P) with a = R P: U V^T and V S V^T of `svd3`, summed left to right as Quadrants'
    matrix product does."""
    U, S, V = svd3(a)
    return _matmul(U, V.T), _matmul(_matmul(V, S), V.T)


def _matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty((3, 3), x.dtype)
    for i in range(3):
        for j in range(3):
            out[i, j] = (x[i, 0] * y[0, j] + x[i, 1] * y[1, j]) + x[i, 2] * y[2, j]
    return out
