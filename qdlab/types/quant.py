"""`qd.types.quant`: quantised types, which qdlab does not support; each constructor says so."""

from __future__ import annotations

from ..core.errors import QdRuntimeError


def _refuse(name: str) -> QdRuntimeError:
    return QdRuntimeError(
        f"qd.types.quant.{name}(...): quantised types are not supported in qdlab (fields hold "
        "plain dtypes such as qd.i32 or qd.f32)."
    )


def int(bits: object = None, signed: object = True, compute: object = None) -> object:
    raise _refuse("int")


def fixed(
    bits: object = None, signed: object = True, max_value: object = 1.0, **kw: object
) -> object:
    raise _refuse("fixed")


def float(exp: object = None, frac: object = None, signed: object = True, **kw: object) -> object:
    raise _refuse("float")
