"""The op table of the LLVM emitter: one short function per IR op class."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llvmlite import ir as ll

from ...core.abi import (
    HDR_CODE,
    HDR_EXTENT,
    HDR_IFACE,
    HDR_INDEX,
    HDR_MSG,
    HDR_PRINT,
    HDR_RNG,
    MAX_CALL_DEPTH,
    ret_offset,
)
from ...core.types import ArrayType, DType
from .. import ir
from . import arith
from .lltypes import ERR_ASSERT, ERR_BOUNDS, ERR_DEPTH, I32, I64, PRINT_TYPE, constant, lltype

if TYPE_CHECKING:
    from .llvm import TaskEmitter

_C1, _C2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _const(em: TaskEmitter, op: ir.Const) -> ll.Value:
    return constant(op.result.dtype, op.attrs["value"])


def _args_word(em: TaskEmitter, word: int, name: str = "") -> ll.Value:
    return em.b.load(em.word(em.args_ptr, 8 * word, I64), name=name)


def _arg(em: TaskEmitter, op: ir.Arg) -> ll.Value | None:
    t = op.result.type
    if isinstance(t, DType):
        word = em.layout[op.attrs["index"]] + op.attrs.get("component", 0)
        return em.from_word(_args_word(em, word, op.result.name), t)
    return None  # arrays are read through their words when indexed


def _shape(em: TaskEmitter, op: ir.Shape) -> ll.Value:
    w = em.layout[ir.arg_index(op.operands[0])] + 2 + op.attrs["axis"]
    return em.b.trunc(_args_word(em, w), I32, name=op.result.name)


def _binop(em: TaskEmitter, op: ir.BinOp) -> ll.Value:
    a, c = (em.get(v) for v in op.operands)
    t, et = op.result.dtype, op.operands[1].dtype
    if t != et:  # a float to an integer power (`ir.BinOp`)
        return arith.pow_by_squaring(em, a, c, t, et)
    out = arith.binop(em, op.attrs["op"], a, c, t, op.attrs.get("nonneg", False))
    if em.debug and op.attrs.get("overflow"):
        with em.b.if_then(arith.overflows(em, op.attrs["op"], a, c, out, t), likely=False):
            index = em.messages.index(op)
            tmp = em.b.ptrtoint(em.tmp, I64)
            what = ir.OVERFLOW_CHECKED[op.attrs["op"]]
            _call_print(em, [], [what], [], f"\x1c{index}\x1f", tmp)
    return out


def _cmp(em: TaskEmitter, op: ir.Cmp) -> ll.Value:
    a, c = (em.get(v) for v in op.operands)
    return arith.compare(em, op.attrs["pred"], a, c, op.operands[0].dtype)


def _unary(em: TaskEmitter, op: ir.Unary) -> ll.Value:
    x = op.operands[0]
    return arith.unary(em, op.attrs["fn"], em.get(x), x.dtype, op.result.dtype)


def _cast(em: TaskEmitter, op: ir.Cast) -> ll.Value:
    v = em.get(op.operands[0])
    if op.attrs.get("bitcast"):
        return em.b.bitcast(v, lltype(op.result.dtype))
    return arith.cast(em, v, op.operands[0].dtype, op.result.dtype)


def _select(em: TaskEmitter, op: ir.Op) -> ll.Value:
    c, a, b = (em.get(v) for v in op.operands)
    return em.b.select(c, a, b)


def _alloca(em: TaskEmitter, op: ir.Alloca) -> None:
    em.local_ptr(op.result)


def _local_load(em: TaskEmitter, op: ir.LocalLoad) -> ll.Value:
    return em.b.load(em.local_ptr(op.operands[0]), name=op.result.name)


def _local_store(em: TaskEmitter, op: ir.Op) -> None:
    em.b.store(em.get(op.operands[1]), em.local_ptr(op.operands[0]))


def _local_atomic(em: TaskEmitter, op: ir.Op) -> ll.Value | None:
    ref, value = op.operands
    dtype = ref.element
    v = em.get(value)
    name = op.attrs["op"]
    if ref in em.reduce_acc:
        acc = em.reduce_acc[ref]
        if name == "sub":
            name, v = "add", arith.unary(em, "neg", v, dtype, dtype)
        em.b.store(arith.binop(em, name, em.b.load(acc), v, dtype), acc)
        return None
    return rmw(em, name, em.local_ptr(ref), v, dtype)


def rmw(em: TaskEmitter, name: str, ptr: ll.Value, v: ll.Value, dtype: DType) -> ll.Value:
    """One atomic read-modify-write of `*ptr`; returns the old value."""
    if name == "mul":
        return _cas_loop(em, ptr, v, dtype)
    if dtype.is_float:
        op = {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax", "xchg": "xchg"}[name]
    elif name in ("min", "max") and not dtype.is_signed:
        op = "u" + name
    else:
        op = name
    return em.b.atomic_rmw(op, ptr, v, "monotonic")


BITS = (
    "bits_set",
    "bits_add",
    "bits_and",
    "bits_or",
    "bits_xor",
    "bits_min",
    "bits_max",
    "bits_umin",
    "bits_umax",
    "bits_mul",
)
"""Atomics on the bits of a word under a mask (a quantised field's), operands (array, *indices,
mask, value), the value already at the mask's place: `bits_set` replaces those bits with the
value's; the others combine them with it (`bits_add` adds, wrapping within them; `bits_min` /
`bits_max` keep the smaller / larger of the field's value (extended as attrs `signed` says) and
the value, given unshifted, compared as signed numbers, `bits_umin` / `bits_umax` as unsigned
ones; `bits_mul` multiplies, wrapping). The rest of the word is unchanged; each gives the old
word."""


def _bits(
    em: TaskEmitter,
    name: str,
    ptr: ll.Value,
    mask: ll.Value,
    v: ll.Value,
    atomic: bool,
    signed: bool = False,
) -> ll.Value:
    b = em.b
    ty = v.type
    width = ty.width

    def count(fn: str) -> ll.Value:  # the bits below / above the mask
        false = ll.Constant(ll.IntType(1), 0)
        return b.call(em.intrinsic(f"llvm.{fn}.i{width}", ty, [ty, ll.IntType(1)]), [mask, false])

    def new_of(old: ll.Value) -> ll.Value:
        op = name[len("bits_") :]
        mine = b.and_(old, mask)
        if op == "set":
            x = v
        elif op in ("add", "and", "or", "xor"):
            x = {"add": b.add, "and": b.and_, "or": b.or_, "xor": b.xor}[op](old, v)
        elif op == "mul":
            low = count("cttz")
            x = b.shl(b.mul(b.lshr(mine, low), b.lshr(b.and_(v, mask), low)), low)
        else:  # the field's value (extended as its bits are) against the unshifted value
            top, low = count("ctlz"), count("cttz")
            up = b.shl(mine, top)
            value = b.ashr(up, b.add(top, low)) if signed else b.lshr(up, b.add(top, low))
            pred = "<" if op in ("min", "umin") else ">"
            cmp = b.icmp_signed if op in ("min", "max") else b.icmp_unsigned
            x = b.shl(b.select(cmp(pred, v, value), v, value), low)
        return b.or_(b.and_(old, b.not_(mask)), b.and_(x, mask))

    if not atomic:
        old = b.load(ptr)
        b.store(new_of(old), ptr)
        return old
    loop = em.fn.append_basic_block("bits")
    done = em.fn.append_basic_block("bits.done")
    entry = b.block
    first = b.load_atomic(ptr, "monotonic", width // 8)
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(ty)
    old.add_incoming(first, entry)
    pair = b.cmpxchg(ptr, old, new_of(old), "monotonic", "monotonic")
    old.add_incoming(b.extract_value(pair, 0), loop)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return old


def _cas_loop(em: TaskEmitter, ptr: ll.Value, v: ll.Value, dtype: DType) -> ll.Value:
    b = em.b
    ity = ll.IntType(max(8, dtype.bits))
    iptr = b.bitcast(ptr, ity.as_pointer())
    loop = em.fn.append_basic_block("cas")
    done = em.fn.append_basic_block("cas.done")
    b.branch(loop)
    b.position_at_end(loop)
    old_bits = b.load_atomic(iptr, "monotonic", dtype.nbytes)
    old = b.bitcast(old_bits, lltype(dtype)) if dtype.is_float else old_bits
    new = arith.binop(em, "mul", old, v, dtype)
    new_bits = b.bitcast(new, ity) if dtype.is_float else new
    pair = b.cmpxchg(iptr, old_bits, new_bits, "monotonic", "monotonic")
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return old


def _array_words(em: TaskEmitter, arr: ir.Value, grad: bool) -> tuple[ll.Value, list[ll.Value]]:
    """An array's data pointer and extents, loaded once at function entry (kernels never write
    them)."""
    key = (arr, grad)
    if key not in em.arrays:
        at = arr.array_type
        base = em.layout[ir.arg_index(arr)]

        def load() -> tuple[ll.Value, list[ll.Value]]:
            data = _args_word(
                em, base + (1 if grad else 0), f"{arr.name}{'.grad' if grad else ''}.data"
            )
            ptr = em.array_pointer(data, lltype(at.dtype))
            if at.extents is not None:  # a field's, static
                return ptr, [ll.Constant(I64, e) for e in at.extents]
            return ptr, [
                _args_word(em, base + 2 + d, f"{arr.name}.shape{d}") for d in range(at.ndim)
            ]

        em.arrays[key] = em.at_entry(load)
    return em.arrays[key]


def address(
    em: TaskEmitter, op: ir.Load | ir.VolatileLoad | ir.Store | ir.Atomic | ir.AtomicCas | ir.Addr
) -> ll.Value:
    """An element's address: the outer indices against the array's extents, then (for an ndarray
    of vectors or matrices) the entry's offset within its element, whose shape is static. As in the
    reference, the entry's offset is checked (or clamped) as a whole. A field stored entry by entry
    (`at.soa`) takes the entry's offset first, then the outer indices."""
    b = em.b
    arr = op.operands[0]
    at = arr.array_type
    ptr, extents = _array_words(em, arr, bool(op.attrs.get("grad")))
    indices = op.indices
    lin: ll.Value | None = None
    entry = _entry_offset(em, at, indices[at.ndim :]) if at.element else None
    if entry is not None and at.soa:
        lin = _bounded(em, op, at, *entry, None)
    for d, idx in enumerate(indices[: at.ndim]):
        i = em.wide[idx] if idx in em.wide else b.sext(em.get(idx), I64)
        lin = _bounded(em, op, at, i, extents[d], lin)
    if entry is not None and not at.soa:
        lin = _bounded(em, op, at, *entry, lin)
    return b.gep(ptr, [lin if lin is not None else ll.Constant(I64, 0)])


