"""`qd.math`: the same built-ins as `qd.*` math, under the namespace Quadrants code uses."""

from .lang import BUILTINS

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
