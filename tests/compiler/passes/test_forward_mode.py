"""Forward-mode autodiff (`qd.ad.FwdMode`): the duals on every compile path equal the derivatives
NumPy gives, and what it cannot differentiate is refused in its words. Programs against Quadrants
itself: `tests/compat/programs/forward_mode.py`."""

from __future__ import annotations

import numpy as np
import pytest
from paths import PATHS, on_every_path

import qdlab as qd

N = 64


def run_forward() -> tuple:
    x = qd.field(qd.f32, shape=N, needs_dual=True)
    y = qd.field(qd.f32, shape=N, needs_dual=True)
    loss = qd.field(qd.f32, shape=(), needs_dual=True)

    @qd.kernel
    def k():
        for i in range(N):  # parallel
            a = x[i]
            b = a * a * 3.0 + qd.sin(a)
            if a > 0.5:
                b = b / (a + 1.0)
            y[i] = b
        s = 0.0
        for i in range(N):  # a reduction into a local
            s += y[i] * x[i]
        loss[None] = s
        for i in range(N):
            qd.atomic_add(loss[None], qd.exp(x[i] * 0.1))

    x.from_numpy(np.linspace(0.0, 1.0, N, dtype=np.float32))
    with qd.ad.FwdMode(loss=loss, param=x, seed=[1.0] * N):
        k()
    return loss[None], round(float(loss.dual[None]), 3), np.round(y.dual.to_numpy(), 4).tolist()


def test_duals_are_the_derivatives_on_every_path() -> None:
    got = on_every_path(run_forward)
    assert len({repr(v) for v in got.values()}) == 1, got
    a = np.linspace(0.0, 1.0, N)
    b = np.where(a > 0.5, (3 * a * a + np.sin(a)) / (a + 1), 3 * a * a + np.sin(a))
    db = np.where(
        a > 0.5,
        ((6 * a + np.cos(a)) * (a + 1) - (3 * a * a + np.sin(a))) / (a + 1) ** 2,
        6 * a + np.cos(a),
    )
    dloss = np.sum(db * a + b) + np.sum(0.1 * np.exp(0.1 * a))
    _, dual, ydual = got["split"]
    assert dual == pytest.approx(dloss, rel=1e-4)
    assert np.allclose(ydual, db, atol=2e-3)
    assert set(got) == set(PATHS)


def test_a_field_without_a_dual_is_refused() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.f32, shape=4)
    y = qd.field(qd.f32, shape=4, needs_dual=True)
    with pytest.raises(qd.QuadrantsRuntimeError, match="`param`, a field of shape .4,., has no"):
        qd.ad.FwdMode(loss=y, param=x, seed=[1.0] * 4).__enter__()
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"`loss\[1\]`, field `x` of shape"):
        qd.ad.FwdMode(loss=[y, qd.field(qd.f32, 4, name="x")], param=y, seed=[1.0] * 4).__enter__()
    with pytest.raises(AssertionError, match="`seed` has 2 values for 4"):  # an assert there
        qd.ad.FwdMode(loss=y, param=y, seed=[1.0] * 2).__enter__()
    with pytest.raises(RuntimeError, match="`seed` is not set"):
        qd.ad.FwdMode(loss=y, param=y).__enter__()


def test_what_forward_mode_cannot_differentiate_is_refused() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.f32, shape=4, needs_dual=True, needs_grad=True)
    m = qd.field(qd.f32, shape=(), needs_dual=True)

    @qd.kernel
    def reads_grad():
        for i in range(4):
            m[None] = x.grad[i]

    @qd.kernel
    def takes_max():
        for i in range(4):
            qd.atomic_max(m[None], x[i])

    xd = x.dual  # the dual as a field of its own

    @qd.kernel
    def reads_dual():
        m[None] = xd[0]

    cases = ((reads_grad, "`.grad` buffer"), (takes_max, "atomic max"), (reads_dual, "`.dual`"))
    for kernel, what in cases:
        with (
            pytest.raises(qd.QuadrantsCompilationError, match=what),
            qd.ad.FwdMode(loss=m, param=x, seed=[1.0] * 4),
        ):
            kernel()
    takes_max()  # outside forward mode: the kernel itself runs
    assert x.dual[0] == 0.0  # the seed was cleared on exit
