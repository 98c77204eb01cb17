"""Offload: cut a kernel body into tasks and decide which values live in the per-launch temporary
buffer.

Each top-level parallel `for` becomes one parallel task; every other top-level statement joins the
serial task that runs before the next parallel one. Pure values computed only from arguments, shapes
and constants are rematerialised in every task that needs them (arguments never change during a
launch). Any other value, and any local, that one task defines and another uses lives in a slot of
the temporary buffer ("global temporaries"). A local that a parallel loop touches always lives in a
slot, so every thread sees the same storage.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...core.abi import HEADER_BYTES, MAX_CHUNKS, ret_bytes
from .. import ir

DEFAULT_BLOCK_DIM = 128
REDUCTIONS = ("add", "sub", "min", "max", "and", "or", "xor")
"""Atomic ops on a local that a parallel loop may fold as per-chunk partial results."""
REMAT = (
    ir.Const,
    ir.Arg,
    ir.Shape,
    ir.BinOp,
    ir.Cmp,
    ir.Unary,
    ir.Cast,
    ir.Select,
    ir.InterfaceLoad,
)


@dataclass
class Task:
    """One unit that runs: a parallel range-for, or a serial run of statements."""

    kind: str
    """`"parallel_for"` or `"serial"`."""
    ops: list[ir.Op]
    """Top-level ops it runs, in order."""
    reductions: list[ir.Value] = field(default_factory=list)
    """Locals a parallel task reduces into with per-chunk partial results."""
    memory_reductions: list[ir.Atomic] = field(default_factory=list)
    """Atomics of a parallel task into one array element every iteration shares (`tot[None] +=
    x[i]`): reduced per chunk, folded in chunk order, then applied once (`memory_reductions`)."""

    @property
    def loop(self) -> ir.For:
        """The range-for a parallel task runs."""
        loop = self.ops[0]
        assert self.kind == "parallel_for" and isinstance(loop, ir.For)
        return loop

    @property
    def block_dim(self) -> int:
        """Threads per block on a GPU: `qd.loop_config(block_dim=...)` on a parallel loop, else 128;
        serial: 1."""
        if self.kind != "parallel_for":
            return 1
        return int(self.ops[0].attrs.get("block_dim") or DEFAULT_BLOCK_DIM)

    @property
    def lines(self) -> tuple[int, int]:
        ls = [op.loc.lineno for op in self.ops for op in op.walk() if op.loc]
        return (min(ls), max(ls)) if ls else (0, 0)


@dataclass
class Plan:
    """How a kernel body runs: its tasks and the layout of the temporary buffer."""

    tasks: list[Task]
    remat: set[ir.Value]
    """Top-level values recomputed in each task that uses them."""
    slots: dict[ir.Value, int]
    """Byte offset in the temporary buffer of each crossing value or shared local."""
    partials: dict[ir.Value, int]
    """Byte offset of the per-chunk partial results of each reduction local."""
    tmp_bytes: int
    owned: set[ir.Op] = field(default_factory=set)
    """Atomics on an array element only their own iteration of a parallel loop touches: they are
    emitted as a plain read-modify-write (`p[i] += v[i] * dt` over a vec3 ndarray is three)."""


def offload(kernel: ir.Kernel) -> Plan:
    remat: set[ir.Value] = set()
    tasks: list[Task] = []
    pending: list[ir.Op] = []
    for op in kernel.body.ops:
        if (
            isinstance(op, REMAT)
            and all(v in remat for v in op.operands)
            and not op.attrs.get("overflow")  # it reports: computed once, in its task
        ):
            remat.add(op.result)
            continue
        if isinstance(op, ir.For) and op.attrs.get("parallel"):
            if pending:
                tasks.append(Task("serial", pending))
                pending = []
            tasks.append(Task("parallel_for", [op]))
        else:
            pending.append(op)
    if pending:
        tasks.append(Task("serial", pending))

    owner: dict[ir.Value, int] = {}
    for t, task in enumerate(tasks):
        for op in task.ops:
            if op.result is not None:
                owner[op.result] = t
    slots: dict[ir.Value, int] = {}
    offset = HEADER_BYTES + ret_bytes(len(kernel.returns))

    def slot(v: ir.Value) -> None:
        nonlocal offset
        if v not in slots:
            slots[v] = offset
            offset += 8

    for t, task in enumerate(tasks):
        for top in task.ops:
            for op in top.walk():
                for v in op.operands:
                    if v in owner and (
                        owner[v] != t or (ir.is_local(v) and task.kind == "parallel_for")
                    ):
                        slot(v)
    for task in tasks:
        if task.kind == "parallel_for":
            task.reductions = _reductions(task.loop)
            task.memory_reductions = memory_reductions(task.loop)
    partials: dict[ir.Value, int] = {}
    for task in tasks:
        for r in task.reductions:
            slot(r)
            partials[r] = offset
            offset += 8 * MAX_CHUNKS
        for op in task.memory_reductions:
            partials[op.result] = offset
            offset += 8 * MAX_CHUNKS
    owned = {op for t in tasks if t.kind == "parallel_for" for op in owned_atomics(t.loop)}
    return Plan(tasks, remat, slots, partials, offset, owned)


def owned_atomics(loop: ir.Op) -> set[ir.Op]:
    """Atomics of a parallel loop that need no atomicity, as Quadrants demotes its loop-unique ones:
    the element's outer indices include every index the iterations are told apart by (the loop
    index; or each axis a `qd.ndrange`, `qd.grouped` or struct-for decomposes it into with `%` and
    `//`; each possibly offset by a value the loop does not change), so no two iterations share it;
    every other access to that array in the loop uses the same outer indices; the old value is
    unused; the loop calls no function (whose accesses it cannot see) and takes no element's
    address; and no other array the loop updates atomically could be the same memory (a field
    shares memory with no other buffer; an ndarray may with another of its dtype)."""
    ops = list(loop.walk())
    if any(isinstance(op, ir.Call) for op in ops):
        return set()
    inside = {id(op) for op in ops}
    accesses: dict[tuple[ir.Value, bool], list[ir.Op]] = {}
    for op in ops:
        if op.array_operand is not None:
            accesses.setdefault(_buffer(op), []).append(op)
    atomic_dtypes: dict[object, int] = {}
    for (arr, _), ops_of in accesses.items():
        if any(isinstance(op, ir.Atomic) for op in ops_of):
            dtype = arr.array_type.dtype
            atomic_dtypes[dtype] = atomic_dtypes.get(dtype, 0) + 1
    unique = _LoopUnique(loop.regions[0].args[0], ops, inside)
    owned = set()
    for (arr, _), ops_of in accesses.items():
        at = arr.array_type
        is_field = bool(ir.arg_op(arr).attrs.get("field"))
        if at.ndim == 0 or (not is_field and atomic_dtypes.get(at.dtype, 0) != 1):
            continue
        if any(isinstance(op, ir.Addr) for op in ops_of):
            continue
        outer = ops_of[0].operands[1 : 1 + at.ndim]
        if all(
            all(map(operator.is_, op.operands[1 : 1 + at.ndim], outer)) for op in ops_of
        ) and unique.covers(outer):
            owned |= {
                op
                for op in ops_of
                if isinstance(op, ir.Atomic) and not (op.result and op.result.users)
            }
    return owned


class _LoopUnique:
    """Which sets of index values tell a parallel loop's iterations apart (`owned_atomics`)."""

    def __init__(self, index: ir.Value, ops: list[ir.Op], inside: set[int]) -> None:
        self.index, self.inside = index, inside
        self.divisions: dict[tuple[str, int, int], ir.Value] = {}
        """(`mod` or `floordiv`, id of the dividend, id of the divisor) -> the result, for a
        divisor the loop does not change."""
        for op in ops:
            if isinstance(op, ir.BinOp) and op.attrs["op"] in ("mod", "floordiv"):
                a, e = op.operands
                if self.invariant(e):
                    self.divisions[(op.attrs["op"], id(a), id(e))] = op.out

    def invariant(self, v: ir.Value) -> bool:
        owner = v.owner
        return isinstance(owner, ir.Const) or id(owner) not in self.inside

    def base(self, v: ir.Value) -> ir.Value:
        """`v` without the loop-invariant offsets added to it or subtracted (a one-to-one map)."""
        while isinstance(v.owner, ir.BinOp) and v.owner.attrs["op"] in ("add", "sub", "xor"):
            a, b = v.owner.operands
            if self.invariant(b) and not self.invariant(a):
                v = a
            elif self.invariant(a) and not self.invariant(b):
                v = b
            else:
                break
        return v

    def covers(self, indices: Sequence[ir.Value]) -> bool:
        """Whether these values together determine the loop index: it is one of them, or `i % e`
        is and what determines `i // e` is too (`i = e * (i // e) + i % e` for any e != 0)."""
        have = {id(self.base(v)) for v in indices}

        def determined(r: ir.Value, depth: int) -> bool:
            if id(r) in have:
                return True
            if depth > 8:
                return False
            for (name, a, e), m in self.divisions.items():
                if name == "mod" and a == id(r) and id(m) in have:
                    q = self.divisions.get(("floordiv", a, e))
                    if q is not None and determined(q, depth + 1):
                        return True
            return False

        return determined(self.index, 0)


