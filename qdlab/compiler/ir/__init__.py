"""The typed IR: values, ops with nested blocks, and the rewriter that keeps def-use links right.

Every op keeps its operands, its (single, optional) result, its nested blocks and the source `loc`
it came from. Values know their users, so backward slices and "who reads this" are short loops.
Effects are declared on the op classes (`effects`, from `EFFECTS`): the split and the gate ask about
effects, never about classes.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from ...core.errors import SourceLoc
from ...core.fields import FieldBase
from ...core.types import ArrayType, DType, LocalType, Type

EFFECTS = {
    "read": "reads array memory",
    "write": "writes array memory",
    "local_read": "reads a mutable local",
    "local_write": "writes a mutable local",
    "draw": "takes the next number of the random stream",
    "volatile": "must run exactly once, where it is written",
    "io": "prints, or checks an assertion",
    "return": "sets the kernel's return values",
    "interface": "writes the interface buffer",
    "control": "holds or transfers control (loops, branches)",
}
"""The effects an op class may declare; the split and the gate ask about these, never about op
classes."""


class Value:
    """An SSA value: an op's result or a block argument (a loop index)."""

    __slots__ = ("name", "owner", "type", "users")

    def __init__(self, type: Type, name: str = "", owner: Op | Block | None = None) -> None:
        self.type = type
        self.name = name
        """The source variable it came from (`total`, `i`), used by the printer; may be empty."""
        self.owner = owner
        """The op that defines it, or the block whose argument it is."""
        self.users: list[Op] = []
        """Ops that take this value as an operand (once per operand slot)."""

    def __repr__(self) -> str:
        return f"Value({self.name or '?'}: {self.type})"

    @property
    def dtype(self) -> DType:
        """Its type, for a value that is a scalar (most are: all but array handles, locals and
        vectors by value)."""
        t = self.type
        assert isinstance(t, DType), f"{self} is not a scalar"
        return t

    @property
    def array_type(self) -> ArrayType:
        """Its type, for an array handle (an `arg` of an array parameter)."""
        t = self.type
        assert isinstance(t, ArrayType), f"{self} is not an array"
        return t

    @property
    def element(self) -> DType:
        """The scalar type a local holds or an array's elements have; a scalar's own type."""
        t = self.type
        if isinstance(t, (LocalType, ArrayType)):
            return t.dtype
        assert isinstance(t, DType), f"{self} holds no scalar"
        return t


class Block:
    """An ordered list of ops, optionally with arguments (the loop index of a `for`)."""

    def __init__(self, args: list[Value] | None = None) -> None:
        self.ops: list[Op] = []
        self.args: list[Value] = args or []
        for a in self.args:
            a.owner = self
        self.parent: Op | None = None
        """The op this block belongs to; None for the kernel body."""

    def append(self, op: Op) -> Op:
        op.parent = self
        self.ops.append(op)
        return op

    def walk(self) -> Iterator[Op]:
        """Every op in this block and in blocks nested under it, in program order; after a `Call`,
        the body of the function it calls (each function once per walk), so what a called function
        does is seen as part of its caller."""
        return _walk(iter(self.ops))


def _walk(ops: Iterator[Op]) -> Iterator[Op]:
    """Each op, then the body it calls and the ops of its regions in order, depth first, with one
    iterator per level (nested generators would hand every op up through each level above it)."""
    seen: set[Function] = set()
    stack = [ops]
    while stack:
        for op in stack[-1]:
            yield op
            if op.regions or isinstance(op, Call):
                inner = [r.ops for r in op.regions]
                if isinstance(op, Call) and op.function not in seen:
                    seen.add(op.function)
                    inner.insert(0, op.function.body.ops)
                stack.append(itertools.chain.from_iterable(inner))
                break
        else:
            stack.pop()


