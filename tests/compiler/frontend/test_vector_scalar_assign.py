"""A scalar assigned to a vector local fills it, as in Quadrants: `v = x`, and the `_` of
`a, _, _ = f()` when the later value is a scalar (expected values are the reference's output for
this program); split and whole kernel."""

from __future__ import annotations

import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_scalar_fills_a_vector_local(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    out = qd.Vector.field(3, qd.f32, shape=2)

    @qd.func
    def f(i):
        return qd.Vector([1.0, 2.0, 3.0]) * i, qd.Vector([4.0, 5.0, 6.0]), 7

    @qd.kernel
    def k(x: qd.i32):
        for i in range(2):
            v1, _, _ = f(i)
            out[i] = v1
            out[i] += _
            v = qd.Vector([1.5, 2.0, 3.0])
            v = x
            out[i] += v

    k(4)
    assert out.to_numpy().tolist() == [[11.0, 11.0, 11.0], [12.0, 13.0, 14.0]]
