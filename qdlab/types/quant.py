"""`qd.types.quant`: quantised types, for fields packed into the bits of physical words
(`qd.BitpackedFields`, `qd.root.quant_array(...)`); see docs/lang/quant.md."""

from __future__ import annotations

import builtins

from ..core import matrix
from ..core import quant as q
from ..core.errors import QdValueError
from ..core.types import DType, i32


def _compute(compute: object, default: DType) -> DType:
    if compute is None:
        return default
    t = matrix.resolve_dtype(compute)
    if not isinstance(t, DType):
        raise QdValueError(f"compute must be a dtype such as qd.i32 or qd.f32, not {compute!r}.")
    return t


def _bits(bits: object, what: str, top: builtins.int = 64) -> builtins.int:
    if not isinstance(bits, builtins.int) or isinstance(bits, bool) or not 1 <= bits <= top:
        raise QdValueError(f"{what} must be an integer from 1 to {top}, not {bits!r}.")
    return bits


def int(bits: object, signed: bool = True, compute: object = None) -> q.QuantInt:
    """An integer of `bits` bits (signed or not), computed in `compute` (default: the default
    signed or unsigned integer type)."""
    default = matrix.DEFAULTS["ip"] if signed else matrix.DEFAULTS["up"]
    return q.QuantInt(_bits(bits, "bits"), builtins.bool(signed), _compute(compute, default))


def fixed(
    bits: object,
    signed: bool = True,
    max_value: builtins.float = 1.0,
    compute: object = None,
    scale: builtins.float | None = None,
) -> q.QuantFixed:
    """A fixed-point number `digits * scale` with `bits` bits of digits; without `scale`, the one
    that makes `max_value` the largest value (`max_value / 2 ** (bits - signed)`)."""
    n = _bits(bits, "bits", 32)
    digits = q.QuantInt(n, builtins.bool(signed), i32)
    step = max_value / 2 ** (n - 1) if signed else max_value / 2**n
    given = step if scale is None else scale
    return q.QuantFixed(digits, _compute(compute, matrix.DEFAULTS["fp"]), builtins.float(given))


def float(exp: object, frac: object, signed: bool = True, compute: object = None) -> q.QuantFloat:
    """A floating-point number with an `exp`-bit exponent and `frac` bits of digits (the sign
    among them when `signed`), computed in f32."""
    e = _bits(exp, "exp", 8)
    digits = q.QuantInt(_bits(frac, "frac", 24), builtins.bool(signed), i32)
    if digits.bits - builtins.int(signed) > 23:
        raise QdValueError("a quantised float has at most 23 bits of digits besides the sign.")
    ct = _compute(compute, matrix.DEFAULTS["fp"])
    if ct.name != "f32":
        raise QdValueError("a quantised float is computed in f32.")
    return q.QuantFloat(digits, q.QuantInt(e, False, i32), ct)


__all__ = ["fixed", "float", "int"]