def _buffer(op: ir.Op) -> tuple[ir.Value, bool]:
    """The array (or its gradient) an op that reads or writes array memory accesses."""
    return ir.array_of(op), bool(op.attrs.get("grad"))


def memory_reductions(loop: ir.Op) -> list[ir.Atomic]:
    """Atomics of a parallel loop that reduce into one array element all its iterations share: the
    old value is unused, the op is a reduction, the indices do not change in the loop (constants or
    values from outside it), and nothing else in the loop reads or writes that buffer. An ndarray
    qualifies only when no other buffer of its dtype is accessed in the loop (it might be the same
    memory); a field (`arg {field=True}`) shares memory with no other buffer."""
    inside = {id(x) for op in loop.walk() for x in (op, *op.regions)}
    inside |= {id(fn.body) for fn in ir.functions_of(list(loop.walk()))}  # parameters vary
    by_buffer: dict[tuple[ir.Value, bool], list[ir.Op]] = {}
    for op in loop.regions[0].walk():
        if "read" in op.effects or "write" in op.effects:
            by_buffer.setdefault(_buffer(op), []).append(op)
    dtypes: dict[object, int] = {}
    for arr, _ in by_buffer:
        dtypes[arr.array_type.dtype] = dtypes.get(arr.array_type.dtype, 0) + 1
    out: list[ir.Atomic] = []
    for (arr, _), accesses in by_buffer.items():
        ops = [op for op in accesses if isinstance(op, ir.Atomic) and not op.result.users]
        dtype = arr.array_type.dtype
        if not (
            len(ops) == len(accesses)
            and all(fold_op(op) in REDUCTIONS for op in ops)
            and all(_invariant(v, inside) for op in ops for v in op.operands[1:-1])
            and (ir.arg_op(arr).attrs.get("field") or dtypes[dtype] == 1)
        ):
            continue
        groups: list[list[ir.Atomic]] = []
        for op in ops:
            group = next((g for g in groups if _same_indices(op, g[0])), None)
            if group is None:
                groups.append([op])
            else:
                group.append(op)
        constant = all(isinstance(v.owner, ir.Const) for op in ops for v in op.operands[1:-1])
        if (len(groups) == 1 or constant) and all(
            len({fold_op(op) for op in g}) == 1 for g in groups
        ):
            out.extend(ops)  # one element, or distinct constant elements, each one kind of update
    return out


