"""What both task emitters (CPU and NVPTX) and the arithmetic share: LLVM types, `lltype`, error
codes."""

from __future__ import annotations

from llvmlite import ir as ll

from ...core.abi import ERR_ASSERT, ERR_BOUNDS, ERR_DEPTH  # noqa: F401 - the emitters' error codes
from ...core.types import DType

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
