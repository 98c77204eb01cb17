"""IR to LLVM IR, one function per task, with llvmlite's builder.

Every task function has the signature `i64 task(i8* args, i8* tmp, i64 chunk, i64 nchunks)`: `args`
holds one 8-byte word per scalar parameter and, per array, its data pointer, gradient pointer and
extents; `tmp` is the per-launch temporary buffer (header, slots, reduction partials). A parallel
task called with `nchunks == 0` runs inline when its range is small and otherwise returns the trip
count so the runtime can split it; `chunk == -1` folds the per-chunk partials in chunk order, so
reductions give the same bits on every run. A non-zero return from a serial task means an error was
recorded in the header.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir as ll

from ...core import keys
from ...core.abi import arg_words
from ...core.types import DType, i32
from .. import ir
from .arith import binop
from .emitters import EMITTERS, address, rmw
from .lltypes import F64, I8, I8P, I32, I64, TASK_TYPE, lltype
from .offload import Plan, Task, fold_op, message_ops

if TYPE_CHECKING:
    from ...core.errors import SourceLoc

PARALLEL_THRESHOLD = 8192


class LineTable:
    """Debug line locations (`!dbg`) for the LLVM IR the views show: every instruction names its
    source line, so the optimised IR and the assembly (`.loc`) map back to the kernel's lines.

    Only the views ask for it (`emit_module(..., lines=True)`); the binaries the pipeline builds and
    caches carry none, and the cache key hashes the qdlab IR text, so moving code still reuses."""

    def __init__(self, module: ll.Module, filename: str) -> None:
        self.module = module
        self.file = module.add_debug_info("DIFile", {"filename": filename, "directory": ""})
        unit = module.add_debug_info(
            "DICompileUnit",
            {
                "language": ll.DIToken("DW_LANG_Python"),
                "file": self.file,
                "producer": "qdlab",
                "runtimeVersion": 0,
                "isOptimized": True,
                "emissionKind": ll.DIToken("LineTablesOnly"),
            },
            is_distinct=True,
        )
        self.unit = unit
        module.add_named_metadata("llvm.dbg.cu", unit)
        for flag, value in (("Debug Info Version", 3), ("Dwarf Version", 4)):
            module.add_named_metadata(
                "llvm.module.flags", module.add_metadata([I32(2), flag, I32(value)])
            )
        self.type = module.add_debug_info("DISubroutineType", {"types": module.add_metadata([])})

    def scope(self, fn: ll.Function, line: int) -> Callable[[SourceLoc], ll.DIValue]:
        """Attach a subprogram to `fn`; returns the location of a source position in it."""
        sub = self.module.add_debug_info(
            "DISubprogram",
            {
                "name": fn.name,
                "file": self.file,
                "line": line,
                "type": self.type,
                "isLocal": False,
                "isDefinition": True,
                "unit": self.unit,
                "scopeLine": line,
                "spFlags": ll.DIToken("DISPFlagDefinition"),
            },
            is_distinct=True,
        )
        fn.set_metadata("dbg", sub)
        seen: dict[tuple[int, int], ll.DIValue] = {}

        def at(loc: SourceLoc) -> ll.DIValue:
            where = (loc.lineno, loc.col + 1)
            if where not in seen:
                seen[where] = self.module.add_debug_info(
                    "DILocation", {"line": where[0], "column": where[1], "scope": sub}
                )
            return seen[where]

        return at


class TaskEmitter:
    """Emits one task's function."""

    host_print = True
    """The task can call the host's print callback (a failed assertion's message passes values)."""

    def __init__(
        self, module: ll.Module, kernel: ir.Kernel, plan: Plan, task: Task, symbol: str, debug: bool
    ) -> None:
        self.module, self.kernel, self.plan, self.task, self.debug = (
            module,
            kernel,
            plan,
            task,
            debug,
        )
        self.fn = self.declare(module, symbol)
        self.entry = self.fn.append_basic_block("entry")
        self.b = ll.IRBuilder(self.entry)
        self.vals: dict[ir.Value, ll.Value] = {}
        self.locals: dict[ir.Value, ll.Value] = {}
        self.loops: list[tuple[ll.Block, ll.Block]] = []
        self.layout = arg_words(kernel.params)
        self.reduce_acc: dict[ir.Value, ll.Value] = {}
        self.memory_acc: dict[ir.Op, ll.Value] = {}
        """Per-chunk partial results of the memory reductions (`Task.memory_reductions`)."""
        self.iter_index: ll.Value = ll.Constant(I64, 0)
        self.rng_counter = self.b.alloca(I64, name="rng_counter")
        self.b.store(ll.Constant(I64, 0), self.rng_counter)
        self.strings: dict[str, ll.Value] = {}
        self.arrays: dict = {}
        self.wide: dict[ir.Value, ll.Value] = {}
        self.messages = message_ops([op for t in plan.tasks for op in t.ops], debug)
        self.line_of: Callable[[SourceLoc], ll.DIValue] | None = None
        """Where an op's instructions say they come from (`!dbg`), when the views asked for it."""
        self.functions: dict[ir.Function, ll.Function] = {}
        """The LLVM function of each function of the kernel the module defines (`ir.Call`)."""
        self.depth: ll.Value = ll.Constant(I32, 0)
        """How many real calls deep this code runs (`abi.MAX_CALL_DEPTH`): a task is at 0."""

    # -- target hooks (the NVPTX emitter overrides these) ------------------------------------------
    def declare(self, module: ll.Module, symbol: str) -> ll.Function:
        fn = ll.Function(module, TASK_TYPE, symbol)
        fn.attributes.add("nounwind")
        self.args_ptr, self.tmp, self.chunk, self.nchunks = fn.args
        for a, n in zip(fn.args, ("args", "tmp", "chunk", "nchunks")):
            a.name = n
        return fn

    def ret_status(self, code: int) -> None:
        """Leave the task; a non-zero code means an error was recorded in the header."""
        self.b.ret(ll.Constant(I64, code))

    def array_pointer(self, data: ll.Value, ty: ll.Type) -> ll.Value:
        """An array's data word as a pointer to its elements."""
        return self.b.inttoptr(data, ty.as_pointer())

    # -- helpers -----------------------------------------------------------------------------------
    def word(self, base: ll.Value, offset_bytes: int, ty: ll.Type, name: str = "") -> ll.Value:
        p = self.b.gep(base, [ll.Constant(I64, offset_bytes)])
        return self.b.bitcast(p, ty.as_pointer(), name=name)

    def at_entry(self, emit: Callable[[], ll.Value]) -> ll.Value:
        """Emit at the top of the entry block, so the value dominates every use in the function."""
        with self.b.goto_block(self.entry):
            self.b.position_at_start(self.entry)
            return emit()

    def alloca_entry(self, ty: ll.Type, name: str) -> ll.Value:
        with self.b.goto_block(self.entry):
            self.b.position_at_start(self.entry)
            return self.b.alloca(ty, name=name)

    def cstring(self, text: str) -> ll.Value:
        if text not in self.strings:
            data = bytearray(text.encode() + b"\0")
            g = ll.GlobalVariable(
                self.module, ll.ArrayType(I8, len(data)), f"{self.fn.name}.str{len(self.strings)}"
            )
            g.global_constant, g.linkage, g.initializer = (
                True,
                "private",
                ll.Constant(g.type.pointee, data),
            )
            self.strings[text] = g
        return self.b.bitcast(self.strings[text], I8P)

    def intrinsic(self, name: str, ret: ll.Type, args: list[ll.Type]) -> ll.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ll.Function(self.module, ll.FunctionType(ret, args), name)

    def cycle_counter(self) -> ll.Value:
        """The processor's cycle counter (the time-stamp counter on x86-64)."""
        return self.b.call(self.intrinsic("llvm.readcyclecounter", I64, []), [], name="clock")

    def get(self, v: ir.Value) -> ll.Value:
        if v in self.vals:
            return self.vals[v]
        if v in self.plan.slots and not ir.is_local(v):
            dtype = v.dtype
            self.vals[v] = self.at_entry(
                lambda: self.from_word(
                    self.b.load(self.word(self.tmp, self.plan.slots[v], I64)), dtype
                )
            )
            return self.vals[v]
        raise KeyError(f"value {v} used before definition in task")

    def from_word(self, w: ll.Value, t: DType) -> ll.Value:
        if t.is_float:
            if t.bits < 64:
                return self.b.bitcast(self.b.trunc(w, ll.IntType(t.bits)), lltype(t))
            return self.b.bitcast(w, F64)
        return self.b.trunc(w, lltype(t)) if t.bits < 64 else w

    def to_word(self, v: ll.Value, t: DType) -> ll.Value:
        if t.is_float:
            if t.bits < 64:
                return self.b.zext(self.b.bitcast(v, ll.IntType(t.bits)), I64)
            return self.b.bitcast(v, I64)
        if t.bits == 64:
            return v
        return self.b.sext(v, I64) if t.is_signed else self.b.zext(v, I64)

    def local_ptr(self, ref: ir.Value) -> ll.Value:
        if ref not in self.locals:
            ty = lltype(ref.element)
            if ref in self.plan.slots:
                self.locals[ref] = self.at_entry(
                    lambda: self.word(self.tmp, self.plan.slots[ref], ty, ref.name)
                )
            else:
                self.locals[ref] = self.alloca_entry(ty, ref.name)
        return self.locals[ref]

    def terminated(self) -> bool:
        return self.b.block.terminator is not None

    def dead_block(self) -> None:
        self.b.position_at_end(self.fn.append_basic_block("dead"))

    # -- emission ----------------------------------------------------------------------------------
    def emit_task(self) -> None:
        needed = self.remat_needed()
        for op in self.kernel.body.ops:
            if op.result in needed:
                self.op(op)
        if self.task.kind == "parallel_for":
            loop = self.task.ops[0]
            if self.line_of is not None and loop.loc is not None:
                self.b.debug_metadata = self.line_of(loop.loc)
            self.parallel(self.task.loop)
        else:
            for op in self.task.ops:
                self.b.store(ll.Constant(I64, 0), self.rng_counter)
                self.op(op)
                if self.terminated():
                    self.dead_block()
            self.ret_status(0)

    def remat_needed(self) -> set[ir.Value]:
        need: set[ir.Value] = set()
        work = [v for top in self.task.ops for op in top.walk() for v in op.operands]
        while work:
            v = work.pop()
            if v in self.plan.remat and v not in need:
                need.add(v)
                work.extend(ir.defining_op(v).operands)
        return need

    def block(self, block: ir.Block) -> None:
        for op in block.ops:
            self.op(op)
            if self.terminated():
                self.dead_block()

    def op(self, op: ir.Op) -> None:
        outer = self.b.debug_metadata
        if self.line_of is not None and op.loc is not None:
            self.b.debug_metadata = self.line_of(op.loc)
        result = EMITTERS[type(op)](self, op)
        if op.result is not None and result is not None:
            self.vals[op.result] = result
            if op.result in self.plan.slots and not ir.is_local(op.result):
                self.b.store(
                    self.to_word(result, op.result.dtype),
                    self.word(self.tmp, self.plan.slots[op.result], I64),
                )
        self.b.debug_metadata = outer

    # -- loops -------------------------------------------------------------------------------------
    def range_loop(
        self,
        index: ir.Value,
        lo: ll.Value,
        hi: ll.Value,
        body: Callable[[], None],
        per_iteration: bool = False,
        stride: ll.Value | None = None,
    ) -> None:
        """`for index in range(lo, hi, stride)`; `per_iteration` marks a parallel loop's iterations
        (the random generator's counter restarts and keys on the index)."""
        b = self.b
        slot = self.alloca_entry(I64, f"{index.name}.addr")
        b.store(lo, slot)
        cond = self.fn.append_basic_block(f"{index.name}.cond")
        step = self.fn.append_basic_block(f"{index.name}.step")
        loop = self.fn.append_basic_block(f"{index.name}.body")
        done = self.fn.append_basic_block(f"{index.name}.done")
        b.branch(cond)
        b.position_at_end(cond)
        i = b.load(slot)
        b.cbranch(b.icmp_signed("<", i, hi), loop, done)
        b.position_at_end(loop)
        self.vals[index] = b.trunc(i, I32, name=index.name)
        self.wide[index] = (
            i  # the exact i64 form, so addresses skip a sext(trunc(i)) that hides the stride
        )
        if per_iteration:
            self.iter_index = i
            b.store(ll.Constant(I64, 0), self.rng_counter)
        self.loops.append((step, done))
        body()
        self.loops.pop()
        if not self.terminated():
            b.branch(step)
        b.position_at_end(step)
        b.store(b.add(b.load(slot), stride if stride is not None else ll.Constant(I64, 1)), slot)
        b.branch(cond)
        b.position_at_end(done)

    def parallel(self, loop: ir.For) -> None:
        b = self.b
        begin = b.sext(self.get(loop.operands[0]), I64, name="begin")
        end = b.sext(self.get(loop.operands[1]), I64, name="end")
        total = b.sub(end, begin, name="total")
        zero, one = ll.Constant(I64, 0), ll.Constant(I64, 1)
        with b.if_then(b.icmp_signed("<=", total, zero)):
            b.ret(zero)
        reds = self.task.reductions
        mems = self.task.memory_reductions
        fold = self.fn.append_basic_block("fold")
        run = self.fn.append_basic_block("run")
        b.cbranch(b.icmp_signed("==", self.chunk, ll.Constant(I64, -1)), fold, run)
        b.position_at_end(fold)
        for r in reds:
            self.fold_partials(r)
        for op in mems:
            self.fold_memory(op)
        b.ret(zero)
        b.position_at_end(run)
        inline = b.icmp_signed("==", self.nchunks, zero, name="inline")
        with b.if_then(
            b.and_(inline, b.icmp_signed(">", total, ll.Constant(I64, PARALLEL_THRESHOLD)))
        ):
            b.ret(total)
        n = b.select(inline, one, self.nchunks)
        c = b.sdiv(b.sub(b.add(total, n), one), n, name="chunk_size")
        chunk = b.select(inline, zero, self.chunk)
        lo = b.add(begin, b.mul(chunk, c), name="lo")
        hi_raw = b.add(lo, c)
        hi = b.select(b.icmp_signed("<", hi_raw, end), hi_raw, end, name="hi")
        for r in reds:
            acc = self.alloca_entry(lltype(r.element), f"{r.name}.partial")
            b.store(reduction_identity(reduction_op(loop, r), r.element), acc)
            self.reduce_acc[r] = acc
        for op in mems:
            dtype = op.result.dtype
            acc = self.alloca_entry(lltype(dtype), f"{op.operands[0].name}.partial")
            b.store(reduction_identity(fold_op(op), dtype), acc)
            self.memory_acc[op] = acc
        index = loop.body.args[0]
        self.range_loop(index, lo, hi, lambda: self.block(loop.body), per_iteration=True)
        self.iter_index = ll.Constant(I64, 0)
        for r in reds:
            dtype = r.element
            acc = b.load(self.reduce_acc[r])
            with b.if_else(inline) as (then, other):
                with then:
                    ptr = self.local_ptr(r)
                    b.store(self.combine(reduction_op(loop, r), b.load(ptr), acc, dtype), ptr)
                with other:
                    base = self.plan.partials[r]
                    p = b.gep(self.word(self.tmp, base, lltype(dtype)), [chunk])
                    b.store(acc, p)
        for op in mems:
            dtype = op.result.dtype
            acc = b.load(self.memory_acc[op])
            with b.if_else(inline) as (then, other):
                with then:
                    self.apply_memory(op, acc)
                with other:
                    p = b.gep(
                        self.word(self.tmp, self.plan.partials[op.result], lltype(dtype)), [chunk]
                    )
                    b.store(acc, p)
        b.ret(zero)

    def apply_memory(self, op: ir.Atomic, value: ll.Value) -> None:
        """One atomic of a memory reduction's folded value into its element (whose indices are
        constants or values from before the loop)."""
        for v in op.operands[1:-1]:
            if isinstance(v.owner, ir.Const) and v not in self.vals:  # defined in the loop's body
                self.vals[v] = ll.Constant(lltype(v.dtype), v.owner.attrs["value"])
        dtype = op.result.dtype
        rmw(self, fold_op(op), address(self, op), value, dtype)

    def fold_memory(self, op: ir.Atomic) -> None:
        """The chunks' partials of a memory reduction, combined in chunk order, applied once."""
        dtype = op.result.dtype
        parts = self.word(self.tmp, self.plan.partials[op.result], lltype(dtype))
        acc = self.alloca_entry(lltype(dtype), f"{op.operands[0].name}.folded")
        self.b.store(reduction_identity(fold_op(op), dtype), acc)
        idx = ir.Value(i32, f"{op.operands[0].name}.chunk")

        def body() -> None:
            k = self.b.sext(self.vals[idx], I64)
            part = self.b.load(self.b.gep(parts, [k]))
            self.b.store(self.combine(fold_op(op), self.b.load(acc), part, dtype), acc)

        self.range_loop(idx, ll.Constant(I64, 0), self.nchunks, body)
        self.apply_memory(op, self.b.load(acc))

    def fold_partials(self, r: ir.Value) -> None:
        dtype = r.element
        loop = self.task.loop
        ptr = self.local_ptr(r)
        parts = self.word(self.tmp, self.plan.partials[r], lltype(dtype))
        idx = ir.Value(i32, f"{r.name}.chunk")

        def body() -> None:
            k = self.b.sext(self.vals[idx], I64)
            part = self.b.load(self.b.gep(parts, [k]))
            self.b.store(self.combine(reduction_op(loop, r), self.b.load(ptr), part, dtype), ptr)

        self.range_loop(idx, ll.Constant(I64, 0), self.nchunks, body)

    def combine(self, op: str, a: ll.Value, b_: ll.Value, t: DType) -> ll.Value:
        return binop(self, op, a, b_, t)


