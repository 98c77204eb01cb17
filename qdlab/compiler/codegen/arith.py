"""Scalar arithmetic with the kernel language's semantics, as LLVM instructions.

Integer division and remainder never trap: a zero divisor gives 0 and `INT_MIN // -1` wraps, so no
input can crash the process with SIGFPE. `//` floors and `%` takes the divisor's sign, as in Python;
a float `%` is `a - b * floor(a / b)`, rounded at each step as Quadrants computes it (Python's is
the exact remainder); `qd.raw_div` and `qd.raw_mod` give the C results. No fast-math flags are set:
the split and whole-kernel paths must agree to the bit, so the optimiser may not reassociate or
contract floating-point arithmetic.

The transcendental functions are calls of the C math library marked `nobuiltin`, so that LLVM's
optimiser neither folds nor rewrites them: at its full level it turns `pow(x, 2.0)` into `x * x`,
`pow(x, -1.0)` into `1 / x` and `pow(x, 0.5)` into a square root, and folds a call of constants with
its own arithmetic, none of which its quick tier does (`compiler/runtime/tiers.py`), so the first
process got other bits than every later one. The rewrites the reference makes of `**` are made
before either tier sees the code: in qdlab's IR (`passes/lower_powers.py`), and a float raised to an
integer here, by squaring.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llvmlite import ir as ll

from ...core.types import DType, f32
from .lltypes import F32, lltype

if TYPE_CHECKING:
    from .llvm import TaskEmitter

CMP_INT = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
CMP_FLOAT = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


LIBM = ("sin", "cos", "tan", "tanh", "asin", "acos", "exp", "exp2", "log", "log2", "pow", "atan2")
"""The C math library's functions kernels call (`sinf` for f32, `sin` for f64)."""


def _fname(base: str, t: DType) -> str:
    return f"llvm.{base}.f{t.bits}"


def libm(em: TaskEmitter, name: str, t: DType, args: list[ll.Value]) -> ll.Value:
    """`name(args)` computed by the C math library, in f32 or f64. Declared `nobuiltin`, so LLVM
    keeps every call as it is at every level, and `readnone`: calls of the same arguments may
    still be merged or moved out of a loop (the math library's `errno` is never read)."""
    ty = lltype(t)
    fn = em.intrinsic(name + ("f" if t.bits == 32 else ""), ty, [ty] * len(args))
    if not fn.attributes:
        for attr in ("nobuiltin", "nounwind", "readnone"):
            fn.attributes.add(attr)
    return em.b.call(fn, args)


def overflows(
    em: TaskEmitter, op: str, a: ll.Value, c: ll.Value, out: ll.Value, t: DType
) -> ll.Value:
    """Whether integer `out = a op c` (add, sub, mul, shl) wrapped, as Quadrants' debug runtime
    decides: the `__builtin_*_overflow` of the type, and for `<<` a shift back (arithmetic for a
    signed type) that does not give `a`."""
    b, ty = em.b, lltype(t)
    if op == "shl":
        amount = b.and_(c, ll.Constant(ty, t.bits - 1))
        back = b.ashr(out, amount) if t.is_signed else b.lshr(out, amount)
        return b.icmp_unsigned("!=", back, a)
    name = f"llvm.{'s' if t.is_signed else 'u'}{op}.with.overflow.i{t.bits}"
    fn = em.intrinsic(name, ll.LiteralStructType([ty, ll.IntType(1)]), [ty, ty])
    return b.extract_value(b.call(fn, [a, c]), 1)


def _floor(em: TaskEmitter, v: ll.Value, t: DType) -> ll.Value:
    """floor(v); a half's in f32 (exact: the floor of a half is a half)."""
    if t.bits == 16:
        return em.b.fptrunc(_floor(em, em.b.fpext(v, F32), f32), v.type)
    ty = lltype(t)
    return em.b.call(em.intrinsic(_fname("floor", t), ty, [ty]), [v])


