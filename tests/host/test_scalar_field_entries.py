"""`x.get_scalar_field(i, j)`: the field of one entry of a vector or matrix field is that entry of
`x`'s own memory, from Python and in kernels, on the split and the whole-kernel path: a write
through either name is seen through the other, and the gate treats them as one buffer (an
overwrite through one is an overwrite of a snapshot read through the other). Expected values are
NumPy's or those quadrants 1.3.3 printed for the same programs (recorded here)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

PATHS = [True, False]
"""per_offload: split into constructs, or the whole kernel."""


@pytest.mark.parametrize("per_offload", PATHS)
def test_writes_through_either_name_are_seen_through_the_other(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    n = 8
    v = qd.Vector.field(2, qd.i32, shape=n)
    s0 = v.get_scalar_field(0)
    out = qd.field(qd.i32, shape=n)

    @qd.kernel
    def chain():
        for i in range(n):
            s0[i] = i * 3
        for i in range(n):
            v[i][1] = v[i][0] + 1
        for i in range(n):
            out[i] = s0[(i + 1) % n] + v.get_scalar_field(1)[i]
        for i in range(n):
            v[i] = [out[i], -out[i]]
        for i in range(n):
            s0[i] += 100

    chain()
    # quadrants 1.3.3
    want_v = [[104, -4], [110, -10], [116, -16], [122, -22]]
    want_v += [[128, -28], [134, -34], [140, -40], [122, -22]]
    assert v.to_numpy().tolist() == want_v
    assert out.to_numpy().tolist() == [4, 10, 16, 22, 28, 34, 40, 22]
    assert qd.explain(chain).mode == ("per_offload" if per_offload else "whole_kernel")


def make_snapshot_kernel(through_entry: bool) -> tuple:
    v = qd.Vector.field(2, qd.i32, shape=8)
    s = v.get_scalar_field(1)
    out = qd.field(qd.i32, shape=8)

    if through_entry:

        @qd.kernel
        def k():
            for i in v:
                v[i] = [i, i + 1]
            snap = v[0][1]  # read through the vector field
            for i in s:  # overwritten through the entry's field
                s[i] = -1
            for i in out:
                out[i] = snap + v[i][1]

    else:

        @qd.kernel
        def k():
            for i in v:
                v[i] = [i, i + 1]
            snap = s[0]  # read through the entry's field
            for i in v:  # overwritten through the vector field
                v[i][1] = -1
            for i in out:
                out[i] = snap + s[i]

    return k, v, out


@pytest.mark.parametrize("through_entry", [True, False])
@pytest.mark.parametrize("carried", [True, False])
def test_the_gate_sees_one_buffer(through_entry: bool, carried: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=carried)
    k, v, out = make_snapshot_kernel(through_entry)
    k()
    np.testing.assert_array_equal(out.to_numpy(), np.zeros(8, np.int32))  # 1 + -1
    np.testing.assert_array_equal(v.to_numpy()[:, 1], np.full(8, -1, np.int32))
    r = qd.explain(k)
    if carried:
        assert r.mode == "per_offload"
        assert [(i.name, i.reason) for i in r.interface] == [("snap", "overwritten_reread")]
    else:
        assert r.mode == "whole_kernel" and r.fallback.code == "overwritten_reread"


@pytest.mark.parametrize("per_offload", PATHS)
def test_atomics_and_a_zero_dim_field(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    acc = qd.Vector.field(3, qd.f32, shape=())
    s = acc.get_scalar_field(2)

    @qd.kernel
    def red():
        for i in range(10):
            s[None] += i
        for i in range(10):
            acc[None][0] += s[None]

    red()
    assert acc.to_numpy().tolist() == [450.0, 0.0, 45.0]  # quadrants 1.3.3


@pytest.mark.parametrize("per_offload", PATHS)
def test_a_column_major_soa_matrix_field(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    nx, ny = 3, 5
    c = qd.Matrix.field(2, 2, qd.i32, shape=(nx, ny), order="ji", layout=qd.Layout.SOA)
    s = c.get_scalar_field(1, 0)

    @qd.kernel
    def fill():
        for i, j in s:
            s[i, j] = i * 10 + j
        for i, j in c:
            c[i, j][0, 1] = s[i, j] * 2

    fill()
    want = np.zeros((nx, ny, 2, 2), np.int32)
    i, j = np.indices((nx, ny))
    want[..., 1, 0] = i * 10 + j
    want[..., 0, 1] = want[..., 1, 0] * 2
    np.testing.assert_array_equal(c.to_numpy(), want)
    np.testing.assert_array_equal(s.to_numpy(), want[..., 1, 0])


@pytest.mark.parametrize("per_offload", PATHS)
def test_a_field_with_an_offset(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    v = qd.Vector.field(2, qd.f32, shape=(4, 3), offset=(-2, 1))
    t = v.get_scalar_field(0)

    @qd.kernel
    def fill():
        for i, j in t:
            t[i, j] = i + j * 0.5
        for i, j in v:
            v[i, j][1] = t[i, j] + 1

    fill()
    i, j = np.indices((4, 3))
    first = ((i - 2) + (j + 1) * 0.5).astype(np.float32)
    np.testing.assert_array_equal(v.to_numpy(), np.stack([first, first + 1], -1))
    assert t.shape == (4, 3) and t[-2, 1] == -1.5 and t[1, 3] == 2.5


def test_gradients_reach_the_matrix_fields_gradient() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    g = qd.Vector.field(2, qd.f32, shape=4, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def compute():
        for i in range(4):
            loss[None] += g.get_scalar_field(1)[i] ** 2 + g[i][0]

    g.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
    with qd.ad.Tape(loss=loss):
        compute()
    assert g.grad.to_numpy().tolist() == [[1, 2], [1, 6], [1, 10], [1, 14]]
    assert g.get_scalar_field(1).grad is None  # as in quadrants: no gradient field of its own


def test_python_scope_reads_and_writes_the_same_memory() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    m = qd.Matrix.field(2, 3, qd.i32, shape=5)
    s = m.get_scalar_field(1, 2)
    assert isinstance(s, qd.ScalarField) and s.shape == (5,) and s.dtype == qd.i32
    s[3] = 77
    assert m[3][1, 2] == 77 and s[3] == 77
    s.fill(4)
    assert m.to_numpy()[:, 1, 2].tolist() == [4] * 5
    s.from_numpy(np.arange(5, dtype=np.int32))
    assert m.to_numpy()[:, 1, 2].tolist() == [0, 1, 2, 3, 4]
    m.fill(9)
    assert s.to_numpy().tolist() == [9] * 5
    assert m.to_numpy()[:, 0].tolist() == [[9] * 3] * 5


def test_the_entry_is_the_flat_one_as_in_quadrants() -> None:
    """quadrants 1.3.3 takes entry `i * m + j` of its tuple of entry fields: a negative one counts
    from the end, (0, 5) of a 2x3 matrix is (1, 2), one past either end is an IndexError."""
    qd.init(arch=qd.cpu, offline_cache=False)
    v = qd.Vector.field(3, qd.f32, shape=4)
    m = qd.Matrix.field(2, 3, qd.i32, shape=2)
    assert m.get_scalar_field(0, 5) is m.get_scalar_field(1, 2)
    assert m.get_scalar_field(1) is m.get_scalar_field(1, 0)
    assert v.get_scalar_field(-1) is v.get_scalar_field(2)
    assert v.get_scalar_field(0, 1) is v.get_scalar_field(1)
    for bad in [(3,), (-4,)]:
        with pytest.raises(IndexError, match="tuple index out of range"):
            v.get_scalar_field(*bad)
    with pytest.raises(IndexError, match="tuple index out of range"):
        m.get_scalar_field(2, 0)
    for arity in [(), (0, 1, 2)]:
        with pytest.raises(AssertionError):
            m.get_scalar_field(*arity)


def test_in_a_kernel_the_indices_are_compile_time_values() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    v = qd.Vector.field(3, qd.i32, shape=4)

    @qd.kernel
    def each():
        for k in qd.static(range(3)):
            for i in range(4):
                v.get_scalar_field(k)[i] = i * 10 + k

    each()
    assert v.to_numpy().tolist() == [[i * 10 + k for k in range(3)] for i in range(4)]

    @qd.kernel
    def runtime(k: qd.i32):
        for i in range(4):
            v.get_scalar_field(k)[i] = 0

    with pytest.raises(qd.QuadrantsTypeError, match="known when it compiles"):  # as in quadrants
        runtime(1)

    @qd.kernel
    def past():
        v.get_scalar_field(3)[0] = 0

    with pytest.raises(qd.QuadrantsCompilationError, match="tuple index out of range"):
        past()


@pytest.mark.parametrize("layout", [qd.Layout.AOS, qd.Layout.SOA])
@pytest.mark.parametrize("order", ["ij", "ji"])
def test_addresses_are_the_references(layout: object, order: str) -> None:
    """Where each entry lives, as quadrants 1.3.3 lays it out (power-of-two extents)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    nx, ny, n = 4, 2, 2
    v = qd.Vector.field(n, qd.i32, shape=(nx, ny), order=order, layout=layout)

    @qd.kernel
    def addr(a: qd.template(), i: qd.i32, j: qd.i32) -> qd.u64:
        return qd.get_addr(a, [i, j])

    base = addr(v, 0, 0)
    for i in range(nx):
        for j in range(ny):
            cell = i * ny + j if order == "ij" else j * nx + i
            for k in range(n):
                at = k * nx * ny + cell if layout == qd.Layout.SOA else cell * n + k
                assert addr(v.get_scalar_field(k), i, j) == base + 4 * at


