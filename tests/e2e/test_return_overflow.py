"""A top-level `return` ends the kernel; loop index spaces and array extents that an i32 cannot hold are
refused instead of wrapping."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

F32 = qd.types.NDArray[qd.f32, 1]


@pytest.fixture(params=[True, False], ids=["per_offload", "whole_kernel"])
def per_offload(request: pytest.FixtureRequest) -> bool:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=request.param)
    return request.param


@qd.kernel
def returns_early(a: F32) -> qd.i32:
    a[0] = 1.0
    return 7
    a[0] = 2.0  # noqa: unreachable on purpose


@qd.kernel
def returns_early_after_loops(a: F32, n: qd.i32):
    for i in range(n):
        a[i] = 1.0
    if qd.static(True):
        return
    for i in range(n):
        a[i] = 2.0


def test_nothing_after_a_top_level_return_runs(per_offload: bool) -> None:
    a = np.zeros(4, np.float32)
    assert returns_early(a) == 7
    assert a.tolist() == [1.0, 0.0, 0.0, 0.0]
    returns_early_after_loops(a, 4)
    assert a.tolist() == [1.0] * 4