def _entry_offset(
    em: TaskEmitter, at: ArrayType, indices: list[ir.Value]
) -> tuple[ll.Value, ll.Value]:
    """(offset, size) of an entry within its element (row-major)."""
    b = em.b
    off: ll.Value = ll.Constant(I64, 0)
    stride = 1
    for n, idx in reversed(list(zip(at.element, indices))):
        i = b.mul(b.sext(em.get(idx), I64), ll.Constant(I64, stride))
        off = b.add(off, i) if stride > 1 else i
        stride *= n
    return off, ll.Constant(I64, stride)


def _bounded(
    em: TaskEmitter, op: ir.Op, at: ArrayType, i: ll.Value, extent: ll.Value, lin: ll.Value | None
) -> ll.Value:
    """`lin * extent + i`, with `i` clamped into [0, extent) (boundary="clamp") or checked there
    (debug)."""
    b = em.b
    if at.boundary == "clamp":
        top = b.sub(extent, ll.Constant(I64, 1))
        i = b.select(b.icmp_signed(">", i, top), top, i)
        i = b.select(b.icmp_signed("<", i, ll.Constant(I64, 0)), ll.Constant(I64, 0), i)
    elif em.debug:
        bad = b.icmp_unsigned(">=", i, extent)
        with b.if_then(bad, likely=False):
            _fail(em, op, ERR_BOUNDS, i, extent)
    return b.add(b.mul(lin, extent), i) if lin is not None else i