class Op:
    """Base class of IR operations."""

    name: ClassVar[str] = "op"
    # Op classes that always give a value declare `result: Value` (Const, BinOp, Load ...): the
    # checker then knows an op of that class has one. The verifier checks it.
    pure: ClassVar[bool] = True
    """No effect: may be removed if unused, recomputed, or merged with an equal op."""
    effects: ClassVar[frozenset[str]] = frozenset()
    """What running the op does besides giving its result, from EFFECTS."""

    def __init__(
        self,
        operands: list[Value] | tuple[Value, ...] = (),
        result: Type | None = None,
        attrs: dict | None = None,
        regions: list[Block] | None = None,
        loc: SourceLoc | None = None,
        name: str = "",
    ) -> None:
        self.operands: list[Value] = []
        self.result: Value | None = Value(result, name, self) if result is not None else None
        self.attrs: dict = attrs or {}
        """Compile-time attributes (constant value, operator name, axis ...), printed in canonical
        text."""
        self.regions: list[Block] = regions or []
        for r in self.regions:
            r.parent = self
        self.loc = loc
        self.parent: Block | None = None
        for v in operands:
            self.add_operand(v)

    def add_operand(self, v: Value) -> None:
        self.operands.append(v)
        v.users.append(self)

    def set_operand(self, i: int, v: Value) -> None:
        self.operands[i].users.remove(self)
        self.operands[i] = v
        v.users.append(self)

    def walk(self) -> Iterator[Op]:
        return _walk(iter((self,)))

    @property
    def out(self) -> Value:
        """Its result, for an op that has one (where the class alone does not say so)."""
        result = self.result
        assert result is not None, f"{self.name} gives no value"
        return result

    @property
    def array_operand(self) -> Value | None:
        """For memory ops: the array parameter accessed."""
        return None

    def __repr__(self) -> str:
        return f"<{self.name} {self.attrs}>"


def gives_value(cls: type[Op]) -> bool:
    """Whether ops of class `cls` always have a result (the class declares `result: Value`)."""
    return "result" in inspect.get_annotations(cls)


# Values -------------------------------------------------------------------------------------------


class Const(Op):
    """A compile-time constant: attrs `value` (int or float) of the result type."""

    name = "const"
    result: Value


class Arg(Op):
    """Kernel parameter `index`: a scalar value or an array handle; attrs `component` picks one
    entry of a vector or matrix parameter (row-major)."""

    name = "arg"
    result: Value


class Shape(Op):
    """Extent of axis `axis` of an array parameter, as i32."""

    name = "shape"
    result: Value


class BinOp(Op):
    """Arithmetic or bitwise `op` (add sub mul truediv floordiv mod pow min max atan2 and or xor shl
    shr) of two operands of one type; but a float to an integer power (`pow`) keeps its integer
    exponent. `overflow` (debug mode, an integer op of OVERFLOW_CHECKED the user wrote): its code
    reports a result that wraps, and carries on with it. `nonneg` (a `floordiv` or `mod` splitting
    a loop's flat index by an extent it runs under): neither operand is negative nor the divisor 0
    where it runs, so it is an unsigned division."""

    name = "binop"
    result: Value

    @property
    def effects(self) -> frozenset[str]:
        """None, but "io" for a checked op: its report must print once, so no construct
        recomputes it."""
        return _REPORTS if self.attrs.get("overflow") else _PURE


_PURE, _REPORTS = frozenset(), frozenset({"io"})
OVERFLOW_CHECKED = {
    "add": "Addition",
    "sub": "Subtraction",
    "mul": "Multiplication",
    "shl": "Shift left",
}
"""The integer ops whose wrapping `debug=True` reports, and the word Quadrants' report starts
with."""


class Cmp(Op):
    """Comparison `pred` (lt le gt ge eq ne) giving u1."""

    name = "cmp"
    result: Value


class Unary(Op):
    """Unary `fn`: neg not bitnot abs sqrt sin cos tan tanh exp log floor ceil round asin acos
    rsqrt; popcnt clz ffs (an i32 count of an integer's bits)."""

    name = "unary"
    result: Value


class Cast(Op):
    """Value conversion to the result type (float to int truncates toward zero); `bitcast`
    reinterprets."""

    name = "cast"
    result: Value


class Select(Op):
    """`cond ? a : b`, both arms evaluated."""

    name = "select"
    result: Value


# Locals -------------------------------------------------------------------------------------------


class Alloca(Op):
    """Storage for a mutable local variable named after it."""

    name = "alloca"
    result: Value


class LocalLoad(Op):
    """Read a local."""

    name = "local_load"
    result: Value
    pure = False
    effects = frozenset({"local_read"})


class LocalStore(Op):
    """Write a local: operands (local, value)."""

    name = "local_store"
    pure = False
    effects = frozenset({"local_write"})


class LocalAtomic(Op):
    """Reduce into a local from a parallel loop: operands (local, value), attrs `op` (add sub min
    max and or xor)."""

    name = "local_atomic"
    pure = False
    effects = frozenset({"local_read", "local_write"})


# Memory -------------------------------------------------------------------------------------------


