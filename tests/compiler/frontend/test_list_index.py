"""An index held in a list (`I = [i, j]`, also built by a static conditional and passed to a
`qd.func`) indexes a field or ndarray with its entries, as Quadrants does (the expected values
are the reference's for this program); split and whole kernel."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_list_index_through_a_func(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)

    @qd.func
    def add(I, value, field: qd.template()):
        field[I] = field[I] + value

    f = qd.Vector.field(3, qd.f32, shape=(4, 2))
    g = qd.field(qd.f32, shape=(4, 2))

    @qd.kernel
    def k(flag: qd.template(), n: qd.types.ndarray(element_dim=1)):
        for i_b in range(2):
            i_l = 1
            I_l = [i_l, i_b] if qd.static(flag) else [i_l + 2, i_b]
            I_p = [i_l + 1, i_b]
            add(I_p, f[i_l, i_b] + 1.0, f)
            add(I_p, g[i_l, i_b] + 1.0, g)
            add(I_l, n[I_l] + 1.0, n)
            g[I_p] += 0.5

    n = qd.Vector.ndarray(2, qd.f32, shape=(4, 2))
    k(True, n)
    assert f.to_numpy()[2].tolist() == [[1.0] * 3] * 2
    assert g.to_numpy()[2].tolist() == [1.5, 1.5]
    want = np.zeros((4, 2, 2), np.float32)
    want[1] = 1.0
    assert np.array_equal(n.to_numpy(), want)
