"""`qd.tensor(..., layout=...)`: an ndarray laid out in another axis order is indexed canonically
by kernels and the host (its memory holds the permuted axes), gives canonical `shape` and
`to_numpy()`, and gets a kernel variant of its own; a field tensor keeps the layout it was given
(its storage order is qdlab's own). Checked against NumPy and across the split, whole-kernel and
`split_carried=False` paths."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import qdlab as qd

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
