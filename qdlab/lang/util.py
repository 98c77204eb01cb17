"""`quadrants.lang.util`: what Quadrants code asks about the environment."""

from __future__ import annotations

import importlib.util

from ..core.types import DType


def has_pytorch() -> bool:
    """Whether PyTorch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None


def to_numpy_type(dt: object) -> type:
    """The NumPy scalar type of a qdlab dtype (`qd.f32` -> `np.float32`); TypeError for anything
    else (a vector type, a Python type), as Quadrants raises."""
    if not isinstance(dt, DType):
        raise TypeError(f"Unknown type {dt}")
    return dt.np.type  # type: ignore[attr-defined]