class _Memory(Op):
    @property
    def array_operand(self) -> Value:
        return self.operands[0]

    @property
    def indices(self) -> list[Value]:
        """The outer indices, then (for an ndarray of vectors or matrices) the element's."""
        n = self.operands[0].array_type.rank
        return self.operands[1 : 1 + n]


class Load(_Memory):
    """Read array element (array, *indices); attrs `grad` reads the gradient buffer. An ndarray of
    vectors or matrices takes its element's indices after the outer ones: one scalar per access."""

    name = "load"
    result: Value
    pure = False
    effects = frozenset({"read"})


class VolatileLoad(_Memory):
    """A load that must happen exactly where written, once."""

    name = "volatile_load"
    result: Value
    pure = False
    effects = frozenset({"read", "volatile"})


class Store(_Memory):
    """Write array element: operands (array, *indices, value)."""

    name = "store"
    pure = False
    effects = frozenset({"write"})


class Atomic(_Memory):
    """Atomic read-modify-write (array, *indices, value) with attrs `op`; the result is the old
    value."""

    name = "atomic"
    result: Value
    pure = False
    effects = frozenset({"read", "write"})


class AtomicCas(_Memory):
    """`qd.atomic_cas`: operands (array, *indices, expected, desired); writes `desired` when the
    element holds `expected`, in one atomic step, and gives the old value."""

    name = "atomic_cas"
    result: Value
    pure = False
    effects = frozenset({"read", "write"})


class Addr(_Memory):
    """`qd.get_addr(x, [i, j])`: the address of an element (array, *indices) as a u64; reads no
    memory."""

    name = "addr"
    result: Value


class Random(Op):
    """A draw from the counter-based generator; attrs `site` numbers the draw within the kernel."""

    name = "random"
    result: Value
    pure = False
    effects = frozenset({"draw"})


class Clock(Op):
    """`qd.clock_counter()`: the hardware cycle counter as an i64, read exactly where written."""

    name = "clock"
    result: Value
    pure = False
    effects = frozenset({"volatile"})


class Print(Op):
    """Print `parts` (strings, and None where the next operand goes, printed under the printf
    conversion of `specs` at the same position among the operands)."""

    name = "print"
    pure = False
    effects = frozenset({"io"})


class Assert(Op):
    """Check operand 0 in debug mode; attrs `message`."""

    name = "assert"
    pure = False
    effects = frozenset({"io"})


class Return(Op):
    """Kernel return values."""

    name = "return"
    pure = False
    effects = frozenset({"return"})


class InterfaceLoad(Op):
    """Read a value a previous construct published: attrs `slot` (byte offset) and `key` (what it
    holds)."""

    name = "interface_load"
    result: Value


class InterfaceStore(Op):
    """Publish operand 0 for later constructs: attrs `slot` and `key`."""

    name = "interface_store"
    pure = False
    effects = frozenset({"interface"})


# Control flow -------------------------------------------------------------------------------------


class For(Op):
    """`for index in [begin, end)`; region 0 has the index as argument.

    attrs: `parallel`, `loop_name`, `block_dim` (threads per CUDA block, from `qd.loop_config`).
    """

    name = "for"
    pure = False
    effects = frozenset({"control"})

    @property
    def body(self) -> Block:
        return self.regions[0]


class If(Op):
    """Operand 0 chooses region 0 (then) or region 1 (else)."""

    name = "if"
    pure = False
    effects = frozenset({"control"})


class Loop(Op):
    """An endless loop left by `Break` (a `while` is `loop { if not cond: break; ... }`)."""

    name = "loop"
    pure = False
    effects = frozenset({"control"})

    @property
    def body(self) -> Block:
        return self.regions[0]


class Break(Op):
    """Leave the innermost loop."""

    name = "break"
    pure = False
    effects = frozenset({"control"})


class Continue(Op):
    """Go to the next iteration of the innermost loop."""

    name = "continue"
    pure = False
    effects = frozenset({"control"})


class Call(Op):
    """A real call of a function of the kernel (a recursive `@qd.real_func`): attrs `function` (a
    `Function`), operands its scalar arguments, the result its return value (none when it returns
    nothing). Whatever the function does (its reads and writes of arrays, prints, assertions) is
    what the call does: `walk` goes on into its body."""

    name = "call"
    pure = False
    effects = frozenset({"control"})

    @property
    def function(self) -> Function:
        return self.attrs["function"]


class Result(Op):
    """The end of a function's body: operand 0 (if any) is what the call gives back."""

    name = "result"
    pure = False
    effects = frozenset({"control"})


