"""Oracle kernel corpus: Quadrants-style kernels run unchanged on quadrants and on qdlab.

Why this module exists: it is the single source of truth for the differential ("oracle") tests.
The same kernels are executed by the reference implementation (``quadrants``, in a subprocess,
see ``run_reference.py``) and by ``qdlab`` (see ``test_oracle.py``), and their outputs compared.

This file deliberately imports neither ``quadrants`` nor ``qdlab``: the harness
(``harness.load_kernels``) injects the module global ``qd`` before executing it.  Kernels have to
live in a real file because both implementations read kernel source via ``inspect``.

Every case is a :class:`Case` in ``CASES``.  ``make_inputs(rng)`` returns the positional argument
list (NumPy arrays, Python ints/floats); ``outputs`` names the argument positions whose contents
are compared after the call; ``ndarray_args`` names the array positions the harness converts to
``qd.ndarray`` (all other arrays are passed as NumPy arrays); ``returns`` says whether the
kernel's return value is compared too.

Float inputs to order-sensitive reductions are small integers stored as floats, so every sum is
exact and independent of the summation order.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

qd: Any = globals()["qd"]  # injected by the harness before this module is executed


@dataclass(frozen=True)
class Case:
    """One oracle case: a kernel plus a deterministic input builder."""

    name: str
    kernel: Callable[..., Any]
    make_inputs: Callable[[np.random.Generator], list[Any]]
    outputs: tuple[int, ...]
    ndarray_args: tuple[int, ...] = ()
    returns: bool = False
    elements: tuple[tuple[int, int], ...] = ()
    """(argument, element axes) of ndarray arguments of vectors (1) or matrices (2)."""


CASES: list[Case] = []


def case(
    make_inputs: Callable[[np.random.Generator], list[Any]],
    outputs: tuple[int, ...] = (),
    ndarray_args: tuple[int, ...] = (),
    returns: bool = False,
    name: str | None = None,
    elements: tuple[tuple[int, int], ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated (already ``@qd.kernel``-wrapped) kernel as a case."""

    def register(kernel: Callable[..., Any]) -> Callable[..., Any]:
        case_name = name or getattr(kernel, "__name__", None) or kernel.func.__name__
        CASES.append(Case(case_name, kernel, make_inputs, outputs, ndarray_args, returns, elements))
        return kernel

    return register


# ----------------------------------------------------------------------------- input helpers


