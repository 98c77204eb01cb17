"""A top-level `return` ends the kernel; loop index spaces and array extents that an i32 cannot hold
are refused instead of wrapping."""

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
    a[0] = 2.0  # unreachable on purpose


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


@qd.kernel
def counts(n: qd.i32, m: qd.i32) -> qd.i32:
    s = 0
    for i, j in qd.ndrange(n, (1, m)):
        s += 1
    return s


@qd.kernel
def fills(a: qd.types.NDArray[qd.i32, 1], n: qd.i32):
    for i, j, k in qd.ndrange(n, n, 2):
        a[0] = 1


@pytest.mark.parametrize("n, m", [(65536, 65537), (2**20, 2**12 + 1), (46341, 46342)])
def test_an_index_space_beyond_i32_is_an_error(per_offload: bool, n: int, m: int) -> None:
    """Quadrants silently runs zero iterations; the flat trip count is computed in i64 and checked
    once."""
    assert counts(3, 5) == 12
    with pytest.raises(qd.QdRuntimeError) as info:
        counts(n, m)
    exc = info.value
    assert isinstance(exc, qd.QuadrantsAssertionError)
    assert exc.message == (
        "assertion failed in kernel `counts`: `qd.ndrange(n, (1, m))` has more than "
        "2**31 - 1 iterations, the most an i32 loop index counts; split it into nested loops."
    )
    assert exc.loc is not None and exc.loc.lineno == counts.fn.__code__.co_firstlineno + 3
    assert counts(46340, 46341) == 46340**2  # the largest square that fits runs
    a = np.zeros(1, np.int32)
    with pytest.raises(qd.QdRuntimeError):
        fills(a, 2**15)  # 2**31 points, wrapping to a negative count in i32
    assert a[0] == 0


@qd.kernel
def returns_twelve(
    a: F32,
) -> tuple[
    qd.i32, qd.i32, qd.i32, qd.i32, qd.i32, qd.i32, qd.f32, qd.f32, qd.f32, qd.i64, qd.i32, qd.f64
]:
    s = 0.0
    for i in range(a.shape[0]):  # a construct before the return: its temporaries sit after them
        s += a[i]
    return 1, 2, 3, 4, 5, 6, 7.5, 8.5, s, qd.i64(2**40), 11, 0.25


def test_more_return_values_than_the_header_holds(per_offload: bool) -> None:
    """Return words past the eighth live after the header, where the plan leaves room for them."""
    a = np.arange(4, dtype=np.float32)
    assert returns_twelve(a) == (1, 2, 3, 4, 5, 6, 7.5, 8.5, 6.0, 2**40, 11, 0.25)
