"""Vectors and matrices at a kernel's boundary: parameters passed by value (flattened into one
argument word per entry), ndarrays whose elements are vectors or matrices (checked against the
annotation, NumPy arrays by their trailing axes), and vector or matrix return values (rebuilt as a
`qd.Vector` / `qd.Matrix`, as the reference returns them)."""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable

import numpy as np

from ..core.errors import QdTypeError, QdValueError, SourceLoc
from ..core.language import ArrayAnnotation, Matrix, MatrixType, Vector
from ..core.matrix import resolve_dtype
from ..core.types import DType, TensorType, shape_text, u1
from . import state
from .launch import Storage


def tensor_type(ann: MatrixType) -> TensorType:
    """A vector or matrix parameter's type under the active settings (`vec3` follows
    `default_fp`)."""
    dtype = ann.dtype or state.config().default_fp
    return TensorType(dtype, ann.shape)


def entries(a: object) -> list:
    """A vector argument's entries, row-major: a `qd.Vector`, a NumPy array, nested tuples or
    lists."""
    if isinstance(a, Matrix):
        return a.entries.ravel().tolist()  # type: ignore[attr-defined]
    if isinstance(a, np.ndarray):
        return a.ravel().tolist()
    if isinstance(a, (tuple, list)):
        return np.asarray(a).ravel().tolist()
    raise TypeError("not a vector")


def bind(
    a: object,
    ann: MatrixType,
    convert: Callable[[object, DType], object],
    kernel: str,
    name: str,
    loc: SourceLoc | None,
) -> tuple[TensorType, list]:
    """The parameter's type and its entries converted by `convert`; a shape that does not match is
    a QdTypeError naming both shapes."""
    t = tensor_type(ann)
    shape = (
        tuple(a.entries.shape)  # type: ignore[attr-defined]
        if isinstance(a, Matrix)
        else np.shape(a)
        if isinstance(a, (np.ndarray, tuple, list))
        else None
    )
    if shape is None:
        raise QdTypeError(
            f"kernel `{kernel}`: argument `{name}` must be a qd.Vector / qd.Matrix, a NumPy array "
            f"or a tuple of shape {t.shape} ({ann.to_string()}), not {type(a).__name__}.",
            loc,
        )
    if shape != t.shape and not (len(t.shape) == 1 and shape == (t.shape[0], 1)):
        raise QdTypeError(
            f"kernel `{kernel}`: argument `{name}` has shape {shape}, but the parameter is "
            f"{ann.to_string()} of shape {t.shape}.",
            loc,
        )
    return t, [convert(x, t.dtype) for x in entries(a)]


def element(ann_dtype: object) -> tuple[DType | None, tuple]:
    """The scalar dtype and element shape an ndarray annotation's dtype names (None where it
    takes any: `NDArray[qd.types.matrix(), 1]`)."""
    if isinstance(ann_dtype, MatrixType):
        any_size = None in ann_dtype.shape
        default = None if any_size else state.config().default_fp
        return ann_dtype.dtype or default, ann_dtype.shape
    return resolve_dtype(ann_dtype), ()


def tensor_text(dtype: DType | None, shape: tuple) -> str:
    """`[Tensor (3) i32]`: how the reference names a vector or matrix value's type."""
    return f"[Tensor ({', '.join(map(str, shape))}) {dtype}]" if shape else str(dtype)


def element_text(dtype: DType | None, shape: tuple[int, ...]) -> str:
    """How the reference names an element type: `VectorType[2, i32]`, `MatrixType[2,3, i32]`."""
    if len(shape) == 1:
        return f"VectorType[{shape[0]}, {dtype}]"
    if len(shape) == 2:
        return f"MatrixType[{shape[0]},{shape[1]}, {dtype}]"
    return str(dtype)


def check_ndarray(
    got: tuple[DType, tuple[int, ...]], ann_dtype: object, kernel: str, name: str
) -> None:
    """A qd.ndarray's element against the annotation's (a scalar one is checked as before)."""
    want = element(ann_dtype)
    if not want[1] and not got[1]:
        return
    if not want[1]:
        if want[0] is None:
            return
        raise QdTypeError(
            f"kernel `{kernel}`: Expect element type {want[0]} for argument {name}, but get "
            f"{tensor_text(*got)}."
        )
    fits = (
        len(want[1]) == len(got[1])
        and all(w is None or w == g for w, g in zip(want[1], got[1]))
        and want[0] in (None, got[0])
    )
    if not fits:
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - required element type: "
            f"{element_text(*want)}, but {element_text(*got)} is provided."
        )


