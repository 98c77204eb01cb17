"""Arguments of a kernel checked against their annotations: arrays (a `qd.ndarray`, a NumPy array,
anything with `__array_interface__`, `__cuda_array_interface__` or DLPack: dtype, ndim, element
shape, layout, gradient buffer) and scalars (range and integrality), and the annotations
themselves."""

from __future__ import annotations

import math
import reprlib
import struct
import types
import typing
from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.runtime import cuda as cuda_runtime
from ..core.errors import (
    QdArgumentError,
    QdArgumentTypeError,
    QdTypeError,
    QdValueError,
    SourceLoc,
)
from ..core.language import (
    ArrayAnnotation,
    MatrixType,
    NDArray,
    OptionalArray,
    Template,
    sparse_matrix_builder,
    template,
)
from ..core.types import ArrayType, DType, from_numpy, u1
from . import state, vector_args
from .launch import Storage
from .ndarray import RELEASED, MatrixNdarray, Ndarray, ScalarNdarray, VectorNdarray
from .tensor import Tensor

NDARRAYS = (Ndarray, ScalarNdarray, VectorNdarray, MatrixNdarray)

INDEX_MAX = 2**31 - 1
"""The largest array extent: kernels index arrays with i32."""


def array_arg(
    a: object,
    ann: ArrayAnnotation,
    kernel: str,
    name: str,
    where: Callable[[], SourceLoc | None] = lambda: None,
) -> tuple[Storage, Storage, ArrayType]:
    """The array an argument passes (and its gradient buffer), checked against the parameter's
    annotation, and its type in the kernel's signature; `where` locates the annotation for an
    error about an element's shape."""
    grad = None
    if isinstance(a, Ndarray):
        if a.arr is None:
            raise QdTypeError(
                f"kernel `{kernel}`: argument `{name}` is {a._released}, which cannot be passed: "
                f"{RELEASED}; pass one made after the latest qd.init()."
            )
        arr = a.arr
        grad = a.grad.arr if a.grad is not None else None
    elif isinstance(a, np.ndarray):
        arr = a
    elif hasattr(
        a, "__cuda_array_interface__"
    ):  # CuPy, PyTorch CUDA tensors: passed by device pointer
        arr = cuda_runtime.DeviceArray(a)
    elif hasattr(a, "__array_interface__"):
        arr = np.asarray(a)
    elif hasattr(a, "__dlpack__"):
        try:
            if getattr(a, "requires_grad", False) and type(a).__module__ == "torch":
                arr, grad = torch_with_grad(a)
            else:
                arr = np.from_dlpack(a)  # type: ignore[arg-type]
        except Exception as e:  # noqa: BLE001 - the exporting library may raise anything
            raise QdTypeError(
                f"kernel `{kernel}`: argument `{name}` cannot be read through DLPack ({e})."
            ) from None
    else:
        raise QdArgumentTypeError(
            f"kernel `{kernel}`: Invalid type for argument {name}, got {reprlib.repr(a)}: "
            f"argument `{name}` must be a qd.ndarray or a NumPy array, not {type(a).__name__}."
        )
    dtype = from_numpy(arr.dtype)
    if dtype is None:
        raise QdTypeError(
            f"kernel `{kernel}`: argument `{name}` has dtype {arr.dtype}, which kernels do not "
            "support."
        )
    if isinstance(a, Ndarray):
        elem = a.element
        vector_args.check_ndarray((dtype, elem), ann.dtype, kernel, name)
    else:  # a NumPy array: its trailing axes are the element's (its dtype is taken as it is)
        elem = vector_args.numpy_element(arr, ann, kernel, name, where)
    want = vector_args.element(ann.dtype)[0] if not isinstance(ann.dtype, MatrixType) else None
    if want is not None and want != dtype and isinstance(a, Ndarray):
        raise QdTypeError(  # as the reference says it of its own ndarrays
            f"kernel `{kernel}`: Expect element type {want} for argument {name}, but get {dtype}."
        )
    if want is not None and want != dtype:  # a NumPy array, in Quadrants' words
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - required array has "
            f"dtype={want}, array with dtype={dtype} is provided (argument `{name}` has dtype "
            f"{dtype} but the parameter is declared {want})."
        )
    ndim = arr.ndim - len(elem)
    if ann.ndim is not None and ann.ndim != ndim and isinstance(a, Ndarray):
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - required ndim={ann.ndim}, "
            f"but {ndim}d ndarray with shape {tuple(arr.shape[:ndim])} is provided."
        )
    if ann.ndim is not None and ann.ndim != ndim:
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - required array has "
            f"ndim={ann.ndim}, array with {arr.ndim} dimensions is provided."
        )
    if any(n > INDEX_MAX for n in arr.shape):
        raise QdValueError(
            f"kernel `{kernel}`: argument `{name}` has shape {arr.shape}; kernels index arrays "
            f"with i32, so no extent may exceed 2**31 - 1 ({INDEX_MAX})."
        )
    if not arr.flags.c_contiguous:
        raise QdValueError(
            f"kernel `{kernel}`: Non contiguous numpy arrays are not supported: argument `{name}` "
            f"is not C-contiguous; pass np.ascontiguousarray({name})."
        )
    if ann.needs_grad and grad is None:
        raise QdValueError(
            f"kernel `{kernel}`: parameter `{name}` needs a gradient buffer; pass "
            "qd.ndarray(..., needs_grad=True)."
        )
    needs_grad = grad is not None if ann.needs_grad is None else bool(ann.needs_grad)
    t = ArrayType(
        dtype, ndim, needs_grad, ann.boundary, elem, a.layout if isinstance(a, Ndarray) else None
    )
    return arr, grad if needs_grad else None, t


