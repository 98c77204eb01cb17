"""`qd.rescale_index` (coarser and finer fields, split and whole kernel, against NumPy),
`qd.static_print` (prints while compiling), `is` in a kernel (Quadrants' error), a parameter
without an annotation (a QuadrantsSyntaxError where the kernel is defined),
`qd.experimental.real_func` (deprecated) and `qd.clock_freq_hz` off the GPU."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_rescale_index(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    fine = qd.field(qd.f32, shape=(8, 6))
    coarse = qd.field(qd.f32, shape=(4, 2))

    @qd.kernel
    def down():
        for I in qd.grouped(fine):
            coarse[qd.rescale_index(fine, coarse, I)] += 1.0

    @qd.kernel
    def up():
        for I in qd.grouped(coarse):
            fine[qd.rescale_index(coarse, fine, I)] = 1.0

    down()
    up()
    np.testing.assert_array_equal(coarse.to_numpy(), np.full((4, 2), 6.0))
    want = np.zeros((8, 6))
    want[::2, ::3] = 1
    np.testing.assert_array_equal(fine.to_numpy(), want)


def test_static_print_is_and_annotations(capsys: pytest.CaptureFixture) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k(n: qd.template()) -> qd.i32:
        qd.static_print("n is", n)
        return n

    assert k(3) == 3 and k(3) == 3
    assert capsys.readouterr().out.count("n is 3") == 1  # once, while compiling

    @qd.kernel
    def uses_is(a: qd.template()):
        a is None  # noqa: B015

    with pytest.raises(qd.QuadrantsSyntaxError, match='Operator "is" in Quadrants scope'):
        uses_is(None)
    with pytest.raises(qd.QuadrantsSyntaxError, match="needs a type annotation"):

        @qd.kernel
        def bare(v):
            pass

    with pytest.warns(DeprecationWarning, match="qd.experimental.real_func is deprecated"):

        @qd.experimental.real_func
        def one() -> qd.i32:
            return 1

    with pytest.raises(NotImplementedError, match="clock_freq_hz"):
        qd.clock_freq_hz()