def numpy_element(
    arr: Storage,
    ann: ArrayAnnotation,
    kernel: str,
    name: str,
    where: Callable[[], SourceLoc | None],
) -> tuple[int, ...]:
    """The element shape of a NumPy array passed for an ndarray of vectors or matrices: its
    trailing axes (one for a vector, two for a matrix), which must match the sizes the annotation
    gives; a size it leaves open (`qd.types.vector()`, `ndarray(element_dim=1)`) is the axis's,
    as in Quadrants, whose words the errors use."""
    dtype, shape = element(ann.dtype)
    if not shape:
        return ()
    k = len(shape)
    wrong = None
    if ann.ndim is not None and arr.ndim != ann.ndim + k:
        wrong = f"required array has ndim={ann.ndim} element_dim={k}, array with {arr.ndim} "
    elif arr.ndim < k:
        wrong = f"required element_dim={k}, array with {arr.ndim} "
    if wrong is not None:
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - {wrong}dimensions is "
            f"provided (shape {arr.shape}).",
            where(),
        )
    got = tuple(arr.shape[arr.ndim - k :])
    if any(w is not None and w != g for w, g in zip(shape, got)):
        raise QdValueError(
            f"kernel `{kernel}`: Invalid value for argument {name} - required element_shape="
            f"{shape}, array with element shape of {got} is provided: the parameter holds "
            f"{element_text(dtype, shape)} elements (`{shape_text(dtype, shape)}`), so its last "  # type: ignore[arg-type]
            f"{k} axes must be {shape} (argument `{name}` has shape {arr.shape}).",
            where(),
        )
    return got


def element_key(k: int) -> Callable[[object], tuple]:
    """The launch cache's key of an argument for an ndarray-of-vectors parameter: a NumPy array's
    trailing axes are part of it (an (n, 4) array after an (n, 3) one must be checked again)."""
    return functools.partial(_element_key, k)


def _element_key(k: int, a: object) -> tuple:
    sig = getattr(a, "_sig", None)
    if sig is not None and hasattr(a, "element"):
        return sig
    if type(a) is np.ndarray:
        return (a.dtype, a.ndim, a.flags.c_contiguous, a.shape[a.ndim - k :])
    raise TypeError("not a fast-path array")


def tuple_elements(ann: object) -> tuple | None:
    """The element types of a tuple return annotation: `tuple[a, b]`, `typing.Tuple[a, b]` or the
    plain `(a, b)`, as Quadrants reads each; None for any other annotation."""
    if typing.get_origin(ann) is tuple:
        return typing.get_args(ann)
    return ann if isinstance(ann, tuple) else None


def return_parts(ann: object) -> list[tuple[list[DType], tuple[int, ...]]] | None:
    """Each return value's entry types and shape (`()` for a scalar); None for an annotation that is
    not a return type."""
    if ann is None or ann is type(None):
        return []
    if isinstance(ann, MatrixType):
        t = tensor_type(ann)
        return [([t.dtype] * t.size, t.shape)]
    if isinstance(ann, DType):
        return [([ann], ())]
    if ann is int or ann is float:
        return [([ann], ())]  # type: ignore[list-item]  # default_ip / default_fp at compile time
    if ann is bool:
        return [([u1], ())]
    elements = tuple_elements(ann)
    if elements is not None:
        out: list[tuple[list[DType], tuple[int, ...]]] = []
        for a in elements:
            part = return_parts(a)
            if part is None:
                return None
            out.extend(part)
        return out
    return None


def rebuild(result: object, shapes: list[tuple[int, ...]], dtypes: list[DType]) -> object:
    """The launcher's flat return words regrouped: a `qd.Vector` / `qd.Matrix` per vector part."""
    flat = list(result) if isinstance(result, tuple) else [result]
    out: list = []
    k = 0
    for shape in shapes:
        if not shape:
            out.append(flat[k])
            k += 1
            continue
        n = int(np.prod(shape))
        arr = np.array(flat[k : k + n], dtypes[k].np).reshape(shape)
        out.append(Vector(arr) if len(shape) == 1 else Matrix(arr))
        k += n
    return out[0] if len(out) == 1 else tuple(out)
