"""Quantised types (`qd.types.quant.int/fixed/float`) and how their values are packed into the
bits of a physical word, as Quadrants packs them.

A quantised field's elements live in the bits of unsigned integer words (u8 ... u64): the members
placed together by one `qd.BitpackedFields` share one word per cell, one after another from bit 0
(a float's exponent first, then its digits; floats placed with `shared_exponent=True` share one
exponent); a `quant_array` level holds its elements in one word, element k at bit k * bits.

The conversions are written once here, against `Ops`, a small set of typed integer and float
operations: the compiler emits them as qdlab IR (`compiler/frontend/quant.py`), and host
access (`x[i]` outside kernels) runs them on NumPy arrays (`NpOps`, every element at once), so
both give the same bits.
They follow the reference's LLVM code step by step (`codegen_llvm_quant.cpp`): integers are
truncated to their bits on store and sign- or zero-extended on load; fixed-point stores round
half away from zero (`v / scale`, plus 0.5 with the value's sign, truncated); floats round the f32
digits to nearest by adding half of the dropped part, flush to zero when the exponent does not fit
below, and a shared exponent is the largest of its members' exponents.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard

import numpy as np

from .fields import FieldBase
from .types import INT_OPS, DType, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64

SIGNED = {8: i8, 16: i16, 32: i32, 64: i64}
UNSIGNED = {8: u8, 16: u16, 32: u32, 64: u64}


@dataclass(frozen=True)
class QuantInt:
    """`qd.types.quant.int(bits, signed, compute)`: an integer of `bits` bits, computed in
    `compute`."""

    bits: int
    signed: bool
    compute: DType

    @property
    def digits(self) -> QuantInt:
        return self

    def __str__(self) -> str:
        return f"q{'i' if self.signed else 'u'}{self.bits}"


class _Digits:
    """A quantised type stored as its `digits` integer: its bits and signedness are the digits'."""

    digits: QuantInt

    @property
    def bits(self) -> int:
        return self.digits.bits

    @property
    def signed(self) -> bool:
        return self.digits.signed


@dataclass(frozen=True)
class QuantFixed(_Digits):
    """`qd.types.quant.fixed(...)`: `digits * scale`, computed in `compute` (a float type)."""

    digits: QuantInt
    compute: DType
    scale: float

    def __str__(self) -> str:
        return f"qfxt{self.digits}s{self.scale!r}"


@dataclass(frozen=True)
class QuantFloat(_Digits):
    """`qd.types.quant.float(exp, frac, signed)`: a float with an `exp`-bit exponent (its own, or
    shared with other floats of its word) and `frac` bits of digits (the sign among them)."""

    digits: QuantInt
    exponent: QuantInt
    compute: DType

    @property
    def digit_bits(self) -> int:
        return self.digits.bits - int(self.digits.signed)

    @property
    def conversion_offset(self) -> int:
        """What is added to a stored exponent to make f32's (f32's bias less this type's)."""
        return 127 - (1 << (self.exponent.bits - 1)) + 1

    def __str__(self) -> str:
        return f"qflt{self.digits}e{self.exponent.bits}"


QuantType = QuantInt | QuantFixed | QuantFloat


def is_quant(t: object) -> TypeGuard[QuantType]:
    return isinstance(t, (QuantInt, QuantFixed, QuantFloat))


# The layout of a word ----------------------------------------------------------------------------


@dataclass(eq=False)
class Member:
    """One member of a bit struct: a quantised value's digits, or a float's exponent."""

    qtype: QuantType
    offset: int
    exponent: int = -1
    """For a float's digits: the index of its exponent member."""
    users: list[int] = field(default_factory=list)
    """For an exponent: the floats using it (more than one: a shared exponent)."""


@dataclass(eq=False)
class BitStruct:
    """The members of one physical word (`qd.BitpackedFields`): their types and bit offsets."""

    physical: DType
    members: list[Member] = field(default_factory=list)
    used: int = 0

    def add(self, qtype: QuantType) -> int:
        k = len(self.members)
        self.members.append(Member(qtype, self.used))
        self.used += qtype.bits
        if self.used > self.physical.bits:
            raise ValueError(
                f"BitStructType overflows: {self.used} bits used out of {self.physical.bits}."
            )
        return k

    def text(self) -> str:
        return ",".join(f"{m.qtype}@{m.offset}e{m.exponent}" for m in self.members)


