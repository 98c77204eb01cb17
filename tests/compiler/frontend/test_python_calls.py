"""Calls of callables that are not Quadrants' in a kernel, as Quadrants runs them while compiling:
with arguments known then, Python calls them and the result is a constant (a NumPy 0-d array a
number, an array of more dimensions refused); a plain Python function or method given a value the
kernel computes runs on it as a @qd.func would; a C function given one is refused by name. Values
measured with Quadrants 1.3.3."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def square_plus_one(x: float) -> float:
    return x * x + 1


def lookup(n: int) -> int:
    return {"a": n * 2}["a"]


def pair(x: float) -> tuple:
    return x, x + 1


def test_python_functions_run_on_constants_and_kernel_values() -> None:
    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        f = qd.static(square_plus_one)
        a, b = pair(x)
        return f(x) + f(3) + lookup(5) + a * b

    assert k(2.0) == 5.0 + 10.0 + 10.0 + 6.0


def test_numpy_calls_give_constants() -> None:
    @qd.kernel
    def k() -> qd.i32:
        a = np.array(3, dtype=np.int32)
        return a

    @qd.kernel
    def f() -> qd.f32:
        return np.sqrt(4.0) + np.float32(1.5) + np.array(2.5)

    assert k() == 3
    assert f() == 6.0

    @qd.kernel
    def bad() -> None:
        a = np.array([1])  # noqa: F841

    with pytest.raises(
        qd.QuadrantsTypeError,
        match="Only 0-dimensional numpy array can be used to initialize a scalar expression",
    ):
        bad()


def test_a_c_function_given_a_kernel_value_is_refused() -> None:
    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        return np.sqrt(x)

    with pytest.raises(qd.QdTypeError, match=r"sqrt\(\) is not a Quadrants function.*`x`"):
        k(4.0)

    @qd.kernel
    def held(x: qd.f32) -> qd.i32:
        return isinstance(x, float) + len((x, x))  # holds the value, computes nothing with it

    assert held(2.0) == 2


def test_methods_of_a_data_oriented_object() -> None:
    @qd.data_oriented
    class Model:
        def __init__(self) -> None:
            self.a = qd.field(qd.f32, shape=3)
            self.k = 3.0

        def scale(self, x: float) -> float:
            return x * self.k

        @qd.func
        def add(self, x: float, y: float) -> float:
            return x + y

        @qd.kernel
        def run(self, x: qd.f32) -> None:
            for i in range(3):
                self.a[i] = self.scale(x + i)
            a, sc, add = qd.static(self.a, self.scale, self.add)
            a[2] += sc(1.0) + add(1.0, 2.0)

    m = Model()
    m.run(1.0)
    np.testing.assert_array_equal(m.a.to_numpy(), [3.0, 6.0, 15.0])
