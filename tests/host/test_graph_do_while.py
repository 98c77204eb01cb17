"""`while qd.graph.do_while(c):`: the body, then again while the 0-d counter is not zero; the same
answer on every path, an out-of-bounds access in the body raised once (not run forever), and
misuse refused in Quadrants' words."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

PATHS = ({}, {"per_offload": False}, {"split_carried": False})


@qd.kernel(graph=True)
def relax(a: qd.types.ndarray(dtype=qd.f32, ndim=1), c: qd.types.ndarray(dtype=qd.i32, ndim=0)):
    while qd.graph.do_while(c):
        for i in range(a.shape[0]):
            a[i] = a[i] * 0.5 + 1.0
        for i in range(1):
            c[()] = c[()] - 1
    for i in range(a.shape[0]):
        a[i] += 100.0


@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "reference_fallbacks"])
@pytest.mark.parametrize("start", [1, 4])
def test_the_body_runs_until_the_counter_is_zero(options, start) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    a, c = np.full(3, 8.0, np.float32), np.array(start, np.int32)
    relax(a, c)
    want = np.full(3, 8.0, np.float32)
    for _ in range(start):
        want = want * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_array_equal(a, want + np.float32(100.0))
    assert int(c) == 0


def test_an_out_of_bounds_access_in_the_body_is_raised() -> None:
    @qd.kernel(graph=True)
    def oob(a: qd.types.ndarray(dtype=qd.f32, ndim=1), c: qd.types.ndarray(dtype=qd.i32, ndim=0)):
        while qd.graph.do_while(c):
            for i in qd.static(range(10)):
                a[i] = 1.0
            for i in range(1):
                c[()] = c[()] - 1

    qd.init(arch=qd.cpu, debug=True, offline_cache=False)
    with pytest.raises(AssertionError, match="Out of bound access"):
        oob(np.zeros(4, np.float32), np.array(10, np.int32))


def test_inside_a_for_loop_it_is_refused() -> None:
    @qd.kernel(graph=True)
    def nested(c: qd.types.ndarray(dtype=qd.i32, ndim=0)):
        for _ in range(2):
            while qd.graph.do_while(c):
                c[()] = c[()] - 1

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsSyntaxError, match="cannot appear inside a for-loop"):
        nested(np.array(1, np.int32))


def test_the_counter_must_be_a_0d_integer_ndarray() -> None:
    @qd.kernel(graph=True)
    def wrong(c: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        while qd.graph.do_while(c):
            c[0] = 0.0

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsTypeError, match="0-d integer ndarray"):
        wrong(np.zeros(2, np.float32))
