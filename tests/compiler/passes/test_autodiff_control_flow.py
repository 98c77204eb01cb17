"""Gradients of kernels with serial loops, `if`s and mutable locals (what Quadrants differentiates
with its autodiff stack, `ad_stack_experimental_enabled=True`), checked against the analytic
derivative and against finite differences of the kernel itself."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

F = qd.types.ndarray(dtype=qd.f32, ndim=1)
I = qd.types.ndarray(dtype=qd.i32, ndim=1)
R = qd.types.ndarray(dtype=float, ndim=1)
"""default_fp: f64 for the finite differences, f32 for the gradient."""


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, ad_stack_experimental_enabled=True)


def arrays(*values: np.ndarray) -> list[qd.Ndarray]:
    out = []
    for v in values:
        a = qd.ndarray(qd.f32, v.shape, needs_grad=True)
        a.from_numpy(v.astype(np.float32))
        out.append(a)
    return out


@qd.kernel
def power(a: F, b: I, p: F):
    for i in range(a.shape[0]):
        ret = 1.0
        for j in range(b[i]):
            ret = ret * a[i]
        p[i] = ret


def test_a_carried_local_in_a_dynamic_loop() -> None:
    b = np.arange(6, dtype=np.int32)
    a, p = arrays(np.full(6, 1.5), np.zeros(6))
    power(a, b, p)
    p.grad.fill(1.0)
    power.grad(a, b, p)
    expected = b * 1.5 ** np.maximum(b - 1, 0)
    np.testing.assert_allclose(a.grad.to_numpy(), expected, rtol=1e-6)


@qd.kernel
def fib(a: F, b: F, c: I, f: F):
    for i in range(a.shape[0]):
        p = a[i]
        q = b[i]
        for j in range(c[i]):
            p, q = q, p + q
        f[i] = q


def test_swapped_locals() -> None:
    n = 10
    a, b, f = arrays(np.zeros(n), np.ones(n), np.zeros(n))
    c = np.arange(n, dtype=np.int32)
    fib(a, b, c, f)
    f.grad.fill(1.0)
    fib.grad(a, b, c, f)
    fs = f.to_numpy()
    assert a.grad.to_numpy()[0] == 0 and a.grad.to_numpy()[1:].tolist() == fs[:-1].tolist()
    assert b.grad.to_numpy().tolist() == fs.tolist()


@qd.kernel
def nested(x: R, c: I, y: R):
    for i in range(x.shape[0]):
        w = 1.0
        for j in range(c[i]):
            s = 0.0
            for k in range(j + 1):
                s += qd.sin(x[i] * w) + w
            w = w * 1.1 + s * 0.01
        y[i] = w


@qd.kernel
def branches(x: R, y: R):
    for i in range(x.shape[0]):
        t = x[i]
        if t > 0.5:
            if t > 1.0:
                y[i] = t * t
            else:
                y[i] = 3.0 * t
        else:
            y[i] = qd.exp(t)


@qd.kernel
def serial(x: R, y: R, n: qd.i32):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i]  # a reduction into a top-level local
    acc = total
    for k in range(n):
        acc = acc * 0.5 + x[0]
    if acc > 1.0:
        y[0] = acc
    else:
        y[0] = -acc


def numeric_gradient(run: object, inputs: list[np.ndarray], k: int, out: int) -> np.ndarray:
    """d sum(output `out`) / d input `k`, by central differences on the kernel itself (f64)."""
    h = 1e-3
    grad = np.zeros_like(inputs[k], dtype=np.float64)
    for e in range(inputs[k].size):
        total = []
        for sign in (1, -1):
            vals = [v.astype(np.float64).copy() for v in inputs]
            vals[k].flat[e] += sign * h
            total.append(run(vals)[out].sum())  # type: ignore[operator]
        grad.flat[e] = (total[0] - total[1]) / (2 * h)
    return grad


@pytest.mark.parametrize("case", ["nested", "branches", "serial"])
def test_matches_finite_differences(case: str) -> None:
    rng = np.random.default_rng(3)
    x0 = rng.uniform(0.1, 1.5, 6)
    c = np.array([0, 1, 2, 3, 4, 2], np.int32)

    def run(vals: list[np.ndarray]) -> list[np.ndarray]:
        qd.init(arch=qd.cpu, offline_cache=False, default_fp=qd.f64)
        x = vals[0]
        y = np.zeros(6)
        if case == "nested":
            nested(x, c, y)
        elif case == "branches":
            branches(x, y)
        else:
            serial(x, y, 3)
        return [x, y]

    numeric = numeric_gradient(run, [x0, np.zeros(6)], 0, 1)
    qd.init(arch=qd.cpu, offline_cache=False, ad_stack_experimental_enabled=True)
    x, y = arrays(x0, np.zeros(6))
    kernel = {"nested": nested, "branches": branches, "serial": serial}[case]
    args = {"nested": (x, c, y), "branches": (x, y), "serial": (x, y, 3)}[case]
    kernel(*args)
    y.grad.fill(1.0)
    kernel.grad(*args)
    np.testing.assert_allclose(x.grad.to_numpy(), numeric, rtol=2e-3, atol=2e-3)


@qd.kernel
def set_loss(x: F, loss: F, k: qd.f32):
    loss[0] = k * x[0]


def test_an_overwritten_output_passes_no_gradient_on() -> None:
    """As in Quadrants: three kernels each overwrite the loss; only the last one counts."""
    x, loss = arrays(np.ones(1), np.zeros(1))
    with qd.ad.Tape(loss=loss):
        set_loss(x, loss, 1.0)
        set_loss(x, loss, 2.0)
        set_loss(x, loss, 4.0)
    assert loss.to_numpy()[0] == 4 and x.grad.to_numpy()[0] == 4


@qd.kernel
def reads_grad(x: F, b: F):
    for i in range(x.shape[0]):
        b[0] += x.grad[i]


def test_integer_gradients_and_grad_buffers_are_refused() -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match="i32 is not supported"):
        qd.ndarray(qd.i32, 3, needs_grad=True)
    x, b = arrays(np.ones(3), np.zeros(1))
    with pytest.raises(RuntimeError, match="Cannot automatically differentiate through a grad"):
        reads_grad.grad(x, b)


@qd.kernel
def fixed_nested(x: F, y: F):
    for i in range(x.shape[0]):
        for j in range(3):
            y[i] += x[i] * j


def test_a_nested_range_needs_the_adstack() -> None:
    """Without `ad_stack_experimental_enabled`, Quadrants refuses any `range` loop nested in
    another loop in a gradient kernel, a constant trip count too; the forward kernel runs."""
    qd.init(arch=qd.cpu, offline_cache=False)
    x, y = arrays(np.ones(4), np.zeros(4))
    fixed_nested(x, y)
    np.testing.assert_allclose(y.to_numpy(), 3.0)
    y.grad.fill(1.0)
    with pytest.raises(qd.QuadrantsCompilationError, match="non static range"):
        fixed_nested.grad(x, y)
    qd.init(arch=qd.cpu, offline_cache=False, ad_stack_experimental_enabled=True)
    x, y = arrays(np.ones(4), np.zeros(4))
    fixed_nested(x, y)
    y.grad.fill(1.0)
    fixed_nested.grad(x, y)
    np.testing.assert_allclose(x.grad.to_numpy(), 3.0)


def test_the_adstack_size_bounds_a_carried_loop_in_debug() -> None:
    """With debug=True and an explicit `ad_stack_size`, a loop carrying a float through more
    iterations than Quadrants' stack holds (trip count + 2 entries) fails as there."""
    x = np.full(2, 0.5)
    for size, fails in ((8, True), (16, False)):
        qd.init(
            arch=qd.cpu,
            offline_cache=False,
            ad_stack_experimental_enabled=True,
            ad_stack_size=size,
            debug=True,
        )
        a, ret = arrays(x, np.zeros(2))
        p = qd.ndarray(qd.i32, 2)
        p.from_numpy(np.full(2, 10, np.int32))
        power(a, p, ret)
        ret.grad.fill(1.0)
        if fails:
            with pytest.raises(qd.QuadrantsAssertionError, match="Adstack overflow"):
                power.grad(a, p, ret)
        else:
            power.grad(a, p, ret)
            np.testing.assert_allclose(a.grad.to_numpy(), 10 * 0.5**9, rtol=1e-6)