@dataclass(frozen=True, eq=False)
class Slot:
    """Where one scalar of a quantised field lives: member `member` of `struct` in the word at the
    element's index of `word` (a host field of physical words); or, for a `quant_array`
    (`struct` None), element bits of the word at the index divided by `array` along each axis."""

    word: FieldBase
    qtype: QuantType
    struct: BitStruct | None = None
    member: int = 0
    array: tuple[int, ...] = ()
    """A quant_array level's extent along each axis of the field (1 where it does not split)."""
    kept: tuple[bool, ...] = ()
    """For a quant_array: whether each axis of the field is an axis of its words (one the
    levels above the quant_array use)."""

    @property
    def physical(self) -> DType:
        return self.struct.physical if self.struct is not None else self.word.dtype

    def text(self) -> str:
        inner = self.struct.text() if self.struct is not None else f"array{self.array}"
        return f"{self.qtype}:{self.member}:{inner}"


# The conversions ---------------------------------------------------------------------------------

V = Any
"""A value of the operations (an IR value, a NumPy array)."""


class Ops(Protocol):
    def const(self, value: float, t: DType) -> V: ...
    def bin(self, op: str, a: V, b: V) -> V: ...
    def cast(self, a: V, t: DType) -> V: ...
    def bitcast(self, a: V, t: DType) -> V: ...
    def select(self, cond: V, a: V, b: V) -> V: ...
    def cmp(self, pred: str, a: V, b: V) -> V: ...
    def clz(self, a: V) -> V: ...
    def type_of(self, a: V) -> DType: ...


def _int(o: Ops, a: V, t: DType) -> V:
    """`a` as the integer type `t` (IntCast, by `a`'s own signedness)."""
    return a if o.type_of(a) == t else o.cast(a, t)


def _at(o: Ops, offset: int | V, t: DType, base: int = 0, sign: int = 1) -> V:
    """`base + sign * offset` as a `t` (an offset known while compiling, or a value)."""
    if isinstance(offset, int):
        return o.const(base + sign * offset, t)
    off = _int(o, offset, t)
    if sign < 0:
        return o.bin("sub", o.const(base, t), off)
    return off if base == 0 else o.bin("add", o.const(base, t), off)


def extract_int(o: Ops, word: V, offset: int | V, q: QuantInt) -> V:
    """The value of a `bits`-bit integer at `offset` of `word`, in q's compute type."""
    phys = o.type_of(word)
    n = phys.bits
    s = SIGNED[n] if q.signed else UNSIGNED[n]
    w = o.bitcast(word, s) if s != phys else word
    w = o.bin("shl", w, _at(o, offset, s, n - q.bits, -1))
    w = o.bin("shr", w, o.const(n - q.bits, s))
    return _int(o, w, q.compute)


def to_fixed(o: Ops, v: V, q: QuantFixed) -> V:
    """`int(v / scale + 0.5 * sign(v))`, in the digits' compute type (the reference's rounding)."""
    ct = q.compute
    x = v if o.type_of(v) == ct else o.cast(v, ct)
    inv = float(round_to(1.0 / q.scale, ct))
    scaled = o.bin("mul", x, o.const(inv, ct))
    ib = SIGNED[ct.bits]
    bits = o.bitcast(scaled, ib)
    sign = o.bin("and", bits, o.const(-(1 << (ct.bits - 1)), ib))
    half = o.bitcast(o.const(0.5, ct), ib)
    delta = o.bitcast(o.bin("or", sign, half), ct)
    scaled = o.bin("add", scaled, delta)
    return o.cast(scaled, q.digits.compute)


def from_fixed(o: Ops, digits: V, q: QuantFixed) -> V:
    """`float(digits) * scale`, in the compute type."""
    ct = q.compute
    return o.bin("mul", o.cast(digits, ct), o.const(float(round_to(q.scale, ct)), ct))


