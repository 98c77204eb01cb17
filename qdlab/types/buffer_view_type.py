"""`quadrants.types.buffer_view_type`: `BufferViewType(dtype)`, the annotation `BufferView[dtype]`
stands for (`qdlab/host/buffer_view.py`)."""

from __future__ import annotations

from ..host.buffer_view import BufferView


def BufferViewType(dtype: object = None, boundary: str = "unsafe") -> type:
    """`BufferViewType(qd.f32)`: the parameter annotation `BufferView[qd.f32]` (`BufferView` without
    a dtype); only the default `boundary="unsafe"` is supported, as a view has no clamping."""
    if boundary != "unsafe":
        raise ValueError(f"BufferViewType: only boundary='unsafe' is supported, not {boundary!r}")
    return BufferView if dtype is None else BufferView[dtype]


__all__ = ["BufferViewType"]
