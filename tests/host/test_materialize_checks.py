"""Quadrants' materialize checks, at a program's first launch or host access to a field, of the
fields declared before it: unplaced fields, gradients and duals asked for but not placed, and a
matrix field placed member by member in different shapes, each a RuntimeError in the reference's
words (measured with quadrants 1.3.3)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _cpu() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def launch() -> None:
    @qd.kernel
    def nothing():
        pass

    nothing()


def test_a_gradient_must_be_placed_as_well() -> None:
    a = qd.field(qd.f32, needs_grad=True)
    qd.root.dense(qd.i, 2).place(a)
    with pytest.raises(RuntimeError, match=r"requrie `needs_grad=True`, however their grad"):
        launch()
    with pytest.raises(RuntimeError, match="not placed"):
        launch()  # still: nothing that fails is forgotten
    qd.root.dense(qd.i, 2).place(a.grad)
    launch()
    assert a.grad.shape == (2,)


@pytest.mark.parametrize("how", ["together", "lazy", "shape"])
def test_gradients_and_duals_placed_three_ways(how: str) -> None:
    if how == "shape":
        v = qd.Vector.field(3, qd.f32, shape=4, needs_grad=True, needs_dual=True)
    else:
        v = qd.Vector.field(3, qd.f32, needs_grad=True, needs_dual=True)
        if how == "together":
            qd.root.dense(qd.i, 4).place(v, v.grad, v.dual)
        else:
            qd.root.dense(qd.i, 4).place(v)
            qd.root.lazy_grad()
            qd.root.lazy_dual()
    launch()
    assert v.grad.to_numpy().shape == (4, 3)


def test_a_dual_must_be_placed() -> None:
    s = qd.Struct.field({"m": qd.f32, "p": qd.types.vector(2, float)}, needs_dual=True)
    qd.root.dense(qd.i, 1).place(s)
    with pytest.raises(RuntimeError, match=r"requrie `needs_dual=True`, however their dual"):
        launch()


def test_matrix_members_placed_one_by_one() -> None:
    m = qd.Matrix.field(2, 2, qd.i32)
    for i in range(2):
        for j in range(2):
            qd.root.dense(qd.i, 3).place(m.get_scalar_field(i, j))
    launch()
    m[1] = [[1, 2], [3, 4]]
    assert m.to_numpy()[1].tolist() == [[1, 2], [3, 4]] and m.shape == (3,)
    qd.init(arch=qd.cpu, offline_cache=False)  # checked at a program's first launch
    bad = qd.Matrix.field(2, 1, qd.i32)
    qd.root.dense(qd.i, 3).place(bad.get_scalar_field(0, 0))
    qd.root.dense(qd.i, 4).place(bad.get_scalar_field(1, 0))
    with pytest.raises(RuntimeError, match=r"different shapes \[\(3,\), \(4,\)\]"):
        launch()


def test_fields_declared_after_the_first_launch_are_not_checked_there() -> None:
    launch()
    late = qd.field(qd.i32)
    launch()  # as in Quadrants; using it is an error of its own
    with pytest.raises(RuntimeError, match="no allocation"):
        late.to_numpy()


def test_an_unplaced_field_is_named_where_it_was_declared() -> None:
    x = qd.field(qd.i32)
    with pytest.raises(RuntimeError, match=r"(?s)not placed.*test_materialize_checks.py"):
        x.to_numpy()
    qd.root.dense(qd.i, 2).place(x)
    assert np.array_equal(x.to_numpy(), [0, 0])
