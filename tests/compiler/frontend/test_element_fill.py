"""`a[i].fill(x)` in a kernel on an element of a vector/matrix field, ndarray, or an ndarray inside
a dataclass parameter: it writes every entry of that element, as Quadrants does (checked against
the reference's output for the same program); split and whole kernel alike."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qdlab as qd


@dataclasses.dataclass
class Holder:
    v: qd.types.ndarray()


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_fill_writes_the_element(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    f = qd.Vector.field(3, qd.f32, shape=(2, 2))
    m = qd.Matrix.ndarray(2, 2, qd.f32, shape=(3,))
    h = Holder(v=qd.Vector.ndarray(3, qd.f32, shape=(2, 2)))

    @qd.kernel
    def k(m: qd.types.ndarray(), h: Holder):
        for i, j in qd.ndrange(2, 2):
            f[i, j].fill(i + j + 0.5)
            h.v[i, j].fill(2.0 * i)
        for i in range(3):
            m[i].fill(i)

    k(m, h)
    i, j = np.meshgrid(np.arange(2), np.arange(2), indexing="ij")
    assert np.array_equal(f.to_numpy(), np.repeat((i + j + 0.5)[..., None], 3, axis=2))
    assert np.array_equal(m.to_numpy(), np.arange(3.0)[:, None, None] * np.ones((3, 2, 2)))
    assert np.array_equal(h.v.to_numpy(), np.repeat((2.0 * i)[..., None], 3, axis=2))
