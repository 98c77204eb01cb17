"""`qd.tensor(..., layout=...)`: an ndarray or a field laid out in another axis order is indexed
canonically by kernels and the host (its memory holds the permuted axes), gives canonical `shape`
and `to_numpy()`, and gets a kernel variant of its own; `_with_layout` tags an ndarray allocated in
memory's order, `qd.field(order="ji")` lays a field out. Checked against NumPy with transposed
indexing across the split, whole-kernel and `split_carried=False` paths, gradients included; the
wrapper's surface (`copy=` views, DLPack, pickling, errors) against values measured on quadrants."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

import qdlab as qd
from qdlab._tensor import _with_layout

MODES = [{}, {"per_offload": False}, {"split_carried": False}]


def run(layout: tuple, backend: object, mode: dict) -> tuple:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    t = qd.tensor(qd.i32, (3, 4, 2), backend=backend, layout=layout)
    out = qd.ndarray(qd.i32, (4,))

    @qd.kernel
    def fill(x: qd.Tensor, o: qd.types.NDArray[qd.i32, 1]):
        for i, j, k in x:
            x[i, j, k] = i * 100 + j * 10 + k
        snap = x[2, 1, 0]
        for i, j, k in qd.ndrange(3, 4, 2):
            x[i, j, k] += x.shape[0] * 1000 + x.shape[2] * 10000
        o[0] = snap
        o[1] = x.shape[1]
        for j in range(4):
            qd.atomic_add(o[2], x[1, j, 1])
        o[3] = qd.atomic_max(x[0, 3, 1], 99999)

    fill(t, out)
    return t, out.to_numpy(), fill


def expected() -> tuple:
    i, j, k = np.meshgrid(np.arange(3), np.arange(4), np.arange(2), indexing="ij")
    x = i * 100 + j * 10 + k + 23000
    o = np.array([210, 4, int(x[1, :, 1].sum()), x[0, 3, 1]])
    x[0, 3, 1] = 99999
    return x, o


@pytest.mark.parametrize("mode", MODES, ids=["default", "whole_kernel", "no_carry"])
@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD], ids=["nd", "field"])
@pytest.mark.parametrize("layout", [(0, 1, 2), (2, 0, 1), (1, 2, 0), (2, 1, 0)])
def test_kernels_index_canonically(layout: tuple, backend: object, mode: dict) -> None:
    t, out, _ = run(layout, backend, mode)
    want_x, want_o = expected()
    assert t.shape == (3, 4, 2)
    np.testing.assert_array_equal(t.to_numpy(), want_x)
    np.testing.assert_array_equal(out, want_o)
    assert t[1, 2, 1] == want_x[1, 2, 1]
    if backend is qd.Backend.NDARRAY and layout != (0, 1, 2):
        memory = t._unwrap().arr  # the permuted axes: memory axis p holds axis layout[p]
        assert memory.shape == tuple((3, 4, 2)[a] for a in layout)
        np.testing.assert_array_equal(memory, want_x.transpose(layout))
    view = t.to_numpy(
        copy=False
    )  # the storage, strided: the outermost axis in memory varies slowest
    assert np.argsort(view.strides)[::-1].tolist() == list(layout)


def test_a_layout_is_a_variant_of_its_own() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    plain = qd.tensor(qd.i32, (2, 3))
    swapped = qd.tensor(qd.i32, (2, 3), layout=(1, 0))

    @qd.kernel
    def k(x: qd.Tensor):
        for i, j in qd.ndrange(2, 3):
            x[i, j] = i * 10 + j

    k(plain)
    k(swapped)
    k(plain)
    assert len(k._primal.variants) == 2
    np.testing.assert_array_equal(plain.to_numpy(), swapped.to_numpy())
    np.testing.assert_array_equal(swapped._unwrap().arr, plain.to_numpy().T)


def test_host_access_is_canonical_and_copies() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    for layout in [(0, 1), (1, 0)]:
        t = qd.tensor(qd.f32, (2, 3), layout=layout, needs_grad=True)
        src = np.arange(6, dtype=np.float32).reshape(2, 3)
        t.from_numpy(src)
        got = t.to_numpy()
        np.testing.assert_array_equal(got, src)
        got[0, 0] = 42  # a copy: the tensor keeps its value
        bare = t._unwrap()  # index tuples of the bare ndarray are canonical too (a bare `[a:b]` is
        # a BufferView, of 1-D ndarrays only, as in Quadrants)
        np.testing.assert_array_equal(bare[0:1, :], src[0:1])
        np.testing.assert_array_equal(bare[:, 2], src[:, 2])
        assert t[0, 0] == 0 and t[1, 2] == 5
        t[1, 0] = 7.5
        assert t.to_numpy()[1, 0] == 7.5
        assert t.grad.shape == (2, 3)
        with pytest.raises(ValueError, match="does not match"):
            t.from_numpy(np.zeros((3, 2), np.float32))
        back = pickle.loads(pickle.dumps(t))
        assert back.layout == (None if layout == (0, 1) else layout)
        np.testing.assert_array_equal(back.to_numpy(), t.to_numpy())


def test_bad_layouts_are_refused() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(ValueError, match="not a permutation"):
        qd.tensor(qd.i32, (2, 3), layout=(1, 1))
    with pytest.raises(ValueError, match="entries but shape has"):
        qd.tensor(qd.i32, (2, 3), layout=(0, 1, 2))
    with pytest.raises(TypeError, match="compound dtypes"):
        qd.tensor(qd.math.vec3, (2, 3), layout=(1, 0))


def test_a_foreign_array_s_own_layout_attribute_is_not_an_axis_layout() -> None:
    """Other libraries' arrays have a `.layout` of their own (torch's `torch.strided`); only
    qdlab's ndarrays carry an axis layout (Genesis passes torch tensors to its kernels)."""
    qd.init(arch=qd.cpu, offline_cache=False)

    class Foreign:
        layout = "strided"

        def __init__(self, a: np.ndarray) -> None:
            self.a = a
            self.__array_interface__ = a.__array_interface__

    idx = np.arange(4, dtype=np.int32)
    out = np.zeros(4, np.int32)

    @qd.kernel
    def twice(i: qd.types.ndarray(), o: qd.types.ndarray()):
        for k in range(i.shape[0]):
            o[k] = i[k] * 2

    twice(Foreign(idx), out)
    np.testing.assert_array_equal(out, [0, 2, 4, 6])


