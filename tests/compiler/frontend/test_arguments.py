"""Scalar and array arguments a parameter cannot hold are refused by name, on the first call and on
the launch fast path alike; values it can hold (a bool for an int, an integral float, an f32
overflow to inf, an integer that fits 64 bits, wrapped to the parameter's bits) are taken."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_errors import assert_user_facing

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@qd.kernel
def echo_i32(x: qd.i32) -> qd.i32:
    return x


@qd.kernel
def echo_i64(x: qd.i64) -> qd.i64:
    return x


@qd.kernel
def echo_u64(x: qd.u64) -> qd.u64:
    return x


@qd.kernel
def echo_u8(x: qd.u8) -> qd.u8:
    return x


@qd.kernel
def echo_f32(x: qd.f32) -> qd.f32:
    return x


@qd.kernel
def twice(x: qd.template()) -> qd.f32:
    return x * 2


ECHO = {"i32": echo_i32, "i64": echo_i64, "u64": echo_u64, "u8": echo_u8, "f32": echo_f32}

BAD = [
    ("i32", 2.5, "2.5, but the parameter is i32, which takes integers only"),
    ("i32", math.nan, "nan, but the parameter is i32, which takes integers only"),
    ("i32", -math.inf, "-inf, but the parameter is i32, which takes integers only"),
    ("i32", 2**63, f"{2**63}, outside the range that a signed integer argument takes"),
    ("i64", 2**70, f"{2**70}, outside the range that a signed integer argument takes"),
    (
        "u64",
        -1,
        "-1, outside the range that an unsigned integer argument takes (0 to 18446744073709551615)",
    ),
    ("u8", 2**64, f"{2**64}, outside the range that an unsigned integer argument takes"),
]


@pytest.mark.parametrize("warm", [False, True], ids=["first_call", "fast_path"])
@pytest.mark.parametrize("dtype, value, message", BAD, ids=[f"{d}-{v}" for d, v, _ in BAD])
def test_a_value_its_parameter_cannot_hold(
    dtype: str, value: object, message: str, warm: bool
) -> None:
    kernel = ECHO[dtype]
    if warm:
        kernel(type(value)(1))  # the launch fast path now holds this argument type
    with pytest.raises(qd.QdArgumentError) as info:
        kernel(value)
    exc = info.value
    assert isinstance(exc, TypeError) and isinstance(exc, qd.QuadrantsRuntimeTypeError)
    assert exc.message.startswith(f"kernel `echo_{dtype}`: ")
    assert f"argument `x` is {message}" in exc.message
    if isinstance(value, float):  # Quadrants' words, and a TypeError as for any wrong kind
        assert isinstance(exc, qd.QdArgumentTypeError) and isinstance(exc, qd.QdTypeError)
        assert "cannot be converted into required type i32" in exc.message
    assert_user_facing(exc, __file__)
    assert kernel(True) == 1  # the kernel is fine afterwards


@pytest.mark.parametrize(
    "dtype, value, result",
    [
        ("i32", True, 1),
        ("i32", 2.0, 2),
        ("i32", np.float32(-3.0), -3),
        ("i32", -(2**31), -(2**31)),
        ("i64", 2**63 - 1, 2**63 - 1),
        ("u64", 2**64 - 1, 2**64 - 1),
        ("u8", np.uint8(255), 255),
        # as in Quadrants, an integer that fits 64 bits wraps to the parameter's bits
        ("i32", 2**40 + 5, 5),
        ("i32", np.int64(2**31), -(2**31)),
        ("i32", -(2**31) - 1, 2**31 - 1),
        ("u8", 300, 44),
        ("u8", 2**64 - 1, 255),
        ("u64", 2**63, 2**63),
        ("f32", 1e300, math.inf),
        ("f32", -(2**200), -math.inf),
        ("f32", 3, 3.0),
    ],
)
def test_values_its_parameter_can_hold(dtype: str, value: object, result: object) -> None:
    for _ in range(2):  # first call, then the fast path
        assert ECHO[dtype](value) == result


def test_a_float_template_argument() -> None:
    """As in Quadrants, a template parameter takes any value, a float too."""
    assert twice(1.5) == 3.0
    assert twice(2.5) == 5.0
    assert twice(4) == 8.0


@qd.kernel
def first(a: qd.types.NDArray[qd.u8, 1]) -> qd.i32:
    return qd.cast(a[0], qd.i32)


@pytest.mark.parametrize("warm", [False, True], ids=["first_call", "fast_path"])
def test_an_extent_beyond_i32_is_refused(warm: bool) -> None:
    """No memory needed: a view of 8 bytes that claims 2**31 elements (the kernel would only read
    a[0])."""
    if warm:
        assert first(np.full(4, 9, np.uint8)) == 9
    huge = np.lib.stride_tricks.as_strided(np.zeros(8, np.uint8), shape=(2**31,), strides=(1,))
    with pytest.raises(qd.QdValueError) as info:
        first(huge)
    assert info.value.message == (
        f"kernel `first`: argument `a` has shape ({2**31},); kernels index arrays with "
        f"i32, so no extent may exceed 2**31 - 1 ({2**31 - 1})."
    )
    assert_user_facing(info.value, __file__)
    assert first(np.full(4, 9, np.uint8)) == 9


@qd.kernel
def takes_i32_f32_array(a: qd.i32, b: qd.f32, c: qd.types.ndarray()) -> qd.f32:
    return a + b + c[0]


@pytest.mark.parametrize(
    ("args", "words"),
    [  # Quadrants 1.3.3's words for each (recorded), then qdlab's
        (
            (1.2, 1.0, None),
            "Argument (0,) (type=<class 'float'>) cannot be converted into required type i32",
        ),
        (
            (1, "x", None),
            "Argument (1,) (type=<class 'str'>) cannot be converted into required type f32",
        ),
        (
            (1, None, None),
            "Argument (1,) (type=<class 'NoneType'>) cannot be converted into required type f32",
        ),
        ((1, 1.0, 1.2), "Invalid type for argument c, got 1.2"),
        ((1, 1.0, [1, 2]), "Invalid type for argument c, got [1, 2]"),
    ],
)
def test_an_argument_of_the_wrong_kind_in_quadrants_words(args: tuple, words: str) -> None:
    array = np.ones(1, np.float32) if args[2] is None else args[2]
    with pytest.raises(qd.QuadrantsRuntimeTypeError) as info:
        takes_i32_f32_array(args[0], args[1], array)
    exc = info.value
    assert isinstance(exc, qd.QdTypeError)  # what qdlab raised before
    assert exc.message.startswith(f"kernel `takes_i32_f32_array`: {words}")
    assert takes_i32_f32_array(1, 2.0, np.ones(1, np.float32)) == 4.0  # still usable
