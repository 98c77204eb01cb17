"""Array arguments of a kernel: a `qd.ndarray`, a NumPy array, anything with
`__array_interface__`, `__cuda_array_interface__` or DLPack, checked against the parameter's
annotation (dtype, ndim, element shape, layout, gradient buffer) before a kernel sees it."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import vector_args
from .compiler import cuda_runtime
from .compiler.errors import QdTypeError, QdValueError, SourceLoc
from .compiler.types import ArrayType, from_numpy
from .lang import ArrayAnnotation, MatrixType
from .ndarray import Ndarray

INDEX_MAX = 2**31 - 1
"""The largest array extent: kernels index arrays with i32."""


def array_arg(
    a: object,
    ann: ArrayAnnotation,
    kernel: str,
    name: str,
    where: Callable[[], SourceLoc | None] = lambda: None,
) -> tuple[np.ndarray, np.ndarray | None, ArrayType]:
    """The array an argument passes (and its gradient buffer), checked against the parameter's
    annotation, and its type in the kernel's signature; `where` locates the annotation for an
    error about an element's shape."""
    grad = None
    if isinstance(a, Ndarray):
        arr = a.arr
        grad = a.grad.arr if a.grad is not None else None
    elif isinstance(a, np.ndarray):
        arr = a
    elif hasattr(
        a, "__cuda_array_interface__"
    ):  # CuPy, PyTorch CUDA tensors: passed by device pointer
        arr = cuda_runtime.DeviceArray(a)  # type: ignore[assignment]
    elif hasattr(a, "__array_interface__"):
        arr = np.asarray(a)
    elif hasattr(a, "__dlpack__"):
        try:
            arr = np.from_dlpack(a)
        except Exception as e:  # noqa: BLE001 - the exporting library may raise anything
            raise QdTypeError(
                f"kernel `{kernel}`: argument `{name}` cannot be read through DLPack ({e})."
            ) from None
    else:
        raise QdTypeError(
            f"kernel `{kernel}`: argument `{name}` must be a qd.ndarray or a NumPy array, not "
            f"{type(a).__name__}."
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
        elem = vector_args.numpy_element(arr, ann.dtype, kernel, name, where)  # type: ignore[arg-type]
    want = vector_args.element(ann.dtype)[0] if not isinstance(ann.dtype, MatrixType) else None
    if want is not None and want != dtype and isinstance(a, Ndarray):
        raise QdTypeError(  # as the reference says it of its own ndarrays
            f"kernel `{kernel}`: Expect element type {want} for argument {name}, but get {dtype}."
        )
    if want is not None and want != dtype:
        raise QdValueError(
            f"kernel `{kernel}`: argument `{name}` has dtype {dtype} but the parameter is declared "
            f"{want}."
        )
    ndim = arr.ndim - len(elem)
    if ann.ndim is not None and ann.ndim != ndim:
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - required ndim={ann.ndim}, "
            f"but {ndim}d ndarray with shape {tuple(arr.shape[:ndim])} is provided."
        )
    if any(n > INDEX_MAX for n in arr.shape):
        raise QdValueError(
            f"kernel `{kernel}`: argument `{name}` has shape {arr.shape}; kernels index arrays "
            f"with i32, so no extent may exceed 2**31 - 1 ({INDEX_MAX})."
        )
    if not arr.flags.c_contiguous:
        raise QdValueError(
            f"kernel `{kernel}`: argument `{name}` is not C-contiguous; pass "
            f"np.ascontiguousarray({name})."
        )
    if ann.needs_grad and grad is None:
        raise QdValueError(
            f"kernel `{kernel}`: parameter `{name}` needs a gradient buffer; pass "
            "qd.ndarray(..., needs_grad=True)."
        )
    needs_grad = grad is not None if ann.needs_grad is None else bool(ann.needs_grad)
    t = ArrayType(dtype, ndim, needs_grad, ann.boundary, elem)
    return arr, grad if needs_grad else None, t
