"""Quadrants' return rules, in its words: a kernel or func with a return type must return a value,
`return` stays out of runtime loops and branches, `return None` is a bare return; and tuple
returns that hold structs (values recorded from quadrants 1.3.3)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

S = qd.types.struct(a=qd.types.vector(2, qd.f32), b=qd.u8)
sphere = qd.types.struct(center=qd.math.vec3, radius=float)
sphere_i = qd.types.struct(center=qd.math.vec3, radius=int)
alike = qd.types.struct(center=qd.math.vec3, radius=float)


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_a_kernel_with_a_return_type_must_return() -> None:
    @qd.kernel
    def nothing() -> qd.i32:
        pass

    @qd.kernel
    def bare() -> qd.i32:
        return

    for k in (nothing, bare):
        with pytest.raises(
            qd.QuadrantsSyntaxError,
            match="Kernel has a return type but does not have a return statement",
        ):
            k()


def test_a_func_with_a_return_type_must_return() -> None:
    @qd.func
    def no_value() -> qd.i32:
        x = 1  # noqa: F841

    @qd.kernel
    def calls() -> qd.i32:
        no_value()
        return 1

    with pytest.raises(
        qd.QuadrantsCompilationError,
        match="Function has a return type but does not have a return statement",
    ):
        calls()


def test_return_none_is_a_bare_return() -> None:
    out = qd.field(qd.i32, shape=())

    @qd.kernel
    def k():
        out[None] = 3
        return None  # noqa: RET501, PLR1711 - the rule under test

    assert k() is None
    assert out[None] == 3


def test_return_in_a_runtime_branch_or_loop() -> None:
    @qd.func
    def f(a: qd.f32) -> qd.f32:
        if a > 0:
            return a
        return 0.0

    @qd.kernel
    def in_func(a: qd.f32) -> qd.f32:
        return f(a)

    @qd.kernel
    def in_loop() -> qd.i32:
        for i in range(3):
            return i

    for k, args in ((in_func, (1.0,)), (in_loop, ())):
        with pytest.raises(
            qd.QuadrantsCompilationError,
            match="Return inside non-static if/for is not supported",
        ):
            k(*args)


def test_a_tuple_return_holding_a_struct() -> None:
    @qd.kernel
    def k(x: qd.i32) -> (qd.i32, S, qd.f32):
        return x * 2, S(a=qd.Vector([x, 0.5]), b=x + 255), 1.5

    n, s, f = k(3)
    assert n == 6 and f == 1.5
    np.testing.assert_array_equal(s.a, [3.0, 0.5])
    assert s.b == 2  # 258 as a u8


def test_a_real_func_returning_a_struct_in_a_tuple() -> None:
    @qd.real_func
    def rf(x: qd.i32) -> tuple[S, qd.i32]:
        return S(a=qd.Vector([1.0, x]), b=7), x + 1

    @qd.kernel
    def k(x: qd.i32) -> tuple[S, qd.i32]:
        return rf(x)

    s, n = k(4)
    np.testing.assert_array_equal(s.a, [1.0, 4.0])
    assert (s.b, n) == (7, 5)


def test_a_struct_of_other_member_types_is_not_converted() -> None:
    @qd.kernel
    def other() -> sphere:
        return sphere_i(center=qd.math.vec3([1, 2, 3]), radius=2)

    @qd.kernel
    def same_members() -> sphere:
        return alike(center=qd.math.vec3([1, 2, 3]), radius=2.5)

    with pytest.raises(qd.QuadrantsCompilationError, match="cannot be converted"):
        other()
    assert same_members().radius == 2.5
