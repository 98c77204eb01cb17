"""Quantised types: `qd.types.quant.int/fixed/float` in `qd.BitpackedFields` (shared exponents
too) and a `quant_array`, written by kernels, by concurrent atomics and from the host. Expected
values were measured on Quadrants 1.3.3 (CPU) with the same programs."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_ints_and_fixed_wrap_round_and_add_atomically() -> None:
    """Integers wrap to their bits (signed and unsigned), fixed-point rounds half away from zero
    and wraps; 1000 iterations add into 8 shared words."""
    a = qd.field(dtype=qd.types.quant.int(5, True))
    b = qd.field(dtype=qd.types.quant.int(6, False))
    c = qd.field(dtype=qd.types.quant.fixed(bits=8, max_value=2))
    bp = qd.BitpackedFields(max_num_bits=32)
    bp.place(a, b, c)
    qd.root.dense(qd.i, 8).place(bp)

    @qd.kernel
    def store(v: qd.types.ndarray(), w: qd.types.ndarray()):
        for i in range(8):
            a[i] = v[i]
            b[i] = v[i]
            c[i] = w[i]

    @qd.kernel
    def accumulate():
        for i in range(1000):
            a[i % 8] += 1
            b[i % 8] -= 3
            c[i % 8] += 0.01

    store(
        np.array([0, 1, 15, 16, -16, -17, 40, -3], np.int32),
        np.array([0.0, 0.3, -0.3, 1.99, 2.5, -2.1, 0.0078125, -0.00390625], np.float32),
    )
    assert [a[i] for i in range(8)] == [0, 1, 15, -16, -16, 15, 8, -3]
    assert [b[i] for i in range(8)] == [0, 1, 15, 16, 48, 47, 40, 61]
    assert [c[i] for i in range(8)] == [
        0.0,
        0.296875,
        -0.296875,
        1.984375,
        -1.5,
        1.90625,
        0.015625,
        0.0,
    ]
    accumulate()
    assert [a[i] for i in range(8)] == [-3, -2, 12, 13, 13, 12, 5, -6]
    assert [b[i] for i in range(8)] == [9, 10, 24, 25, 57, 56, 49, 6]
    assert [c[i] for i in range(8)] == [
        1.953125,
        -1.75,
        1.65625,
        -0.0625,
        0.453125,
        -0.140625,
        1.96875,
        1.953125,
    ]


def test_floats_shared_and_own_exponent() -> None:
    """A shared exponent is the larger one (the smaller value loses digits, or flushes to zero);
    a float with its own exponent rounds to nearest; a host store re-encodes the word."""
    f1 = qd.types.quant.float(exp=5, frac=10, signed=True)
    f2 = qd.types.quant.float(exp=5, frac=12, signed=True)
    p, q, r = qd.field(dtype=f1), qd.field(dtype=f2), qd.field(dtype=f1)
    bp = qd.BitpackedFields(max_num_bits=32)
    bp.place(p, q, shared_exponent=True)
    qd.root.dense(qd.i, 6).place(bp)
    bp2 = qd.BitpackedFields(max_num_bits=16)
    bp2.place(r)
    qd.root.dense(qd.i, 6).place(bp2)

    @qd.kernel
    def store(v: qd.types.ndarray(), w: qd.types.ndarray()):
        for i in range(6):
            p[i] = v[i]
            q[i] = w[i]
            r[i] = w[i]

    store(
        np.array([3.14159, -1000.0, 1e-3, 0.0, 65504.0, -7.25], np.float32),
        np.array([0.001, 2.5, -123.456, 1e-9, 1.0, 7.0], np.float32),
    )
    assert p.to_numpy().tolist() == [3.140625, -1000.0, 0.0, 0.0, 65408.0, -7.25]
    assert q.to_numpy().tolist() == [0.001953125, 2.5, -123.4375, 0.0, 0.0, 7.0]
    assert r.to_numpy().tolist() == [0.00099945068359375, 2.5, -123.5, 0.0, 1.0, 7.0]
    p[2] = 77.7
    assert (p[2], q[2]) == (77.75, -123.4375)


def test_quant_array_packs_elements_in_words() -> None:
    """Ten 3-bit elements per word under a dense level; stores wrap, atomics add within bits."""
    x = qd.field(dtype=qd.types.quant.int(3, False))
    qd.root.dense(qd.i, 3).quant_array(qd.i, 10, max_num_bits=32).place(x)

    @qd.kernel
    def store():
        for i in range(30):
            x[i] = i * 3

    @qd.kernel
    def add():
        for i in range(300):
            x[i % 30] += 1

    store()
    assert [x[i] for i in range(30)] == [(3 * i) % 8 for i in range(30)]
    add()
    assert [x[i] for i in range(30)] == [(3 * i + 10) % 8 for i in range(30)]


def test_zero_d_fields_from_the_host() -> None:
    """`qd.root.place(packed)`: one word; host stores and reads, then a kernel's atomics."""
    x = qd.field(dtype=qd.types.quant.int(13, True))
    y = qd.field(dtype=qd.types.quant.fixed(bits=19, signed=False, scale=0.1))
    bp = qd.BitpackedFields(max_num_bits=32)
    bp.place(x, y)
    qd.root.place(bp)

    @qd.kernel
    def foo():
        for _ in range(10):
            x[None] -= 4
            y[None] += 100.1

    x[None] = 3
    y[None] = 123.4
    assert (x[None], y[None]) == (3, 123.4000015258789)
    foo()
    assert (x[None], y[None]) == (-37, 1124.4000244140625)
    assert x.to_numpy().tolist() == -37


def test_shared_exponent_needs_two_fields() -> None:
    p = qd.field(dtype=qd.types.quant.float(exp=5, frac=10))
    with pytest.raises(qd.QuadrantsCompilationError, match="At least 2 fields"):
        qd.BitpackedFields(max_num_bits=32).place(p, shared_exponent=True)


def test_overflowing_bitpack_is_refused() -> None:
    bp = qd.BitpackedFields(max_num_bits=16)
    x, y = qd.field(dtype=qd.types.quant.int(10)), qd.field(dtype=qd.types.quant.int(7))
    with pytest.raises(RuntimeError, match="overflows: 17 bits used out of 16"):
        bp.place(x, y)
