"""`qd.static(x is not None)` on a `qd.Tensor` parameter: known while compiling, one compile per
kind of argument, and never baked into the kernel's source for the next signature."""

from __future__ import annotations

import numpy as np
import pytest

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


G = None


@qd.func
def func_presence(t: qd.template()) -> qd.i32:
    r = 0
    if qd.static(t is None):
        r = 1
    return r


@qd.kernel
def scalar_is_none(x: qd.i32) -> qd.i32:
    return 1 if qd.static(x is None) else 2


@qd.kernel
def scalar_is_not_none(x: qd.i32) -> qd.i32:
    return 1 if qd.static(None is not x) else 2


@qd.kernel
def local_is_none(x: qd.i32) -> qd.i32:
    y = x
    return 1 if qd.static(y is None) else 2


@qd.kernel
def global_is_none() -> qd.i32:
    return 1 if qd.static(G is None) else 2


@qd.kernel
def template_is_global(t: qd.template()) -> qd.i32:
    return 1 if qd.static(t is G) else 2


@qd.kernel
def through_func() -> qd.i32:
    return func_presence(None)


@qd.kernel
def template_presence(t: qd.template()) -> qd.i32:
    return 1 if qd.static(t is not None) else 2


@pytest.mark.parametrize(
    ("kernel", "args", "op"),
    [
        (scalar_is_none, (3,), "is"),  # was silently False: the other branch ran
        (scalar_is_not_none, (3,), "is not"),  # was silently True
        (local_is_none, (3,), "is"),
        (global_is_none, (), "is"),
        (template_is_global, (None,), "is"),
        (through_func, (), "is"),
    ],
)
def test_identity_in_static_is_only_for_a_kernel_parameter_and_none(
    kernel: object, args: tuple, op: str
) -> None:
    """As Quadrants: only `param is None` with a template or array parameter of the kernel."""
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsSyntaxError, match=f'Operator "{op}" inside `qd.static`'):
        kernel(*args)  # type: ignore[operator]


def test_template_presence_is_known_while_compiling() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    assert template_presence(None) == 2
    assert template_presence(3) == 1


@qd.kernel
def optional_array(a: qd.types.NDArray[qd.f32, 1] | None) -> qd.i32:
    r = -1
    if qd.static(a is not None):
        r = qd.i32(a[0])
    return r


@qd.kernel
def optional_tensor(a: qd.Tensor | None, t: qd.types.Template | None) -> qd.i32:
    return (1 if qd.static(a is None) else 0) + (10 if qd.static(t is None) else 0)


def test_optional_annotations_take_none() -> None:
    """`X | None` on an ndarray, `qd.Tensor` or template parameter, as Quadrants takes it
    (expected values are the reference's)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.ndarray(qd.f32, shape=(3,))
    x[0] = 7.0
    assert optional_array(None) == -1
    assert optional_array(x) == 7
    assert optional_tensor(None, None) == 11
    assert optional_tensor(x, 3) == 0
