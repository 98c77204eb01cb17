"""A list of runtime scalars bound to a name (`verts = [a, b, c]`) holds one variable per element,
as in Quadrants: `verts[1] = verts[2]` under a runtime `if` swaps only where the condition holds;
split and whole kernel."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_list_element_assign_under_a_runtime_if(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    src = qd.field(qd.i32, shape=(4, 3))
    out = qd.field(qd.i32, shape=(4, 3))
    src.from_numpy(np.arange(12, dtype=np.int32).reshape(4, 3))

    @qd.kernel
    def k():
        for c in range(4):
            verts = [src[c, j] for j in range(3)]
            if c % 2 == 1:
                tmp = verts[1]
                verts[1] = verts[2]
                verts[2] = tmp
            for j in qd.static(range(3)):
                out[c, j] = verts[j]

    k()
    assert out.to_numpy().tolist() == [[0, 1, 2], [3, 5, 4], [6, 7, 8], [9, 11, 10]]  # as quadrants


def test_list_element_assign_errors() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.f32, shape=2)

    @qd.kernel
    def out_of_range():
        v = [x[0], x[1]]
        v[2] = 1.0

    with pytest.raises(qd.QuadrantsTypeError, match="list of 2"):
        out_of_range()
