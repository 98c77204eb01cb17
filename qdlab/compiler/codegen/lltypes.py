"""What both task emitters (CPU and NVPTX) and the arithmetic share: LLVM types, `lltype`, error
codes."""

from __future__ import annotations

from llvmlite import ir as ll

from ...core.abi import ERR_ASSERT, ERR_BOUNDS, ERR_DEPTH  # noqa: F401 - the emitters' error codes
from ...core.types import DType, flush_subnormal

I1, I8, I32, I64 = ll.IntType(1), ll.IntType(8), ll.IntType(32), ll.IntType(64)
F16, F32, F64 = ll.HalfType(), ll.FloatType(), ll.DoubleType()
I8P = I8.as_pointer()
TASK_TYPE = ll.FunctionType(I64, [I8P, I8P, I64, I64])
"""A CPU task: `i64 task(i8* args, i8* tmp, i64 chunk, i64 nchunks)`."""
PRINT_TYPE = ll.FunctionType(ll.VoidType(), [I8P, I64.as_pointer(), I64])


def lltype(t: DType) -> ll.Type:
    if t.is_float:
        return {16: F16, 32: F32}.get(t.bits, F64)
    return ll.IntType(t.bits)


def constant(t: DType, value: float) -> ll.Constant:
    """A constant of `t`; a subnormal float one is the zero kernels flush it to."""
    if t.is_float:
        value = flush_subnormal(float(value), t)
    return ll.Constant(lltype(t), value)


class FlushingAttributes(ll.values.FunctionAttributes):
    """A defined function's attributes, and the denormal mode kernels run in (flush to zero,
    denormals are zero: the runtime sets it, `runtime.flush_denormals`), so that LLVM folds
    constants as the code computes."""

    def _to_list(self, ret_type: ll.Type) -> list[str]:
        return [*super()._to_list(ret_type), '"denormal-fp-math"="preserve-sign,preserve-sign"']
