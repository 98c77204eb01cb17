"""Per-thread decompositions of small matrices, written in the kernel language itself:
`qd.sym_eig` and `qd.make_spd` (up to 6x6), `qd.eig` (2x2), `qd.svd` and `qd.polar_decompose` (2x2
and 3x3). The frontend inlines them where a kernel calls them, like any `@qd.func`.

`sym_eig` and `make_spd` rest on cyclic Jacobi rotations of a symmetric matrix, unrolled at
compile time and computed in f64 whatever the input type (results are cast back to `dt`), so f32
inputs keep f32 accuracy in the results: eigenvalues ascending, eigenvectors as the columns of a
rotation.

`svd` and `polar_decompose` are Quadrants' own algorithms, step for step in `dt`, so their results
are the reference's bits; this module is the one place that picks them by size:

- 3x3: McAdams/Sifakis' SVD (`sifakis_svd.py`, 5 sweeps in f32, 8 in f64), then (`svd3`) the
  singular values sorted descending. U and V are rotations (det +1), so the sign of det(A) is
  carried by the last singular value; `polar_decompose` = (U V^T, V S V^T).
- 2x2: the closed form (`polar_decompose2`, `svd2`): U of the polar decomposition is a reflection
  when det A < 0 and P is positive semi-definite, and the singular values are never negative; a
  different convention from 3x3's, kept as the reference's.

`qd.solve(A, b)` (2x2 and 3x3) is here too: Gaussian elimination with partial pivoting, in `dt`.
"""

from collections.abc import Callable

from .language import BUILTINS, Func, Matrix, Template, static
from .sifakis_svd import sifakis_svd
from .types import f64

abs_, sqrt, cast = BUILTINS["abs"], BUILTINS["sqrt"], BUILTINS["cast"]
loop_config = BUILTINS["loop_config"]
TINY = 1e-300
"""Below this an off-diagonal entry is zero already."""
SWEEPS = {1: 0, 2: 4, 3: 6, 4: 8}
"""Jacobi sweeps per size: convergence is quadratic, so these reach f64 precision."""
SWEEPS_LOOPS = 12
"""Sweeps of the runtime-loop Jacobi (5x5, 6x6)."""


def _func(fn: Callable) -> Func:
    return Func(fn)


@_func
def jacobi(S):
    """(the diagonal of S rotated to diagonal form, the accumulated rotation), both f64."""
    n = static(S.n)
    W = S.cast(f64)
    V = Matrix.identity(f64, n)
    for _sweep in static(range(SWEEPS[n])):
        for p in static(range(n)):
            for q in static(range(p + 1, n)):
                apq = W[p, q]
                if abs_(apq) > TINY:
                    theta = (W[q, q] - W[p, p]) / (2.0 * apq)
                    t = 1.0 / (abs_(theta) + sqrt(theta * theta + 1.0))
                    if theta < 0.0:
                        t = -t
                    c = 1.0 / sqrt(t * t + 1.0)
                    s = t * c
                    for k in static(range(n)):
                        wkp = W[k, p]
                        wkq = W[k, q]
                        W[k, p] = c * wkp - s * wkq
                        W[k, q] = s * wkp + c * wkq
                    for k in static(range(n)):
                        wpk = W[p, k]
                        wqk = W[q, k]
                        W[p, k] = c * wpk - s * wqk
                        W[q, k] = s * wpk + c * wqk
                    W[p, q] = 0.0
                    W[q, p] = 0.0
                    for k in static(range(n)):
                        vkp = V[k, p]
                        vkq = V[k, q]
                        V[k, p] = c * vkp - s * vkq
                        V[k, q] = s * vkp + c * vkq
    w = Matrix.zero(f64, n)
    for i in static(range(n)):
        w[i] = W[i, i]
    return w, V