def _fail(
    em: TaskEmitter,
    op: ir.Op,
    code: int,
    index: ll.Value | None = None,
    extent: ll.Value | None = None,
) -> None:
    b = em.b
    b.store(ll.Constant(I64, code), em.word(em.tmp, HDR_CODE, I64))
    b.store(ll.Constant(I64, em.messages.index(op)), em.word(em.tmp, HDR_MSG, I64))
    if index is not None:
        b.store(index, em.word(em.tmp, HDR_INDEX, I64))
        b.store(extent, em.word(em.tmp, HDR_EXTENT, I64))
    em.ret_status(1)


def _load(em: TaskEmitter, op: ir.Load) -> ll.Value:
    return em.b.load(address(em, op), name=op.result.name)


def _addr(em: TaskEmitter, op: ir.Addr) -> ll.Value:
    return em.b.ptrtoint(address(em, op), I64, name=op.result.name)


def _volatile_load(em: TaskEmitter, op: ir.VolatileLoad) -> ll.Value:
    """An atomic load: LLVM never merges, hoists or removes it, which is what `qd.volatile_load`
    promises."""
    nbytes = op.result.dtype.nbytes
    return em.b.load_atomic(address(em, op), "monotonic", nbytes, name=op.result.name)


def _store(em: TaskEmitter, op: ir.Store) -> None:
    ptr = address(em, op)
    em.b.store(em.get(op.operands[-1]), ptr)