def decode_float(o: Ops, word: V, struct: BitStruct, k: int) -> V:
    """Member `k` (a float's digits) of `word` as an f32."""
    m = struct.members[k]
    q = m.qtype
    assert isinstance(q, QuantFloat)
    e = struct.members[m.exponent]
    shared = len(e.users) > 1
    in_digits = extract_int(o, word, m.offset, q.digits)
    in_exp = extract_int(o, word, e.offset, q.exponent)
    digits = o.bin("and", in_digits, o.const((1 << q.digits.bits) - 1, i32))
    exp_offset = o.const(q.conversion_offset, i32)
    zero = o.const(0, i32)
    if q.exponent.bits < 8:
        exp_offset = o.select(o.cmp("ne", in_exp, zero), exp_offset, zero)
    sign = None
    db = q.digit_bits
    if shared:
        if q.signed:
            sign = o.bin("and", digits, o.const(1 << db, i32))
            digits = o.bin("xor", digits, sign)
            sign = o.bin("shl", sign, o.const(31 - db, i32))
            digits = o.bin("shl", digits, o.const(1, i32))
        extra = o.bin("sub", o.const(31 - db, i32), o.clz(digits))
        exp_offset = o.bin("add", exp_offset, extra)
        if not q.signed:
            exp_offset = o.bin("add", exp_offset, o.const(1, i32))
        digits = o.bin("shl", digits, o.bin("sub", o.const(23 - db, i32), extra))
    else:
        digits = o.bin("shl", digits, o.const(23 - db, i32))
    fraction = o.bin("and", digits, o.const((1 << 23) - 1, i32))
    exp_val = o.bin("add", in_exp, exp_offset)
    bits = o.bin("or", o.bin("shl", exp_val, o.const(23, i32)), fraction)
    if shared:
        is_zero = o.bin(
            "or",
            o.cmp("eq", in_exp, zero),
            o.cmp("eq", in_digits, zero),
        )
        bits = o.select(is_zero, zero, bits)
    if q.signed:
        if sign is None:
            sign = o.bin("and", digits, o.const(1 << 23, i32))
            sign = o.bin("shl", sign, o.const(31 - 23, i32))
        bits = o.bin("or", bits, sign)
    return o.bitcast(bits, f32)


def decode(o: Ops, word: V, slot: Slot, offset: int | V | None = None) -> V:
    """The value of `slot` in `word`, in its compute type (`offset`: a quant_array element's)."""
    q = slot.qtype
    if isinstance(q, QuantFloat):
        assert slot.struct is not None
        return decode_float(o, word, slot.struct, slot.member)
    off = offset if offset is not None else _offset(slot)
    if isinstance(q, QuantFixed):
        return from_fixed(o, extract_int(o, word, off, q.digits), q)
    return extract_int(o, word, off, q)


def _offset(slot: Slot) -> int:
    return slot.struct.members[slot.member].offset if slot.struct is not None else 0


def _mask(bits: int, offset: int) -> int:
    return ((1 << bits) - 1) << offset


def _mask_at(o: Ops, bits: int, offset: int | V, phys: DType) -> V:
    if isinstance(offset, int):
        return o.const(wrap(_mask(bits, offset), phys), phys)
    return o.bin("shl", o.const(wrap((1 << bits) - 1, phys), phys), _at(o, offset, phys))


def _to_bits(o: Ops, v: V, q: QuantInt | QuantFixed, phys: DType, offset: int | V) -> V:
    """A quantised integer or fixed-point value's bits, at `offset` of a word."""
    if isinstance(q, QuantFixed):
        v = to_fixed(o, v, q)
        qi = q.digits
    else:
        qi = q
    ct = o.type_of(v)
    if qi.bits < ct.bits:
        v = o.bin("and", v, o.const(wrap((1 << qi.bits) - 1, ct), ct))
    v = _int(o, v, UNSIGNED[ct.bits]) if ct.bits > 1 else v
    v = _int(o, v, phys)
    return o.bin("shl", v, _at(o, offset, phys))