def test_entries_placed_one_by_one_are_stored_entry_by_entry() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    f = qd.Matrix.field(2, 2, qd.f32)
    for a in range(2):
        for b in range(2):
            qd.root.dense(qd.ij, (4, 4)).place(f.get_scalar_field(a, b))

    @qd.kernel
    def addr(x: qd.template(), i: qd.i32, j: qd.i32) -> qd.u64:
        return qd.get_addr(x, [i, j])

    @qd.kernel
    def write():
        for i, j in f:
            f[i, j] = [[i, j], [i * j, i + j]]

    write()
    base = addr(f, 0, 0)
    for k, (a, b) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        assert addr(f.get_scalar_field(a, b), 1, 2) == base + 4 * (k * 16 + 1 * 4 + 2)
    assert f.get_scalar_field(1, 0).to_numpy()[3, 2] == 6.0


@pytest.mark.parametrize("per_offload", PATHS)
def test_an_entry_of_a_gradient_field_is_that_gradient(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    v = qd.Vector.field(2, qd.f32, shape=4, needs_grad=True)
    gs = v.grad.get_scalar_field(1)
    out = qd.field(qd.f32, shape=4)

    @qd.kernel
    def k():
        for i in range(4):
            gs[i] = i * 2.0
        snap = v.grad[1][1]
        for i in range(4):
            v.grad[i][1] = -1.0
        for i in range(4):
            out[i] = snap + gs[i]

    k()
    np.testing.assert_array_equal(v.grad.to_numpy()[:, 1], np.full(4, -1.0, np.float32))
    np.testing.assert_array_equal(out.to_numpy(), np.full(4, 1.0, np.float32))


def test_soa_is_for_fields_made_with_a_shape() -> None:
    """quadrants 1.3.3 ignores `layout=` of a field that a layout's `place()` places: that field's
    entries share its cells."""
    qd.init(arch=qd.cpu, offline_cache=False)
    v = qd.Vector.field(2, qd.i32, layout=qd.Layout.SOA)
    qd.root.dense(qd.ij, (4, 4)).place(v)

    @qd.kernel
    def addr(x: qd.template(), i: qd.i32, j: qd.i32) -> qd.u64:
        return qd.get_addr(x, [i, j])

    base = addr(v, 0, 0)
    assert [(addr(v.get_scalar_field(k), 1, 2) - base) // 4 for k in range(2)] == [12, 13]


@pytest.mark.parametrize("debug", [False, True])
def test_soa_gradients(debug: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=debug)
    g = qd.Vector.field(2, qd.f32, shape=(4, 2), layout=qd.Layout.SOA, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def compute():
        for i, j in g:
            loss[None] += g[i, j][0] * g[i, j][1] + g.get_scalar_field(1)[i, j]

    values = np.arange(16, dtype=np.float32).reshape(4, 2, 2)
    g.from_numpy(values)
    with qd.ad.Tape(loss=loss):
        compute()
    assert loss[None] == 680.0  # quadrants 1.3.3
    want = np.stack([values[..., 1], values[..., 0] + 1], -1)
    np.testing.assert_array_equal(g.grad.to_numpy(), want)
