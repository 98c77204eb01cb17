"""`impl.call_internal(name, *args)`: Quadrants' internal runtime functions that a kernel calls by
name, with the values quadrants 1.3.3 gives on the CPU (recorded); the self-tests of runtime
structures qdlab does not have, and unknown names, are errors naming the function."""

from __future__ import annotations

import pytest

import qdlab as qd
from qdlab.lang import impl


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_internal_functions_give_quadrants_values() -> None:
    @qd.kernel
    def args(a: qd.f32, c: qd.i32) -> qd.i32:
        return impl.call_internal("test_internal_func_args", a, 0.25, c)

    @qd.kernel
    def halves() -> qd.f32:
        r = impl.call_internal("test_internal_func_args", 1.5, 2.25, 3)
        return r / 2

    @qd.kernel
    def nothing() -> qd.i32:
        s = 0
        for _ in range(10):
            s += impl.call_internal("do_nothing", with_runtime_context=False) + 1
        return s + impl.call_internal("refresh_counter")

    # (i + j) * k, truncated toward zero: quadrants gives -3, -4, 9 and 5.5
    assert [args(-1.5, 3), args(2.0, -2), args(1.1, 7)] == [-3, -4, 9]
    assert halves() == 5.5
    assert nothing() == 10


def test_a_wrong_count_or_type_and_a_missing_function_are_errors() -> None:
    @qd.kernel
    def short() -> qd.i32:
        return impl.call_internal("test_internal_func_args", 1.0, 2.0)

    @qd.kernel
    def uncast(c: qd.f32) -> qd.i32:  # no argument is cast: the literal 2 is an i32
        return impl.call_internal("test_internal_func_args", c, 2, 3)

    @qd.kernel
    def stack():
        impl.call_internal("test_stack")

    @qd.kernel
    def unknown() -> qd.i32:
        return impl.call_internal("no_such_function")

    # quadrants 1.3.3's words
    with pytest.raises(qd.QuadrantsTypeError, match="2 arguments were passed in but expected 3"):
        short()
    with pytest.raises(
        qd.QuadrantsTypeError,
        match=r"expected f32 for argument #2, but got i32  \(called with argument types f32, i32, "
        "i32",
    ):
        uncast(1.0)
    with pytest.raises(qd.QuadrantsCompilationError, match="`test_stack` tests the autodiff stack"):
        stack()
    with pytest.raises(qd.QuadrantsCompilationError, match="no internal function `no_such_func"):
        unknown()
