"""McAdams, Selle, Tamstorf, Teran and Sifakis' 3x3 SVD ("Computing the Singular Value
Decomposition of 3x3 matrices with minimal branching and elementary floating point operations",
2011), which Quadrants' `qd.svd` and `qd.polar_decompose` run for 3x3 matrices: written here in
the kernel language, operation for operation as Quadrants builds it, so that the results are the
same bits (qdlab's arithmetic is IEEE without contraction, as Quadrants' with fast-math off).

The method: Jacobi conjugations of A^T A, each an approximate Givens rotation (its half-angle, or a
fixed pi/8 one where the half-angle would be inaccurate), accumulated in a quaternion for a fixed
number of sweeps (5 in f32, 8 in f64), give V; the columns of A V sorted by norm and a Givens QR of
them give U and the singular values, the last one carrying the sign of det A. Everything is in
`dt`; the reference's masks and bitwise blends are selects here, which give the same bits.
"""

import struct
from collections.abc import Callable

from .language import BUILTINS, Func, Matrix, Template, static
from .types import f32, f64

cast, rsqrt, select = BUILTINS["cast"], BUILTINS["rsqrt"], BUILTINS["select"]
loop_config = BUILTINS["loop_config"]


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


# The 3x3 SVD's constants are f32 numbers in Quadrants (literals like `1.e-20f`), widened to f64
# in its f64 variant, so both variants use these very values.
FOUR_GAMMA_SQUARED = _f32(5.82842712474619)
"""(1 + sqrt 2)^2: beyond this ratio of the diagonal gap to the off-diagonal entry squared, the
half-angle is accurate; below it, a fixed pi/8 rotation is taken."""
SINE_PI_OVER_EIGHT = _f32(0.3826834323650897)
COSINE_PI_OVER_EIGHT = _f32(0.9238795325112867)
SIFAKIS_TINY = _f32(1.0e-20)
"""An off-diagonal entry whose half squared is below this is not rotated away."""
SIFAKIS_SMALL = _f32(1.0e-12)
"""A QR pivot column entry whose square is below this is taken as zero."""
SIFAKIS_SWEEPS = {f32: 5, f64: 8}
"""Jacobi sweeps of the 3x3 SVD per dtype, Quadrants' defaults."""
COLUMN_SORT = ((0, 1, 1), (0, 2, 0), (1, 2, 2))
"""The 3x3 SVD's column sort: (i, j, the column negated after swapping i and j), in order."""


def _func(fn: Callable) -> Func:
    return Func(fn)


@_func
def refined_rsqrt(x, dt: Template):
    """1 / sqrt(x) with the Newton step the method takes after its (on SSE, approximate) rsqrt."""
    r = rsqrt(x)
    h = r * cast(0.5, dt)
    r = (r + h) - x * (r * (r * h))
    return r


@_func
def jacobi_conjugation(S, Q, p: Template, q: Template, r: Template, dt: Template):
    """One approximate Givens conjugation of the symmetric S in the (p, q) plane (r the third
    axis), its rotation accumulated in the quaternion Q = [x, y, z, w]: the angle is the exact
    half-angle's, or pi/8 where that one is too far from the diagonal to be accurate."""
    zero = cast(0.0, dt)
    sh = S[p, q] * cast(0.5, dt)
    gap = S[p, p] - S[q, q]
    big = sh * sh >= cast(SIFAKIS_TINY, dt)
    sh = select(big, sh, zero)
    ch = select(big, gap, cast(1.0, dt))
    sh2 = sh * sh
    ch2 = ch * ch
    inv = rsqrt(sh2 + ch2)
    sh = inv * sh
    ch = inv * ch
    coarse = ch2 <= cast(FOUR_GAMMA_SQUARED, dt) * sh2
    sh = select(coarse, cast(SINE_PI_OVER_EIGHT, dt), sh)
    ch = select(coarse, cast(COSINE_PI_OVER_EIGHT, dt), ch)
    sh2 = sh * sh
    ch2 = ch * ch
    c = ch2 - sh2
    s = ch * sh
    s = s + s
    scale = sh2 + ch2  # the rotation is unnormalised: |q|^2 scales the untouched entries
    srr = S[r, r] * scale * scale
    srp = S[r, p] * scale
    srq = S[r, q] * scale
    S[r, r] = srr
    S[r, p] = s * srq + c * srp
    S[p, r] = S[r, p]
    S[r, q] = c * srq - s * srp
    S[q, r] = S[r, q]
    ss = s * s
    cc = c * c
    spp = S[p, p] * cc + S[q, q] * ss
    sqq = S[q, q] * cc + S[p, p] * ss
    twice = S[p, q] + S[p, q]
    spq = S[p, q] * (cc - ss)
    cs = c * s
    S[p, p] = spp + twice * cs
    S[p, q] = spq - gap * cs
    S[q, p] = S[p, q]
    S[q, q] = sqq - twice * cs
    t = Matrix([sh * Q[0], sh * Q[1], sh * Q[2]])
    shw = sh * Q[3]
    Q = Q * ch
    Q[r] = Q[r] + shw
    Q[3] = Q[3] - t[r]
    Q[p] = Q[p] + t[q]
    Q[q] = Q[q] - t[p]
    return S, Q


