"""`qd.static(x is not None)` on a `qd.Tensor` parameter: known while compiling, one compile per
kind of argument, and never baked into the kernel's source for the next signature."""

from __future__ import annotations

import numpy as np

import qdlab as qd


@qd.kernel
def present(a: qd.Tensor, b: qd.Tensor) -> qd.i32:
    r = 0
    if qd.static(a is not None):
        r += 1
    if qd.static(None is not b and True):
        r += 10
    return r + (100 if qd.static(a is None) else 0)


def test_presence_of_each_argument_is_its_own_signature() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.ndarray(qd.f32, shape=(4,))
    f = qd.field(qd.i32, shape=(2,))
    assert present(x, f) == 11
    assert present(None, x) == 110  # the first compile's answers are not kept in the source
    assert present(f, None) == 1
    assert present(None, None) == 100
    assert present(np.zeros(3, np.float32), x) == 11
