"""Vectors and matrices end to end: kernels against NumPy on every path (split, whole-kernel,
debug), the host side (`qd.Vector`, `qd.Matrix`, vector ndarrays, NumPy arrays of (n, 3)),
arguments and return values, and the IR they lower to (scalar ops named after the source variable
and entry)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

Vec3 = qd.types.NDArray[qd.math.vec3, 1]
Mat3 = qd.types.NDArray[qd.math.mat3, 1]
F32 = qd.types.NDArray[qd.f32, 1]


@pytest.fixture(params=["split", "whole", "debug"])
def mode(request: pytest.FixtureRequest) -> str:
    qd.init(
        arch=qd.cpu,
        offline_cache=False,
        per_offload=request.param != "whole",
        debug=request.param == "debug",
    )
    return request.param


@qd.kernel
def particles(p: Vec3, v: Vec3, d: F32, dt: qd.f32):
    for i in p:
        p[i] += v[i] * dt
        d[i] = p[i].norm()


def test_particles_match_numpy(mode: str) -> None:
    rng = np.random.default_rng(1)
    p = rng.standard_normal((500, 3)).astype(np.float32)
    v = rng.standard_normal((500, 3)).astype(np.float32)
    d = np.zeros(500, np.float32)
    want = p + v * np.float32(0.25)
    particles(p, v, d, 0.25)
    np.testing.assert_array_equal(p, want)
    np.testing.assert_allclose(d, np.linalg.norm(want, axis=1), rtol=1e-6)


@qd.kernel
def transform(m: Mat3, x: Vec3, out: Vec3, det: F32):
    for i in m:
        a = m[i]
        out[i] = a @ x[i] + a.transpose() @ x[i] - x[i].cross(a[0, :])
        det[i] = a.determinant() - a.inverse().trace()


def test_matrix_ops_match_numpy(mode: str) -> None:
    rng = np.random.default_rng(2)
    m = (rng.standard_normal((64, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    x = rng.standard_normal((64, 3)).astype(np.float32)
    out, det = np.zeros_like(x), np.zeros(64, np.float32)
    transform(m, x, out, det)
    want = np.einsum("nij,nj->ni", m, x) + np.einsum("nji,nj->ni", m, x) - np.cross(x, m[:, 0])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    inv_trace = np.trace(np.linalg.inv(m.astype(np.float64)), axis1=1, axis2=2)
    np.testing.assert_allclose(det, np.linalg.det(m) - inv_trace, rtol=1e-4, atol=1e-4)


@qd.kernel
def locals_and_parts(a: qd.types.NDArray[qd.types.vector(4, qd.i32), 1], k: qd.i32):
    for i in a:
        v = a[i]
        v.xy = v.yx
        v[2] += k
        v.w *= 2
        v[k % 4] -= 100  # a runtime index: a select per entry
        m = qd.Matrix([[1, 2], [3, 4]])
        m[1, :] = v.zw
        a[i] = qd.Vector([m[0, 0], m[1, 0], m[1, 1], v.x])


def test_writes_to_parts_of_locals(mode: str) -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    k = 5
    want = []
    for row in a.tolist():
        v = [row[1], row[0], row[2] + k, row[3] * 2]
        v[k % 4] -= 100
        want.append([1, v[2], v[3], v[0]])
    locals_and_parts(a, k)
    assert a.tolist() == want


@qd.kernel
def by_value(v: qd.math.vec3, m: qd.types.matrix(2, 3, qd.i32)) -> qd.math.vec3:
    return v * m[1, 2] + m[0, :]


def test_vector_arguments_and_returns() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    m = qd.Matrix([[1, 2, 3], [4, 5, 6]])
    for v in (qd.Vector([1.0, 2.0, 3.0]), (1, 2, 3), np.array([1, 2, 3], np.float32), [1, 2, 3]):
        r = by_value(v, m)
        assert isinstance(r, qd.Vector)
        assert r.to_numpy().tolist() == [7.0, 14.0, 21.0]
        assert r.to_numpy().dtype == np.float32
    with pytest.raises(qd.QdTypeError, match=r"has shape \(2,\), but the parameter is"):
        by_value((1, 2), m)


@qd.kernel
def returns_matrix_and_scalar(x: qd.f32) -> tuple[qd.math.mat3, qd.f32]:
    return qd.Matrix.identity(qd.f32, 3) * x, x + 1.0


def test_matrix_return_is_a_qd_matrix() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    m, s = returns_matrix_and_scalar(2.0)
    assert isinstance(m, qd.Matrix) and m.to_numpy().tolist() == (2 * np.eye(3)).tolist()
    assert s == 3.0


@qd.kernel
def fill_ndarray(a: qd.types.NDArray[qd.math.mat2, 2]):
    for i, j in a:
        a[i, j] = qd.Matrix([[i, j], [i + j, 1.0]])


def test_ndarrays_of_vectors_and_matrices_on_the_host() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    a = qd.ndarray(qd.math.mat2, (3, 4))
    assert isinstance(a, qd.MatrixNdarray)
    assert a.shape == (3, 4) and a.element_shape == (2, 2) and a.n == a.m == 2
    fill_ndarray(a)
    assert a.to_numpy().shape == (3, 4, 2, 2)
    assert a[2, 3].to_numpy().tolist() == [[2.0, 3.0], [5.0, 1.0]]
    a[0, 0][1, 1] = 9.0  # an element read on the host is a view
    assert a.to_numpy()[0, 0, 1, 1] == 9.0
    v = qd.Vector.ndarray(3, qd.i32, 5)
    v.fill(qd.Vector([1, 2, 3]))
    assert v.to_numpy().tolist() == [[1, 2, 3]] * 5
    v[1] = [7, 8, 9]
    v.from_numpy(v.to_numpy() * 2)
    assert v[1].to_numpy().tolist() == [14, 16, 18]
    np_arr = np.zeros((3, 4, 2, 2), np.float32)
    fill_ndarray(np_arr)  # a NumPy array whose trailing axes are the element's
    np.testing.assert_array_equal(np_arr, fill_ndarray_reference())


def fill_ndarray_reference() -> np.ndarray:
    i, j = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    out = np.stack([np.stack([i, j], -1), np.stack([i + j, np.ones_like(i)], -1)], -2)
    return out.astype(np.float32)


def test_numpy_arguments_are_keyed_by_their_trailing_axes() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    fill_ndarray(np.zeros((2, 2, 2, 2), np.float32))
    with pytest.raises(qd.QdValueError, match=r"its last 2 axes must be \(2, 2\)"):
        fill_ndarray(np.zeros((2, 2, 2, 3), np.float32))  # same dtype and ndim as the first call


def test_host_vectors() -> None:
    v = qd.math.vec3(1, 2, 3)
    assert v.dt == qd.f32 and v.entries.dtype == np.float32
    v.zy = (5, 6)
    assert v.to_list() == [1.0, 6.0, 5.0]
    assert (v.xxz == qd.Vector([1, 1, 5])).all()
    m = qd.Matrix([[1, 2], [3, 4]])
    assert (m @ qd.Vector([1, 1])).to_list() == [3, 7]
    assert m[:, 1].to_list() == [2, 4] and m.transpose()[0, 1] == 3
    assert qd.floor(qd.Vector([1.5, -0.5])).to_list() == [1.0, -1.0]
    assert qd.max(4, qd.Vector([3, 5])).to_list() == [4, 5]
    assert qd.lang.ops.logical_not(qd.Vector([2, 0])).to_list() == [False, True]
    assert qd.lang.ops.add(qd.Vector([2, 0]), 1).to_list() == [3, 1]
    with pytest.raises(qd.QuadrantsSyntaxError, match=r"vec2 only has attributes"):
        qd.Vector([1, 2]).z  # noqa: B018


@qd.kernel
def named(p: Vec3, out: Vec3):
    v = p[0] * 2.0
    for i in p:
        out[i] = v.zyx + p[i]


def test_ir_names_entries_after_the_variable() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    named(np.zeros((4, 3), np.float32), np.zeros((4, 3), np.float32))
    text = qd.explain(named).constructs[0].stages["ir_before_split"]
    assert "p: ndarray<f32[3], 1>" in text
    for part in ("%v_x = binop", "%v_y = binop", "%v_z = binop", "store %out, %i, %"):
        assert part in text
    statements = [s.text for s in qd.explain(named).statements]
    assert statements.count("v = p[0] * 2.0") == 1  # a vec3 statement is one statement
    defines = [d for s in qd.explain(named).statements for d in s.defines]
    assert "v" in defines and "v_x" not in defines


@qd.kernel
def decompositions(m: Mat3, out: Mat3, err: F32):
    for i in m:
        a = m[i]
        U, S, V = qd.svd(a)
        R, P = qd.polar_decompose(a)
        w, Q = qd.sym_eig(a + a.transpose())
        out[i] = U @ S @ V.transpose() - R @ P
        sym = a + a.transpose()
        err[i] = (sym @ Q - Q @ qd.Matrix([[w[0], 0, 0], [0, w[1], 0], [0, 0, w[2]]])).norm()
        err[i] += qd.abs(U.determinant() - 1.0) + qd.abs(V.determinant() - 1.0)
        err[i] += (R @ R.transpose() - qd.Matrix.identity(qd.f32, 3)).norm() + (
            P - P.transpose()
        ).norm()


def test_svd_polar_and_sym_eig() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    m = np.random.default_rng(3).standard_normal((100, 3, 3)).astype(np.float32)
    m[0] = 0.0
    m[1] = np.diag([2.0, 2.0, -1.0])
    out, err = np.zeros_like(m), np.zeros(100, np.float32)
    decompositions(m, out, err)
    assert np.abs(out).max() < 1e-5
    assert err.max() < 1e-4


@qd.kernel
def own_and_shared(a: qd.types.NDArray[qd.i32, 1], b: qd.types.NDArray[qd.i32, 1]):
    for i in a:
        a[i] += 1  # only iteration i touches a[i]: a plain read-modify-write
    for i in b:
        b[i] += 1
        b[(i * 7 + 3) % b.shape[0]] += 1  # another iteration's element: stays atomic


def test_owned_atomics_are_plain_and_shared_ones_stay_atomic() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    n = 300_000
    a, b = np.zeros(n, np.int32), np.zeros(n, np.int32)
    for _ in range(3):
        own_and_shared(a, b)
    assert (a == 3).all() and (b == 6).all()
    first, second = qd.explain(own_and_shared).constructs
    assert "atomicrmw" not in first.stages["llvm"]()
    assert "atomicrmw" in second.stages["llvm"]()


@qd.kernel
def read_entry(
    a: qd.types.NDArray[qd.math.mat2, 2], p: qd.i32, q: qd.i32, x: qd.i32, y: qd.i32
) -> qd.f32:
    return a[p, q][x, y]


def test_debug_checks_outer_indices_and_the_entry_offset() -> None:
    """As the reference does, an element's entry is checked by its offset in the element: [1, 1]
    of a mat2 is offset 3, in range; [2, 1] is offset 5, out of it."""
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    a = qd.ndarray(qd.math.mat2, (4, 5))
    a[2, 3] = [[1.0, 2.0], [3.0, 4.0]]
    assert read_entry(a, 2, 3, 1, 1) == 4.0
    for args in ((2, 3, 2, 1), (4, 4, 0, 1), (-3, 4, 1, 1), (3, 5, 0, 1), (2, -10, 1, 1)):
        with pytest.raises(qd.QdIndexError, match="Out of bound access"):
            read_entry(a, *args)


@qd.kernel
def squared_lengths(
    x: qd.types.ndarray(qd.math.vec3, 1, needs_grad=True),
    y: qd.types.ndarray(qd.f32, 1, needs_grad=True),
):
    for i in x:
        y[i] = (x[i] * 2.0).norm_sqr() + x[i].cross(qd.Vector([0.0, 0.0, 1.0])).x


def test_gradient_through_vector_ops() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.Vector.ndarray(3, qd.f32, 4, needs_grad=True)
    y = qd.ndarray(qd.f32, 4, needs_grad=True)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    x.from_numpy(xs)
    squared_lengths(x, y)
    y.grad.fill(1.0)
    squared_lengths.grad(x, y)
    want = 8 * xs
    want[:, 1] += 1  # d/dx of cross(x, e_z).x = x.y
    np.testing.assert_array_equal(x.grad.to_numpy(), want)


def test_a_grouped_index_is_a_vector(mode: str) -> None:
    """`for I in qd.grouped(x)`: `I` answers a vector's attributes and methods, as the reference's
    index vector does."""
    x = qd.Vector.field(2, qd.i32, shape=(2, 3, 2))

    @qd.kernel
    def fill():
        for I in qd.grouped(x):
            x[I] += qd.Vector([I.sum(), I.x * 100 + I.max()])

    fill()
    i, j, k = np.meshgrid(np.arange(2), np.arange(3), np.arange(2), indexing="ij")
    np.testing.assert_array_equal(x.to_numpy()[..., 0], i + j + k)
    np.testing.assert_array_equal(x.to_numpy()[..., 1], i * 100 + np.maximum(np.maximum(i, j), k))


@pytest.mark.parametrize("n", [5, 8, 12])
def test_inverse_up_to_12x12_pivots_as_quadrants(n: int) -> None:
    """From 5x5, Quadrants' Gauss elimination with partial pivoting: a zero leading entry swaps
    rows, and the result inverts the matrix (f64: to 1e-12)."""
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def inverse(a: qd.types.NDArray[qd.f64, 2], out: qd.types.NDArray[qd.f64, 2]):
        m = qd.Matrix.zero(qd.f64, n, n)
        for i in qd.static(range(n)):
            for j in qd.static(range(n)):
                m[i, j] = a[i, j]
        r = m.inverse()
        for i in qd.static(range(n)):
            for j in qd.static(range(n)):
                out[i, j] = r[i, j]

    def inverted(a: np.ndarray) -> np.ndarray:
        out = np.zeros_like(a)
        inverse(a, out)
        return out

    a = np.random.default_rng(n).normal(size=(n, n)) + n * np.eye(n)
    a[0, 0] = 0.0
    np.testing.assert_allclose(inverted(a) @ a, np.eye(n), atol=1e-12)
    perm = np.eye(n)[::-1].copy()  # every column's pivot is a later row
    np.testing.assert_array_equal(inverted(perm), perm.T)


def test_inverse_5x5_bits_are_quadrants() -> None:
    """The reference's bits for this f32 5x5 (quadrants 1.3.3, fast_math=False: qdlab never uses
    fast-math), its first column needing a row swap."""
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def inverse(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
        m = qd.Matrix.zero(qd.f32, 5, 5)
        for i in qd.static(range(5)):
            for j in qd.static(range(5)):
                m[i, j] = a[i, j]
        r = m.inverse()
        for i in qd.static(range(5)):
            for j in qd.static(range(5)):
                out[i, j] = r[i, j]

    a = (np.arange(25).reshape(5, 5) % 7 - 3).astype(np.float32) + np.diag(
        np.arange(5, dtype=np.float32)
    )
    out = np.zeros((5, 5), np.float32)
    inverse(a, out)
    want = [
        "0x3e115ce3",
        "0x3e450c20",
        "0x3ea7f98b",
        "0xbd9b0db8",
        "0x3e97d2c8",
        "0xbf4b8206",
        "0xbe8e21ee",
        "0xbf23211e",
        "0x3e6559a3",
        "0xbeebcf8d",
        "0xbf614ff7",
        "0xbf17d2c8",
        "0xbf225261",
        "0x3d8e21e8",
        "0xbee08139",
        "0x3ec9e48d",
        "0x3e9fe629",
        "0x3eef0a80",
        "0x3dfbf652",
        "0x3e89497f",
        "0xbf85a72d",
        "0xbf122b9e",
        "0xbf6c9e4b",
        "0x3e9497d2",
        "0xbef0a7fd",
    ]
    assert [hex(x) for x in out.view(np.uint32).ravel().tolist()] == want