@_func
def jacobi_loops(S):
    """`jacobi` with runtime loops, for 5x5 and 6x6 (unrolled, their sweeps would be thousands of
    statements): the same rotations, `SWEEPS_LOOPS` serial sweeps."""
    n = static(S.n)
    W = S.cast(f64)
    V = Matrix.identity(f64, n)
    loop_config(serialize=True)
    for _sweep in range(SWEEPS_LOOPS):
        for p in range(n):
            for q in range(p + 1, n):
                apq = W[p, q]
                if abs_(apq) > TINY:
                    theta = (W[q, q] - W[p, p]) / (2.0 * apq)
                    t = 1.0 / (abs_(theta) + sqrt(theta * theta + 1.0))
                    if theta < 0.0:
                        t = -t
                    c = 1.0 / sqrt(t * t + 1.0)
                    s = t * c
                    for k in range(n):
                        wkp = W[k, p]
                        wkq = W[k, q]
                        W[k, p] = c * wkp - s * wkq
                        W[k, q] = s * wkp + c * wkq
                    for k in range(n):
                        wpk = W[p, k]
                        wqk = W[q, k]
                        W[p, k] = c * wpk - s * wqk
                        W[q, k] = s * wpk + c * wqk
                    W[p, q] = 0.0
                    W[q, p] = 0.0
                    for k in range(n):
                        vkp = V[k, p]
                        vkq = V[k, q]
                        V[k, p] = c * vkp - s * vkq
                        V[k, q] = s * vkp + c * vkq
    w = Matrix.zero(f64, n)
    for i in static(range(n)):
        w[i] = W[i, i]
    return w, V


@_func
def eigen_pairs(S):
    """The Jacobi eigenpairs of symmetric S (f64): unrolled up to 4x4, runtime loops above."""
    w = Matrix.zero(f64, static(S.n))
    V = Matrix.identity(f64, static(S.n))
    if static(S.n <= 4):
        w, V = jacobi(S)
    else:
        w, V = jacobi_loops(S)
    return w, V


@_func
def sorted_columns(w, V, descending: Template):
    """Eigenvalues `w` sorted (with the columns of V), and V kept a rotation."""
    n = static(w.n)
    for i in static(range(n)):
        for j in static(range(i + 1, n)):
            swap = w[j] < w[i]
            if static(descending):
                swap = w[j] > w[i]
            if swap:
                wi = w[i]
                w[i] = w[j]
                w[j] = wi
                for k in static(range(n)):
                    vi = V[k, i]
                    V[k, i] = V[k, j]
                    V[k, j] = -vi  # a swap and a sign flip: still a rotation
    return w, V


@_func
def sym_eig(A, dt: Template):
    w, V = eigen_pairs(A)
    w, V = sorted_columns(w, V, False)
    return w.cast(dt), V.cast(dt)


@_func
def polar_decompose2(A, dt: Template):
    """Quadrants' closed form for 2x2, step for step in dt: U = B / sqrt|det B| with B from A's
    rotation part (its reflection part when det A < 0), P = (A^T A + |det A| I) / sqrt|det B|; so
    U is a reflection when det A < 0 and P is positive semi-definite; a zero A gives (I, A)."""
    U = Matrix.identity(dt, 2)
    P = A.cast(dt)
    zero = cast(0.0, dt)
    if A[0, 0] == zero and A[0, 1] == zero and A[1, 0] == zero and A[1, 1] == zero:
        pass
    else:
        detA = A[0, 0] * A[1, 1] - A[1, 0] * A[0, 1]
        adetA = abs_(detA)
        B = Matrix(
            [[A[0, 0] + A[1, 1], A[0, 1] - A[1, 0]], [A[1, 0] - A[0, 1], A[1, 1] + A[0, 0]]]
        ).cast(dt)
        if detA < zero:
            B = Matrix(
                [[A[0, 0] - A[1, 1], A[0, 1] + A[1, 0]], [A[1, 0] + A[0, 1], A[1, 1] - A[0, 0]]]
            ).cast(dt)
        adetB = abs_(B[0, 0] * B[1, 1] - B[1, 0] * B[0, 1])
        k = cast(1.0, dt) / sqrt(adetB)
        U = B * k
        P = (A.transpose() @ A + adetA * Matrix.identity(dt, 2)) * k
    return U, P


@_func
def svd2(A, dt: Template):
    """Quadrants' 2x2 SVD: the polar decomposition R P, then one Jacobi rotation of P, in dt;
    singular values descending and never negative (R carries the sign of det A)."""
    R, S = polar_decompose2(A, dt)
    c = cast(0.0, dt)
    s = cast(0.0, dt)
    s1 = cast(0.0, dt)
    s2 = cast(0.0, dt)
    if abs_(S[0, 1]) < 1e-5:
        c = 1
        s = 0
        s1 = S[0, 0]
        s2 = S[1, 1]
    else:
        tao = cast(0.5, dt) * (S[0, 0] - S[1, 1])
        w = sqrt(tao**2 + S[0, 1] ** 2)
        t = cast(0.0, dt)
        if tao > 0:
            t = S[0, 1] / (tao + w)
        else:
            t = S[0, 1] / (tao - w)
        c = 1 / sqrt(t**2 + 1)
        s = -t * c
        s1 = c**2 * S[0, 0] - 2 * c * s * S[0, 1] + s**2 * S[1, 1]
        s2 = s**2 * S[0, 0] + 2 * c * s * S[0, 1] + c**2 * S[1, 1]
    V = Matrix.zero(dt, 2, 2)
    if s1 < s2:
        tmp = s1
        s1 = s2
        s2 = tmp
        V = Matrix([[-s, c], [-c, -s]]).cast(dt)
    else:
        V = Matrix([[c, s], [-s, c]]).cast(dt)
    U = R @ V
    return U, Matrix([[s1, 0.0], [0.0, s2]]).cast(dt), V


