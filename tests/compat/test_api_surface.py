"""The public surface of qdlab's field and ndarray classes is Quadrants': the names `dir()` lists
on the class (internal helpers are behind underscores), and the semantics of each, as the real
quadrants 1.3.3 gave them on the CPU (literals below): `has_grad()` / `has_dual()` are methods,
`dtype` the scalar type, `parent(n)` the SNode `n` levels above the place, `layout` only the tag
`order=` / `qd.tensor(layout=...)` gave; matrix fields and vector / matrix ndarrays have `n`, `m`
as instance attributes."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

_FIELD = [
    "copy_from",
    "dtype",
    "fill",
    "from_numpy",
    "from_torch",
    "has_dual",
    "has_grad",
    "layout",
    "parent",
    "shape",
    "snode",
    "to_dlpack",
    "to_numpy",
    "to_torch",
]
_NDARRAY = [
    "copy_from",
    "element_shape",
    "fill",
    "get_type",
    "has_dual",
    "has_grad",
    "layout",
    "shape",
    "to_dlpack",
]
_EXCHANGE = ["from_numpy", "from_torch", "to_numpy", "to_torch"]


def _public(cls: type) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_"))


@pytest.mark.parametrize(
    "cls, names",
    [
        (qd.Field, _FIELD),
        (qd.ScalarField, _FIELD),
        (qd.MatrixField, _FIELD + ["get_scalar_field"]),
        (qd.StructField, _FIELD + ["get_member_field", "keys"]),
        (qd.Ndarray, _NDARRAY),
        (qd.ScalarNdarray, _NDARRAY + _EXCHANGE),
        (qd.VectorNdarray, _NDARRAY + _EXCHANGE),
        (qd.MatrixNdarray, _NDARRAY + _EXCHANGE),
    ],
)
def test_class_surface(cls: type, names: list[str]) -> None:
    assert _public(cls) == sorted(names)


def test_field_dtype_grad_dual_and_parent() -> None:
    qd.init(arch=qd.cpu)
    x = qd.field(qd.f32, shape=(3, 4), needs_grad=True)
    i = qd.field(qd.i32, shape=4)
    assert x.dtype == qd.f32 and i.dtype == qd.i32
    assert x.has_grad() is True and i.has_grad() is False and i.has_dual() is False
    assert x.parent().shape == (3, 4) and x.parent(2) is qd.root and x.parent(3) is None
    y = qd.field(qd.f32)
    qd.root.dense(qd.j, 3).dense(qd.i, 2).place(y)
    assert y.layout is None and y.shape == (2, 3)  # a dense layout's order is no layout tag
    assert y.parent().shape == (2, 3) and y.parent(2).shape == (3,) and y.parent(3) is qd.root
    assert qd.field(qd.f32, shape=(2, 3), order="ji").layout == (1, 0)
    assert y.has_grad() is False
    qd.root.lazy_grad()
    assert y.has_grad() is True


def test_matrix_field_instance_attributes() -> None:
    qd.init(arch=qd.cpu)
    v = qd.Vector.field(3, qd.f32, shape=4)
    m = qd.Matrix.field(2, 3, qd.i32, shape=4)
    assert (v.n, v.m, v.ndim, m.n, m.m, m.ndim) == (3, 1, 1, 2, 3, 2)
    assert not hasattr(qd.field(qd.f32, shape=4), "n")

    @qd.kernel
    def k():
        for i in v:
            v[i] += qd.Vector([1.0, 2.0, 3.0]) * v.n

    k()
    assert v.to_numpy().sum() == 4 * 18


def test_struct_field_surface_semantics() -> None:
    qd.init(arch=qd.cpu)
    S = qd.types.struct(a=qd.f32, b=qd.types.vector(2, qd.f32))
    s = S.field(shape=5, needs_grad=True)
    t = S.field(shape=5)
    assert s.dtype == qd.f32 and s.layout is None and s.parent(2) is qd.root
    assert s.has_grad() is True and t.has_grad() is False and s.has_dual() is False
    assert s.grad.a.shape == (5,) and s.grad.keys == ["a", "b"] and t.grad is not None
    assert list(s.field_dict) == ["a", "b"] and s.field_dict["a"] is s.a
    with pytest.raises(NotImplementedError):
        s.to_dlpack()
    qd.root.lazy_grad()
    assert t.has_grad() is True and t.grad.b.shape == (5,)


def test_ndarray_type_grad_and_instance_attributes() -> None:
    qd.init(arch=qd.cpu)
    a = qd.Matrix.ndarray(2, 3, qd.f32, shape=(4, 5))
    b = qd.Vector.ndarray(3, qd.f32, shape=2, needs_grad=True)
    c = qd.ndarray(qd.i32, shape=3)
    t = a.get_type()
    assert t.shape == (4, 5) and t.needs_grad is False and t.layout == qd.Layout.AOS
    assert b.get_type().needs_grad is True
    assert (a.n, a.m, b.n) == (2, 3, 3) and not hasattr(b, "m") and not hasattr(c, "n")
    assert a.has_grad() is False and b.has_grad() is True and b.has_dual() is False
    c.from_numpy(np.arange(3, dtype=np.int32))
    assert c.to_numpy().tolist() == [0, 1, 2]


def test_forward_mode_writes_a_field_without_a_dual() -> None:
    """`has_dual()` is a method: forward mode gives a dual only to the fields that have one (a
    kernel that also writes a field without one runs, that field as written)."""
    qd.init(arch=qd.cpu)
    a = qd.field(qd.f32, shape=4, needs_dual=True)
    f = qd.field(qd.f32, shape=4, needs_dual=True)
    g = qd.field(qd.f32, shape=4)

    @qd.kernel
    def k():
        for i in range(4):
            g[i] = 3.0 * a[i]
            f[i] = a[i] * a[i]

    a.from_numpy(np.arange(4, dtype=np.float32))
    with qd.ad.FwdMode(loss=f, param=a, seed=[1.0] * 4):
        k()
    assert g.has_dual() is False and f.has_dual() is True
    assert g.to_numpy().tolist() == [0.0, 3.0, 6.0, 9.0]
    assert f.dual.to_numpy().tolist() == [0.0, 2.0, 4.0, 6.0]