RANK4 = [(0, 1, 2, 3), (3, 2, 1, 0), (3, 0, 2, 1), (1, 3, 0, 2)]


@pytest.mark.parametrize("mode", MODES, ids=["default", "whole_kernel", "no_carry"])
@pytest.mark.parametrize("layout", RANK4)
def test_rank4_layouts_match_numpy(layout: tuple, mode: dict) -> None:
    """A rank-4 ndarray tagged by `_with_layout` (allocated in memory's order), written, updated
    in place and read across axes by kernels: the values NumPy's transposed indexing gives."""
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    shape = (2, 3, 2, 4)
    a = qd.tensor(qd.f32, tuple(shape[p] for p in layout), needs_grad=True)
    _with_layout(a, layout)
    out = qd.ndarray(qd.f32, (3, 4))

    @qd.kernel
    def work(x: qd.types.ndarray(), o: qd.types.ndarray()):
        for i, j, k, l in qd.ndrange(2, 3, 2, 4):
            x[i, j, k, l] = i * 1000 + j * 100 + k * 10 + l
            x.grad[i, j, k, l] = i - j
        for i, j, k, l in x:
            x[i, j, k, l] += 0.5
            x.grad[i, j, k, l] *= 2.0
        for j, l in qd.ndrange(3, 4):
            o[j, l] = x[1, j, 0, l] - x[0, j, 1, 3 - l] + x.shape[3] * 10000

    work(a, out)
    i, j, k, l = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    want = (i * 1000 + j * 100 + k * 10 + l + 0.5).astype(np.float32)
    assert a.shape == shape and a.layout == (None if layout == (0, 1, 2, 3) else layout)
    np.testing.assert_array_equal(a.to_numpy(), want)
    np.testing.assert_array_equal(a.grad.to_numpy(), 2.0 * (i - j))
    np.testing.assert_array_equal(a._unwrap().arr, want.transpose(layout))
    np.testing.assert_array_equal(out.to_numpy(), want[1, :, 0, :] - want[0, :, 1, ::-1] + 40000)
    for index in itertools.product(*(range(n) for n in shape)):
        assert a[index] == want[index]


@pytest.mark.parametrize("mode", MODES, ids=["default", "whole_kernel", "no_carry"])
@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD], ids=["nd", "field"])
def test_gradients_through_a_laid_out_tensor(backend: object, mode: dict) -> None:
    """Reverse mode through a transposed tensor: x.grad is d(sum x[i, j]**2 * w[j]) / dx, in
    canonical order, and laid out as x is."""
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    x = qd.tensor(qd.f32, (3, 4), backend=backend, layout=(1, 0), needs_grad=True)
    w = qd.tensor(qd.f32, (4,), backend=backend)
    loss = qd.tensor(qd.f32, (), backend=backend, needs_grad=True)
    xs = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    ws = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    x.from_numpy(xs)
    w.from_numpy(ws)

    @qd.kernel
    def total(x: qd.Tensor, w: qd.Tensor, loss: qd.Tensor):
        for i, j in x:
            loss[None] += x[i, j] ** 2 * w[j]

    total(x, w, loss)
    loss.grad[None] = 1.0
    total.grad(x, w, loss)
    assert loss[None] == pytest.approx(float((xs**2 * ws).sum()))
    assert x.grad.layout == (1, 0)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs * ws, rtol=1e-6)