def _atomic(em: TaskEmitter, op: ir.Atomic) -> ll.Value:
    if op in em.memory_acc:  # reduced into the chunk's partial (`TaskEmitter.parallel`)
        if em.debug:  # its index checked every iteration, as an atomic's; what is summed the same
            address(em, op)
        name, v, dtype = op.attrs["op"], em.get(op.operands[-1]), op.result.dtype
        if name == "sub":
            name, v = "add", arith.unary(em, "neg", v, dtype, dtype)
        acc = em.memory_acc[op]
        em.b.store(arith.binop(em, name, em.b.load(acc), v, dtype), acc)
        return ll.Constant(lltype(dtype), ll.Undefined)
    ptr = address(em, op)
    dtype = op.result.dtype
    if op.attrs["op"] in BITS:  # a quantised field's bits in their word (`frontend/quant.py`)
        mask, v = em.get(op.operands[-2]), em.get(op.operands[-1])
        owned = op in em.plan.owned
        return _bits(em, op.attrs["op"], ptr, mask, v, not owned, bool(op.attrs.get("signed")))
    if op in em.plan.owned:  # no other iteration touches this element: a plain read-modify-write
        old = em.b.load(ptr)
        v = em.get(op.operands[-1])
        name = op.attrs["op"]
        new = v if name == "xchg" else arith.binop(em, name, old, v, dtype)
        em.b.store(new, ptr)
        return old
    return rmw(em, op.attrs["op"], ptr, em.get(op.operands[-1]), dtype)


def _atomic_cas(em: TaskEmitter, op: ir.AtomicCas) -> ll.Value:
    expected, desired = (em.get(v) for v in op.operands[-2:])
    pair = em.b.cmpxchg(address(em, op), expected, desired, "seq_cst", "seq_cst")
    return em.b.extract_value(pair, 0, name=op.result.name)


