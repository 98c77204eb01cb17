"""The index arithmetic of a loop over a `qd.ndrange`: its flat index is split into the axes'
indices by unsigned division (the index and the extents are never negative, so the floor
division's sign corrections only cost), and a field's extents, which are static, are constants in
its address arithmetic (an ndarray's come from the launch words). Genesis' MPM grid reset, 14
stores an iteration over an ndrange of 603,720 cells, ran at a quarter of the reference's speed a
thread without both: the reference compiles its fields' extents in too. Each kernel's result is
checked against NumPy, on the default path and with bounds checks on, and the shapes of the code
in its LLVM."""

from __future__ import annotations

import re

import numpy as np
import pytest

import qdlab as qd


def optimized_llvm(kernel: object) -> str:
    return "\n".join(c.stage("llvm_optimized") for c in qd.explain(kernel).constructs)


@pytest.mark.parametrize("debug", [False, True])
def test_an_ndrange_over_a_field_divides_unsigned_by_constant_extents(debug: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=debug)
    shape = (5, 7, 3, 2)
    grid = qd.Vector.field(3, qd.f32, shape=(4, *shape))
    mass = qd.field(qd.f32, shape=(4, *shape))

    @qd.kernel
    def reset(f: qd.i32):
        for i, j, k, b in qd.ndrange(*shape):
            grid[f, i, j, k, b] = qd.Vector([i, j * 10 + k, b])
            mass[f, i, j, k, b] = i * 1000 + j * 100 + k * 10 + b

    reset(2)
    i, j, k, b = np.indices(shape)
    want = np.zeros((4, *shape), np.float32)
    want[2] = i * 1000 + j * 100 + k * 10 + b
    np.testing.assert_array_equal(mass.to_numpy(), want)
    np.testing.assert_array_equal(grid.to_numpy()[2], np.stack([i, j * 10 + k, b], -1))
    text = optimized_llvm(reset)
    assert not re.search(r"\b(sdiv|srem) i32", text)  # the loop's split: unsigned, no corrections
    assert ".shape" not in text  # no extent read from the launch words


def test_an_offset_ndrange_over_an_ndarray_reads_its_extents() -> None:
    """Axes that start below zero or above it split the same way (the flat index counts from 0);
    an ndarray's extents are read from its launch words, so one compile serves every shape."""
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def fill(a: qd.types.NDArray[qd.i32, 2]):
        for i, j in qd.ndrange((-2, a.shape[0] - 2), (1, a.shape[1] + 1)):
            a[i + 2, j - 1] = i * 100 + j

    for shape in ((3, 4), (6, 1), (1, 9)):
        a = qd.ndarray(qd.i32, shape)
        fill(a)
        i, j = np.indices(shape)
        np.testing.assert_array_equal(a.to_numpy(), (i - 2) * 100 + (j + 1))
    assert len(qd.explain(fill).constructs) == 1
    assert ".shape" in optimized_llvm(fill)
