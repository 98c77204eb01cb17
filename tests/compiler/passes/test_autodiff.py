"""Reverse-mode gradients (`kernel.grad`, `qd.ad.Tape`) against analytic derivatives, and the
`autodiff` fallback: gradient kernels are always compiled whole."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import qdlab as qd

G1 = qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True)


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@qd.kernel
def sum_of_squares(x: G1, loss: G1):
    for i in range(x.shape[0]):
        loss[0] += x[i] * x[i] + qd.sin(x[i])


@qd.kernel
def two_stages(x: G1, y: G1, z: G1, s: qd.f32):
    for i in range(x.shape[0]):
        y[i] = qd.exp(x[i] * s) / (1.0 + x[i])
    for i in range(y.shape[0]):
        z[i] = qd.sqrt(y[i]) - qd.tanh(x[i]) * 2.0


def test_tape_gives_the_analytic_gradient(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    xs = np.linspace(-1.5, 2.0, 37).astype(np.float32)
    x, loss = qd.ndarray(qd.f32, 37, needs_grad=True), qd.ndarray(qd.f32, 1, needs_grad=True)
    x.from_numpy(xs)
    with qd.ad.Tape(loss=loss):
        sum_of_squares(x, loss)
    np.testing.assert_allclose(loss.to_numpy()[0], (xs * xs + np.sin(xs)).sum(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs + np.cos(xs), rtol=1e-5)
    r = qd.explain(sum_of_squares.grad)
    assert (
        r.mode == "whole_kernel"
        and r.fallback.code == "autodiff"
        and "def sum_of_squares" in r.fallback.source_line
    )
    o = sum_of_squares.grad._primal.per_offload_cache_observations
    assert o.frontend_constructs_total == -1
    assert any("autodiff" in rec.getMessage() for rec in caplog.records)
    assert qd.explain(sum_of_squares).mode == "per_offload"  # the primal still splits


def test_grad_through_two_loops_matches_finite_differences() -> None:
    xs = np.linspace(0.1, 0.9, 9).astype(np.float32)
    x, y, z = (qd.ndarray(qd.f32, 9, needs_grad=True) for _ in range(3))
    x.from_numpy(xs)
    two_stages(x, y, z, 1.5)
    z.grad.fill(1.0)
    two_stages.grad(x, y, z, 1.5)

    def f(v: np.ndarray) -> np.ndarray:
        yv = np.exp(v * 1.5) / (1 + v)
        return np.sqrt(yv) - np.tanh(v) * 2

    h = 1e-3
    numeric = (f(xs.astype(np.float64) + h) - f(xs.astype(np.float64) - h)) / (2 * h)
    np.testing.assert_allclose(x.grad.to_numpy(), numeric, rtol=2e-3)


@qd.kernel
def serial_store(x: G1, y: G1):
    y[0] = x[0] * 2.0


@qd.kernel
def spins(x: G1, y: G1):
    for i in range(x.shape[0]):
        k = 0
        while k < 3:
            y[i] += x[i]
            k += 1


def test_serial_code_is_differentiated() -> None:
    x, y = qd.ndarray(qd.f32, 2, needs_grad=True), qd.ndarray(qd.f32, 2, needs_grad=True)
    y.grad.fill(1.0)
    serial_store.grad(x, y)
    assert x.grad.to_numpy().tolist() == [2.0, 0.0]
    assert y.grad.to_numpy().tolist() == [0.0, 1.0]  # y[0] was overwritten: its gradient is used


def test_unsupported_kernel_is_a_clear_error() -> None:
    x, y = qd.ndarray(qd.f32, 2, needs_grad=True), qd.ndarray(qd.f32, 2, needs_grad=True)
    with pytest.raises(
        qd.QuadrantsCompilationError, match="`while` is not supported in a differentiated kernel"
    ) as e:
        spins.grad(x, y)
    assert "while k < 3:" in str(e.value)


@qd.kernel
def skips(x: G1, y: G1):
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            continue
        y[i] = x[i] * x[i]


@qd.real_func
def cube_or_self(a: qd.f32) -> qd.f32:
    if a > 0.0:
        return a * a * a
    return a


@qd.kernel
def calls_early_return(x: G1, y: G1):
    for i in range(x.shape[0]):
        y[i] = cube_or_self(x[i])


@pytest.mark.parametrize("kernel, line", [(spins, "while k < 3:"), (skips, "continue")])
def test_control_flow_the_reverse_mode_refuses_is_a_runtime_error(kernel, line: str) -> None:
    """Quadrants raises a RuntimeError ("Not supported.") for `while`, `break` and `continue` in a
    gradient kernel; qdlab's refusal is one too (and still a compilation error)."""
    x, y = qd.ndarray(qd.f32, 2, needs_grad=True), qd.ndarray(qd.f32, 2, needs_grad=True)
    with pytest.raises(RuntimeError, match="not supported in a differentiated kernel") as e:
        kernel.grad(x, y)
    assert isinstance(e.value, qd.QuadrantsCompilationError) and line in str(e.value)


def test_a_refused_real_func_is_quadrants_syntax_error() -> None:
    x, y = qd.ndarray(qd.f32, 2, needs_grad=True), qd.ndarray(qd.f32, 2, needs_grad=True)
    with pytest.raises(qd.QuadrantsSyntaxError, match="Real function in gradient kernels"):
        calls_early_return.grad(x, y)


def test_remainders_differentiate_as_in_quadrants() -> None:
    """Quadrants lowers a % b to a - b * (a // b) and gives `//` no gradient: d(a % b) = da -
    (a // b) db; `qd.raw_div` of floats is a division. Both modes, against those formulas (the
    values quadrants 1.3.3 prints for them, `tests/compat/programs/autodiff.py`)."""
    n = 6
    xs = np.array([0.7, -1.0, 0.2, 1.1, -0.6, 0.9], np.float32)
    ys = np.array([0.3, 0.4, -0.25, 0.5, 0.35, -0.45], np.float32)
    x, y, z = (qd.field(qd.f32, shape=n, needs_grad=True, needs_dual=True) for _ in range(3))

    @qd.kernel
    def k():
        for i in range(n):
            z[i] = x[i] % y[i] + (x[i] // y[i]) * x[i] + qd.raw_div(x[i], y[i])

    x.from_numpy(xs)
    y.from_numpy(ys)
    q = np.floor(xs / ys)
    dx, dy = 1 + q + 1 / ys, -q - xs / (ys * ys)
    z.grad.fill(1.0)
    k()
    k.grad()
    np.testing.assert_allclose(x.grad.to_numpy(), dx, rtol=1e-6)
    np.testing.assert_allclose(y.grad.to_numpy(), dy, rtol=1e-6)
    for param, want in ((x, dx), (y, dy)):
        with qd.ad.FwdMode(loss=z, param=param, seed=[1.0] * n):
            k()
        np.testing.assert_allclose(z.dual.to_numpy(), want, rtol=1e-6)