class FunctionEmitter(TaskEmitter):
    """Emits the body of one function of the kernel: `ret f(i8* args, i8* tmp, i32 depth,
    params...)`, where `args` and `tmp` are its caller's (arrays are read through the kernel's
    words, an error is recorded in the header, and the caller leaves when it sees one) and `depth`
    how many calls deep it runs."""

    def __init__(
        self,
        module: ll.Module,
        kernel: ir.Kernel,
        plan: Plan,
        fn: ir.Function,
        symbol: str,
        debug: bool,
    ) -> None:
        super().__init__(module, kernel, plan, Task("serial", []), symbol, debug)  # none its own
        self.ir_fn = fn
        self.depth = self.fn.args[2]
        for p, a in zip(fn.params, self.fn.args[3:]):
            self.vals[p] = a

    def declare(self, module: ll.Module, symbol: str) -> ll.Function:
        fn = module.globals[symbol]
        self.args_ptr, self.tmp = fn.args[:2]
        return fn

    def ret_status(self, code: int) -> None:
        ret = self.fn.function_type.return_type
        self.b.ret_void() if isinstance(ret, ll.VoidType) else self.b.ret(
            ll.Constant(ret, ll.Undefined)
        )

    def emit_function(self) -> None:
        self.block(self.ir_fn.body)
        if not self.terminated():
            self.ret_status(0)


