"""IR to LLVM IR for `nvptx64-nvidia-cuda`: the CPU task emitter with the few parts that differ on a
GPU.

Every task becomes a `.entry` kernel `void task(i8* args, i8* tmp)`, both pointers into device
memory and laid out as on the CPU. A parallel range-for is a grid-stride loop over [begin, end):
thread `t` of the grid runs iterations `begin + t`, `begin + t + grid`, ... so neighbouring threads
touch neighbouring elements. A serial task is launched with one thread. A reduction into a local
keeps one partial per thread and folds it into the local's slot with one atomic at the end (the
CPU's per-chunk partials need a fixed chunk count; a grid has thousands of threads). Transcendental
math calls libdevice's `__nv_*` functions where the CPU calls the C math library's;
`qd.print` is refused at compile time. Array data pointers are marked global (address space 1) so
the backend emits `ld.global`/`st.global`.
"""

from __future__ import annotations

from llvmlite import ir as ll

from ...core import keys
from ...core.errors import QdError
from .. import ir
from .arith import LIBM
from .emitters import rmw
from .lltypes import I8P, I32, I64, lltype
from .llvm import FunctionEmitter, TaskEmitter, declare_functions, reduction_identity, reduction_op
from .offload import Plan

TRIPLE = "nvptx64-nvidia-cuda"
KERNEL_TYPE = ll.FunctionType(ll.VoidType(), [I8P, I8P])
GLOBAL = 1
"""NVPTX address space of device global memory."""


def libdevice_name(name: str) -> str | None:
    """The libdevice function that replaces a call of the C math library (`sinf`, `atan2`, ...:
    `arith.LIBM`), or None."""
    if name in LIBM or (name.endswith("f") and name[:-1] in LIBM):
        return f"__nv_{name}"
    return None


class PtxTaskEmitter(TaskEmitter):
    """Emits one task as a PTX kernel."""

    host_print = False

    def declare(self, module: ll.Module, symbol: str) -> ll.Function:
        fn = ll.Function(module, KERNEL_TYPE, symbol)
        fn.calling_convention = "ptx_kernel"
        fn.attributes.add("nounwind")
        self.args_ptr, self.tmp = fn.args
        for a, n in zip(fn.args, ("args", "tmp")):
            a.name = n
            a.add_attribute("noalias")
        return fn

    def ret_status(self, code: int) -> None:
        self.b.ret_void()

    def array_pointer(self, data: ll.Value, ty: ll.Type) -> ll.Value:
        return self.b.addrspacecast(self.b.inttoptr(data, ty.as_pointer(GLOBAL)), ty.as_pointer())

    def intrinsic(self, name: str, ret: ll.Type, args: list[ll.Type]) -> ll.Function:
        return super().intrinsic(libdevice_name(name) or name, ret, args)

    def op(self, op: ir.Op) -> None:
        if isinstance(op, ir.Print):
            raise QdError(
                "qd.print / print() is not supported on CUDA yet; remove it, or run the kernel "
                "with qd.init(arch=qd.cpu) to print.",
                op.loc,
            )
        super().op(op)

    def sreg(self, name: str) -> ll.Value:
        fn = self.intrinsic(f"llvm.nvvm.read.ptx.sreg.{name}", I32, [])
        return self.b.zext(self.b.call(fn, []), I64, name=name.replace(".", "_"))

    def cycle_counter(self) -> ll.Value:
        fn = self.intrinsic("llvm.nvvm.read.ptx.sreg.clock64", I64, [])
        return self.b.call(fn, [], name="clock")

    # -- parallel range-for as a grid-stride loop --------------------------------------------------
    def parallel(self, loop: ir.For) -> None:
        b = self.b
        begin = b.sext(self.get(loop.operands[0]), I64, name="begin")
        end = b.sext(self.get(loop.operands[1]), I64, name="end")
        ntid = self.sreg("ntid.x")
        thread = b.add(b.mul(self.sreg("ctaid.x"), ntid), self.sreg("tid.x"), name="thread")
        stride = b.mul(ntid, self.sreg("nctaid.x"), name="stride")
        start = b.add(begin, thread, name="start")
        reds = self.task.reductions
        for r in reds:
            acc = self.alloca_entry(lltype(r.element), f"{r.name}.partial")
            b.store(reduction_identity(reduction_op(loop, r), r.element), acc)
            self.reduce_acc[r] = acc
        self.range_loop(
            loop.body.args[0],
            start,
            end,
            lambda: self.block(loop.body),
            per_iteration=True,
            stride=stride,
        )
        self.iter_index = ll.Constant(I64, 0)
        if reds:
            with b.if_then(b.icmp_signed("<", start, end)):
                for r in reds:
                    dtype = r.element
                    rmw(
                        self,
                        reduction_op(loop, r),
                        self.local_ptr(r),
                        b.load(self.reduce_acc[r]),
                        dtype,
                    )
        b.ret_void()


def emit_module(
    kernel: ir.Kernel, plan: Plan, prefix: str, debug: bool, datalayout: str = ""
) -> tuple[ll.Module, list[str]]:
    """One NVPTX LLVM module with a kernel per task; returns the module and the task symbols in
    order."""
    module = ll.Module(name=prefix)
    module.triple = TRIPLE
    if datalayout:
        module.data_layout = datalayout
    symbols = []
    functions = declare_functions(module, kernel, prefix)
    for k, task in enumerate(plan.tasks):
        symbol = keys.symbol(prefix, k)
        emitter = PtxTaskEmitter(module, kernel, plan, task, symbol, debug)
        emitter.functions = functions
        emitter.emit_task()
        symbols.append(symbol)
    for fn, f in functions.items():
        body = PtxFunctionEmitter(module, kernel, plan, fn, f.name, debug)
        body.functions = functions
        body.emit_function()
    return module, symbols


class PtxFunctionEmitter(FunctionEmitter, PtxTaskEmitter):
    """The body of a function of the kernel (`ir.Call`) for the device: a function's own
    signature and returns, the device's memory, intrinsics and ops."""
