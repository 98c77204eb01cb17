"""`.to_torch(device=None, *, copy=True)` of fields and ndarrays, with Quadrants' meaning of `copy`:
True an independent tensor; False a zero-copy view of the storage (it sees later writes, and
writes through it reach kernels), a ValueError where none can be had (GPU storage, a transfer to
another device); None the view where possible, else a copy. On the CPU the storage is a NumPy
array, so the view is `torch.from_numpy` of it (a field's logical part of its padded storage).
Programs keep such views (Genesis caches `value._np = value.to_torch(copy=False).numpy()`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import pyquadrants
from .launch import Storage, TorchTensor


def to_torch(view: Storage, device: Any, copy: bool | None, what: str) -> TorchTensor:
    """`view` is the host array over the storage (a NumPy array on the CPU; anything else has no
    zero-copy view here)."""
    import torch  # type: ignore[import-not-found]  # lazy: PyTorch is optional and heavy

    pyquadrants.current.materialize()  # a DLPack export materialises first, as there
    if copy is not True:
        possible = isinstance(view, np.ndarray)
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