def binop(
    em: TaskEmitter, op: str, a: ll.Value, c: ll.Value, t: DType, nonneg: bool = False
) -> ll.Value:
    b = em.b
    ty = lltype(t)
    if t.is_float:
        simple = {
            "add": b.fadd,
            "sub": b.fsub,
            "mul": b.fmul,
            "truediv": b.fdiv,
            "rawdiv": b.fdiv,
            "rawmod": b.frem,
        }
        if op in simple:
            return simple[op](a, c)
        if t.bits == 16 and op in ("min", "max"):
            # Quadrants' half min/max: `a` where it is below (above) `c` or `c` is NaN, else `c`
            # (so `c` where they compare equal, as -0.0 and 0.0 do). Not `minnum`, which LLVM 22's
            # loop vectorizer asserts on, aborting the process, when a loop reduces halves by it.
            keep = b.or_(
                b.fcmp_ordered("<" if op == "min" else ">", a, c), b.fcmp_unordered("uno", c, c)
            )
            return b.select(keep, a, c)
        if op in ("floordiv", "mod"):
            # a // b is floor(a / b) and a % b is a - b * (a // b), each step rounded to the type
            # (a half's too), as Quadrants computes them: not Python's exact remainder (2.1 % 0.3
            # is 0.0 there, 1.6653e-16 in Python)
            q = _floor(em, binop(em, "truediv", a, c, t), t)
            return q if op == "floordiv" else binop(em, "sub", a, binop(em, "mul", c, q, t), t)
        if t.bits == 16:  # f16: the rest in f32, rounded back to half
            wide = binop(em, op, b.fpext(a, F32), b.fpext(c, F32), f32)
            return wide if wide.type != F32 else b.fptrunc(wide, ty)
        if op in ("min", "max"):
            return b.call(
                em.intrinsic(_fname("minnum" if op == "min" else "maxnum", t), ty, [ty, ty]), [a, c]
            )
        if op in ("pow", "atan2"):
            return libm(em, op, t, [a, c])
        raise NotImplementedError(op)
    signed = t.is_signed
    simple_i = {"add": b.add, "sub": b.sub, "mul": b.mul, "and": b.and_, "or": b.or_, "xor": b.xor}
    if op in simple_i:
        return simple_i[op](a, c)
    if op in ("shl", "shr"):
        amount = b.and_(c, ll.Constant(ty, t.bits - 1)) if t.bits > 1 else c
        if op == "shl":
            return b.shl(a, amount)
        return b.ashr(a, amount) if signed else b.lshr(a, amount)
    if op in ("min", "max"):
        pred = "<" if op == "min" else ">"
        cmp = b.icmp_signed(pred, a, c) if signed else b.icmp_unsigned(pred, a, c)
        return b.select(cmp, a, c)
    zero, one = ll.Constant(ty, 0), ll.Constant(ty, 1)
    if nonneg and op in ("floordiv", "mod"):  # a loop index by an extent it runs under (`nonneg`)
        return b.udiv(a, c) if op == "floordiv" else b.urem(a, c)
    if op in ("floordiv", "mod", "rawdiv", "rawmod"):
        is_zero = b.icmp_unsigned("==", c, zero)
        if signed:
            minus_one = b.icmp_signed("==", c, ll.Constant(ty, -1))
            safe = b.select(b.or_(is_zero, minus_one), one, c)
            q = b.sdiv(a, safe)
            r = b.srem(a, safe)
            if op in ("floordiv", "mod"):
                adjust = b.and_(
                    b.icmp_signed("!=", r, zero),
                    b.xor(b.icmp_signed("<", r, zero), b.icmp_signed("<", c, zero)),
                )
                q = b.select(adjust, b.sub(q, one), q)
                r = b.select(adjust, b.add(r, c), r)
            q = b.select(minus_one, b.sub(zero, a), q)
            r = b.select(minus_one, zero, r)
        else:
            safe = b.select(is_zero, one, c)
            q, r = b.udiv(a, safe), b.urem(a, safe)
        result = q if op in ("floordiv", "rawdiv") else r
        return b.select(is_zero, zero, result)
    if op == "pow":
        return pow_by_squaring(em, a, c, t, t)
    raise NotImplementedError(op)


