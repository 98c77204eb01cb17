"""Kernels flush subnormal floats to zero, as Quadrants' do (it sets the CPU's flush-to-zero and
denormals-are-zero modes when it starts): a subnormal constant, a folded product and a product
computed at run time are zero, with the same bits from the quick objects, the optimised ones, a
debug compile, the whole kernel and a parallel loop's worker threads. The expected values were
measured on quadrants 1.3.3 (CPU): every result below is a zero, negative ones -0.0."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from memo_kernels import load

import qdlab as qd
from qdlab.compiler.runtime import flush_denormals, tiers

SOURCE = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.{t}, y: qd.types.NDArray[qd.{t}, 1], out: qd.types.NDArray[qd.{t}, 1],
          flags: qd.types.NDArray[qd.i32, 1]):
        out[0] = {tiny}
        out[1] = -{tiny}
        c = {small}
        out[2] = c * c
        out[3] = -c * c
        d = {tiny}
        flags[0] = 1 if d > 0 else 0
        for i in range(y.shape[0]):
            v = x * y[i]
            out[4 + i] = v * qd.{t}(i % 3)
            flags[1 + i] = 1 if v > 0 else 0
"""
CASES = {"f32": (np.float32, "1e-45", "1e-20"), "f64": (np.float64, "1e-323", "1e-200")}
N = 4096


def run(kernel, t: str) -> tuple[np.ndarray, np.ndarray]:
    dtype, _, small = CASES[t]
    y = np.full(N, float(small), dtype)
    out = np.full(4 + N, 7, dtype)
    flags = np.full(1 + N, 7, np.int32)
    kernel(float(small), y, out, flags)
    return out, flags


def fresh(folder, t: str):
    _, tiny, small = CASES[t]
    return load(folder, SOURCE.format(t=t, tiny=tiny, small=small)).k


def check(out: np.ndarray, flags: np.ndarray, why: str) -> None:
    assert (out == 0).all(), why
    np.testing.assert_array_equal(np.signbit(out[:4]), [False, True, False, True], err_msg=why)
    assert (flags == 0).all(), why


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_subnormals_are_zero_on_every_tier_and_path(tmp_path, monkeypatch, t):
    qd.init(arch=qd.cpu, offline_cache=False)
    tiers.hold = True  # the quick objects run and stay
    try:
        k = fresh(tmp_path, t)
        check(*run(k, t), "quick objects")
        assert all(b.unit.fns.pending is not None for b in k.latest.built)
    finally:
        tiers.hold = False
        tiers.settle_all()
    check(*run(k, t), "tiered, optimised objects")
    monkeypatch.setenv("QDLAB_TIERED", "0")
    for options in ({}, {"debug": True}, {"per_offload": False}):
        qd.init(arch=qd.cpu, offline_cache=False, **options)
        check(*run(fresh(tmp_path, t), t), f"optimised only, {options}")


def test_a_kernel_launched_from_another_thread_flushes_too(tmp_path):
    qd.init(arch=qd.cpu, offline_cache=False)
    k = fresh(tmp_path, "f32")
    got: list = []
    worker = threading.Thread(target=lambda: got.append(run(k, "f32")))
    worker.start()
    worker.join()
    check(*got[0], "launched from a thread of the user's")


def test_numpy_on_the_thread_that_initialised_flushes_as_under_quadrants():
    qd.init(arch=qd.cpu)
    tiny = np.float32(1e-38) * np.float32(1e-5)
    if not flush_denormals():
        pytest.skip("no way to set the denormal mode on this platform")
    assert tiny == 0 and np.float64(1e-300) * np.float64(1e-23) == 0