def test_field_order_lays_a_field_out() -> None:
    """`qd.field(..., order="ji")` stores the axes in that order (strides measured on quadrants),
    the values stay canonical; bad orders are refused with the reference's words."""
    qd.init(arch=qd.cpu, offline_cache=False)
    for backend in (qd.Backend.FIELD, qd.Backend.NDARRAY):
        t = qd.tensor(qd.i32, (4, 8), layout=(1, 0), backend=backend)
        assert t.to_numpy(copy=False).strides == (4, 16)
        t3 = qd.tensor(qd.f64, (2, 4, 8), layout=(2, 0, 1), backend=backend)
        assert t3.to_numpy(copy=False).strides == (32, 8, 64)
    x = qd.field(qd.i32, shape=(3, 4), order="ji", offset=(1, 2))
    assert x.layout == (1, 0) and x._qd_layout == (1, 0)
    assert qd.field(qd.i32, shape=(3, 4), order="ij").layout is None

    @qd.kernel
    def fill():
        for i, j in x:
            x[i, j] = i * 10 + j

    fill()
    assert x[3, 5] == 35
    np.testing.assert_array_equal(x.to_numpy(), np.add.outer(np.arange(1, 4) * 10, np.arange(2, 6)))
    for order, message in [
        ("ik", "Invalid axis k"),
        ("iij", r"shape and order must be the same \(2 != 3\)"),
        ("ii", "axes in order must be different"),
    ]:
        with pytest.raises(qd.QuadrantsSyntaxError, match=message):
            qd.field(qd.f32, (2, 3), order=order)
    with pytest.raises(qd.QuadrantsSyntaxError, match="shape cannot be None when order is set"):
        qd.field(qd.f32, order="ij")


@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD], ids=["nd", "field"])
def test_to_numpy_copy_false_is_the_storage(backend: object) -> None:
    """`copy=False` views the storage (writes go both ways), `copy=None` views it where it can
    and copies otherwise, as quadrants answers (messages measured there)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    t = qd.tensor(qd.f32, (3, 4), backend=backend, layout=(1, 0))

    @qd.kernel
    def bump(x: qd.Tensor):
        for i, j in x:
            x[i, j] += i * 4 + j

    view = t.to_numpy(copy=False)
    view[2, 1] = 0.5
    bump(t)
    assert view[2, 1] == 9.5 and view[1, 3] == 7.0  # the kernel's writes show in the view
    assert np.shares_memory(view, t.to_numpy(copy=None))
    assert not np.shares_memory(view, t.to_numpy())
    assert t.to_numpy(np.float32, copy=False) is not None
    with pytest.raises(ValueError, match=r"copy=False is incompatible with dtype conversion"):
        t.to_numpy(np.float64, copy=False)
    assert t.to_numpy(np.float64, copy=None).dtype == np.float64
    for dtype in (qd.f16, qd.i8, qd.u32):
        s = qd.tensor(dtype, (4,), backend=backend)
        with pytest.raises(ValueError, match=f"Zero-copy not available for dtype={dtype}"):
            s.to_numpy(copy=False)
        assert s.to_numpy(copy=None).dtype == dtype.np
    zero_d = qd.tensor(qd.f32, (), backend=backend)
    if backend is qd.Backend.FIELD:
        with pytest.raises(ValueError, match="Zero-copy not available for dtype=f32"):
            zero_d.to_numpy(copy=False)
    else:
        assert zero_d.to_numpy(copy=False).shape == ()


@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD], ids=["nd", "field"])
def test_to_dlpack_is_a_canonical_view(backend: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    t = qd.tensor(qd.f32, (3, 4), backend=backend, layout=(1, 0))
    t.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    for versioned in (False, True):
        got = np.from_dlpack(Capsule(t, versioned))
        np.testing.assert_array_equal(got, t.to_numpy())
        assert np.shares_memory(got, t.to_numpy(copy=False))


class Capsule:
    """What `np.from_dlpack` takes: an object with `__dlpack__`, here a tensor's capsule."""

    def __init__(self, t: qd.Tensor, versioned: bool) -> None:
        self.t, self.versioned = t, versioned

    def __dlpack__(self, **_: object) -> object:
        return self.t.to_dlpack(self.versioned)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD], ids=["nd", "field"])