@_func
def svd3(A, dt: Template):
    """`sifakis_svd` with the singular values sorted descending (a selection sort, U's and V's
    columns swapped alike, column 0 of both negated after an odd number of swaps so that both stay
    rotations), as Quadrants' `_svd3d` finishes it."""
    U, sig, V = sifakis_svd(A, dt)
    swaps = 0
    for i in static(range(3)):
        best = i
        top = sig[i]
        for j in static(range(i + 1, 3)):
            if sig[j] > top:
                top = sig[j]
                best = j
        for j in static(range(i + 1, 3)):
            if best == j:
                sig[j] = sig[i]
                sig[i] = top
                for k in static(range(3)):
                    uki = U[k, i]
                    U[k, i] = U[k, j]
                    U[k, j] = uki
                    vki = V[k, i]
                    V[k, i] = V[k, j]
                    V[k, j] = vki
                swaps = 1 - swaps
    if swaps == 1:
        for k in static(range(3)):
            U[k, 0] = -U[k, 0]
            V[k, 0] = -V[k, 0]
    S = Matrix.zero(dt, 3, 3)
    for i in static(range(3)):
        S[i, i] = sig[i]
    return U, S, V


@_func
def polar_decompose3(A, dt: Template):
    U, S, V = svd3(A, dt)
    return U @ V.transpose(), V @ S @ V.transpose()


@_func
def svd(A, dt: Template):
    decompose = static(svd2 if A.n == 2 else svd3)
    return decompose(A, dt)


@_func
def polar_decompose(A, dt: Template):
    decompose = static(polar_decompose2 if A.n == 2 else polar_decompose3)
    return decompose(A, dt)


@_func
def combine(A, b, dt: Template):
    """[A | b] in dt."""
    n = static(A.n)
    Ab = Matrix.zero(dt, n, n + 1)
    for i in static(range(n)):
        for j in static(range(n)):
            Ab[i, j] = A[i, j]
    for i in static(range(n)):
        Ab[i, n] = b[i]
    return Ab


@_func
def gauss_2x2(Ab, dt: Template):
    if abs_(Ab[0, 0]) < abs_(Ab[1, 0]):
        Ab[0, 0], Ab[1, 0] = Ab[1, 0], Ab[0, 0]
        Ab[0, 1], Ab[1, 1] = Ab[1, 1], Ab[0, 1]
        Ab[0, 2], Ab[1, 2] = Ab[1, 2], Ab[0, 2]
    assert Ab[0, 0] != 0.0, "Matrix is singular in linear solve."
    scale = Ab[1, 0] / Ab[0, 0]
    Ab[1, 0] = 0.0
    for k in static(range(1, 3)):
        Ab[1, k] -= Ab[0, k] * scale
    x = Matrix.zero(dt, 2)
    x[1] = Ab[1, 2] / Ab[1, 1]
    x[0] = (Ab[0, 2] - Ab[0, 1] * x[1]) / Ab[0, 0]
    return x


@_func
def gauss_3x3(Ab, dt: Template):
    for i in static(range(3)):
        max_row = i
        max_v = abs_(Ab[i, i])
        for j in static(range(i + 1, 3)):
            if abs_(Ab[j, i]) > max_v:
                max_row = j
                max_v = abs_(Ab[j, i])
        assert max_v != 0.0, "Matrix is singular in linear solve."
        if i != max_row:
            if max_row == 1:
                for col in static(range(4)):
                    Ab[i, col], Ab[1, col] = Ab[1, col], Ab[i, col]
            else:
                for col in static(range(4)):
                    Ab[i, col], Ab[2, col] = Ab[2, col], Ab[i, col]
        assert Ab[i, i] != 0.0, "Matrix is singular in linear solve."
        for j in static(range(i + 1, 3)):
            scale = Ab[j, i] / Ab[i, i]
            Ab[j, i] = 0.0
            for k in static(range(i + 1, 4)):
                Ab[j, k] -= Ab[i, k] * scale
    x = Matrix.zero(dt, 3)
    for i in static(range(2, -1, -1)):
        x[i] = Ab[i, 3]
        for k in static(range(i + 1, 3)):
            x[i] -= Ab[i, k] * x[k]
        x[i] = x[i] / Ab[i, i]
    return x


