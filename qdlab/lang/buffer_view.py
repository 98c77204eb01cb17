"""`quadrants.lang.buffer_view`: `BufferView`, at the path Quadrants code imports it from
(`qdlab/host/buffer_view.py` holds it)."""

from ..host.buffer_view import BufferView

__all__ = ["BufferView"]