def encode(o: Ops, word: V, slot: Slot, value: V, offset: int | V | None = None) -> tuple[V, V]:
    """(the bits, the mask) a store of `value` to `slot` puts in its word: the word's bits under
    the mask are replaced (`word`, read before, gives the other floats sharing an exponent)."""
    q = slot.qtype
    phys = o.type_of(word)
    if slot.struct is None:
        assert not isinstance(q, QuantFloat)
        off = offset if offset is not None else 0
        return _to_bits(o, value, q, phys, off), _mask_at(o, q.bits, off, phys)
    s = slot.struct
    m = s.members[slot.member]
    if not isinstance(q, QuantFloat):
        return _to_bits(o, value, q, phys, m.offset), _mask_at(o, q.bits, m.offset, phys)
    e = s.members[m.exponent]
    if len(e.users) > 1:  # every shared exponent of the word is stored again, as there
        out, mask = None, 0
        for k, x in enumerate(s.members):
            if len(x.users) > 1:
                bits, part = _encode_shared(o, word, s, k, {slot.member: value})
                out = bits if out is None else o.bin("or", out, bits)
                mask |= part
        assert out is not None
        return out, o.const(wrap(mask, phys), phys)
    f = o.bitcast(value, i32)
    db = q.digit_bits
    if db < 23:
        f = o.bin("add", f, o.const(1 << (22 - db), i32))
    exp_bits = o.bin("and", o.bin("shr", f, o.const(23, i32)), o.const(255, i32))
    value_bits = o.bin("shr", f, o.const(23 - db, i32))
    digit_bits = o.bin("and", value_bits, o.const((1 << db) - 1, i32))
    if q.signed:
        sign = o.bin("and", f, o.const(-(1 << 31), i32))
        sign = o.bitcast(o.bin("shr", o.bitcast(sign, u32), o.const(31 - db, u32)), i32)
        digit_bits = o.bin("or", digit_bits, sign)
    zero = o.const(0, i32)
    exp_off = o.select(o.cmp("ne", exp_bits, zero), o.const(q.conversion_offset, i32), zero)
    exp_bits = o.bin("max", o.bin("sub", exp_bits, exp_off), zero)
    out = o.bin("shl", _int(o, o.bitcast(exp_bits, u32), phys), o.const(e.offset, phys))
    digits = o.select(o.cmp("ne", exp_bits, zero), digit_bits, zero)
    digits = o.bin("shl", _int(o, o.bitcast(digits, u32), phys), o.const(m.offset, phys))
    mask = _mask(q.exponent.bits, e.offset) | _mask(q.digits.bits, m.offset)
    return o.bin("or", out, digits), o.const(wrap(mask, phys), phys)


def _f32_exponent(o: Ops, f: V) -> V:
    bits = o.bitcast(f, u32)
    return o.bin("and", o.bin("shr", bits, o.const(23, u32)), o.const(255, u32))


def _encode_shared(o: Ops, word: V, s: BitStruct, exp: int, given: dict[int, V]) -> tuple[V, int]:
    """The exponent `exp` shared by several floats and their digits, for a store of `given`
    (member -> value); the others keep their values, read from `word`."""
    phys = o.type_of(word)
    users = s.members[exp].users
    floats = [given[u] if u in given else decode_float(o, word, s, u) for u in users]
    max_exp = None
    for f in floats:
        e = _f32_exponent(o, f)
        max_exp = e if max_exp is None else o.bin("max", max_exp, e)
    assert max_exp is not None
    first = s.members[users[0]].qtype
    assert isinstance(first, QuantFloat)
    zero_u = o.const(0, u32)
    max_i = o.bitcast(max_exp, i32)
    zero = o.const(0, i32)
    offset = o.select(o.cmp("ne", max_i, zero), o.const(first.conversion_offset, i32), zero)
    stored = o.bin("max", o.bin("sub", max_i, offset), zero)
    e = s.members[exp]
    out = o.bin("shl", _int(o, o.bitcast(stored, u32), phys), o.const(e.offset, phys))
    mask = _mask(e.qtype.bits, e.offset)
    for u, f in zip(users, floats):
        q = s.members[u].qtype
        assert isinstance(q, QuantFloat)
        fe = _f32_exponent(o, f)
        shift = o.bin("min", o.bin("sub", max_exp, fe), o.const(31, u32))
        fb = o.bitcast(f, u32)
        digits = o.bin("or", o.bin("and", fb, o.const((1 << 23) - 1, u32)), o.const(1 << 23, u32))
        implicit = o.select(o.cmp("ne", fe, zero_u), o.const(1 << 23, u32), zero_u)
        digits = o.bin("shr", o.bin("or", digits, implicit), shift)
        rsb = 24 - q.digit_bits
        digits = o.bin("add", digits, o.const(1 << (rsb - 1), u32))
        digits = o.bin("min", digits, o.const((1 << 24) - 1, u32))
        digits = o.bin("shr", digits, o.const(rsb, u32))
        if q.signed:
            sign = o.bin("and", fb, o.const(1 << 31, u32))
            digits = o.bin("or", digits, o.bin("shr", sign, o.const(31 - q.digit_bits, u32)))
        off = s.members[u].offset
        out = o.bin("or", out, o.bin("shl", _int(o, digits, phys), o.const(off, phys)))
        mask |= _mask(q.digits.bits, off)
    return out, mask