def declare_functions(module: ll.Module, kernel: ir.Kernel, prefix: str) -> dict:
    """An internal LLVM function for each function the kernel calls."""
    out = {}
    for k, fn in enumerate(ir.functions_of(kernel)):
        ret = lltype(fn.returns) if fn.returns is not None else ll.VoidType()
        ty = ll.FunctionType(ret, [I8P, I8P, I32, *(lltype(p.dtype) for p in fn.params)])
        f = ll.Function(module, ty, f"{prefix}.fn{k}.{fn.name}")
        f.linkage = "internal"
        f.attributes.add("nounwind")
        out[fn] = f
    return out


def reduction_op(loop: ir.Op, r: ir.Value) -> str:
    """The one atomic op the loop reduces into `r` with (`sub` folds as `add`)."""
    for op in loop.walk():
        if isinstance(op, ir.LocalAtomic) and op.operands[0] is r:
            return "add" if op.attrs["op"] == "sub" else op.attrs["op"]
    raise AssertionError("reduction without an atomic")


def reduction_identity(op: str, t: DType) -> ll.Constant:
    """The value a partial result of `op` starts from."""
    if t.is_float:
        value = {"add": 0.0, "min": float("inf"), "max": float("-inf")}[op]
        return ll.Constant(lltype(t), value)
    bits = t.bits
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t.is_signed else (0, (1 << bits) - 1)
    value = {"add": 0, "or": 0, "xor": 0, "and": -1, "min": hi, "max": lo}[op]
    return ll.Constant(lltype(t), value)