def f32(rng: np.random.Generator, *shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """Uniform float32 array."""
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def f64(rng: np.random.Generator, *shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """Uniform float64 array."""
    return rng.uniform(lo, hi, size=shape).astype(np.float64)


def ints(
    rng: np.random.Generator, dtype: Any, *shape: int, lo: int = -100, hi: int = 100
) -> np.ndarray:
    """Uniform integer array in [lo, hi) of the given dtype."""
    return rng.integers(lo, hi, size=shape, endpoint=False).astype(dtype)


def exact_f32(rng: np.random.Generator, *shape: int, lo: int = -100, hi: int = 100) -> np.ndarray:
    """Float32 array of small integers: sums of these are exact in any order."""
    return ints(rng, np.float32, *shape, lo=lo, hi=hi)


def zeros(dtype: Any, *shape: int) -> np.ndarray:
    """Zeroed output array (outputs are always initialised: fresh memory is not zeroed)."""
    return np.zeros(shape, dtype=dtype)


# ----------------------------------------------------------------------------- module globals
# Python globals are read at compile time and baked into the kernel.

SCALE = 2.5
OFFSET = 3
USE_SQUARE = True
COEFFS = (1.0, -2.0, 0.5)
NUM_BINS = 8

ClampF32 = qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="clamp")
ClampF32x2 = qd.types.ndarray(dtype=qd.f32, ndim=2, boundary="clamp")


# ----------------------------------------------------------------------------- @qd.func helpers


@qd.func
def square(x: qd.f32) -> qd.f32:
    return x * x


@qd.func
def poly(x: qd.f32, c: qd.f32) -> qd.f32:
    # nested func call
    return square(x) + c * x + 1.0


@qd.func
def smooth_clamp(x: qd.f32, lo: qd.f32, hi: qd.f32) -> qd.f32:
    y = x
    if x < lo:
        y = lo
    elif x > hi:
        y = hi
    return y


@qd.func
def add_at(y: qd.types.NDArray[qd.f32, 1], i: qd.i32, v: qd.f32):
    y[i] += v


@qd.func
def fill_ramp(y: qd.types.NDArray[qd.f32, 1], v: qd.f32):
    # a for loop reached through an inlined func is still a top-level (parallel) loop
    for i in range(y.shape[0]):
        y[i] = v * i


# ============================================================================= basics


@case(lambda r: [2.5, f32(r, 1000), f32(r, 1000)], outputs=(2,))
@qd.kernel
def saxpy_numpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@case(lambda r: [-1.25, f32(r, 777), f32(r, 777)], outputs=(2,), ndarray_args=(1, 2))
@qd.kernel
def saxpy_qd_ndarray(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@case(lambda r: [300, 2.5, 7, -0.75, f32(r, 300), zeros(np.float32, 300)], outputs=(5,))
@qd.kernel
def scalar_arg_kinds(
    n: int,
    s: float,
    k: qd.i32,
    f: qd.f32,
    x: qd.types.NDArray[qd.f32, 1],
    out: qd.types.NDArray[qd.f32, 1],
):
    for i in range(n):
        out[i] = x[i] * s + f * (i % k)


@case(lambda r: [5, 90, ints(r, np.int32, 100), zeros(np.int32, 100)], outputs=(3,))
@qd.kernel
def range_lo_hi(
    lo: qd.i32, hi: qd.i32, a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]
):
    for i in range(lo, hi):
        out[i] = a[i] * 2 + i


@case(lambda r: [f32(r, 37, 53), zeros(np.float32, 37, 53)], outputs=(1,))
@qd.kernel
def ndrange_2d_shape(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
    for i, j in qd.ndrange(a.shape[0], a.shape[1]):
        out[i, j] = a[i, j] * 2.0 + i - 0.5 * j


@case(lambda r: [f32(r, 7, 9, 11), zeros(np.float32, 7, 9, 11)], outputs=(1,), ndarray_args=(0, 1))
@qd.kernel
def ndrange_3d_qd_ndarray(a: qd.types.NDArray[qd.f32, 3], out: qd.types.NDArray[qd.f32, 3]):
    for i, j, k in qd.ndrange(a.shape[0], a.shape[1], a.shape[2]):
        out[i, j, k] = a[i, j, k] + i * 100 + j * 10 + k


@case(lambda r: [f32(r, 20, 30), zeros(np.float32, 20, 30)], outputs=(1,))
@qd.kernel
def ndrange_lo_hi_stencil(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
    for i, j in qd.ndrange((1, a.shape[0] - 1), (1, a.shape[1] - 1)):
        out[i, j] = a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1] - 4.0 * a[i, j]


@case(lambda r: [zeros(np.int32, 6, 8, 5)], outputs=(0,))
@qd.kernel
def ndrange_3d_mixed_bounds(out: qd.types.NDArray[qd.i32, 3]):
    for i, j, k in qd.ndrange(out.shape[0], (2, out.shape[1]), (1, 4)):
        out[i, j, k] = i * 100 + j * 10 + k


@case(lambda r: [f32(r, 12, 17), zeros(np.float32, 12, 17)], outputs=(1,))
@qd.kernel
def grouped_2d(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
    for I in qd.grouped(qd.ndrange(a.shape[0], a.shape[1])):
        out[I] = a[I] * 3.0 + I[0] - I[1]


@case(lambda r: [zeros(np.int32, 4, 5, 3)], outputs=(0,), ndarray_args=(0,))
@qd.kernel
def grouped_3d_lo_hi(out: qd.types.NDArray[qd.i32, 3]):
    for I in qd.grouped(qd.ndrange((1, 4), 5, (0, 2))):
        out[I] = I[0] * 100 + I[1] * 10 + I[2]


# ============================================================================= dtypes


@case(
    lambda r: [
        ints(r, np.int8, 64, lo=-128, hi=128),
        ints(r, np.int8, 64, lo=-128, hi=128),
        zeros(np.int8, 64),
        zeros(np.int32, 64),
    ],
    outputs=(2, 3),
)
@qd.kernel
def dtype_i8_wrap(
    a: qd.types.NDArray[qd.i8, 1],
    b: qd.types.NDArray[qd.i8, 1],
    out: qd.types.NDArray[qd.i8, 1],
    wide: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        out[i] = a[i] + b[i]  # i8 + i8 stays i8: wraps
        wide[i] = a[i] * 3 + 100  # i32 literal promotes to i32: no wrap


@case(
    lambda r: [
        ints(r, np.int16, 100, lo=-2000, hi=2000),
        ints(r, np.int16, 100, lo=-20, hi=20),
        zeros(np.int16, 100),
    ],
    outputs=(2,),
)
@qd.kernel
def dtype_i16(
    a: qd.types.NDArray[qd.i16, 1], b: qd.types.NDArray[qd.i16, 1], out: qd.types.NDArray[qd.i16, 1]
):
    for i in range(a.shape[0]):
        out[i] = a[i] * b[i] - 7


@case(lambda r: [ints(r, np.int32, 200, lo=-(2**20), hi=2**20), zeros(np.int32, 200)], outputs=(1,))
@qd.kernel
def dtype_i32_bitwise(a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        x = a[i]
        out[i] = ((x >> 3) & 0xFF) | ((x << 2) ^ x) + (~x)


@case(
    lambda r: [
        ints(r, np.int64, 100, lo=-(2**40), hi=2**40),
        ints(r, np.int64, 100),
        zeros(np.int64, 100),
    ],
    outputs=(2,),
    ndarray_args=(0, 2),
)
@qd.kernel
def dtype_i64(
    a: qd.types.NDArray[qd.i64, 1], b: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]
):
    for i in range(a.shape[0]):
        out[i] = a[i] * 1009 + b[i] * b[i] - (a[i] >> 5)


@case(
    lambda r: [
        ints(r, np.uint8, 100, lo=0, hi=256),
        ints(r, np.uint8, 100, lo=0, hi=256),
        zeros(np.uint8, 100),
        zeros(np.int32, 100),
    ],
    outputs=(2, 3),
)
@qd.kernel
def dtype_u8_wrap(
    a: qd.types.NDArray[qd.u8, 1],
    b: qd.types.NDArray[qd.u8, 1],
    out: qd.types.NDArray[qd.u8, 1],
    diff: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        out[i] = a[i] + b[i]  # u8 + u8 wraps mod 256
        diff[i] = a[i] - b[i]  # u8 - u8 is computed in u8 (wraps) then widened


@case(
    lambda r: [
        ints(r, np.uint16, 100, lo=0, hi=65536),
        zeros(np.uint16, 100),
        zeros(np.int32, 100),
    ],
    outputs=(1, 2),
)
@qd.kernel
def dtype_u16(
    a: qd.types.NDArray[qd.u16, 1],
    out: qd.types.NDArray[qd.u16, 1],
    half: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        out[i] = a[i] * a[i] + 1
        half[i] = a[i] // 2 - 1000


@case(
    lambda r: [
        ints(r, np.uint32, 100, lo=0, hi=2**32),
        ints(r, np.uint32, 100, lo=0, hi=50),
        zeros(np.uint32, 100),
        zeros(np.int32, 100),
    ],
    outputs=(2, 3),
)
@qd.kernel
def dtype_u32(
    a: qd.types.NDArray[qd.u32, 1],
    b: qd.types.NDArray[qd.u32, 1],
    out: qd.types.NDArray[qd.u32, 1],
    flag: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        out[i] = b[i] - 25 + a[i] * 3  # u32 beats i32 at equal width: wraps mod 2**32
        flag[i] = b[i] < -1  # unsigned compare: -1 becomes 0xFFFFFFFF, always true


@case(
    lambda r: [
        ints(r, np.uint64, 100, lo=0, hi=2**63) * np.uint64(2) + np.uint64(1),
        zeros(np.uint64, 100),
    ],
    outputs=(1,),
)
@qd.kernel
def dtype_u64_hash(a: qd.types.NDArray[qd.u64, 1], out: qd.types.NDArray[qd.u64, 1]):
    for i in range(a.shape[0]):
        h = a[i] ^ (a[i] >> 7)
        out[i] = h * qd.u64(6364136223846793005) + qd.u64(1442695040888963407)


@case(
    lambda r: [f64(r, 100, lo=0.0, hi=10.0), f64(r, 100), zeros(np.float64, 100)],
    outputs=(2,),
    ndarray_args=(1,),
)
@qd.kernel
def dtype_f64(
    a: qd.types.NDArray[qd.f64, 1], b: qd.types.NDArray[qd.f64, 1], out: qd.types.NDArray[qd.f64, 1]
):
    for i in range(a.shape[0]):
        out[i] = qd.sqrt(a[i]) * b[i] + qd.exp(-a[i]) / 3


@case(lambda r: [0.1, 1.0, zeros(np.float64, 3)], outputs=(2,))
@qd.kernel
def f64_with_f32_literals(x: qd.f64, y: qd.f64, out: qd.types.NDArray[qd.f64, 1]):
    # float literals are default_fp (f32) even next to an f64 operand
    out[0] = (x - 0.1) * 1e9
    out[1] = y * 3.0000001
    out[2] = y + 0.1


@case(
    lambda r: [
        ints(r, np.int32, 50, lo=-50, hi=50),
        ints(r, np.uint8, 50, lo=0, hi=256),
        f32(r, 50),
        zeros(np.float32, 50),
        zeros(np.int32, 50),
    ],
    outputs=(3, 4),
)
@qd.kernel
def mixed_promotion(
    a: qd.types.NDArray[qd.i32, 1],
    b: qd.types.NDArray[qd.u8, 1],
    c: qd.types.NDArray[qd.f32, 1],
    fo: qd.types.NDArray[qd.f32, 1],
    io: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        fo[i] = a[i] + c[i] + qd.min(a[i], 2.5) + qd.max(b[i], c[i])
        io[i] = b[i] + a[i] + qd.max(a[i], 7) + qd.abs(a[i])


# ============================================================================= operators


@case(
    lambda r: [
        ints(r, np.int32, 100),
        ints(r, np.int32, 100, lo=1, hi=9) * r.choice(np.array([-1, 1], np.int32), 100),
        zeros(np.float32, 100),
        zeros(np.int32, 100),
        zeros(np.int32, 100),
    ],
    outputs=(2, 3, 4),
)
@qd.kernel
def int_div_mod(
    a: qd.types.NDArray[qd.i32, 1],
    b: qd.types.NDArray[qd.i32, 1],
    tdiv: qd.types.NDArray[qd.f32, 1],
    fdiv: qd.types.NDArray[qd.i32, 1],
    mod: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        tdiv[i] = a[i] / b[i]  # true division
        fdiv[i] = a[i] // b[i]  # floor (Python sign rule)
        mod[i] = a[i] % b[i]  # sign of the divisor


@case(
    lambda r: [
        ints(r, np.int64, 50, lo=2**38, hi=2**40),
        r.choice(np.array([1, 2, 4], np.int64), 50),
        zeros(np.int64, 50),
    ],
    outputs=(2,),
)
@qd.kernel
def i64_true_div_precision(
    a: qd.types.NDArray[qd.i64, 1], b: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]
):
    for i in range(a.shape[0]):
        # `/` on ints goes through default_fp (f32) even for i64 operands: the f32 rounding of
        # a[i] shows up exactly (b is a power of two, so the division itself is exact)
        out[i] = qd.cast(a[i] / b[i], qd.i64) - a[i] // b[i]


@case(
    lambda r: [
        (ints(r, np.float32, 100, lo=-40, hi=40) / 4).astype(np.float32),
        np.array([2.5, -2.5, 0.75, -0.75] * 25, np.float32),
        zeros(np.float32, 100),
        zeros(np.float32, 100),
    ],
    outputs=(2, 3),
)
@qd.kernel
def float_floordiv_mod(
    a: qd.types.NDArray[qd.f32, 1],
    b: qd.types.NDArray[qd.f32, 1],
    fdiv: qd.types.NDArray[qd.f32, 1],
    mod: qd.types.NDArray[qd.f32, 1],
):
    for i in range(a.shape[0]):
        fdiv[i] = a[i] // b[i]
        mod[i] = a[i] % b[i]


@case(
    lambda r: [
        f32(r, 100, lo=-50.0, hi=50.0),
        zeros(np.int32, 100),
        zeros(np.int32, 100),
        zeros(np.int32, 100),
        zeros(np.int64, 100),
    ],
    outputs=(1, 2, 3, 4),
)
@qd.kernel
def float_to_int(
    a: qd.types.NDArray[qd.f32, 1],
    o1: qd.types.NDArray[qd.i32, 1],
    o2: qd.types.NDArray[qd.i32, 1],
    o3: qd.types.NDArray[qd.i32, 1],
    o4: qd.types.NDArray[qd.i64, 1],
):
    for i in range(a.shape[0]):
        o1[i] = int(a[i])
        o2[i] = qd.cast(a[i], qd.i32)
        o3[i] = qd.i32(a[i] * 2.0)
        o4[i] = qd.cast(a[i] * 1000.0, qd.i64)


@case(
    lambda r: [
        ints(r, np.int32, 100, lo=-5, hi=5),
        ints(r, np.int32, 100, lo=-5, hi=5),
        zeros(np.int32, 100),
    ],
    outputs=(2,),
)
@qd.kernel
def comparisons(
    a: qd.types.NDArray[qd.i32, 1], b: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]
):
    for i in range(a.shape[0]):
        x = a[i]
        y = b[i]
        out[i] = (
            (x < y)
            + 2 * (x <= y)
            + 4 * (x == y)
            + 8 * (x != y)
            + 16 * (x > y)
            + 32 * (x >= y)
            + 64 * (-2 < x < y)
        )


@case(
    lambda r: [
        ints(r, np.int32, 100, lo=-3, hi=4),
        f32(r, 100),
        zeros(np.int32, 100),
        zeros(np.float32, 100),
    ],
    outputs=(2, 3),
)
@qd.kernel
def logic_and_ternary(
    a: qd.types.NDArray[qd.i32, 1],
    f: qd.types.NDArray[qd.f32, 1],
    io: qd.types.NDArray[qd.i32, 1],
    fo: qd.types.NDArray[qd.f32, 1],
):
    for i in range(a.shape[0]):
        x = a[i]
        c1 = x > 0 and f[i] > 0.0
        c2 = x < -1 or f[i] < -0.5
        c3 = not (x == 0)  # noqa: SIM201 - the kernel language's `not` on a comparison
        io[i] = c1 + 2 * c2 + 4 * c3 + 8 * (1 if x % 2 == 0 else 0)
        fo[i] = f[i] * 2.0 if c1 or not c3 else -f[i]


@case(lambda r: [f32(r, 100, lo=-3.0, hi=3.0), zeros(np.float32, 100)], outputs=(1,))
@qd.kernel
def local_keeps_first_type(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        x = 0  # i32 forever
        x = a[i] * 1.7  # truncated toward zero
        y = 1.0  # f32 forever
        y = a[i] > 1.0
        out[i] = x + y * 0.25


@case(
    lambda r: [
        ints(r, np.int32, 60),
        ints(r, np.int32, 60),
        ints(r, np.int32, 60, lo=0, hi=2**20),
        ints(r, np.int32, 60, lo=0, hi=2**20),
        ints(r, np.int32, 60, lo=0, hi=2**20),
        ints(r, np.int32, 60, lo=0, hi=2**20),
    ],
    outputs=(0, 1, 2, 3, 4),
    ndarray_args=(2,),
)
@qd.kernel
def elementwise_augassign(
    a: qd.types.NDArray[qd.i32, 1],
    b: qd.types.NDArray[qd.i32, 1],
    c: qd.types.NDArray[qd.i32, 1],
    d: qd.types.NDArray[qd.i32, 1],
    e: qd.types.NDArray[qd.i32, 1],
    src: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        a[i] += src[i] % 7
        b[i] -= 2 * i
        c[i] &= src[i]
        d[i] |= 0x30
        e[i] ^= src[i] + 0x55


@case(lambda r: [ints(r, np.int32, 5000, lo=0, hi=2**20), zeros(np.int32, 4)], outputs=(1,))
@qd.kernel
def shared_bitwise_augassign(a: qd.types.NDArray[qd.i32, 1], acc: qd.types.NDArray[qd.i32, 1]):
    acc[1] = -1
    for i in range(a.shape[0]):
        acc[0] |= a[i]
        acc[1] &= a[i] | 0x10000
        acc[2] ^= a[i]
        acc[3] -= a[i] % 3


@case(
    lambda r: [ints(r, np.int32, 200, lo=-10, hi=10), zeros(np.int32, 200), zeros(np.float32, 200)],
    outputs=(1, 2),
)
@qd.kernel
def integer_pow(
    a: qd.types.NDArray[qd.i32, 1], io: qd.types.NDArray[qd.i32, 1], fo: qd.types.NDArray[qd.f32, 1]
):
    for i in range(a.shape[0]):
        io[i] = a[i] ** 3 + a[i] ** 2
        fo[i] = 2.0 ** a[i] + (a[i] * 0.5) ** 2


# ============================================================================= control flow


@case(lambda r: [f32(r, 300, lo=-2.0, hi=2.0), zeros(np.int32, 300)], outputs=(1,))
@qd.kernel
def if_elif_else(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        v = a[i]
        if v < -1.0:
            out[i] = -2
        elif v < 0.0:
            out[i] = -1
        elif v == 0.0:
            out[i] = 0
        else:
            if v > 1.0:
                out[i] = 2
            else:
                out[i] = 1


@case(lambda r: [ints(r, np.int32, 200, lo=1, hi=500), zeros(np.int32, 200)], outputs=(1,))
@qd.kernel
def while_collatz(a: qd.types.NDArray[qd.i32, 1], steps: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        x = a[i]
        n = 0
        while x != 1:
            if x % 2 == 0:
                x = x // 2
            else:
                x = 3 * x + 1
            n += 1
            if n >= 1000:
                break
        steps[i] = n


@case(lambda r: [ints(r, np.int32, 120, lo=-20, hi=20), zeros(np.int32, 120)], outputs=(1,))
@qd.kernel
def nested_serial_loops(a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        s = 0
        for j in range(i + 1):
            for k in range(2):
                s += a[j] * (k + 1)
        out[i] = s


@case(lambda r: [f32(r, 40, 30), zeros(np.int32, 40), zeros(np.int32, 40)], outputs=(1, 2))
@qd.kernel
def inner_break_continue(
    b: qd.types.NDArray[qd.f32, 2],
    cnt: qd.types.NDArray[qd.i32, 1],
    stop: qd.types.NDArray[qd.i32, 1],
):
    for i in range(b.shape[0]):
        c = 0
        at = -1
        for j in range(b.shape[1]):
            if b[i, j] < -0.3:
                continue
            if b[i, j] > 0.9:
                at = j
                break
            c += 1
        cnt[i] = c
        stop[i] = at


@case(lambda r: [f32(r, 100), zeros(np.float32, 100)], outputs=(1,))
@qd.kernel
def toplevel_continue(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        out[i] = -5.0
        if a[i] < 0.0:
            continue
        out[i] = a[i] * 10.0


@case(lambda r: [f32(r, 500), 0.95, zeros(np.int32, 2)], outputs=(2,))
@qd.kernel
def serialize_break(a: qd.types.NDArray[qd.f32, 1], thr: qd.f32, out: qd.types.NDArray[qd.i32, 1]):
    out[0] = -1
    out[1] = 0
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        if a[i] > thr:
            out[0] = i
            break
        out[1] += 1


@case(lambda r: [exact_f32(r, 400), zeros(np.float32, 400)], outputs=(1,))
@qd.kernel
def serialize_prefix_sum(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    acc = 0.0
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        acc += a[i]
        out[i] = acc


@case(lambda r: [f32(r, 64), zeros(np.float32, 64), 1], outputs=(1,))
@qd.kernel
def loop_under_runtime_if(
    a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1], flag: qd.i32
):
    if flag > 0:
        for i in range(a.shape[0]):
            out[i] = a[i] + 1.0
    else:
        for i in range(a.shape[0]):
            out[i] = a[i] - 1.0


# ============================================================================= offload structure


@case(lambda r: [exact_f32(r, 256), zeros(np.float32, 256), 256], outputs=(0, 1))
@qd.kernel
def loops_with_serial_between(
    a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], n: qd.i32
):
    for i in range(n):
        a[i] = a[i] + 1.0
    s = a[0] * 2.0
    b[0] = s
    for j in range(n):
        b[j] = b[j] + s


@case(
    lambda r: [f32(r, 300), zeros(np.float32, 300), zeros(np.float32, 300), zeros(np.float32, 2)],
    outputs=(1, 2, 3),
    ndarray_args=(1, 3),
)
@qd.kernel
def pure_def_shared_by_loops(
    a: qd.types.NDArray[qd.f32, 1],
    b: qd.types.NDArray[qd.f32, 1],
    c: qd.types.NDArray[qd.f32, 1],
    d: qd.types.NDArray[qd.f32, 1],
):
    s = a[0] * 2.0
    t = s + a[1]
    for i in range(a.shape[0]):
        b[i] = a[i] * s
    u = t * 0.5
    for i in range(a.shape[0]):
        c[i] = a[i] + t - u
    d[0] = s
    d[1] = u


@case(lambda r: [exact_f32(r, 1000), zeros(np.float32, 1000), zeros(np.float32, 2)], outputs=(1, 2))
@qd.kernel
def local_reduction_then_serial(
    x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]
):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
    out[0] = total
    mean = total / x.shape[0]
    out[1] = mean
    for j in range(x.shape[0]):
        y[j] = x[j] - mean


@case(lambda r: [exact_f32(r, 2000)], returns=True)
@qd.kernel
def return_f32_sum(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * 0.5
    return total


@case(lambda r: [f32(r, 3000), 0.25], returns=True, ndarray_args=(0,))
@qd.kernel
def return_i32_count(x: qd.types.NDArray[qd.f32, 1], thr: qd.f32) -> qd.i32:
    n = 0
    for i in range(x.shape[0]):
        if x[i] > thr:
            n += 1
    return n * 2 + 1


@case(lambda r: [17.0, 5], returns=True)
@qd.kernel
def return_serial_only(a: qd.f32, b: qd.i32) -> qd.f32:
    r = a / b
    if b > 3:
        r += 100.0
    return r


@case(
    lambda r: [
        exact_f32(r, 4096),
        ints(r, np.int32, 4096),
        zeros(np.float32, 1),
        zeros(np.int32, 2),
    ],
    outputs=(2, 3),
    ndarray_args=(3,),
)
@qd.kernel
def global_accumulate(
    x: qd.types.NDArray[qd.f32, 1],
    k: qd.types.NDArray[qd.i32, 1],
    fout: qd.types.NDArray[qd.f32, 1],
    iout: qd.types.NDArray[qd.i32, 1],
):
    for i in range(x.shape[0]):
        fout[0] += x[i]
        iout[0] += k[i]
        iout[1] -= 1


@case(lambda r: [ints(r, np.int32, 5000, lo=0, hi=1000), zeros(np.int32, 8)], outputs=(1,))
@qd.kernel
def histogram(a: qd.types.NDArray[qd.i32, 1], bins: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        bins[a[i] % NUM_BINS] += 1


@case(lambda r: [f32(r, 16, 12), f32(r, 12, 10), zeros(np.float32, 16, 10)], outputs=(2,))
@qd.kernel
def matmul_nested(
    a: qd.types.NDArray[qd.f32, 2], b: qd.types.NDArray[qd.f32, 2], c: qd.types.NDArray[qd.f32, 2]
):
    for i, j in qd.ndrange(c.shape[0], c.shape[1]):
        s = 0.0
        for k in range(a.shape[1]):
            s += a[i, k] * b[k, j]
        c[i, j] = s


# ============================================================================= atomics


@case(
    lambda r: [
        1000,
        zeros(np.int32, 1000),
        zeros(np.int32, 1000),
        np.array([0, 1000, 0], np.int32),
    ],
    outputs=(1, 2, 3),
)
@qd.kernel
def atomic_counters_old_values(
    n: qd.i32,
    seen_add: qd.types.NDArray[qd.i32, 1],
    seen_sub: qd.types.NDArray[qd.i32, 1],
    ctr: qd.types.NDArray[qd.i32, 1],
):
    for i in range(n):
        old = qd.atomic_add(ctr[0], 1)  # old values are a permutation of 0..n-1
        seen_add[old] += 1
        old2 = qd.atomic_sub(ctr[1], 1)  # n..1
        seen_sub[old2 - 1] += 1
        ctr[2] += old


@case(
    lambda r: [
        ints(r, np.int32, 3000, lo=-(10**6), hi=10**6),
        f32(r, 3000),
        np.array([0, 0, -1, 0, 0], np.int32),
        np.array([0.0, 0.0], np.float32),
    ],
    outputs=(2, 3),
    ndarray_args=(2,),
)
@qd.kernel
def atomic_minmax_bitwise(
    a: qd.types.NDArray[qd.i32, 1],
    f: qd.types.NDArray[qd.f32, 1],
    acc: qd.types.NDArray[qd.i32, 1],
    facc: qd.types.NDArray[qd.f32, 1],
):
    for i in range(a.shape[0]):
        qd.atomic_min(acc[0], a[i])
        qd.atomic_max(acc[1], a[i])
        qd.atomic_and(acc[2], a[i] | 0x100)
        qd.atomic_or(acc[3], a[i] & 0x0F0F)
        qd.atomic_xor(acc[4], a[i])
        qd.atomic_min(facc[0], f[i])
        qd.atomic_max(facc[1], f[i])


@case(
    lambda r: [
        ints(r, np.int32, 200, lo=-50, hi=50),
        zeros(np.int32, 200),
        zeros(np.int32, 200),
        zeros(np.int32, 3),
    ],
    outputs=(1, 2, 3),
)
@qd.kernel
def atomic_old_values_serial(
    a: qd.types.NDArray[qd.i32, 1],
    olds: qd.types.NDArray[qd.i32, 1],
    oldm: qd.types.NDArray[qd.i32, 1],
    acc: qd.types.NDArray[qd.i32, 1],
):
    acc[1] = -1000
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        olds[i] = qd.atomic_add(acc[0], a[i])
        oldm[i] = qd.atomic_max(acc[1], a[i]) + qd.atomic_xor(acc[2], a[i])


# ============================================================================= math


@case(
    lambda r: [
        f32(r, 256, lo=0.1, hi=3.0),
        f32(r, 256, lo=-2.0, hi=2.0),
        zeros(np.float32, 256, 15),
    ],
    outputs=(2,),
)
@qd.kernel
def math_f32(
    p: qd.types.NDArray[qd.f32, 1], s: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]
):
    for i in range(p.shape[0]):
        x = p[i]
        y = s[i]
        out[i, 0] = qd.sqrt(x)
        out[i, 1] = qd.sin(y)
        out[i, 2] = qd.cos(y)
        out[i, 3] = qd.tan(y * 0.5)
        out[i, 4] = qd.tanh(y)
        out[i, 5] = qd.exp(y)
        out[i, 6] = qd.log(x)
        out[i, 7] = qd.floor(y * 3.0)
        out[i, 8] = qd.ceil(y * 3.0)
        out[i, 9] = qd.round(y * 3.0)
        out[i, 10] = qd.abs(y)
        out[i, 11] = qd.pow(x, 1.5)
        out[i, 12] = qd.min(x, y)
        out[i, 13] = qd.max(x, y)
        out[i, 14] = qd.atan2(y, x)


@case(
    lambda r: [
        f64(r, 128, lo=0.1, hi=3.0),
        f64(r, 128, lo=-2.0, hi=2.0),
        zeros(np.float64, 128, 8),
    ],
    outputs=(2,),
)
@qd.kernel
def math_f64(
    p: qd.types.NDArray[qd.f64, 1], s: qd.types.NDArray[qd.f64, 1], out: qd.types.NDArray[qd.f64, 2]
):
    for i in range(p.shape[0]):
        out[i, 0] = qd.sqrt(p[i])
        out[i, 1] = qd.sin(s[i]) * qd.cos(s[i])
        out[i, 2] = qd.exp(s[i]) + qd.log(p[i])
        out[i, 3] = qd.atan2(s[i], p[i])
        out[i, 4] = qd.pow(p[i], s[i])
        out[i, 5] = qd.floor(s[i] * 4.0) + qd.ceil(s[i] * 4.0)
        out[i, 6] = qd.tanh(s[i]) + qd.tan(s[i] * 0.5)
        out[i, 7] = qd.abs(s[i]) + qd.max(p[i], s[i]) - qd.min(p[i], s[i])


@case(
    lambda r: [
        np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.49, -2.51, 0.0, 3.5], np.float32),
        zeros(np.float32, 10),
        zeros(np.int32, 10),
    ],
    outputs=(1, 2),
)
@qd.kernel
def round_halves(
    a: qd.types.NDArray[qd.f32, 1],
    out: qd.types.NDArray[qd.f32, 1],
    iout: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        out[i] = qd.round(a[i])
        iout[i] = qd.floor(a[i], qd.i32) * 10 + int(qd.ceil(a[i]))


@case(
    lambda r: [
        f32(r, 200, lo=0.1, hi=3.0),
        f32(r, 200, lo=-2.0, hi=2.0),
        zeros(np.float32, 200, 14),
    ],
    outputs=(2,),
)
@qd.kernel
def math_qd_math(
    p: qd.types.NDArray[qd.f32, 1], s: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]
):
    for i in range(p.shape[0]):
        x = p[i]
        y = s[i]
        out[i, 0] = qd.math.sqrt(x)
        out[i, 1] = qd.math.sin(y) + qd.math.cos(y)
        out[i, 2] = qd.math.tan(y * 0.5) + qd.math.tanh(y)
        out[i, 3] = qd.math.exp(y)
        out[i, 4] = qd.math.log(x)
        out[i, 5] = qd.math.floor(y * 3.0) + qd.math.ceil(y * 3.0) * 10.0
        out[i, 6] = qd.math.round(y * 3.0)
        out[i, 7] = qd.math.pow(x, 2.5)
        out[i, 8] = qd.math.min(x, y) + qd.math.max(x, y) * 10.0
        out[i, 9] = qd.math.atan2(y, x)
        out[i, 10] = qd.math.clamp(y, -0.5, 0.5)
        out[i, 11] = qd.math.sign(y) + qd.math.fract(y * 3.0)
        out[i, 12] = qd.math.log2(x)
        out[i, 13] = qd.math.mix(x, y, 0.25)


@case(lambda r: [ints(r, np.int32, 100, lo=0, hi=400), zeros(np.float32, 100)], outputs=(1,))
@qd.kernel
def math_on_ints(a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        out[i] = qd.sqrt(a[i]) + qd.floor(a[i] / 7) + qd.exp(0) + qd.sin(a[i] * 0.01)


# ======================================================================= funcs, static, globals


@case(lambda r: [f32(r, 300, lo=-2.0, hi=2.0), 0.75, zeros(np.float32, 300)], outputs=(2,))
@qd.kernel
def func_inline_nested(a: qd.types.NDArray[qd.f32, 1], c: qd.f32, out: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        out[i] = smooth_clamp(poly(a[i], c), -1.0, 2.5) + square(c)


@case(lambda r: [exact_f32(r, 50), zeros(np.float32, 50)], outputs=(1,), ndarray_args=(1,))
@qd.kernel
def func_with_array_and_loop(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    fill_ramp(out, 2.0)
    for i in range(a.shape[0]):
        add_at(out, i, a[i])


@case(lambda r: [f32(r, 100), zeros(np.float32, 100), zeros(np.float32, 100)], outputs=(1, 2))
@qd.kernel
def static_if(
    a: qd.types.NDArray[qd.f32, 1],
    out: qd.types.NDArray[qd.f32, 1],
    out2: qd.types.NDArray[qd.f32, 1],
):
    for i in range(a.shape[0]):
        if qd.static(USE_SQUARE):
            out[i] = a[i] * a[i]
        else:
            out[i] = a[i]
        if qd.static(not USE_SQUARE):
            out2[i] = -1.0
        else:
            out2[i] = a[i] + 1.0


@case(lambda r: [f32(r, 102), zeros(np.float32, 100)], outputs=(1,))
@qd.kernel
def static_range_unrolled(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(out.shape[0]):
        acc = 0.0
        for k in qd.static(range(3)):
            acc += COEFFS[k] * a[i + k]
        out[i] = acc


@case(lambda r: [f32(r, 64), zeros(np.float32, 3, 64)], outputs=(1,))
@qd.kernel
def static_range_of_toplevel_loops(
    a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]
):
    for k in qd.static(range(3)):
        for i in range(a.shape[0]):
            out[k, i] = a[i] * (k + 1) + COEFFS[k]


@case(lambda r: [f32(r, 100), zeros(np.float32, 100), zeros(np.int32, 100)], outputs=(1, 2))
@qd.kernel
def python_globals_baked(
    a: qd.types.NDArray[qd.f32, 1],
    out: qd.types.NDArray[qd.f32, 1],
    iout: qd.types.NDArray[qd.i32, 1],
):
    for i in range(a.shape[0]):
        out[i] = a[i] * SCALE + OFFSET
        iout[i] = i * OFFSET + NUM_BINS


# ============================================================================= boundary


@case(lambda r: [f32(r, 16), zeros(np.float32, 24)], outputs=(1,))
@qd.kernel
def boundary_clamp_1d(a: ClampF32, out: qd.types.NDArray[qd.f32, 1]):
    for i in range(out.shape[0]):
        out[i] = a[i - 2] + 10.0 * a[i + 3]


@case(lambda r: [f32(r, 5, 6), zeros(np.float32, 5, 6)], outputs=(1,), ndarray_args=(0,))
@qd.kernel
def boundary_clamp_2d(a: ClampF32x2, out: qd.types.NDArray[qd.f32, 2]):
    for i, j in qd.ndrange(out.shape[0], out.shape[1]):
        out[i, j] = a[i - 1, j + 1] + a[i + 1, j - 1] * 0.5


# ============================================================================= vectors and matrices
# Vectors and matrices are unrolled into scalar values; these cases check each construct against
# the reference (and, like every case, split against whole-kernel bit for bit).

Vec3 = qd.types.NDArray[qd.math.vec3, 1]
Mat3 = qd.types.NDArray[qd.math.mat3, 1]
Mat2 = qd.types.NDArray[qd.math.mat2, 1]
IVec3 = qd.types.NDArray[qd.types.vector(3, qd.i32), 1]
F32x1 = qd.types.NDArray[qd.f32, 1]
GRAVITY = qd.Vector([0.0, -9.8, 0.0])


@qd.func
def reflect_y(v: qd.math.vec3) -> qd.math.vec3:
    w = v
    w.y = -w.y
    return w


@qd.func
def lerp3(a, b, t):
    return a + (b - a) * t


@case(
    lambda r: [f32(r, 200, 3), f32(r, 200, 3), zeros(np.float32, 200), 0.01],
    outputs=(0, 2),
)
@qd.kernel
def vec_particles(p: Vec3, v: Vec3, d: F32x1, dt: qd.f32):
    for i in p:
        p[i] += v[i] * dt
        d[i] = p[i].norm()


@case(
    lambda r: [f32(r, 64, 3), f32(r, 64, 3), zeros(np.float32, 64, 3), zeros(np.float32, 64, 4)],
    outputs=(2, 3),
    ndarray_args=(0, 2),
    elements=((0, 1), (2, 1)),
)
@qd.kernel
def vec_products(
    a: Vec3, b: qd.types.NDArray[qd.f32, 2], c: Vec3, out: qd.types.NDArray[qd.math.vec4, 1]
):
    for i in a:
        x = a[i]
        y = qd.Vector([b[i, 0], b[i, 1], b[i, 2]])
        c[i] = x.cross(y) + x.normalized() * 0.5
        out[i] = qd.math.vec4(x.dot(y), (x - y).norm_sqr(), x.sum(), x.max() - y.min())


@case(
    lambda r: [
        f32(r, 40, 3, 3),
        f32(r, 40, 3),
        zeros(np.float32, 40, 3, 3),
        zeros(np.float32, 40, 3),
    ],
    outputs=(2, 3),
)
@qd.kernel
def mat_products(m: Mat3, v: Vec3, mm: Mat3, mv: Vec3):
    for i in m:
        a = m[i]
        mm[i] = a @ a.transpose() + 2.0 * qd.Matrix.identity(qd.f32, 3)
        mv[i] = a @ v[i] - v[i] @ a


@case(
    lambda r: [
        f32(r, 30, 3, 3, lo=0.5, hi=2.0),
        zeros(np.float32, 30, 3, 3),
        zeros(np.float32, 30, 2),
    ],
    outputs=(1, 2),
)
@qd.kernel
def mat_inverse_det(m: Mat3, inv: Mat3, out: qd.types.NDArray[qd.math.vec2, 1]):
    for i in m:
        a = m[i] + 3.0 * qd.Matrix.identity(qd.f32, 3)
        inv[i] = a.inverse()
        out[i] = qd.Vector([a.determinant(), a.trace()])


@case(
    lambda r: [
        f32(r, 30, 2, 2, lo=0.5, hi=2.0),
        zeros(np.float32, 30, 2, 2),
        zeros(np.float32, 30, 4, 4),
    ],
    outputs=(1, 2),
)
@qd.kernel
def mat_inverse_2_and_4(m: Mat2, inv: Mat2, big: qd.types.NDArray[qd.math.mat4, 1]):
    for i in m:
        a = m[i] + qd.Matrix.identity(qd.f32, 2)
        inv[i] = a.inverse()
        b = qd.math.mat4(1.0)
        b[0, 0] = a[0, 0] + 4.0
        b[1, 1] = a[1, 1] + 5.0
        b[2, 3] = a[0, 1]
        b[3, 2] = -a[1, 0]
        big[i] = b.inverse() * b.determinant()


@case(lambda r: [f32(r, 50, 3), zeros(np.float32, 50, 3), zeros(np.float32, 50, 2)], outputs=(1, 2))
@qd.kernel
def vec_swizzles(a: Vec3, b: Vec3, c: qd.types.NDArray[qd.math.vec2, 1]):
    for i in a:
        v = a[i]
        v.zx = v.xz
        v.y += 1.0
        v[2] *= 2.0
        b[i] = v.zyx
        c[i] = v.xy + a[i].yz


@case(
    lambda r: [ints(r, np.int32, 60, 3, lo=0, hi=3), zeros(np.int32, 60, 3), zeros(np.int32, 60)],
    outputs=(1, 2),
)
@qd.kernel
def vec_dynamic_index(idx: IVec3, out: IVec3, pick: qd.types.NDArray[qd.i32, 1]):
    for i in idx:
        v = qd.Vector([10, 20, 30])
        for j in range(3):
            v[idx[i][j]] += j + 1
        out[i] = v
        m = qd.Matrix([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
        pick[i] = m[idx[i][0], idx[i][1]] + v[idx[i][2]]


@case(lambda r: [f32(r, 40, 3), zeros(np.float32, 40, 3), zeros(np.float32, 40, 3)], outputs=(1, 2))
@qd.kernel
def vec_funcs(a: Vec3, b: Vec3, c: Vec3):
    for i in a:
        b[i] = reflect_y(a[i]) * 2.0
        c[i] = lerp3(a[i], GRAVITY, 0.25)


@case(lambda r: [f32(r, 40, 3), zeros(np.float32, 40, 3), zeros(np.int32, 40, 3)], outputs=(1, 2))
@qd.kernel
def vec_elementwise_math(a: Vec3, b: Vec3, c: IVec3):
    for i in a:
        x = a[i] * 3.0
        b[i] = (
            qd.sqrt(qd.abs(x))
            + qd.max(x, 0.5)
            - qd.min(x, qd.Vector([0.1, 0.2, 0.3]))
            + qd.floor(x)
        )
        b[i] += qd.select(x > 0.0, x, -x) + qd.math.clamp(x, -1.0, 1.0) + qd.math.mix(x, a[i], 0.5)
        c[i] = qd.cast(x, qd.i32) + (x > 0.0) + qd.Vector([1, 2, 3]) * 2 // 3


@case(
    lambda r: [
        ints(r, np.int32, 50, 3, lo=-50, hi=50),
        zeros(np.int32, 50, 3),
        zeros(np.int32, 50),
    ],
    outputs=(1, 2),
)
@qd.kernel
def ivec_ops(a: IVec3, b: IVec3, c: qd.types.NDArray[qd.i32, 1]):
    for i in a:
        x = a[i]
        b[i] = (x & 7) | (x >> 1) ^ (x % 5) + -x
        c[i] = qd.select((x > 0).all(), 1, 0) + qd.select((x < 0).any(), 10, 0) + x.dot(x) % 97


@case(
    lambda r: [ints(r, np.int32, 64, lo=0, hi=8), zeros(np.int32, 8, 3), zeros(np.float32, 8, 2)],
    outputs=(1, 2),
)
@qd.kernel
def vec_atomics(
    k: qd.types.NDArray[qd.i32, 1], acc: IVec3, facc: qd.types.NDArray[qd.math.vec2, 1]
):
    for i in k:
        acc[k[i]] += qd.Vector([1, i, 2 * i])
        qd.atomic_add(facc[k[i]], qd.Vector([1.0, 0.5]))
        acc[k[i]][2] -= 1


@case(lambda r: [exact_f32(r, 100, 3), zeros(np.float32, 3), zeros(np.float32, 3)], outputs=(1, 2))
@qd.kernel
def vec_reduction_and_carried(
    a: Vec3, total: qd.types.NDArray[qd.f32, 1], last: qd.types.NDArray[qd.f32, 1]
):
    s = qd.Vector([0.0, 0.0, 0.0])
    for i in a:
        s += a[i]
    w = qd.Vector([0.0, 0.0, 0.0])
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        w = w * 0.5 + a[i]
    for k in range(3):
        total[k] = s[k]
        last[k] = w[k]


@case(lambda r: [2.5, np.array([1.0, 2.0, 3.0], np.float32)], returns=True)
@qd.kernel
def vec_param_return(s: qd.f32, v: qd.math.vec3) -> qd.math.vec3:
    return v * s + qd.math.vec3(1.0)


@case(lambda r: [np.array([[1, 2], [3, 4], [5, 6]], np.int32), 3], returns=True)
@qd.kernel
def mat_param_return(m: qd.types.matrix(3, 2, qd.i32), k: qd.i32) -> qd.types.matrix(2, 3, qd.i32):
    res = m
    for i in qd.static(range(3)):
        res[i, 1] += k
    return res.transpose()


@case(lambda r: [zeros(np.int32, 3, 4)], outputs=(0,))
@qd.kernel
def mat_slices(out: qd.types.NDArray[qd.i32, 2]):
    m = qd.Matrix([[r * 4 + c for c in range(4)] for r in range(3)])
    m[1, 1:3] = qd.Vector([-1, -2])
    m[:, 0] += qd.Vector([100, 200, 300])
    row = m[2, :]
    col = m[:, 3]
    sub = m[1:, ::2]
    for c in qd.static(range(4)):
        out[0, c] = row[c]
    for r in qd.static(range(3)):
        out[1, r] = col[r]
    for r, c in qd.static(qd.ndrange(2, 2)):
        out[2, r * 2 + c] = sub[r, c]


@case(
    lambda r: [f32(r, 16, 3, 3), zeros(np.float32, 16, 3, 3), zeros(np.float32, 16, 3)],
    outputs=(1, 2),
)
@qd.kernel
def mat_builders(m: Mat3, a: Mat3, v: Vec3):
    for i in m:
        x = m[i]
        r = qd.Matrix.rows([x[0, :], x[2, :], x[1, :]])
        c = qd.Matrix.cols([x[:, 0], x[:, 1], x[:, 2]])
        a[i] = r + c + qd.Matrix.diag(3, 0.5) + x[0, :].outer_product(x[:, 1])
        v[i] = (
            qd.Vector.unit(3, 1, qd.f32)
            + qd.Vector.one(qd.f32, 3) * x.sum()
            + qd.Vector.zero(qd.f32, 3)
        )


@case(
    lambda r: [f32(r, 32, 2), zeros(np.float32, 32, 2, 2), zeros(np.float32, 32, 3)], outputs=(1, 2)
)
@qd.kernel
def qd_math_vectors(a: qd.types.NDArray[qd.math.vec2, 1], rot: Mat2, out: Vec3):
    for i in a:
        ang = qd.math.radians(a[i].x * 90.0)
        rot[i] = qd.math.rotation2d(ang) @ qd.math.mat2([[1.0, a[i].y], [0.0, 1.0]])
        n = qd.math.normalize(qd.math.vec3(a[i], 1.0))
        out[i] = qd.math.reflect(n, qd.math.vec3(0.0, 1.0, 0.0)) + qd.math.cross(
            n, qd.math.vec3(1.0, 0.0, 0.0)
        )
        out[i] += qd.math.vec3(qd.math.length(n), qd.math.distance(n, out[i]), qd.math.vdir(ang).x)


@case(lambda r: [zeros(np.int32, 5, 3)], outputs=(0,), ndarray_args=(0,), elements=((0, 1),))
@qd.kernel
def vec_grouped_and_static(a: IVec3):
    for I in qd.grouped(a):
        v = qd.Vector([I[0], I[0] * 2, 7])
        for k in qd.static(range(3)):
            v[k] += k
        a[I] = v
    a[0] = qd.Vector([len(a[0]), qd.Vector([1, 2]).n, qd.Matrix([[1, 2, 3], [4, 5, 6]]).m])


@case(
    lambda r: [f32(r, 24, 3, 3), zeros(np.float32, 24, 3, 3), zeros(np.float32, 24, 3, 3)],
    outputs=(1, 2),
)
@qd.kernel
def mat_polar_decompose(m: Mat3, u: Mat3, p: Mat3):
    for i in m:
        a = m[i] + qd.Matrix.identity(qd.f32, 3)
        R, P = qd.polar_decompose(a)
        u[i] = R @ P
        p[i] = R @ R.transpose()


@case(
    lambda r: [f32(r, 24, 2, 2), zeros(np.float32, 24, 2, 2), zeros(np.float32, 24, 2)],
    outputs=(1, 2),
)
@qd.kernel
def mat_svd_and_sym_eig_2d(m: Mat2, rec: Mat2, ev: qd.types.NDArray[qd.math.vec2, 1]):
    for i in m:
        U, S, V = qd.svd(m[i])
        rec[i] = U @ S @ V.transpose()
        w, _ = qd.sym_eig(m[i] + m[i].transpose())
        ev[i] = w


@case(
    lambda r: [
        ints(r, np.int32, 40, 3, lo=-2, hi=3),
        zeros(np.int32, 40, 3),
        zeros(np.float32, 40, 3),
    ],
    outputs=(1, 2),
)
@qd.kernel
def vec_logic_and_ternary(a: IVec3, b: IVec3, c: Vec3):
    for i in a:
        x = a[i]
        y = qd.Vector([1, 0, 2])
        b[i] = (x and y) + (x or y) * 2 + (not x) * 4 + qd.min(*x, *y)
        c[i] = x * 0.5 if x.sum() > 0 else qd.math.vec3(-1.0, 0.0, 1.0)
