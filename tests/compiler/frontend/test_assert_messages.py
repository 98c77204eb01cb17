"""A failed `assert`'s message carries the values the kernel had (`"..." % (...)`, f-strings,
`.format`), on every path; a plain message stays as written."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

PATHS = ({}, {"per_offload": False}, {"split_carried": False})


@qd.kernel
def check(a: qd.types.NDArray[qd.i32, 1], limit: qd.i32):
    for i in range(a.shape[0]):
        assert a[i] < limit, "a[%d] = %d, limit %d (%.1f%%)" % (i, a[i], limit, 12.5)  # noqa: UP031 - the form under test
    s = 0.5
    for i in range(a.shape[0]):
        s += a[i] * 0.25
    assert s < 10, f"s = {s:.3f} from {a.shape[0]} entries"
    v = qd.math.ivec2(a[0], a[1])
    assert v[0] < 100, "v = {}".format(v)  # noqa: UP032 - the form under test
    assert limit != 7, "a plain message"


@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "reference_fallbacks"])
@pytest.mark.parametrize(
    "values, limit, want",
    [
        ([1, 2, 9, 3], 5, r"a\[2\] = 9, limit 5 \(12\.5%\)"),
        ([10, 10, 10, 10], 50, r"s = 10\.500 from 4 entries"),
    ],
)
def test_the_message_shows_the_values_of_the_failing_check(options, values, limit, want) -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache=False, **options)
    with pytest.raises(qd.QuadrantsAssertionError, match=want):
        check(np.array(values, np.int32), limit)


def test_vectors_and_plain_messages() -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache=False)
    with pytest.raises(qd.QuadrantsAssertionError, match=r"v = \[100, 1\]"):
        check(np.array([100, 1, -200, -300], np.int32), 1000)
    with pytest.raises(qd.QuadrantsAssertionError, match="a plain message"):
        check(np.array([1, 1, 1, 1], np.int32), 7)
    check(np.array([1, 1, 1, 1], np.int32), 5)  # passes


def test_a_message_with_too_few_values_is_a_compile_error() -> None:
    @qd.kernel
    def k(x: qd.i32):
        assert x > 0, "%d and %d" % (x,)  # noqa: F507, UP031 - the mistake under test

    qd.init(arch=qd.cpu, debug=True, offline_cache=False)
    with pytest.raises(qd.QuadrantsCompilationError, match="not enough arguments"):
        k(1)


@qd.func
def bump(a: qd.template()) -> qd.i32:
    a[0] += 1
    return a[0]


@qd.kernel
def counted(a: qd.types.NDArray[qd.i32, 1]):
    assert bump(a) > 100, "not checked without debug"
    assert qd.floor(1.5, int) == 1  # a built-in's call is not compiled without debug


def test_with_debug_off_an_asserts_func_calls_still_run() -> None:
    qd.init(arch=qd.cpu, debug=False, offline_cache=False)
    a = np.zeros(1, np.int32)
    counted(a)
    counted(a)
    assert a[0] == 2
