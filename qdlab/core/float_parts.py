"""`qd.frexp(x)`: a float's mantissa and exponent, written in the kernel language itself (the
frontend inlines it where a kernel calls it, like any `@qd.func`).

`m, e = qd.frexp(x)` gives `x == m * 2**e` with `0.5 <= |m| < 1` (m of x's type, e an i32), as
NumPy's `np.frexp`: zero, infinities and NaN come back as they are with exponent 0, and a subnormal
is scaled into the normal range first, so its exponent is exact. The parts are read off the bits
(`qd.bit_cast`), so no rounding enters.
"""

from collections.abc import Callable

from .language import BUILTINS, Func, Template, static
from .types import i32

bit_cast, cast = BUILTINS["bit_cast"], BUILTINS["cast"]
isinf, isnan = BUILTINS["isinf"], BUILTINS["isnan"]
abs_ = BUILTINS["abs"]

LAYOUT = {32: (23, 127, 1.1754943508222875e-38, 32), 64: (52, 1023, 2.2250738585072014e-308, 64)}
"""Per float width: (mantissa bits, exponent bias, smallest normal, the power of two a subnormal is
scaled by)."""


def _func(fn: Callable) -> Func:
    return Func(fn)


@_func
def frexp(x, dt: Template, bits: Template, it: Template):
    layout = static(LAYOUT[bits])
    mbits = static(layout[0])
    bias = static(layout[1])
    m = x
    e = 0
    if x != 0.0 and not isnan(x) and not isinf(x):
        y = x
        shift = 0
        if abs_(x) < static(layout[2]):  # subnormal: scale into the normal range
            y = x * static(2.0 ** layout[3])
            shift = static(layout[3])
        b = bit_cast(y, it)
        one = cast(1, it)
        mask = (one << static(bits - 1 - mbits)) - one
        e = cast((b >> mbits) & mask, i32) - static(bias - 1) - shift
        b = (b & ~(mask << mbits)) | (cast(bias - 1, it) << mbits)
        m = bit_cast(b, dt)
    return m, e