class Function:
    """A function of the kernel, compiled as a function of its own in every construct that calls
    it: its body's arguments are its scalar parameters. Arrays it reads or writes are the kernel's
    own (their `arg` ops, at the top of the kernel), so it is cloned along with the kernel that
    calls it (`clone_op`)."""

    def __init__(self, name: str, params: list[Value], returns: DType | None, loc=None) -> None:
        self.name = name
        self.params = params
        self.returns = returns
        self.body = Block(params)
        self.loc = loc

    def __repr__(self) -> str:
        return f"Function({self.name})"


def functions_of(kernel_or_ops: Kernel | list[Op]) -> list[Function]:
    """The functions a kernel (or these ops) calls, directly or through others, in the order a walk
    first reaches them."""
    ops = kernel_or_ops.walk() if isinstance(kernel_or_ops, Kernel) else kernel_or_ops
    out: list[Function] = []
    for op in ops:
        if isinstance(op, Call) and op.function not in out:
            out.append(op.function)
    return out


@dataclass
class Param:
    """A kernel parameter."""

    name: str
    """Its name in the source."""
    type: Type
    """DType for scalars, ArrayType for arrays, TensorType for vectors and matrices by value."""


@dataclass
class KernelFlags:
    """Kernel-wide facts the frontend finds while lowering (its `kernel.flags`). A flag at its
    default counts as unset: `items()`, which keys the construct memo, leaves it out."""

    def_loc: SourceLoc | None = None
    """Where the kernel is defined (its `def` line): what kernel-wide findings point at."""
    fields: dict[int, FieldBase] = field(default_factory=dict)
    """The hidden parameters that stand for fields, by parameter index (`field_params`)."""
    field_paths: dict[int, tuple[str, str]] = field(default_factory=dict)
    """How the manifest finds each field again: (the path of the function that reached it, the
    global name or attribute chain), by parameter index."""
    field_labels: dict[str, str] = field(default_factory=dict)
    """A field's hidden parameter's name -> how the kernel reached it (`s.a`), for messages."""
    members: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)
    """Struct members the kernel read: (parameter, attribute path) -> what it is (`structs.PARAM`,
    `STRUCT` ...), in the order first read."""
    late_params: bool = False
    """A struct member's parameter was declared while lowering (not by the host): no manifest."""
    entries: dict[str, str] = field(default_factory=dict)
    """A vector local's entries (`v_x`, `v_y`) -> the vector's name (`v`), for the views."""
    concurrent_region: SourceLoc | None = None
    """The first `with qd.stream_parallel():` (the gate refuses to split it)."""
    nested_range: SourceLoc | None = None
    """The first `for ... in range(...)` inside another runtime `for` (the kernel's or an inlined
    @qd.func's): the gradient kernel refuses it unless the adstack is enabled, as Quadrants does."""

    def items(self) -> list[tuple[str, object]]:
        """The flags that are set (not at their default), in declaration order."""
        default = _FLAG_DEFAULTS
        return [(k, v) for k, v in vars(self).items() if v != default[k]]

    def copy(self) -> KernelFlags:
        """A shallow copy (the tables are shared), as `dict(flags)` was."""
        return KernelFlags(**vars(self))


_FLAG_DEFAULTS = vars(KernelFlags())


@dataclass
class Kernel:
    """A kernel's IR: its parameters, return types and body."""

    name: str
    """The Python function's name."""
    params: list[Param]
    """Parameters in declaration order."""
    returns: list[DType] = field(default_factory=list)
    """Return value types (empty for no return)."""
    body: Block = field(default_factory=Block)
    """Top-level statements."""
    flags: KernelFlags = field(default_factory=KernelFlags)
    """Kernel-wide facts found by the frontend (e.g. `concurrent_region`)."""

    def walk(self) -> Iterator[Op]:
        return self.body.walk()


_PLAIN = {int: "i", bool: "b", str: "s"}


def attrs_key(attrs: dict) -> object:
    """An op's attributes as a key (CSE, the construct memo, whose keys go to disk): equal keys,
    equal attributes, printed alike. One int, bool or str (an operator's name, an axis, an index)
    goes as itself, tagged with its type, where its text costs a `repr` of the sorted items;
    anything else (a float: 0.0 and -0.0 are equal values, printed apart) as that text."""
    if not attrs:
        return ""
    if len(attrs) == 1:
        ((k, v),) = attrs.items()
        tag = _PLAIN.get(type(v))
        if tag is not None:
            return (k, tag, v)
    return repr(sorted(attrs.items()))


