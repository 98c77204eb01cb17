"""Python lists and tuples in a kernel combine as in Python: `[c] * 12` repeats, `t + (x,)`
concatenates (Quadrants keeps list literals as Python lists, so its kernels do the same); the
expected values are the reference's output for this program; split and whole kernel."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_list_repeat_and_concat(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    out = qd.Vector.field(6, qd.f32, shape=2)

    @qd.kernel
    def k(x: qd.f32):
        for i in range(2):
            a = qd.Vector([-1e20] * 3 + [x] * 2 + [i], dt=qd.f32)
            t = (1.0, 2.0) + (x,)
            a[0] = t[2] + t[1]
            out[i] = a

    k(4.0)
    big = float(np.float32(-1e20))
    assert out.to_numpy().tolist() == [[6.0, big, big, 4.0, 4.0, float(i)] for i in range(2)]