def _mix(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    x = b.xor(x, b.lshr(x, ll.Constant(I64, 30)))
    x = b.mul(x, ll.Constant(I64, _C1))
    x = b.xor(x, b.lshr(x, ll.Constant(I64, 27)))
    x = b.mul(x, ll.Constant(I64, _C2))
    return b.xor(x, b.lshr(x, ll.Constant(I64, 31)))


def _random(em: TaskEmitter, op: ir.Random) -> ll.Value:
    """Counter-based: hash(launch key, draw site, parallel iteration, draw count in this
    iteration)."""
    b = em.b
    key = b.load(em.word(em.tmp, HDR_RNG, I64))
    count = b.load(em.rng_counter)
    b.store(b.add(count, ll.Constant(I64, 1)), em.rng_counter)
    h = _mix(b, b.xor(key, ll.Constant(I64, (op.attrs["site"] * _C2) & (2**64 - 1))))
    h = _mix(b, b.add(h, em.iter_index))
    h = _mix(b, b.add(h, count))
    t = op.result.dtype
    if t.is_float:
        bits = {16: 11, 32: 24}.get(t.bits, 53)
        mant = b.lshr(h, ll.Constant(I64, 64 - bits))
        return b.fmul(b.uitofp(mant, lltype(t)), ll.Constant(lltype(t), 2.0**-bits))
    return b.trunc(h, lltype(t)) if t.bits < 64 else h


def _clock(em: TaskEmitter, op: ir.Clock) -> ll.Value:
    return em.cycle_counter()


def _print(em: TaskEmitter, op: ir.Op) -> None:
    _call_print(em, op.operands, op.attrs["parts"], op.attrs["specs"])


def _call_print(
    em: TaskEmitter,
    operands: list[ir.Value],
    parts: list[str | None],
    specs: list[str],
    head: str = "",
    first: ll.Value | None = None,
) -> None:
    """Call the host's print callback with these parts and values; `head` and a `first` word
    before the values mark a failed assertion's message (which the callback keeps, not prints)."""
    b = em.b
    values = [f"v{v.type}\x1e{spec}" for v, spec in zip(operands, specs)]
    fmt = head + "\x1f".join(("s" + p) if p is not None else values.pop(0) for p in parts)
    extra = first is not None
    n = len(operands) + extra
    buf = em.alloca_entry(ll.ArrayType(I64, max(1, n)), "print.args")
    if first is not None:
        b.store(first, b.gep(buf, [ll.Constant(I32, 0), ll.Constant(I32, 0)]))
    for k, v in enumerate(operands, extra):
        x = em.get(v)
        t = v.dtype
        if t.is_float:
            word = b.bitcast(b.fpext(x, ll.DoubleType()) if t.bits < 64 else x, I64)
        else:
            word = em.to_word(x, t)
        b.store(word, b.gep(buf, [ll.Constant(I32, 0), ll.Constant(I32, k)]))
    cb = b.inttoptr(b.load(em.word(em.tmp, HDR_PRINT, I64)), PRINT_TYPE.as_pointer())
    b.call(cb, [em.cstring(fmt), b.bitcast(buf, I64.as_pointer()), ll.Constant(I64, n)])


def _assert(em: TaskEmitter, op: ir.Op) -> None:
    with em.b.if_then(em.b.not_(em.get(op.operands[0])), likely=False):
        if "parts" in op.attrs and em.host_print:  # the message, with the values, to the host
            index = em.messages.index(op)
            tmp = em.b.ptrtoint(em.tmp, I64)
            _call_print(
                em, op.operands[1:], op.attrs["parts"], op.attrs["specs"], f"\x1d{index}\x1f", tmp
            )
        _fail(em, op, ERR_ASSERT)


def _return(em: TaskEmitter, op: ir.Op) -> None:
    for k, v in enumerate(op.operands):
        em.b.store(em.to_word(em.get(v), v.dtype), em.word(em.tmp, ret_offset(k), I64))


def _interface_word(em: TaskEmitter, op: ir.Op) -> ll.Value:
    base = em.b.inttoptr(em.b.load(em.word(em.tmp, HDR_IFACE, I64)), I64.as_pointer())
    return em.b.gep(base, [ll.Constant(I64, op.attrs["slot"] // 8)])


def _interface_load(em: TaskEmitter, op: ir.InterfaceLoad) -> ll.Value:
    return em.from_word(em.b.load(_interface_word(em, op)), op.result.dtype)


def _interface_store(em: TaskEmitter, op: ir.Op) -> None:
    v = op.operands[0]
    em.b.store(em.to_word(em.get(v), v.dtype), _interface_word(em, op))


def _call(em: TaskEmitter, op: ir.Op) -> ll.Value | None:
    """A call of a function of the kernel (`real_calls.py`), one deeper than its caller, unless
    that is deeper than `MAX_CALL_DEPTH` (an error, before the stack overflows); an error the
    callee recorded (a failed assertion, an index out of bounds) leaves the caller too."""
    callee = em.functions[op.attrs["function"]]
    depth = em.b.add(em.depth, ll.Constant(I32, 1))
    with em.b.if_then(em.b.icmp_unsigned(">", depth, ll.Constant(I32, MAX_CALL_DEPTH)), False):
        _fail(em, op, ERR_DEPTH)
    r = em.b.call(callee, [em.args_ptr, em.tmp, depth, *(em.get(v) for v in op.operands)])
    failed = em.b.icmp_signed("!=", em.b.load(em.word(em.tmp, HDR_CODE, I64)), ll.Constant(I64, 0))
    with em.b.if_then(failed, likely=False):
        em.ret_status(1)
    return r if op.result is not None else None


def _result(em: TaskEmitter, op: ir.Op) -> None:
    if op.operands:
        em.b.ret(em.get(op.operands[0]))
    else:
        em.b.ret_void()


def _for(em: TaskEmitter, op: ir.Op) -> None:
    lo = em.b.sext(em.get(op.operands[0]), I64)
    hi = em.b.sext(em.get(op.operands[1]), I64)
    em.range_loop(op.regions[0].args[0], lo, hi, lambda: em.block(op.regions[0]))


def _if(em: TaskEmitter, op: ir.Op) -> None:
    then, other = op.regions
    if not other.ops:
        with em.b.if_then(em.get(op.operands[0])):
            em.block(then)
        return
    with em.b.if_else(em.get(op.operands[0])) as (t, o):
        with t:
            em.block(then)
        with o:
            em.block(other)


def _loop(em: TaskEmitter, op: ir.Op) -> None:
    b = em.b
    head = em.fn.append_basic_block("while")
    done = em.fn.append_basic_block("while.done")
    b.branch(head)
    b.position_at_end(head)
    em.loops.append((head, done))
    em.block(op.regions[0])
    em.loops.pop()
    if not em.terminated():
        b.branch(head)
    b.position_at_end(done)


def _break(em: TaskEmitter, op: ir.Op) -> None:
    em.b.branch(em.loops[-1][1])


def _continue(em: TaskEmitter, op: ir.Op) -> None:
    em.b.branch(em.loops[-1][0])


EMITTERS: dict[type[ir.Op], Callable[[TaskEmitter, Any], ll.Value | None]] = {
    # each emitter takes an op of the class it is listed under
    ir.Const: _const,
    ir.Arg: _arg,
    ir.Shape: _shape,
    ir.BinOp: _binop,
    ir.Cmp: _cmp,
    ir.Unary: _unary,
    ir.Cast: _cast,
    ir.Select: _select,
    ir.Alloca: _alloca,
    ir.LocalLoad: _local_load,
    ir.LocalStore: _local_store,
    ir.LocalAtomic: _local_atomic,
    ir.Load: _load,
    ir.VolatileLoad: _volatile_load,
    ir.Store: _store,
    ir.Atomic: _atomic,
    ir.AtomicCas: _atomic_cas,
    ir.Random: _random,
    ir.Clock: _clock,
    ir.Print: _print,
    ir.Assert: _assert,
    ir.Return: _return,
    ir.For: _for,
    ir.If: _if,
    ir.Loop: _loop,
    ir.Break: _break,
    ir.Continue: _continue,
    ir.InterfaceLoad: _interface_load,
    ir.InterfaceStore: _interface_store,
    ir.Call: _call,
    ir.Addr: _addr,
    ir.Result: _result,
}
