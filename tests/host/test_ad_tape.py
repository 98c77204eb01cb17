"""`qd.ad`: the tape's validation (the global data access rule), its gradient check, what it
records, `clear_all_gradients`, `grad_replaced` / `grad_for`, the SNode gradient types, and the
gradient kernels Quadrants refuses. Expected values were measured on Quadrants 1.3.3 (CPU)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab.types.enums import AutodiffMode, SNodeGradType


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)


def test_validation_checks_each_element() -> None:
    """Reading x[i] and writing x[i + 1] in another kernel is fine element by element only when
    the element written was not read; overwriting what the tape read is an AssertionError."""
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def total():
        for i in range(4):
            loss[None] += x[i]

    @qd.kernel
    def inplace():
        for i in range(4):
            x[i] = x[i] * 2.0

    x.from_numpy(np.arange(4, dtype=np.float32))
    with qd.ad.Tape(loss=loss, validation=True) as tape:
        total()
        assert [f for f, _ in tape.calls] == [total]
        assert total.autodiff_mode is AutodiffMode.VALIDATION
    assert total.autodiff_mode is AutodiffMode.NONE
    np.testing.assert_allclose(x.grad.to_numpy(), 1.0)
    assert loss[None] == 6.0
    with (
        pytest.raises(qd.QuadrantsAssertionError, match="global data access rule"),
        qd.ad.Tape(loss=loss, validation=True),
    ):
        total()
        inplace()


def test_validation_needs_debug() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    with (
        pytest.warns(Warning, match="Debug mode is disabled"),
        qd.ad.Tape(loss=loss, validation=True),
    ):
        pass


def test_grad_check_and_grad_replaced() -> None:
    """`grad_check` passes a correct gradient and fails a wrong custom one."""
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=qd.f64)
    x = qd.field(float, shape=3, needs_grad=True)
    y = qd.field(float, shape=(), needs_grad=True)
    x.from_numpy(np.array([0.3, 0.5, 0.7]))

    @qd.kernel
    def compute():
        for i in x:
            y[None] += qd.sin(x[i]) * x[i]

    with qd.ad.Tape(y, grad_check=[x]):
        compute()
    np.testing.assert_allclose(
        x.grad.to_numpy(), np.cos([0.3, 0.5, 0.7]) * [0.3, 0.5, 0.7] + np.sin([0.3, 0.5, 0.7])
    )

    @qd.kernel
    def wrong_grad():
        for i in x:
            x.grad[i] = 5.0

    @qd.ad.grad_replaced
    def step():
        compute()

    @qd.ad.grad_for(step)
    def step_grad():
        wrong_grad()

    with pytest.raises(AssertionError, match="Grad check failed"), qd.ad.Tape(y, grad_check=[x]):
        step()
    np.testing.assert_allclose(x.grad.to_numpy(), 5.0)


def test_clear_all_gradients_and_grad_types() -> None:
    x = qd.field(qd.f32)
    y = qd.field(qd.f32)
    qd.root.dense(qd.i, 4).place(x, y)
    qd.root.lazy_grad()
    x.grad.fill(3)
    y.grad.fill(4)
    before = qd.lang.impl.get_runtime().get_num_compiled_functions()
    qd.ad.clear_all_gradients()
    qd.ad.clear_all_gradients()
    assert qd.lang.impl.get_runtime().get_num_compiled_functions() == before + 1
    assert not x.grad.to_numpy().any() and not y.grad.to_numpy().any()
    z = qd.field(qd.f32, shape=(), needs_grad=True, needs_dual=True)
    assert z.snode.ptr.get_snode_grad_type() is SNodeGradType.PRIMAL
    assert z.grad.snode.ptr.get_snode_grad_type() is SNodeGradType.ADJOINT
    assert z.dual.snode.ptr.get_snode_grad_type() is SNodeGradType.DUAL
    assert z.snode.ptr.has_adjoint_checkbit()
    assert not qd.field(qd.f32, shape=()).snode.ptr.has_adjoint_checkbit()


def test_cross_iteration_read_after_write_is_refused() -> None:
    """`out[i] = out[i - 1] + x` in a top-level loop: refused (the gradient would be wrong);
    nested in an outer loop with the adstack on, differentiated (x.grad = n)."""
    for outer in (False, True):
        qd.init(arch=qd.cpu, offline_cache=False, ad_stack_experimental_enabled=True)
        x = qd.field(qd.f32, shape=(), needs_grad=True)
        out = qd.field(qd.f32, shape=4, needs_grad=True)
        compute = _chain(x, out, outer)
        x[None] = 1.0
        compute()
        out.grad[3] = 1.0
        if outer:
            compute.grad()
            assert x.grad[None] == 4.0
        else:
            with pytest.raises(RuntimeError, match="Cross-iteration read-after-write"):
                compute.grad()


def _chain(x: qd.Field, out: qd.Field, outer: bool) -> qd.Kernel:
    @qd.kernel
    def compute():
        for _ in range(1) if qd.static(outer) else qd.static(range(1)):
            for i in range(4):
                if i == 0:
                    out[i] = x[None]
                else:
                    out[i] = out[i - 1] + x[None]

    return compute


def test_random_and_ndrange_targets() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    a = qd.field(qd.i32, shape=8)

    @qd.kernel
    def noisy():
        x[None] = x[None] * qd.random()

    @qd.kernel
    def shifted():
        for i, j in qd.ndrange(2, 2):
            i = i * 2 + j  # a qd.ndrange target is a variable of the body
            a[i] += 1

    noisy()
    with pytest.raises(RuntimeError, match="RandStmt not supported"):
        noisy.grad()
    shifted()
    np.testing.assert_array_equal(a.to_numpy(), [1, 1, 1, 1, 0, 0, 0, 0])


@pytest.mark.parametrize(
    "fn, derivative",
    [
        (lambda x: qd.sqrt(x) * x, lambda x: 1.5 * np.sqrt(x)),
        (lambda x: (x + 1) / (x - 1), lambda x: -2 / (x - 1) ** 2),
        (lambda x: qd.atan2(0.4, x) + qd.atan2(x, 0.4), lambda x: (0.4 - 0.4) / (x * x + 0.16)),
        (lambda x: qd.atan2(x, 0.4), lambda x: 0.4 / (x * x + 0.16)),
    ],
)
def test_a_lambda_called_in_a_kernel(fn, derivative) -> None:
    """A Python lambda called in a kernel runs on its values (inlined, as the reference runs
    it), and the gradient check agrees."""
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=qd.f64)
    x = qd.field(float, shape=(), needs_grad=True)
    y = qd.field(float, shape=(), needs_grad=True)

    @qd.kernel
    def apply():
        y[None] = fn(x[None])

    x[None] = 0.234
    with qd.ad.Tape(loss=y, grad_check=[x]):
        apply()
    assert y[None] == pytest.approx(fn(0.234))
    assert x.grad[None] == pytest.approx(derivative(0.234))


SHAPES = {
    "cube": lambda v: v * v * v,
    "clamped": lambda v: qd.math.clamp(v, -0.5, 0.8) * v,
}
"""A table of lambdas, one entry a line: each line parses only inside a dict literal."""


@pytest.mark.parametrize("name, derivative", [("cube", 3 * 0.7**2), ("clamped", 2 * 0.7)])
def test_a_lambda_from_a_dict_literal(name: str, derivative: float) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    fn = SHAPES[name]
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    y = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def apply():
        y[None] = fn(x[None])

    x[None] = 0.7
    with qd.ad.Tape(loss=y):
        apply()
    assert x.grad[None] == pytest.approx(derivative)
