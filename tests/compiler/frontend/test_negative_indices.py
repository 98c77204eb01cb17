"""Constant indices outside an array, refused while compiling: a negative one into an ndarray in
Quadrants' words (a QuadrantsSyntaxError, as the reference raises), one outside a field's extent
as a debug launch refuses it (a RuntimeError), where it wrote outside the field's storage and
corrupted the heap. A field declared with an offset takes negative indices above it (measured on
the reference: `h[-1] = 5.0` with offset -2 writes element 1)."""

import numpy as np
import pytest

import qdlab as qd

NEGATIVE = "Negative indices are not supported in Quadrants kernels."


def test_a_negative_literal_into_an_ndarray_is_refused() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def store(x: qd.types.ndarray()):
        x[-1] = 1.0

    @qd.kernel
    def load(x: qd.types.ndarray()) -> qd.f32:
        return x[0, -2]

    with pytest.raises(qd.QuadrantsSyntaxError, match=NEGATIVE):
        store(np.zeros(4, np.float32))
    with pytest.raises(qd.QuadrantsSyntaxError, match=NEGATIVE):
        load(np.zeros((2, 4), np.float32))


def test_a_constant_outside_a_field_is_refused_and_an_offset_field_takes_negatives() -> None:
    """Below a field (its storage starts there) or past its storage and slack, a constant index is
    refused; past its shape into the next row of its packed storage or the slack after it, it runs
    and reads back, as in Quadrants (whose tests write `a[60]` of a 55-element field and read it
    back), and with debug=True it is refused as a debug launch refuses it."""
    qd.init(arch=qd.cpu, offline_cache=False)
    f = qd.field(qd.f32, shape=(4, 4))
    h = qd.field(qd.f32, shape=4, offset=-2)
    a = qd.field(qd.i32, shape=55)

    @qd.kernel
    def below():
        f[1, -1] = 1.0

    @qd.kernel
    def far():
        f[5000, 0] = 1.0

    @qd.kernel
    def padded():
        a[60] = 7

    @qd.kernel
    def offset() -> qd.f32:
        h[-1] = 5.0
        return h[-2] + h[-1]

    for kernel in (below, far):
        with pytest.raises(RuntimeError, match="Out of bound access"):
            kernel()
    padded()
    assert a[60] == 7
    assert offset() == 5.0
    np.testing.assert_array_equal(h.to_numpy(), [0.0, 5.0, 0.0, 0.0])
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    b = qd.field(qd.i32, shape=55)

    @qd.kernel
    def padded_debug():
        b[60] = 7

    with pytest.raises(RuntimeError, match="Out of bound access"):
        padded_debug()