def test_vector_and_matrix_tensors_pickle(backend: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    v = qd.Vector.tensor(3, qd.f32, (4,), backend=backend)
    v.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3))
    m = qd.Matrix.tensor(2, 3, qd.i32, (2,), backend=backend)
    m.from_numpy(np.arange(12, dtype=np.int32).reshape(2, 2, 3))
    for t, cls in [(v, qd.VectorTensor), (m, qd.MatrixTensor)]:
        back = pickle.loads(pickle.dumps(t))
        assert type(back) is cls and back.element_shape == t.element_shape
        assert back.shape == t.shape and back.dtype == t.dtype
        np.testing.assert_array_equal(back.to_numpy(), t.to_numpy())
    assert not isinstance(m, qd.VectorTensor)


def test_factory_keyword_errors_and_repr() -> None:
    """The factories' errors and repr, in quadrants' words (measured there)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(TypeError, match=r"^qd.tensor\(...\) does not accept order=; pass layout="):
        qd.tensor(qd.f32, (4,), order="ji")
    for factory, make in [
        ("qd.Vector.tensor", lambda **kw: qd.Vector.tensor(3, qd.f32, (4,), **kw)),
        ("qd.Matrix.tensor", lambda **kw: qd.Matrix.tensor(2, 2, qd.f32, (4,), **kw)),
    ]:
        with pytest.raises(TypeError, match=r"does not accept order= \(or layout=\); use the"):
            make(order="ji")
        with pytest.raises(
            TypeError,
            match=rf"^{factory}\(\) got unexpected keyword argument\(s\) \['layout'\]; "
            "accepted: backend, dtype, needs_grad, shape$",
        ):
            make(layout=(0,))
    with pytest.raises(
        TypeError, match=r"\['offset'\]; accepted: backend, dtype, layout, needs_grad, shape$"
    ):
        qd.tensor(qd.f32, (4,), offset=(1,))
    with pytest.raises(ValueError, match="expected one of qd.Backend.FIELD, qd.Backend.NDARRAY"):
        qd.tensor(qd.f32, (4,), backend=5)
    with pytest.raises(TypeError, match="use qd.wrap"):
        qd.tensor(qd.ndarray(qd.f32, 4), (4,))
    t = qd.tensor(qd.i32, (2, 3), layout=(1, 0), backend=qd.Backend.FIELD, needs_grad=False)
    assert repr(t) == "Tensor(shape=(2, 3), dtype=i32, backend=FIELD, layout=(1, 0))"
    assert repr(qd.tensor(qd.i32, (2, 3))) == "Tensor(shape=(2, 3), dtype=i32, backend=NDARRAY)"


def test_with_layout_checks_its_layout_and_fields_have_at_most_12_axes() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    a = qd.ndarray(qd.i32, (2, 3))
    with pytest.raises(ValueError, match="layout has 3 entries but ndarray has 2 dims"):
        _with_layout(a, (0, 1, 2))
    with pytest.raises(ValueError, match=r"layout=\(0, 0\) is not a permutation"):
        _with_layout(a, (0, 0))
    assert _with_layout(a, (1, 0)).shape == (3, 2) and a._qd_layout == (1, 0)
    a._qd_layout = None  # as quadrants' programs set it: untagged again
    assert a.shape == (2, 3) and a.layout is None
    assert qd._lib.core.get_max_num_indices() == 12
    qd.field(qd.i32, shape=(1,) * 12)
    with pytest.raises(qd.QuadrantsRuntimeError, match="The maximum dimensionality is 12"):
        qd.field(qd.i32, shape=(1,) * 13)


def test_to_torch_copy_false_where_quadrants_has_a_view() -> None:
    """`to_torch(copy=False)` views what `to_numpy(copy=False)` views and refuses the rest (an f16
    field, a 0-d field), as quadrants does; `copy=None` then copies."""
    torch = pytest.importorskip("torch")
    qd.init(arch=qd.cpu, offline_cache=False)
    t = qd.tensor(qd.f32, (3, 4), layout=(1, 0), backend=qd.Backend.FIELD)
    view = t.to_torch(copy=False)
    view[2, 1] = 5.0
    assert t[2, 1] == 5.0 and tuple(view.shape) == (3, 4)
    for f in (qd.field(qd.f16, shape=4), qd.field(qd.f32, shape=())):
        with pytest.raises(ValueError, match="Zero-copy not available"):
            f.to_torch(copy=False)
        copy = f.to_torch(copy=None)
        copy.fill_(3.0)
        assert isinstance(copy, torch.Tensor) and float(f.to_numpy().flat[0]) == 0.0
