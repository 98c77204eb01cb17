"""`.to_torch(copy=...)` of fields, ndarrays and `qd.Tensor`s: `copy=True` an independent tensor,
`copy=False` / `None` a zero-copy view of the storage (writes by kernels show in it, writes
through it reach kernels; a field's view is its logical part of the padded storage), and
`copy=False` with a transfer to another device a ValueError, as the reference defines."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kind", ["field", "ndarray", "tensor"])
def test_views_see_kernel_writes_and_copies_do_not(kind: str) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    if kind == "field":
        a = qd.Vector.field(3, qd.f32, shape=5)
    elif kind == "ndarray":
        a = qd.Vector.ndarray(3, qd.f32, shape=5)
    else:
        a = qd.tensor(qd.math.vec3, shape=5, backend=qd.Backend.NDARRAY)

    @qd.kernel
    def put(a: qd.template(), v: qd.f32):
        for i in range(5):
            a[i] = qd.Vector([v, v + 1, i])

    @qd.kernel
    def put_nd(a: qd.types.ndarray(element_dim=1), v: qd.f32):
        for i in range(5):
            a[i] = qd.Vector([v, v + 1, i])

    write = put if kind == "field" else put_nd
    write(a, 1.0)
    view = a.to_torch(copy=False)
    maybe = a.to_torch(copy=None)
    copied = a.to_torch()
    assert tuple(view.shape) == (5, 3)
    write(a, 10.0)
    assert view[2].tolist() == [10.0, 11.0, 2.0] and maybe[2].tolist() == [10.0, 11.0, 2.0]
    assert copied[2].tolist() == [1.0, 2.0, 2.0]
    view[4, 0] = -7.0  # through the view, into the storage
    assert a.to_numpy()[4, 0] == -7.0
    with pytest.raises(ValueError, match="copy=False is incompatible with device transfer"):
        a.to_torch(device="meta", copy=False)
    assert np.array_equal(a.to_torch(device="cpu").numpy(), a.to_numpy())


def test_a_laid_out_ndarray_views_canonically() -> None:
    """`layout=(1, 0)` permutes the storage; its zero-copy view is strided back into the canonical
    order (as the reference's DLPack view is), and still shares the storage both ways."""
    qd.init(arch=qd.cpu, offline_cache=False)
    t = qd.tensor(qd.i32, shape=(2, 3), backend=qd.Backend.NDARRAY, layout=(1, 0))

    @qd.kernel
    def fill(x: qd.Tensor, v: qd.i32):
        for i, j in qd.ndrange(2, 3):
            x[i, j] = v + i * 10 + j

    fill(t, 0)
    view = t.to_torch(copy=False)
    assert tuple(view.shape) == (2, 3) and view[1, 2].item() == 12
    fill(t, 100)
    assert view[1, 2].item() == 112 and torch.equal(view, t.to_torch())
    view[0, 1] = -5
    assert t[0, 1] == -5 and t.to_numpy()[0, 1] == -5


def test_a_torch_tensor_argument_is_not_taken_for_a_laid_out_ndarray() -> None:
    """A torch tensor has a `.layout` of its own (`torch.strided`); only qdlab's ndarrays carry an
    axis layout (Genesis passes torch index tensors to its kernels)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    idx = torch.arange(4, dtype=torch.int32)
    out = np.zeros(4, np.int32)

    @qd.kernel
    def twice(i: qd.types.ndarray(), o: qd.types.ndarray()):
        for k in range(i.shape[0]):
            o[k] = i[k] * 2

    twice(idx, out)
    np.testing.assert_array_equal(out, [0, 2, 4, 6])