# Rewriter -----------------------------------------------------------------------------------------


def replace_all_uses(old: Value, new: Value) -> None:
    for user in list(old.users):
        for i, v in enumerate(user.operands):
            if v is old:
                user.set_operand(i, new)


def erase(op: Op) -> None:
    """Remove an op (and everything nested in it) from its block, unlinking its operands."""
    _unlink(op)
    if op.parent is not None:
        op.parent.ops.remove(op)
        op.parent = None


def _unlink(op: Op) -> None:
    for inner in list(op.walk()):
        for v in inner.operands:
            if inner in v.users:
                v.users.remove(inner)


class Eraser:
    """`erase` for a pass that erases many ops: each is unlinked from its operands and its block
    at once (`parent` None, as `erase` leaves it), but stays in its block's list until `done`
    takes every erased op out in one pass per block. One by one, each removal searched its
    block's list: promoting a big kernel's locals erases thousands of ops of one block."""

    def __init__(self) -> None:
        self.erased: set[Op] = set()
        self.blocks: dict[int, Block] = {}

    def erase(self, op: Op) -> None:
        _unlink(op)
        if op.parent is not None:
            self.blocks[id(op.parent)] = op.parent
            self.erased.add(op)
            op.parent = None

    def done(self) -> None:
        erased = self.erased
        for block in self.blocks.values():
            block.ops[:] = [op for op in block.ops if op not in erased]
        self.erased, self.blocks = set(), {}


def clone_op(op: Op, mapping: dict[Value, Value]) -> Op:
    """A copy of `op`, its operands remapped through `mapping` (extended in place with its result
    and its blocks' arguments); its blocks are new and empty. Built field by field, as `Op.__init__`
    would build it: replaying a big kernel's statements clones every op (`stmt_memo.py`)."""
    new = object.__new__(type(op))
    new.regions = []
    for r in op.regions:
        args = [Value(a.type, a.name) for a in r.args]
        mapping.update(zip(r.args, args))
        block = Block(args)
        block.parent = new
        new.regions.append(block)
    new.attrs = dict(op.attrs)
    if isinstance(op, Call):
        new.attrs["function"] = clone_function(op.function, mapping)
    get = mapping.get
    new.operands = [get(v, v) for v in op.operands]
    for v in new.operands:
        v.users.append(new)
    res = op.result
    if res is None:
        new.result = None
    else:
        new.result = mapping[res] = Value(res.type, res.name, new)
    new.loc, new.parent = op.loc, None
    return new


def clone_function(fn: Function, mapping: dict) -> Function:
    """A copy of function `fn` (once per `mapping`: the calls of one clone share it), the kernel
    values its body uses remapped through `mapping`, as the ops that call it are."""
    if fn in mapping:
        return mapping[fn]
    params = [Value(p.type, p.name) for p in fn.params]
    new = mapping[fn] = Function(fn.name, params, fn.returns, fn.loc)
    mapping.update(zip(fn.params, params))
    clone_ops(fn.body.ops, mapping, new.body)
    return new


def clone_ops(ops: list[Op], mapping: dict[Value, Value], into: Block) -> None:
    """Copy `ops` (with nested blocks) into `into`, remapping operands through `mapping` (extended
    in place)."""
    for op in ops:
        new = clone_op(op, mapping)
        into.append(new)
        for r, nr in zip(op.regions, new.regions):
            clone_ops(r.ops, mapping, nr)


def defining_op(v: Value) -> Op:
    """The op whose result `v` is (not a block argument)."""
    owner = v.owner
    assert isinstance(owner, Op), f"{v} is not an op's result"
    return owner


def array_of(op: Op) -> Value:
    """The array a memory op (a load, store, atomic or address) accesses."""
    arr = op.array_operand
    assert arr is not None, f"{op.name} accesses no array"
    return arr


def arg_op(v: Value) -> Arg:
    """The `arg` op that defines `v`, a kernel parameter (an array handle, say)."""
    owner = v.owner
    assert isinstance(owner, Arg), f"{v} is not a parameter"
    return owner


def arg_index(v: Value) -> int:
    """The index of the kernel parameter `v` stands for."""
    return arg_op(v).attrs["index"]


def is_array(v: Value) -> bool:
    return isinstance(v.type, ArrayType)


def is_local(v: Value) -> bool:
    return isinstance(v.type, LocalType)


def field_params(kernel: Kernel) -> dict[int, FieldBase]:
    """The hidden parameters of `kernel` that stand for fields, by parameter index."""
    return kernel.flags.fields