def default_array_type(a: Any, kernel: str, name: str) -> ArrayType:
    """The type a qdlab ndarray takes where nothing annotates it (a struct's member): one per
    signature, which is made with the ndarray (a released one has none: `array_arg` refuses it)."""
    sig = a.__dict__.get("_sig")
    if sig is None or max(a.arr.shape, default=0) > INDEX_MAX:
        return array_arg(a, ArrayAnnotation(), kernel, name)[2]
    t = _DEFAULT_TYPES.get(sig)
    if t is None:
        t = _DEFAULT_TYPES[sig] = array_arg(a, ArrayAnnotation(), kernel, name)[2]
    return t


_DEFAULT_TYPES: dict[tuple, ArrayType] = {}


def annotation(ann: object) -> object:
    """A parameter's annotation as the kernel reads it (None: not one a plain parameter takes).
    `X | None` (`qd.Tensor`, `qd.types.Template`, `NDArray[...]`) takes None as Quadrants does:
    a template, or a `qd.Tensor`, which takes an ndarray, a field or None."""
    if isinstance(ann, OptionalArray):
        return Tensor
    args = typing.get_args(ann) if isinstance(ann, types.UnionType) else ()
    if len(args) == 2 and type(None) in args:
        inner = annotation(next(a for a in args if a is not type(None)))
        return inner if inner in (Tensor, Template) else None
    if isinstance(ann, ArrayAnnotation):
        return ann
    if ann is NDArray:
        return ArrayAnnotation()
    if isinstance(ann, (DType, MatrixType)) or ann in (int, float):
        return ann  # `int` / `float` become default_ip / default_fp when the kernel compiles
    if ann is bool:
        return u1
    if ann is Template or ann is template:  # `qd.template` without the call, as Quadrants takes it
        return Template
    if isinstance(ann, sparse_matrix_builder) or ann is sparse_matrix_builder:
        return Template  # the builder's fields, like a @qd.data_oriented object's
    if ann is Tensor:  # an ndarray or a field, whichever the argument is
        return Tensor
    return None


def scalar_type(ann: object) -> DType:
    """A scalar annotation's dtype under the active settings: `int` is default_ip, `float`
    default_fp."""
    if ann is int:
        return state.config().default_ip
    if ann is float:
        return state.config().default_fp
    return typing.cast(DType, ann)  # the annotation is a DType itself


