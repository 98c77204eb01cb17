"""Atomics into one element every iteration of a parallel loop shares (`tot[None] += x[i]`) are
reduced per chunk, folded in chunk order and applied once: exact for integers, and for floats the
same bits on every run (one float atomic per iteration depends on how the threads interleave), with
one contended atomic per chunk instead of one per iteration."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


def memory_reductions(k: qd.Kernel) -> list[int]:
    return [len(t.memory_reductions) for b in k.latest.built for t in b.plan.tasks]


@pytest.mark.parametrize("per_offload", [True, False])
def test_field_sum_min_max_xor(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    n = 1 << 20
    a = qd.field(qd.f32, shape=n)
    ints = qd.field(qd.i64, shape=n)
    tot = qd.field(qd.f32, shape=())
    acc = qd.field(qd.i64, shape=4)
    rng = np.random.default_rng(3)
    a.from_numpy(rng.random(n, dtype=np.float32))
    ints.from_numpy(rng.integers(-(10**9), 10**9, n))

    @qd.kernel
    def reduce():
        for i in a:
            tot[None] += a[i]
        for i in ints:
            acc[0] += ints[i]
            qd.atomic_min(acc[1], ints[i])
            qd.atomic_max(acc[2], ints[i])
            acc[3] ^= ints[i]

    reduce()
    first = tot[None]
    want = np.sum(a.to_numpy().astype(np.float64))
    assert abs(first - want) / want < 1e-4
    x = ints.to_numpy()
    np.testing.assert_array_equal(
        acc.to_numpy(), [x.sum(), min(0, x.min()), max(0, x.max()), np.bitwise_xor.reduce(x)]
    )
    tot[None] = 0
    reduce()
    assert tot[None] == first  # the same bits on every run
    assert sum(memory_reductions(reduce)) == 5


def test_an_ndarray_next_to_another_of_its_dtype_keeps_its_atomics() -> None:
    """Two ndarray parameters of one dtype may be the same memory: the element could be read
    through the other one, so its atomics stay atomics; a field next to an ndarray is reduced."""
    qd.init(arch=qd.cpu, offline_cache=False)
    out = qd.field(qd.f32, shape=())

    @qd.kernel
    def nd(x: qd.types.NDArray[qd.f32, 1], t: qd.types.NDArray[qd.f32, 1]):
        for i in x:
            t[0] += x[i]

    @qd.kernel
    def fd(x: qd.types.NDArray[qd.f32, 1]):
        for i in x:
            out[None] += x[i]

    x = np.ones(1000, np.float32)
    t = np.zeros(1, np.float32)
    nd(x, t)
    fd(x)
    assert t[0] == 1000 and out[None] == 1000
    assert memory_reductions(nd) == [0] and memory_reductions(fd) == [1]


def test_debug_keeps_bounds_checks_per_iteration() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    x = qd.field(qd.i32, shape=4)

    @qd.kernel
    def k(j: qd.i32):
        for i in range(100):
            x[j] += 1

    k(2)
    assert x[2] == 100
    with pytest.raises(qd.QuadrantsAssertionError, match="`x`"):
        k(4)


def twice_into_a_scalar_field(x: np.ndarray, debug: bool) -> float:
    """`s[None] += x[i]` over x, run twice from 0.3 (not the sum's identity: the order shows)."""
    qd.init(arch=qd.cpu, offline_cache=False, debug=debug)
    s = qd.field(qd.f32, shape=())

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            s[None] += x[i]

    s[None] = 0.3
    k(x)
    k(x)
    assert memory_reductions(k) == [1]
    return s[None]


@pytest.mark.parametrize("n", [100, 100_000])
def test_debug_changes_no_bits_of_a_float_reduction(n: int) -> None:
    """Debug checks the element's index every iteration and still reduces per chunk: the same
    bits as without it (it used to add every iteration into the element, in another order)."""
    x = np.random.default_rng(0).uniform(0, 1, n).astype(np.float32)
    assert twice_into_a_scalar_field(x, True) == twice_into_a_scalar_field(x, False)


def test_debug_stops_a_reduction_into_an_element_out_of_range_in_a_parallel_loop() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    x = qd.field(qd.f32, shape=4)

    @qd.kernel
    def k(j: qd.i32):
        for i in range(100_000):
            x[j] += 0.5

    with pytest.raises(qd.QuadrantsAssertionError, match="`x`"):
        k(4)
    k(3)
    np.testing.assert_array_equal(x.to_numpy(), [0, 0, 0, 50_000])