def add_bits(o: Ops, value: V, slot: Slot, offset: int | V | None = None) -> tuple[V, V, V]:
    """For `+=` on a quantised integer or fixed-point slot: (the addend shifted to its place in
    the word, the slot's mask, the addend in its own digits). The word's bits under the mask
    become their sum, wrapped within them."""
    q = slot.qtype
    assert not isinstance(q, QuantFloat)
    phys = UNSIGNED[slot.physical.bits]
    off = offset if offset is not None else _offset(slot)
    v = to_fixed(o, value, q) if isinstance(q, QuantFixed) else value
    t = o.type_of(v)
    wide = _int(o, v, SIGNED[phys.bits] if t.is_signed else UNSIGNED[phys.bits])
    wide = _int(o, wide, phys)
    return o.bin("shl", wide, _at(o, off, phys)), _mask_at(o, q.bits, off, phys), v


def widen(o: Ops, v: V, phys: DType) -> V:
    """An integer in the physical word's width, extended as its own type extends."""
    t = o.type_of(v)
    wide = _int(o, v, SIGNED[phys.bits] if t.is_signed else UNSIGNED[phys.bits])
    return _int(o, wide, phys)


def wrap(x: int, t: DType) -> int:
    """`x` as a value of the integer type `t` (two's complement)."""
    x &= (1 << t.bits) - 1
    if t.is_signed and x >> (t.bits - 1):
        x -= 1 << t.bits
    return x


def round_to(x: float, t: DType) -> float:
    return struct.unpack("f", struct.pack("f", x))[0] if t.bits == 32 else x


# NumPy arrays ------------------------------------------------------------------------------------


class NpOps:
    """`Ops` on NumPy arrays (one value per element, so host access converts a whole field at
    once): integers wrap in their type, f32 values are computed in f32, as the kernel's machine code
    computes them."""

    def const(self, value: float, t: DType) -> np.ndarray:
        v = wrap(int(value), t) if t.is_int else float(value)
        return np.array([v], dtype=t.np)

    def type_of(self, a: np.ndarray) -> DType:
        return _DTYPES[a.dtype]

    def bin(self, op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        t = self.type_of(a)
        with np.errstate(all="ignore"):
            if op in ("shl", "shr"):
                amount = np.bitwise_and(b, np.array(t.bits - 1, a.dtype))
                f = np.left_shift if op == "shl" else np.right_shift
                return f(a, amount).astype(a.dtype)
            return INT_OPS[op](a, b).astype(a.dtype)

    def cast(self, a: np.ndarray, t: DType) -> np.ndarray:
        s = self.type_of(a)
        with np.errstate(all="ignore"):
            if s.is_float and t.is_int:  # toward zero, saturating (qdlab's conversion); NaN: 0
                lo = -(1 << (t.bits - 1)) if t.is_signed else 0
                hi = (1 << (t.bits - 1)) - 1 if t.is_signed else (1 << t.bits) - 1
                x = np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0.0)
                out = np.where(x <= lo, lo, np.where(x >= hi, hi, 0)).astype(t.np)
                mid = (x > lo) & (x < hi)
                out[mid] = x[mid].astype(t.np)
                return out
            return a.astype(t.np)

    def bitcast(self, a: np.ndarray, t: DType) -> np.ndarray:
        return a.view(t.np)

    def select(self, cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(cond.astype(bool), a, b).astype(a.dtype)

    def cmp(self, pred: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "gt": np.greater}[pred]
        return fn(a, b).astype(np.uint8)

    def clz(self, a: np.ndarray) -> np.ndarray:
        t = self.type_of(a)
        x = a.view(UNSIGNED[t.bits].np).astype(np.float64)  # exact below 2 ** 53
        length = np.where(x > 0, np.frexp(x)[1], 0)
        return (t.bits - length).astype(np.int32)


_DTYPES = {t.np: t for t in (*SIGNED.values(), *UNSIGNED.values(), f32, f64)}
