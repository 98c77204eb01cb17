"""`quadrants.lang.util`: what Quadrants code asks about the environment."""

from __future__ import annotations

import importlib.util
import shutil

from ..core.types import DType


def has_pytorch() -> bool:
    """Whether PyTorch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None


def get_clangpp() -> str | None:
    """The path of `clang++-10`, the compiler Quadrants looks for to build external C++ functions
    (`SourceBuilder`, which qdlab does not have), or None; the same lookup as Quadrants'."""
    return shutil.which("clang++-10")


def has_clangpp() -> bool:
    """Whether `get_clangpp()` finds it (Quadrants' tests of external functions skip without)."""
    return get_clangpp() is not None


def to_numpy_type(dt: object) -> type:
    """The NumPy scalar type of a qdlab dtype (`qd.f32` -> `np.float32`); TypeError for anything
    else (a vector type, a Python type), as Quadrants raises."""
    if not isinstance(dt, DType):
        raise TypeError(f"Unknown type {dt}")
    return dt.np.type  # type: ignore[attr-defined]