def pow_by_squaring(
    em: TaskEmitter, base: ll.Value, exp: ll.Value, t: DType, et: DType
) -> ll.Value:
    """`base ** exp` for an integer exponent of type `et`, as the reference demotes it: from
    `r = 1`, `a = base`, for each bit of `|exp|` from the lowest, `r *= a` where it is set, then
    `a *= a`. A negative exponent gives `1 / r` for a float base; for an integer base, 0 (1 for
    base 1, ±1 for base -1)."""
    b = em.b
    ty, ety = lltype(t), lltype(et)
    mul = b.fmul if t.is_float else b.mul
    zero = ll.Constant(ety, 0)
    neg = b.icmp_signed("<", exp, zero) if et.is_signed else None
    res = em.alloca_entry(ty, "pow.res")
    bb = em.alloca_entry(ty, "pow.base")
    ee = em.alloca_entry(ety, "pow.exp")
    b.store(ll.Constant(ty, 1.0 if t.is_float else 1), res)
    b.store(base, bb)
    b.store(exp if neg is None else b.select(neg, b.sub(zero, exp), exp), ee)
    cond = em.fn.append_basic_block("pow.cond")
    body = em.fn.append_basic_block("pow.body")
    done = em.fn.append_basic_block("pow.done")
    b.branch(cond)
    b.position_at_end(cond)
    e = b.load(ee)
    positive = b.icmp_signed(">", e, zero) if et.is_signed else b.icmp_unsigned(">", e, zero)
    b.cbranch(positive, body, done)
    b.position_at_end(body)
    odd = b.trunc(e, ll.IntType(1)) if et.bits > 1 else e
    r = b.load(res)
    x = b.load(bb)
    b.store(b.select(odd, mul(r, x), r), res)
    b.store(mul(x, x), bb)
    b.store(b.lshr(e, ll.Constant(ety, 1)) if et.bits > 1 else zero, ee)
    b.branch(cond)
    b.position_at_end(done)
    out = b.load(res)
    if neg is None:
        return out
    if t.is_float:
        return b.select(neg, b.fdiv(ll.Constant(ty, 1.0), out), out)
    is_one = b.icmp_signed("==", base, ll.Constant(ty, 1))
    is_m1 = b.icmp_signed("==", base, ll.Constant(ty, -1))
    odd_exp = b.trunc(exp, ll.IntType(1))
    neg_val = b.select(
        is_one,
        ll.Constant(ty, 1),
        b.select(
            is_m1,
            b.select(odd_exp, ll.Constant(ty, -1), ll.Constant(ty, 1)),
            ll.Constant(ty, 0),
        ),
    )
    return b.select(neg, neg_val, out)


def compare(em: TaskEmitter, pred: str, a: ll.Value, c: ll.Value, t: DType) -> ll.Value:
    b = em.b
    if t.is_float:
        if pred == "ne":
            return b.fcmp_unordered("!=", a, c)
        return b.fcmp_ordered(CMP_FLOAT[pred], a, c)
    if t.is_signed:
        return b.icmp_signed(CMP_INT[pred], a, c)
    return b.icmp_unsigned(CMP_INT[pred], a, c)


def cast(em: TaskEmitter, v: ll.Value, src: DType, dst: DType) -> ll.Value:
    b = em.b
    to = lltype(dst)
    if src == dst:
        return v
    if dst.name == "u1":
        if src.is_float:
            return b.fcmp_unordered("!=", v, ll.Constant(lltype(src), 0.0))
        return b.icmp_unsigned("!=", v, ll.Constant(lltype(src), 0))
    if src.is_float and dst.is_float:
        return b.fpext(v, to) if dst.bits > src.bits else b.fptrunc(v, to)
    if src.is_float:
        sat = "llvm.fptosi.sat" if dst.is_signed else "llvm.fptoui.sat"
        fn = em.intrinsic(f"{sat}.i{dst.bits}.f{src.bits}", to, [lltype(src)])
        return b.call(fn, [v])
    if dst.is_float:
        return b.sitofp(v, to) if src.is_signed else b.uitofp(v, to)
    if dst.bits < src.bits:
        return b.trunc(v, to)
    if dst.bits > src.bits:
        return b.sext(v, to) if src.is_signed else b.zext(v, to)
    return v


