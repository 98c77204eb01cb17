"""Atomics no other iteration can race with are plain read-modify-writes (`offload.owned_atomics`),
as Quadrants demotes its loop-unique ones: an element indexed by every axis of a `qd.ndrange`, a
`qd.grouped` or a struct-for (each possibly offset), with every other access to its array at the
same indices. Any other atomic stays atomic. Each kernel's result is checked against NumPy, and the
kinds of update are checked in the construct's LLVM."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


def llvm_of(kernel: object) -> list[str]:
    return [c.stages["llvm"]() for c in qd.explain(kernel).constructs]


def test_each_axis_of_an_ndrange_owns_its_element() -> None:
    """Genesis' spatial hasher: `slot_start[i, b] -= slot_size[i, b]` over `ndrange(n, B)` (17 of
    the 48 ms of its cloth scene's reorder kernel while it was atomic)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    start = qd.field(qd.i32, shape=(300, 3))
    size = qd.field(qd.i32, shape=(300, 3))
    acc = qd.ndarray(qd.f32, (300, 3))

    @qd.kernel
    def recover(acc: qd.types.NDArray[qd.f32, 2]):
        for i, b in qd.ndrange(300, 3):
            start[i, b] -= size[i, b]
        for i, b in qd.ndrange((1, 301), 3):  # offset axes
            acc[i - 1, b] += 0.5

    s = np.arange(900, dtype=np.int32).reshape(300, 3)
    start.from_numpy(s * 3)
    size.from_numpy(s)
    recover(acc)
    np.testing.assert_array_equal(start.to_numpy(), s * 2)
    np.testing.assert_array_equal(acc.to_numpy(), np.full((300, 3), 0.5, np.float32))
    assert not any("atomicrmw" in text for text in llvm_of(recover))


def test_shared_elements_stay_atomic() -> None:
    """One axis alone, the axes swapped in another access, another access at a neighbour, the old
    value used, or a second ndarray of the dtype updated atomically: each stays atomic, and the
    sums are exact on the thread pool."""
    qd.init(arch=qd.cpu, offline_cache=False)
    n = 20_000

    @qd.kernel
    def shared(
        a: qd.types.NDArray[qd.i32, 2],
        rows: qd.types.NDArray[qd.i32, 1],
        b: qd.types.NDArray[qd.f32, 1],
        c: qd.types.NDArray[qd.f32, 1],
        old: qd.types.NDArray[qd.i32, 1],
    ):
        for i, j in qd.ndrange(n, 4):
            rows[i] += j  # j's iterations share rows[i]
        for i, j in qd.ndrange(n, 4):
            a[i, j] += 1
            a[j, i % 4] += 1  # another access, other indices
        for i in range(n):
            b[i] += 1.0
            b[(i + 1) % n] += 1.0  # a neighbour's element
        for i in range(n):
            old[i] = qd.atomic_add(old[i], 1) + 1  # the old value is used
        for i in range(n):
            c[i] += 1.0
            b[i] += 1.0  # c might be b's memory

    a, rows = np.zeros((n, 4), np.int32), np.zeros(n, np.int32)
    b, c, old = np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.int32)
    shared(a, rows, b, c, old)
    want = np.ones((n, 4), np.int32)
    np.add.at(want, (np.tile(np.arange(4), n), np.arange(n * 4) // 4 % 4), 1)
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(rows, np.full(n, 6))
    np.testing.assert_array_equal(b, np.full(n, 3.0, np.float32))
    np.testing.assert_array_equal(c, np.ones(n, np.float32))
    np.testing.assert_array_equal(old, np.ones(n))  # the store of old + 1 comes last
    texts = llvm_of(shared)
    assert all("atomicrmw" in t for t in texts), [
        i for i, t in enumerate(texts) if "atomic" not in t
    ]


@pytest.mark.parametrize("shape", [(7,), (5, 6), (3, 4, 5)])
def test_grouped_and_struct_for_loops_own_their_cells(shape: tuple[int, ...]) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.Vector.field(2, qd.f32, shape=shape)

    @qd.kernel
    def bump():
        for I in qd.grouped(x):
            x[I] += qd.Vector([1.0, 2.0])
        for I in qd.grouped(qd.ndrange(*shape)):
            x[I][1] += 0.25
        x.fill(0.0)  # a struct-for
        for I in qd.grouped(x):
            x[I][0] += 3.0

    bump()
    want = np.zeros((*shape, 2), np.float32)
    want[..., 0] = 3.0
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert not any("atomicrmw" in text for text in llvm_of(bump))
