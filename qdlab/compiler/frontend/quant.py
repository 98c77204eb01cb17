"""Quantised fields lowered (the last step of lowering a kernel): reads, writes and atomics of
quantised fields become operations on their physical words, in qdlab's IR, before the split: so
every construct, tier and target computes the same bits, and the split and the gate see each word
as the memory it is (two fields packed in one word are one buffer, the word field's hidden
parameter).

A quantised field's hidden parameter (added by the frontend, typed by its compute type) is left
unused; each word field a kernel reaches gets a hidden parameter of its own. A load reads the word
and extracts the value (`core/quant.py`); a store computes the new bits and replaces them with an
atomic masked write (`atomic` op `bits_set`: a compare-and-swap loop, or a plain read-modify-write
where no other iteration touches the word); `+=` / `-=` on an integer or fixed-point value adds
its digits within their bits (`bits_add`), as the reference's `atomic_add_partial_bits`; the
other atomics on an integer (`atomic_max`, `atomic_and`...) are one atomic update of its bits too.
Those on a fixed-point number other than `+=` / `-=`, and any on a quantised float, are a read, the
operation and a masked write, as the reference demotes them.
"""

from __future__ import annotations

from ...core import quant as q
from ...core.errors import QdTypeError, SourceLoc
from ...core.fields import FieldBase
from ...core.types import DType, i32, u1
from .. import ir
from .fields import add_field_param


class IrOps:
    """`core.quant.Ops` emitting qdlab IR ops, collected in `new`."""

    def __init__(self, loc: SourceLoc | None) -> None:
        self.new: list[ir.Op] = []
        self.loc = loc

    def emit(
        self, cls: type[ir.Op], operands: list[ir.Value], t: DType, **attrs: object
    ) -> ir.Value:
        op = cls(operands, t, dict(attrs), None, self.loc)
        self.new.append(op)
        return op.out

    def const(self, value: float, t: DType) -> ir.Value:
        v = q.wrap(int(value), t) if t.is_int else q.round_to(float(value), t)
        return self.emit(ir.Const, [], t, value=v)

    def type_of(self, a: ir.Value) -> DType:
        return a.dtype

    def bin(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.BinOp, [a, b], a.dtype, op=op)

    def cast(self, a: ir.Value, t: DType) -> ir.Value:
        return a if a.dtype == t else self.emit(ir.Cast, [a], t)

    def bitcast(self, a: ir.Value, t: DType) -> ir.Value:
        return a if a.dtype == t else self.emit(ir.Cast, [a], t, bitcast=True)

    def select(self, cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.Select, [cond, a, b], a.dtype)

    def cmp(self, pred: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.Cmp, [a, b], u1, pred=pred)

    def clz(self, a: ir.Value) -> ir.Value:
        return self.emit(ir.Unary, [a], i32, fn="clz")


INT_ATOMICS = ("add", "sub", "and", "or", "xor", "min", "max", "mul")
"""The atomics on a quantised integer done on its bits in one atomic update of the word (the
reference demotes all but `add` to a read and a write)."""


def run(kernel: ir.Kernel) -> None:
    quants = {i: f for i, f in kernel.flags.fields.items() if getattr(f, "_quant", None)}
    if not quants:
        return
    words: dict[int, ir.Value] = {}
    memory = (ir.Load, ir.VolatileLoad, ir.Store, ir.Atomic, ir.Addr)
    for op in list(kernel.walk()):
        if not isinstance(op, memory):
            continue
        arg = op.operands[0].owner
        if not isinstance(arg, ir.Arg) or arg.attrs.get("index") not in quants:
            continue
        f = quants[arg.attrs["index"]]
        _lower(kernel, op, f, words)


def _word_param(kernel: ir.Kernel, word: FieldBase, words: dict[int, ir.Value]) -> ir.Value:
    got = words.get(id(word))
    if got is None:
        name = f"{getattr(word, 'name', 'word')}{len(kernel.params)}"
        got = words[id(word)] = add_field_param(kernel, word, name)
    return got


