"""`qd.math`: the same built-ins as `qd.*` math, under the namespace Quadrants code uses, and the
integer bit functions Quadrants keeps only here."""

from .compiler.types import i32, u32
from .lang import BUILTINS, Builtin, Func

loop_config = BUILTINS["loop_config"]

globals().update(
    {
        name: BUILTINS[name]
        for name in [
            "sqrt",
            "sin",
            "cos",
            "tan",
            "tanh",
            "exp",
            "log",
            "floor",
            "ceil",
            "round",
            "abs",
            "pow",
            "min",
            "max",
            "atan2",
            "asin",
            "acos",
            "rsqrt",
            "select",
            "clamp",
            "sign",
            "fract",
            "log2",
            "exp2",
            "isnan",
            "isinf",
            "mix",
        ]
    }
)
pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")

popcnt, clz, ffs = (Builtin(n) for n in ("popcnt", "clz", "ffs"))
"""Bit counts of an integer, each an i32: set bits, leading zeros, 1 + the lowest set bit (0 for
0)."""


def _fns(mask: u32, base: u32, offset: i32) -> u32:
    """The position of the |offset|-th set bit of `mask`, searching up from bit `base` (offset > 0)
    or down from it (offset < 0); for offset 0, `base` itself if that bit is set; 0xFFFFFFFF when
    there is no such bit (CUDA's `fns`)."""
    found = u32(0xFFFFFFFF)
    if offset == 0:
        if base < 32 and (mask >> base) & 1:
            found = base
    else:
        left = offset if offset > 0 else -offset
        loop_config(serialize=True)
        for k in range(32):
            pos = k if offset > 0 else 31 - k
            if left > 0 and (pos >= base if offset > 0 else pos <= base) and (mask >> pos) & 1:
                left -= 1
                if left == 0:
                    found = pos
    return found


fns = Func(_fns)