def emit_module(
    kernel: ir.Kernel,
    plan: Plan,
    prefix: str,
    debug: bool,
    triple: str = "",
    datalayout: str = "",
    lines: bool = False,
) -> tuple[ll.Module, list[str]]:
    """One LLVM module with a function per task; returns the module and the task symbols in
    order. With `lines`, every instruction carries its source line (`LineTable`)."""
    module = ll.Module(name=prefix)
    if triple:
        module.triple = triple
    if datalayout:
        module.data_layout = datalayout
    locs = [op.loc for op in kernel.walk() if op.loc is not None] if lines else []
    table = LineTable(module, locs[0].filename) if locs else None
    symbols = []
    functions = declare_functions(module, kernel, prefix)
    for k, task in enumerate(plan.tasks):
        symbol = keys.symbol(prefix, k)
        emitter = TaskEmitter(module, kernel, plan, task, symbol, debug)
        emitter.functions = functions
        if table is not None:
            first = next((op.loc for op in task.ops if op.loc is not None), locs[0])
            emitter.line_of = table.scope(emitter.fn, first.lineno)
        emitter.emit_task()
        symbols.append(symbol)
    for fn, f in functions.items():
        body = FunctionEmitter(module, kernel, plan, fn, f.name, debug)
        body.functions = functions
        body.emit_function()
    return module, symbols