def array_key(a: Any) -> tuple:
    """What tells two array arguments apart at launch (their type was checked when it was first
    seen); a TypeError for an argument the fast path does not take."""
    if type(a) in NDARRAYS:
        return a._sig
    if type(a) is np.ndarray:
        return (a.dtype, a.ndim, a.flags.c_contiguous)
    if isinstance(a, Tensor) and type(a._impl) in NDARRAYS:  # a struct member's qd.Tensor
        return a._sig
    t: Any = a  # a CPU torch tensor: launched through DLPack (`as_numpy`), as the slow path
    if type(t).__module__ == "torch" and t.device.type == "cpu" and not t.requires_grad:
        return ("torch", t.dtype, t.dim(), t.is_contiguous())  # (a strided one: no plan)
    raise TypeError("not a fast-path array")


def torch_with_grad(t: Any) -> tuple[np.ndarray, np.ndarray]:
    """A CPU torch tensor that requires grad, and its `.grad` as the gradient buffer (made as
    zeros when it has none, as Quadrants makes it), both by DLPack of their detached data."""
    if t.grad is None:
        t.grad = t.detach().new_zeros(t.shape)
    return np.from_dlpack(t.detach()), np.from_dlpack(t.grad.detach())


def host_arrays(a: object) -> tuple[np.ndarray, np.ndarray | None]:
    """A host array argument as a NumPy array, and its gradient buffer (a torch tensor that
    requires grad: its `.grad`; None for the others, whose launch words have none)."""
    if getattr(a, "requires_grad", False) and type(a).__module__ == "torch":
        return torch_with_grad(a)
    return as_numpy(a), None


def as_numpy(a: object) -> np.ndarray:
    """A host array argument as a NumPy array."""
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, Ndarray):
        return a.arr
    if getattr(a, "requires_grad", False) and type(a).__module__ == "torch":
        return np.from_dlpack(typing.cast(Any, a).detach())
    return np.asarray(a) if hasattr(a, "__array_interface__") else np.from_dlpack(a)  # type: ignore[arg-type]


def not_convertible(kernel: str, name: str, index: int | None, a: object, t: DType) -> str:
    """The head of the error for argument `a` that parameter `name` (number `index`) of type `t`
    cannot take, in Quadrants' words where the index is known."""
    if index is None:
        return f"kernel `{kernel}`: argument `{name}`"
    return (
        f"kernel `{kernel}`: Argument ({index},) (type={type(a)}) cannot be converted into "
        f"required type {t}: argument `{name}`"
    )


def scalar_arg(a: Any, t: DType, kernel: str, name: str, index: int | None = None) -> object:
    """`a` (whatever was passed) as a value of type `t`, or a QdArgumentError: an integer
    parameter takes an integer (or a float with an integral value) that fits 64 bits (signed, or
    unsigned for an unsigned type) and wraps it to its type's bits (255 as an i8 is -1), as
    Quadrants does; a float too large for an f32 is infinite, as in Quadrants. `index` is the
    parameter's position, which Quadrants' words name."""
    if t.is_float:
        try:
            x = float(a)
            if t.bits < 64:
                struct.pack("<e" if t.bits == 16 else "<f", x)
            return x
        except OverflowError:
            return math.copysign(math.inf, a)
    if t.bits == 1:
        return bool(a)
    if isinstance(a, (float, np.floating)) and not (math.isfinite(a) and float(a).is_integer()):
        raise QdArgumentTypeError(
            f"{not_convertible(kernel, name, index, a, t)} is {a!r}, but the parameter is {t}, "
            "which takes integers only."
        )
    a = int(a)
    lo, hi = (-(2**63), 2**63) if t.is_signed else (0, 2**64)
    if not lo <= a < hi:
        raise QdArgumentError(
            f"kernel `{kernel}`: argument `{name}` is {a}, outside the range that "
            f"{'a signed' if t.is_signed else 'an unsigned'} integer argument takes "
            f"({lo} to {hi - 1})."
        )
    a &= (1 << t.bits) - 1
    return a - (1 << t.bits) if t.is_signed and a >> (t.bits - 1) else a