BIT_COUNTS = ("popcnt", "clz", "ffs")
"""Integer bit counts; their result is an i32 whatever the operand's width, as in Quadrants."""


def _bit_count(em: TaskEmitter, fn: str, v: ll.Value, t: DType, out: DType) -> ll.Value:
    """popcnt: set bits; clz: leading zero bits (the width for 0); ffs: 1 + the index of the
    lowest set bit (0 for 0)."""
    b = em.b
    ty = lltype(t)
    false = ll.Constant(ll.IntType(1), 0)
    if fn == "popcnt":
        r = b.call(em.intrinsic(f"llvm.ctpop.i{t.bits}", ty, [ty]), [v])
    elif fn == "clz":
        r = b.call(em.intrinsic(f"llvm.ctlz.i{t.bits}", ty, [ty, ll.IntType(1)]), [v, false])
    else:
        tz = b.call(em.intrinsic(f"llvm.cttz.i{t.bits}", ty, [ty, ll.IntType(1)]), [v, false])
        zero = ll.Constant(ty, 0)
        r = b.select(b.icmp_unsigned("==", v, zero), zero, b.add(tz, ll.Constant(ty, 1)))
    return cast(em, r, t, out)


def unary(em: TaskEmitter, fn: str, v: ll.Value, t: DType, out: DType) -> ll.Value:
    b = em.b
    ty = lltype(t)
    if fn == "neg":
        return b.fneg(v) if t.is_float else b.sub(ll.Constant(ty, 0), v)
    if fn == "bitnot":
        return b.xor(v, ll.Constant(ty, -1))
    if fn in BIT_COUNTS:
        return _bit_count(em, fn, v, t, out)
    if not t.is_float:
        if fn == "abs":
            return (
                b.select(b.icmp_signed("<", v, ll.Constant(ty, 0)), b.sub(ll.Constant(ty, 0), v), v)
                if t.is_signed
                else v
            )
        if fn == "sign":
            pos = b.zext(b.icmp_signed(">", v, ll.Constant(ty, 0)), ty)
            neg = b.zext(b.icmp_signed("<", v, ll.Constant(ty, 0)), ty)
            return b.sub(pos, neg)
        if fn == "fract":
            return ll.Constant(ty, 0)
        raise NotImplementedError(fn)
    if fn == "isnan":
        return b.fcmp_unordered("uno", v, v)
    if t.bits == 16:  # f16: computed in f32, rounded back to half
        wide = unary(em, fn, b.fpext(v, F32), f32, f32 if out == t else out)
        return b.fptrunc(wide, ty) if out == t else wide
    if fn == "isinf":
        fabs = b.call(em.intrinsic(_fname("fabs", t), ty, [ty]), [v])
        return b.fcmp_ordered("==", fabs, ll.Constant(ty, float("inf")))
    intrinsics = {"sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "round": "round", "abs": "fabs"}
    if fn in intrinsics:  # exact operations: whatever LLVM makes of them gives the same bits
        return b.call(em.intrinsic(_fname(intrinsics[fn], t), ty, [ty]), [v])
    if fn in LIBM:
        return libm(em, fn, t, [v])
    if fn == "rsqrt":
        return b.fdiv(ll.Constant(ty, 1.0), b.call(em.intrinsic(_fname("sqrt", t), ty, [ty]), [v]))
    if fn == "sign":
        one, zero = ll.Constant(ty, 1.0), ll.Constant(ty, 0.0)
        pos = b.select(b.fcmp_ordered(">", v, zero), one, zero)
        return b.fsub(pos, b.select(b.fcmp_ordered("<", v, zero), one, zero))
    if fn == "fract":
        return b.fsub(v, b.call(em.intrinsic(_fname("floor", t), ty, [ty]), [v]))
    raise NotImplementedError(fn)
