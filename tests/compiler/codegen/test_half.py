"""`qd.f16`: half storage and half arithmetic (each operation rounded to half, as NumPy's float16
does it), the same bits on every path, atomics and scalar arguments and results."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

PATHS = ({}, {"per_offload": False}, {"split_carried": False})
H1 = qd.types.NDArray[qd.f16, 1]


@qd.kernel
def axpy(a: H1, b: H1, s: qd.f16) -> qd.f16:
    for i in range(a.shape[0]):
        b[i] = a[i] * s + b[i]
    total = qd.f16(0.0)
    for i in range(b.shape[0]):
        total += b[i]
    return total


@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "reference_fallbacks"])
def test_half_arithmetic_rounds_each_operation(options) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    rng = np.random.default_rng(3)
    a = rng.uniform(-8, 8, 64).astype(np.float16)
    b = rng.uniform(-8, 8, 64).astype(np.float16)
    s = np.float16(1.37)
    want = a * s + b
    total = np.float16(0.0)
    for x in want:
        total = np.float16(total + x)
    got = b.copy()
    result = axpy(a, got, 1.37)
    np.testing.assert_array_equal(got, want)
    assert result == float(total)


@qd.kernel
def count_into(out: H1):
    for i in range(200):
        qd.atomic_add(out[0], qd.f16(0.5))
        qd.atomic_max(out[1], qd.cast(i, qd.f16))


def test_half_atomics() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    out = qd.ndarray(qd.f16, shape=(2,))
    count_into(out)
    assert out.to_numpy().tolist() == [100.0, 199.0]
    assert out.to_numpy().dtype == np.float16


@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "reference_fallbacks"])
def test_half_min_max_into_one_element_of_a_parallel_loop(op, options) -> None:
    """Every iteration reduces into `out[0]`: a half min/max stays an atomic (folding it in a
    per-chunk partial made LLVM's loop vectorizer abort the process)."""
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    atomic = getattr(qd, f"atomic_{op}")

    @qd.kernel
    def kern(out: qd.types.ndarray()):
        for i in range(128):
            atomic(out[0], qd.cast((i % 32) * 0.1523, qd.f16))

    out = qd.ndarray(qd.f16, (1,))
    kern(out)
    want = {"min": 0.0, "max": float(np.float16(31 * 0.1523))}[op]
    assert out[0] == want


@pytest.mark.parametrize("op", ["min", "max"])
def test_half_min_max_reduced_in_a_serial_loop_and_in_a_local(op) -> None:
    """A loop reducing halves by min/max once made LLVM's loop vectorizer abort the process."""
    qd.init(arch=qd.cpu, offline_cache=False)
    fn, atomic = getattr(qd, op), getattr(qd, f"atomic_{op}")

    @qd.kernel
    def kern(out: H1):
        for j in range(2):
            h = qd.f16(0.5)
            for i in range(128):
                h = fn(h, qd.cast((i % 32) * 0.1523, qd.f16))
            out[j] = h
        h = qd.f16(0.5)
        for i in range(128):
            atomic(h, qd.cast((i % 32) * 0.1523, qd.f16))
        out[2] = h

    out = qd.ndarray(qd.f16, (3,))
    kern(out)
    want = {"min": 0.0, "max": float(np.float16(31 * 0.1523))}[op]
    assert out.to_numpy().tolist() == [want] * 3


def test_half_fields_hold_half() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    f = qd.field(qd.f16, shape=3)

    @qd.kernel
    def fill():
        for i in f:
            f[i] = 1.0 / 3.0 + i

    fill()
    np.testing.assert_array_equal(
        f.to_numpy(), (np.float32(1.0 / 3.0) + np.arange(3)).astype(np.float16)
    )
