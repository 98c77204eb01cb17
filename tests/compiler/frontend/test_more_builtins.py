"""Built-ins Quadrants 1.3.3 has beside the common math: `qd.frexp`, `qd.eig` (2x2),
`qd.make_spd`, `qd.stop_grad`, the caching hints (`qd.cache_read_only`, `qd.mesh_local`,
`qd.assume_in_range`), `qd.mesh_patch_idx` / `qd.global_thread_idx` (clear errors on qdlab's
loops), `@qd.pyfunc`, and `@qd.real_func` methods of a data-oriented class. Expected values were
measured with quadrants 1.3.3 on the CPU (frexp against NumPy: Quadrants' CPU backend does not
lower it)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

V2 = qd.types.vector(2, qd.f32)
M22 = qd.types.matrix(2, 2, qd.f64)
M62 = qd.types.matrix(6, 2, qd.f64)


@qd.kernel
def frexp32(x: qd.f32) -> V2:
    m, e = qd.frexp(x)
    return qd.Vector([m, e])


@qd.kernel
def frexp64(x: qd.f64) -> qd.i32:
    _m, e = qd.frexp(x)
    return e


def test_frexp_is_numpys() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    for x in [0.0, 1.0, 1.4, -3.5, 0.75, 1e30, -1e-30, float("inf")]:
        m, e = np.frexp(np.float32(x))
        assert frexp32(x).to_list() == [float(m), float(e)], x
    for x in [8.0, -6.0, 1e300, 3.0e-300]:
        assert frexp64(x) == np.frexp(x)[1], x
    m, e = qd.frexp(8.0)  # in Python: NumPy's
    assert (m, e) == (0.5, 4)


def test_frexp_of_a_vector_is_an_error() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k() -> qd.f32:
        m, _e = qd.frexp(qd.Vector([1.0, 2.0]))
        return m[0]

    with pytest.raises(qd.QuadrantsTypeError, match="qd.frexp takes a scalar"):
        k()


@qd.kernel
def eig2(A: M22) -> M62:
    w, v = qd.eig(A)
    out = qd.Matrix.zero(qd.f64, 6, 2)
    for i in qd.static(range(2)):
        for j in qd.static(range(2)):
            out[i, j] = w[i, j]
    for i in qd.static(range(4)):
        for j in qd.static(range(2)):
            out[2 + i, j] = v[i, j]
    return out


NAN = float("nan")
EIG = {  # quadrants 1.3.3, default_fp=f64: eigenvalue rows, then eigenvector rows
    ((1, 2), (3, 4)): [
        [5.372281323269014, 0.0],
        [-0.3722813232690143, 0.0],
        [0.41597355791928425, -0.8245648401323937],
        [0.0, 0.0],
        [0.9093767091321241, 0.5657674649689922],
        [0.0, 0.0],
    ],
    ((0, -1), (1, 0)): [
        [0.0, 1.0],
        [0.0, -1.0],
        [0.0, 0.0],
        [0.7071067811865475, -0.7071067811865475],
        [0.7071067811865475, 0.7071067811865475],
        [0.0, 0.0],
    ],
    ((2, 0), (0, 3)): [[3.0, 0.0], [2.0, 0.0], [NAN, -1.0], [0.0, 0.0], [NAN, 0.0], [0.0, 0.0]],
    ((2, 1), (0, 2)): [[2.0, 0.0], [2.0, 0.0], [NAN, NAN], [NAN, NAN], [NAN, NAN], [0.0, 0.0]],
}


def test_eig_of_2x2_matches_quadrants() -> None:
    qd.init(arch=qd.cpu, default_fp=qd.f64, offline_cache=False)
    for a, want in EIG.items():
        got = np.asarray(eig2(qd.Matrix([list(r) for r in a])))
        np.testing.assert_allclose(got, np.array(want), rtol=1e-12, atol=1e-12, equal_nan=True)


def test_eig_of_3x3_is_an_error() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k(A: qd.types.matrix(3, 3, qd.f32)) -> qd.f32:
        w, _v = qd.eig(A)
        return w[0, 0]

    with pytest.raises(qd.QuadrantsTypeError, match="only supports 2×2"):
        k(qd.Matrix.identity(qd.f32, 3))


@qd.kernel
def spd3(A: qd.types.matrix(3, 3, qd.f64)) -> qd.types.matrix(3, 3, qd.f64):
    return qd.make_spd(A)


@qd.kernel
def spd2(A: qd.types.matrix(2, 2, qd.f32)) -> qd.types.matrix(2, 2, qd.f32):
    return qd.make_spd(A, qd.f32)


@qd.kernel
def spd1(A: qd.types.matrix(1, 1, qd.f64)) -> qd.types.matrix(1, 1, qd.f64):
    return qd.make_spd(A)


def test_make_spd_clamps_negative_eigenvalues() -> None:
    qd.init(arch=qd.cpu, default_fp=qd.f64, offline_cache=False)
    want = [  # quadrants 1.3.3
        [1.5401541575476148, 0.6571873598933403, 0.22485289039617817],
        [0.6571873598933403, 0.3382058829590235, 0.4410201251447592],
        [0.22485289039617817, 0.4410201251447592, 2.093600727890463],
    ]
    got = np.asarray(spd3(qd.Matrix([[1, 2, 0], [2, -3, 1], [0, 1, 2]])))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(spd2(qd.Matrix([[1, 2], [2, 1]]))), 1.5, rtol=1e-6)
    assert np.asarray(spd1(qd.Matrix([[-2.0]]))).tolist() == [[0.0]]
    assert np.asarray(spd1(qd.Matrix([[3.0]]))).tolist() == [[3.0]]


def test_stop_grad_stops_reads_in_its_block() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    n = 8
    x, loss = qd.field(qd.f32), qd.field(qd.f32)
    qd.root.dense(qd.i, n).place(x)
    qd.root.place(loss)
    qd.root.lazy_grad()

    @qd.kernel
    def func():
        for i in range(n):
            loss[None] += x[i] ** 2
            qd.stop_grad(x)  # after the read: the whole block's reads are stopped
        for i in range(n):
            loss[None] += 3 * x[i] ** 2

    x.from_numpy(np.arange(n, dtype=np.float32))
    with qd.ad.Tape(loss):
        func()
    assert x.grad.to_numpy().tolist() == [6.0 * i for i in range(n)]  # quadrants 1.3.3

    @qd.kernel
    def bad():
        qd.stop_grad(3)

    with pytest.raises(qd.QuadrantsTypeError, match="qd.stop_grad takes fields"):
        bad()


def test_hints_change_no_value() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    y = qd.field(qd.f32, shape=8)

    @qd.kernel
    def total(v: qd.i32) -> qd.f32:
        qd.cache_read_only(y)
        s = 0.0
        for i in range(8):
            qd.mesh_local(y)
            s += y[qd.assume_in_range(i, v, 0, 8)]
        return s

    y.fill(2)
    assert total(0) == 16.0 and total(100) == 16.0


def test_mesh_patch_idx_and_global_thread_idx_are_clear_errors() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def patch() -> qd.i32:
        return qd.mesh_patch_idx()

    with pytest.raises(qd.QuadrantsCompilationError, match="only valid within mesh-for loops"):
        patch()

    @qd.kernel
    def thread() -> qd.i32:
        return qd.global_thread_idx()

    with pytest.raises(qd.QuadrantsCompilationError, match="global_thread_idx"):
        thread()


@qd.pyfunc
def affine(a, b):
    return a * b + 1


@qd.pyfunc
def length(v):
    return v.norm()


def test_pyfunc_runs_in_python_and_in_kernels() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k(v: qd.f32) -> qd.f32:
        return affine(v, 2.0) + affine(a=v, b=3.0) + length(qd.Vector([3.0, 4.0]))

    assert affine(3, 4) == 13 and length(qd.Vector([3.0, 4.0])) == 5.0
    assert k(1.5) == 4.0 + 5.5 + 5.0


def test_real_func_method_of_a_data_oriented_class() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.data_oriented
    class Grid:
        def __init__(self, n: int, m: int) -> None:
            self.val = qd.field(qd.f32, shape=(n, m))

        @qd.real_func
        def inc(self, i: qd.i32, j: qd.i32):
            self.val[i, j] += i * j

        @qd.real_func
        def mul(self, i: qd.i32, j: qd.i32) -> qd.i32:
            return i * j

        @qd.kernel
        def fill(self):
            for i, j in self.val:
                self.inc(i, j)
                self.val[i, j] += self.mul(i, j)

    g = Grid(4, 5)
    g.fill()
    assert g.val.to_numpy().tolist() == [[2.0 * i * j for j in range(5)] for i in range(4)]

    with pytest.raises(qd.QuadrantsSyntaxError, match="parameter `i`"):

        @qd.real_func
        def loose(i, j: qd.i32) -> qd.i32:
            return i + j


@pytest.mark.slow
def test_make_spd_and_sym_eig_of_5x5_against_numpy() -> None:
    """5x5 and 6x6 run the Jacobi sweeps in loops (a minute or more to compile)."""
    qd.init(arch=qd.cpu, default_fp=qd.f64, offline_cache=False)
    rng = np.random.default_rng(5)
    m = rng.standard_normal((5, 5))
    m = m + m.T
    a = qd.Matrix.field(5, 5, dtype=qd.f64, shape=())
    w = qd.Vector.field(5, dtype=qd.f64, shape=())
    s = qd.Matrix.field(5, 5, dtype=qd.f64, shape=())
    a.from_numpy(m)

    @qd.kernel
    def run():
        w[None], _ = qd.sym_eig(a[None], qd.f64)
        s[None] = qd.make_spd(a[None], qd.f64)

    run()
    e, v = np.linalg.eigh(m)
    np.testing.assert_allclose(np.sort(w.to_numpy()), e, atol=1e-12)
    np.testing.assert_allclose(s.to_numpy(), v @ np.diag(np.clip(e, 0, None)) @ v.T, atol=1e-12)


def test_make_spd_of_7x7_is_an_error() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    a = qd.Matrix.field(7, 7, dtype=qd.f64, shape=())

    @qd.kernel
    def run():
        _ = qd.make_spd(a[None], qd.f64)

    with pytest.raises(qd.QuadrantsTypeError, match="up to 6×6"):
        run()
