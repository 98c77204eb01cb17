"""`quadrants.lang.impl.call_internal`: the runtime's internal functions qdlab has, with the values
Quadrants 1.3.3 gives (`test_internal_func_args(i, j, k)` is `int((i + j) * k)` in f32, truncated),
and a clear refusal, at the line, of the ones it has not."""

import pytest

import qdlab as qd
from qdlab.lang import impl


@qd.kernel
def internal(a: qd.f32, b: qd.f32, c: qd.i32) -> qd.i32:
    zero = impl.call_internal("do_nothing") + impl.call_internal("refresh_counter")
    return impl.call_internal("test_internal_func_args", a, b, c) + zero


def test_internal_functions_give_quadrants_values() -> None:
    qd.init(arch=qd.cpu)
    got = [internal(1.5, 2.25, 3), internal(-1.5, 0.0, 3), internal(0.1, 0.2, 10)]
    assert got == [11, -4, 3]
    assert internal(1e9, 1e9, 1) == 2000000000


def test_an_internal_function_qdlab_lacks_is_refused_at_its_line() -> None:
    @qd.kernel
    def lists():
        impl.call_internal("test_list_manager")

    qd.init(arch=qd.cpu)
    with pytest.raises(qd.QuadrantsCompilationError, match="`test_list_manager` tests") as e:
        lists()
    assert e.value.loc is not None and "call_internal" in e.value.loc.source_line
    with pytest.raises(RuntimeError, match="inside a @qd.kernel"):
        impl.call_internal("do_nothing")
