"""`quadrants.lang.stream`: streams and events, at the path Quadrants code imports them from
(`qdlab/host/stream.py` holds them and says what they do in qdlab)."""

from ..core.language import stream_parallel
from ..host.stream import Event, Stream, create_event, create_stream

__all__ = ["Event", "Stream", "create_event", "create_stream", "stream_parallel"]
