"""`.to_torch(device=None, *, copy=True)` and `.to_numpy(dtype=None, *, copy=True)` of fields and
ndarrays, with Quadrants' meaning of `copy`:
True an independent tensor; False a zero-copy view of the storage (it sees later writes, and
writes through it reach kernels), a ValueError where none can be had (GPU storage, a transfer to
another device); None the view where possible, else a copy. On the CPU the storage is a NumPy
array, so the view is `torch.from_numpy` of it (a field's storage, or its logical part).
Programs keep such views (Genesis caches `value._np = value.to_torch(copy=False).numpy()`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import pyquadrants
from .launch import Storage, TorchTensor


def to_torch(
    view: Storage, device: Any, copy: bool | None, what: str, kind: str, viewable: bool = True
) -> TorchTensor:
    """`view` is the host array over the storage (a NumPy array on the CPU; anything else has no
    zero-copy view here) of elements of qdlab dtype `kind`; none either for a dtype DLPack does
    not carry or where the caller finds it not `viewable` (a 0-d field), as in Quadrants."""
    import torch  # type: ignore[import-not-found]  # lazy: PyTorch is optional and heavy

    pyquadrants.current.materialize()  # a DLPack export materialises first, as there
    if copy is not True:
        if copy is False and not (viewable and kind in ZERO_COPY_DTYPES):
            raise ValueError(f"Zero-copy not available for {what}, dtype={kind}")
        possible = isinstance(view, np.ndarray) and viewable and kind in ZERO_COPY_DTYPES
        if possible and device is not None and torch.device(device).type != "cpu":
            if copy is False:
                raise ValueError(
                    f"copy=False is incompatible with device transfer (data on cpu, requested "
                    f"{device})"
                )
            possible = False
        if possible:
            return torch.from_numpy(view)
        if copy is False:
            raise ValueError(f"Zero-copy not available for {what}")
    host = view if isinstance(view, np.ndarray) else view.get()
    out = torch.from_numpy(np.array(host, copy=True))
    return out.to(device) if device is not None else out


ZERO_COPY_DTYPES = frozenset({"f32", "f64", "i32", "i64", "u1"})
"""The dtypes Quadrants exports by DLPack, so the ones `to_numpy(copy=False)` views."""


def to_numpy(
    view: Storage, kind: str, dtype: Any = None, copy: bool | None = True, viewable: bool = True
) -> np.ndarray:
    """`view` (the host array over the storage, in canonical order; a CuPy one on the GPU) of
    elements of qdlab dtype `kind` (`"f32"`) as a NumPy array: a copy (C-ordered), or with
    `copy=False` / `None` the view itself where the storage is in host memory, the dtype one DLPack
    carries and the caller finds it `viewable` (a 0-d field is not), as Quadrants answers it.
    `dtype` converts, which a view cannot."""
    pyquadrants.current.materialize()
    viewable = viewable and kind in ZERO_COPY_DTYPES
    if copy is not True:
        why = (
            "Zero-copy numpy requires a CPU backend (numpy arrays cannot reference GPU memory)"
            if not isinstance(view, np.ndarray)
            else None
            if viewable
            else f"Zero-copy not available for dtype={kind}"
        )
        if why is None:
            if dtype is None or view.dtype == np.dtype(dtype):
                return view
            if copy is False:
                raise ValueError(
                    f"copy=False is incompatible with dtype conversion ({view.dtype} -> {dtype})"
                )
        elif copy is False:
            raise ValueError(why)
    out = np.array(view if isinstance(view, np.ndarray) else view.get(), order="C")
    return out if dtype is None else out.astype(dtype)


def dlpack(view: Storage, versioned: bool) -> object:
    """A DLPack capsule over `view` (zero-copy, its strides as they are): a legacy one, which
    `torch.utils.dlpack.from_dlpack` takes, or with `versioned` a DLPack 1.0 one."""
    if versioned:
        return view.__dlpack__(max_version=(1, 0))
    return view.__dlpack__()