def fold_op(op: ir.Op) -> str:
    name = op.attrs.get("op", "")
    return "add" if name == "sub" else name


def _invariant(v: ir.Value, inside: set[int]) -> bool:
    owner = v.owner
    return isinstance(owner, ir.Const) or id(owner) not in inside


def _same_indices(op: ir.Op, first: ir.Op) -> bool:
    a, b = op.operands[1:-1], first.operands[1:-1]
    return len(a) == len(b) and all(
        x is y
        or (
            isinstance(x.owner, ir.Const)
            and isinstance(y.owner, ir.Const)
            and x.owner.attrs["value"] == y.owner.attrs["value"]
        )
        for x, y in zip(a, b)
    )


def _reductions(loop: ir.For) -> list[ir.Value]:
    """Outer locals the loop only reduces into (never reads, plainly writes, or takes an atomic's
    old value of): safe for per-chunk partials."""
    atomics: dict[ir.Value, set[str]] = {}
    other: set[ir.Value] = set()
    for op in loop.body.walk():
        if (
            isinstance(op, ir.LocalAtomic)
            and op.attrs["op"] in REDUCTIONS
            and not (op.result and op.result.users)
        ):
            atomics.setdefault(op.operands[0], set()).add(
                "add" if op.attrs["op"] == "sub" else op.attrs["op"]
            )
        elif isinstance(op, (ir.LocalLoad, ir.LocalStore, ir.LocalAtomic)):
            other.add(op.operands[0])
    called = ir.functions_of(list(loop.body.walk()))
    own = {op.result for fn in called for op in fn.body.walk() if isinstance(op, ir.Alloca)}
    return [r for r, ops in atomics.items() if r not in other | own and len(ops) == 1]


def message_ops(kernel_ops: list[ir.Op], debug: bool) -> list[ir.Op]:
    """Ops that can report an error, in the order the emitter numbers them (cached binaries keep the
    numbers): assertions, real calls (too deep), and in debug mode the accesses of arrays."""
    out = []
    for top in kernel_ops:
        for op in top.walk():
            if isinstance(op, (ir.Assert, ir.Call)) or (
                debug
                and (
                    isinstance(
                        op, (ir.Load, ir.Store, ir.Atomic, ir.AtomicCas, ir.VolatileLoad, ir.Addr)
                    )
                    or (isinstance(op, ir.BinOp) and op.attrs.get("overflow"))
                )
            ):
                out.append(op)
    return out