def _lower(kernel: ir.Kernel, op: ir.Op, f: object, words: dict[int, ir.Value]) -> None:
    info = getattr(f, "_quant")  # noqa: B009 - a host field's (`host/quant.py`)
    arr = op.operands[0]
    ndim = arr.array_type.ndim
    indices = op.operands[1 : 1 + arr.array_type.rank]
    outer, inner = indices[:ndim], indices[ndim:]
    entry = []
    for v in inner:
        if not isinstance(v.owner, ir.Const):
            raise _error(
                op,
                "an entry of a quantised vector or matrix field must be indexed by a "
                "constant (or a static loop).",
            )
        entry.append(int(v.owner.attrs["value"]))
    slot: q.Slot = info.slots[tuple(entry)]
    o = IrOps(op.loc)
    word_arr = _word_param(kernel, slot.word, words)
    phys = slot.physical
    offset: ir.Value | None = None
    if slot.array:  # a quant_array: the word holds a block of elements
        widx, lin = [], None
        for v, n, kept in zip(outer, slot.array, slot.kept):
            if n == 1:
                w = o.const(0, i32)
                if kept:
                    widx.append(v)
            else:
                w = o.bin("mod", v, o.const(n, i32))
                if kept:
                    widx.append(o.bin("floordiv", v, o.const(n, i32)))
            lin = w if lin is None else o.bin("add", o.bin("mul", lin, o.const(n, i32)), w)
        assert lin is not None
        offset = o.bin("mul", lin, o.const(slot.qtype.bits, i32))
    else:
        widx = list(outer)
    if isinstance(op, ir.Addr):
        raise _error(
            op,
            "qd.get_addr of a quantised field is not supported (its elements are bits of a word).",
        )

    def load() -> ir.Value:
        return o.emit(ir.Load, [word_arr, *widx], phys)

    def store(word: ir.Value | None, value: ir.Value) -> ir.Value:
        bits, mask = q.encode(
            o, word if word is not None else o.const(0, phys), slot, value, offset
        )
        return o.emit(ir.Atomic, [word_arr, *widx, mask, bits], phys, op="bits_set")

    def shared() -> bool:
        return (
            isinstance(slot.qtype, q.QuantFloat)
            and slot.struct is not None
            and len(slot.struct.members[slot.struct.members[slot.member].exponent].users) > 1
        )

    result: ir.Value | None = None
    if isinstance(op, (ir.Load, ir.VolatileLoad)):
        result = q.decode(o, load(), slot, offset)
    elif isinstance(op, ir.Store):
        store(load() if shared() else None, op.operands[-1])
    else:
        assert isinstance(op, ir.Atomic)
        name, value = op.attrs["op"], op.operands[-1]
        qt = slot.qtype
        whole = isinstance(qt, q.QuantInt) and name in INT_ATOMICS
        if (name in ("add", "sub") and not isinstance(qt, q.QuantFloat)) or whole:
            if name == "sub":
                value = o.emit(ir.Unary, [value], value.dtype, fn="neg")
            addend, mask, _ = q.add_bits(o, value, slot, offset)
            bits = "add" if name == "sub" else name
            attrs: dict[str, object] = {"op": f"bits_{bits}"}
            if bits in ("min", "max"):  # compared as the compute type compares, unshifted
                attrs = {"op": f"bits_{'' if value.dtype.is_signed else 'u'}{bits}"}
                attrs["signed"] = qt.signed  # how the field's bits extend
                addend = q.widen(o, value, phys)
            old = o.emit(ir.Atomic, [word_arr, *widx, mask, addend], phys, **attrs)
            result = q.decode(o, old, slot, offset)
        elif name == "xchg":
            old = store(load() if shared() else None, value)
            result = q.decode(o, old, slot, offset)
        else:  # read, compute, write (not atomic, as the reference demotes it)
            word = load()
            old_value = q.decode(o, word, slot, offset)
            store(word, o.emit(ir.BinOp, [old_value, value], old_value.dtype, op=name))
            result = old_value
    block = op.parent
    assert block is not None
    at = block.ops.index(op)
    block.ops[at:at] = o.new
    for new in o.new:
        new.parent = block
    if op.result is not None and result is not None:
        if result.type != op.result.type:
            result = _splice_cast(block, op, result, op.result.dtype)
        for user in list(op.result.users):
            for k, v in enumerate(user.operands):
                if v is op.result:
                    user.set_operand(k, result)
    for v in op.operands:
        if op in v.users:
            v.users.remove(op)
    block.ops.remove(op)


def _splice_cast(block: ir.Block, before: ir.Op, v: ir.Value, t: DType) -> ir.Value:
    cast = ir.Cast([v], t, {}, None, before.loc)
    cast.parent = block
    block.ops.insert(block.ops.index(before), cast)
    return cast.out


def _error(op: ir.Op, message: str) -> QdTypeError:
    return QdTypeError(message, op.loc)