@_func
def solve(A, b, dt: Template):
    """x with A x = b (2x2 or 3x3): Gaussian elimination with partial pivoting in dt, step for
    step as Quadrants' `qd.solve` (so f32 results round alike)."""
    Ab = combine(A, b, dt)
    eliminate = static(gauss_2x2 if A.n == 2 else gauss_3x3)
    return eliminate(Ab, dt)


@_func
def unit_entries(a, b, c, dt: Template, real: Template):
    """[a, b, c, 0] scaled to unit length, the last entry (and `b` when `real`) a literal zero, as
    Quadrants' `eig` normalises it: a zero vector gives NaNs but keeps those zeros."""
    v = Matrix([a, b, c]).cast(dt)
    inv = 1.0 / sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    out = Matrix([v[0] * inv, v[1] * inv, v[2] * inv, 0.0]).cast(dt)
    if static(real):
        out[1] = 0.0
    return out


@_func
def eig(A, dt: Template):
    """`qd.eig` of a 2x2 real matrix, as Quadrants computes it: (the eigenvalues as the rows of a
    2x2 matrix, [real, imaginary]; the eigenvectors as the columns of a 4x2 matrix, each entry
    [real, imaginary] in turn), from the trace and the determinant."""
    tr = A[0, 0] + A[1, 1]
    det = A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]
    gap = tr * tr - 4 * det
    l1 = Matrix.zero(dt, 2)
    l2 = Matrix.zero(dt, 2)
    v1 = Matrix.zero(dt, 4)
    v2 = Matrix.zero(dt, 4)
    if gap > 0:
        root = sqrt(gap)
        l1 = Matrix([tr + root, 0.0]).cast(dt) * 0.5
        l2 = Matrix([tr - root, 0.0]).cast(dt) * 0.5
        if A[0, 0] == l1[0] and A[1, 0] == 0.0 and A[0, 1] == 0.0 and A[1, 1] == l1[0]:
            v1 = Matrix([0.0, 0.0, 1.0, 0.0]).cast(dt)
            v2 = Matrix([1.0, 0.0, 0.0, 0.0]).cast(dt)
        else:
            v1 = unit_entries(A[0, 0] - l2[0], 0.0, A[1, 0], dt, True)
            v2 = unit_entries(A[0, 0] - l1[0], 0.0, A[1, 0], dt, True)
    else:
        root = sqrt(-gap)
        l1 = Matrix([tr, root]).cast(dt) * 0.5
        l2 = Matrix([tr, -root]).cast(dt) * 0.5
        v1 = unit_entries(A[0, 0] - l2[0], -l2[1], A[1, 0], dt, False)
        v2 = unit_entries(A[0, 0] - l1[0], -l1[1], A[1, 0], dt, False)
    values = Matrix.zero(dt, 2, 2)
    vectors = Matrix.zero(dt, 4, 2)
    for k in static(range(2)):
        values[0, k] = l1[k]
        values[1, k] = l2[k]
    for k in static(range(4)):
        vectors[k, 0] = v1[k]
        vectors[k, 1] = v2[k]
    return values, vectors


@_func
def make_spd(A, dt: Template):
    """`qd.make_spd`: the symmetric `A` with its negative eigenvalues clamped to zero,
    `Q diag(max(w, 0)) Q^T` (the nearest positive semi-definite matrix in the Frobenius norm)."""
    n = static(A.n)
    out = Matrix.zero(dt, n, n)
    if static(n == 1):
        if A[0, 0] > 0.0:
            out[0, 0] = A[0, 0]
    else:
        w, V = eigen_pairs(A)
        for k in static(range(n)):
            w[k] = max(w[k], 0.0)
        for i in static(range(n)):
            for j in static(range(n)):
                acc = 0.0
                for k in static(range(n)):
                    acc += V[i, k] * w[k] * V[j, k]
                out[i, j] = acc
    return out
