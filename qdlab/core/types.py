"""Kernel value types: scalar dtypes, array parameter types, and the promotion rules.

Types are frozen so they can key caches and appear in canonical IR text.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    """A scalar type, printed by its short name (`f32`, `i32`, `u1`)."""

    name: str
    """Short name, as in `qd.f32`."""
    kind: str
    """`"i"` signed integer, `"u"` unsigned integer (and `u1`), `"f"` float."""
    bits: int
    """Width in bits."""

    def __repr__(self) -> str:
        return self.name

    def __str__(self) -> str:
        return self.name

    def to_string(self) -> str:
        """The short name, as Quadrants' `qd.f32.to_string()` gives it."""
        return self.name

    def __hash__(self) -> int:  # equal types have equal names; a str keeps its hash (CSE keys)
        return hash(self.name)

    def __call__(self, value: object) -> object:
        raise TypeError(f"qd.{self.name}(...) casts a value and can only be used inside a kernel")

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_signed(self) -> bool:
        return self.kind == "i"

    @property
    def np(self) -> np.dtype:
        return np.dtype(bool) if self.name == "u1" else np.dtype(f"{self.kind}{self.bits // 8}")

    @property
    def nbytes(self) -> int:
        return max(1, self.bits // 8)


i8, i16, i32, i64 = (DType(f"i{b}", "i", b) for b in (8, 16, 32, 64))
u1 = DType("u1", "u", 1)
u8, u16, u32, u64 = (DType(f"u{b}", "u", b) for b in (8, 16, 32, 64))
f16, f32, f64 = (DType(f"f{b}", "f", b) for b in (16, 32, 64))
DTYPES = {t.name: t for t in (i8, i16, i32, i64, u1, u8, u16, u32, u64, f16, f32, f64)}
_FROM_NUMPY = {t.np: t for t in DTYPES.values()}


INT_OPS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "min": np.minimum,
    "max": np.maximum,
}
"""Integer binary ops as NumPy computes them on scalars or arrays of the op's own type (wrapping as
the generated code does): constant folding and the host side of quantised fields use them."""

SMALLEST_NORMAL = {32: float(np.finfo(np.float32).tiny), 64: float(np.finfo(np.float64).tiny)}
"""The smallest normal f32 and f64: kernels flush results below it to zero, as Quadrants does."""


def flush_subnormal(value: float, t: DType) -> float:
    """`value` of float type `t` as a kernel holds it: Quadrants runs kernels with the CPU's
    flush-to-zero and denormals-are-zero modes set, so a subnormal f32 or f64 (a constant, a
    folded result) is a zero of its sign. f16 keeps its subnormals."""
    tiny = SMALLEST_NORMAL.get(t.bits)
    if tiny is None or value == 0.0 or not math.isfinite(value):
        return value
    if t.bits == 32:  # rounded to f32 first: a value just below the smallest normal may round up
        with np.errstate(all="ignore"):
            value = float(np.float32(value))
    if value != 0.0 and abs(value) < tiny:
        return math.copysign(0.0, value)
    return value


def from_numpy(dtype: np.dtype) -> DType | None:
    return _FROM_NUMPY.get(np.dtype(dtype))


@dataclass(frozen=True)
class ArrayType:
    """An ndarray kernel parameter: element type, rank, and how it is indexed."""

    dtype: DType
    """Element type."""
    ndim: int
    """Number of axes."""
    needs_grad: bool = False
    """Whether the array carries a `.grad` buffer."""
    boundary: str = "unsafe"
    """`"unsafe"` (no index checks unless debug) or `"clamp"` (every index clamped into range)."""
    element: tuple[int, ...] = ()
    """The static shape of each element: `(3,)` for an ndarray of vec3, `(2, 2)` of mat2, `()` of
    scalars. Memory holds the outer shape followed by the element shape (an ndarray of vec3 of shape
    (n,) is an (n, 3) array), so an element's entries are indexed by trailing constant indices."""
    layout: tuple[int, ...] | None = None
    """`qd.tensor(..., layout=(1, 0))`: the canonical axis each axis of memory holds, outermost
    first (None: the identity). A kernel indexes canonically; its indices are permuted into
    memory's order."""
    soa: bool = False
    """A field of vectors or matrices stored entry by entry (`layout=qd.Layout.SOA`): memory holds
    the element's shape first, then the outer one; the indices a kernel gives are the same."""
    extents: tuple[int, ...] | None = None
    """A field's outer extents in memory's order, which are static: its address arithmetic takes
    them as constants (None: an ndarray's, read from the launch words)."""

    @property
    def rank(self) -> int:
        """Indices a scalar access takes: the outer axes, then the element's."""
        return self.ndim + len(self.element)

    def __str__(self) -> str:
        extra = "".join(
            [", clamp" if self.boundary == "clamp" else "", ", grad" if self.needs_grad else ""]
        )
        if self.layout is not None:
            extra += ", layout=" + "x".join(map(str, self.layout))
        if self.soa:
            extra += ", soa"
        if self.extents is not None:
            extra += ", extents=" + "x".join(map(str, self.extents))
        return f"ndarray<{shape_text(self.dtype, self.element)}, {self.ndim}{extra}>"


@dataclass(frozen=True)
class LocalType:
    """The type of a local variable's storage (the result of `alloca`)."""

    dtype: DType
    """Type of the value the local holds."""

    def __str__(self) -> str:
        return f"local<{self.dtype}>"


@dataclass(frozen=True)
class TensorType:
    """A vector or matrix kernel parameter passed by value (`qd.types.vector(3, qd.f32)`): one
    argument word per entry, row-major. Inside the kernel it is a vector of scalar values."""

    dtype: DType
    """Type of every entry."""
    shape: tuple[int, ...]
    """`(n,)` for a vector, `(n, m)` for a matrix."""

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __str__(self) -> str:
        return shape_text(self.dtype, self.shape)


def shape_text(dtype: DType, shape: tuple[int, ...]) -> str:
    """`f32`, `f32[3]` or `f32[2x3]`: how the printer writes an element or tensor type."""
    return f"{dtype}[{'x'.join(map(str, shape))}]" if shape else str(dtype)


Type = DType | ArrayType | LocalType | TensorType


def promote(a: DType, b: DType) -> DType:
    """Binary-operation result type: float beats int, wider beats narrower, unsigned beats
    signed."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a == u1:
        return b
    if b == u1:
        return a
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == "u" else b