@_func
def givens_qr_step(B, U, p: Template, q: Template, dt: Template):
    """Zero B[q, p] with a Givens rotation of rows p and q (U's columns p and q likewise)."""
    zero = cast(0.0, dt)
    small = cast(SIFAKIS_SMALL, dt)
    app = B[p, p]
    apq = B[q, p]
    sh = select(apq * apq >= small, apq, zero)
    ch = max(max(zero - app, app), small)
    x = ch * ch + sh * sh
    ch = ch + refined_rsqrt(x, dt) * x
    keep = app >= zero  # else (a negative pivot) the half-angle's cosine and sine trade places
    ch, sh = select(keep, ch, sh), select(keep, sh, ch)
    x = ch * ch + sh * sh
    inv = refined_rsqrt(x, dt)
    ch = ch * inv
    sh = sh * inv
    c = ch * ch - sh * sh
    s = sh * ch
    s = s + s
    for k in static(range(3)):
        bpk = B[p, k]
        bqk = B[q, k]
        B[p, k] = c * bpk + s * bqk
        B[q, k] = c * bqk - s * bpk
        ukp = U[k, p]
        ukq = U[k, q]
        U[k, p] = c * ukp + s * ukq
        U[k, q] = c * ukq - s * ukp
    return B, U


@_func
def sifakis_svd(A, dt: Template):
    """McAdams et al.'s 3x3 SVD ("Computing the SVD of 3x3 matrices with minimal branching"), in
    dt, operation for operation as Quadrants runs it: Jacobi conjugations of A^T A give V (through a
    quaternion), the columns of A V are sorted by norm, and Givens QR gives U and the singular
    values (the last one carrying the sign of det A). Returns (U, the diagonal, V)."""
    a = A.cast(dt)
    S = Matrix.zero(dt, 3, 3)
    for i in static(range(3)):
        for j in static(range(3)):
            S[i, j] = a[0, i] * a[0, j] + a[1, i] * a[1, j] + a[2, i] * a[2, j]
    Q = Matrix([0.0, 0.0, 0.0, 1.0]).cast(dt)
    loop_config(serialize=True)
    for _sweep in range(SIFAKIS_SWEEPS[dt]):
        S, Q = jacobi_conjugation(S, Q, 0, 1, 2, dt)
        S, Q = jacobi_conjugation(S, Q, 1, 2, 0, dt)
        S, Q = jacobi_conjugation(S, Q, 2, 0, 1, dt)
    norm = Q[3] * Q[3] + Q[0] * Q[0] + Q[1] * Q[1] + Q[2] * Q[2]
    Q = Q * refined_rsqrt(norm, dt)
    x2 = Q[0] * Q[0]
    y2 = Q[1] * Q[1]
    z2 = Q[2] * Q[2]
    w2 = Q[3] * Q[3]
    V = Matrix.zero(dt, 3, 3)
    V[0, 0] = w2 + x2 - y2 - z2
    V[1, 1] = w2 - x2 + y2 - z2
    V[2, 2] = w2 - x2 - y2 + z2
    x = Q[0] + Q[0]
    y = Q[1] + Q[1]
    z = Q[2] + Q[2]
    wx = Q[3] * x
    wy = Q[3] * y
    wz = Q[3] * z
    xy = Q[1] * x
    yz = Q[2] * y
    zx = Q[0] * z
    V[0, 1] = xy - wz
    V[1, 2] = yz - wx
    V[2, 0] = zx - wy
    V[1, 0] = xy + wz
    V[2, 1] = yz + wx
    V[0, 2] = zx + wy
    B = Matrix.zero(dt, 3, 3)
    for i in static(range(3)):
        for j in static(range(3)):
            B[i, j] = a[i, 0] * V[0, j] + a[i, 1] * V[1, j] + a[i, 2] * V[2, j]
    rho = Matrix.zero(dt, 3)
    for j in static(range(3)):
        rho[j] = B[0, j] * B[0, j] + B[1, j] * B[1, j] + B[2, j] * B[2, j]
    # Swapped in a branch: the same swaps made with selects make LLVM 22's SLP vectorizer abort
    # the process (a failed assertion) in f32.
    for i, j, flipped in static(COLUMN_SORT):
        sign = cast(1.0, dt)
        if rho[i] < rho[j]:
            sign = cast(-1.0, dt)
            for k in static(range(3)):
                B[k, i], B[k, j] = B[k, j], B[k, i]
                V[k, i], V[k, j] = V[k, j], V[k, i]
            rho[i], rho[j] = rho[j], rho[i]
        for k in static(range(3)):
            B[k, flipped] = B[k, flipped] * sign
            V[k, flipped] = V[k, flipped] * sign
    U = Matrix.identity(dt, 3)
    for p, q in static(((0, 1), (0, 2), (1, 2))):
        B, U = givens_qr_step(B, U, p, q, dt)
    sig = Matrix([B[0, 0], B[1, 1], B[2, 2]])
    return U, sig, V
