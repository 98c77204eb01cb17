"""`warn_once(message)`: a `UserWarning` the first time a message is given in this process."""

from __future__ import annotations

import warnings

_seen: set[str] = set()


def warn_once(message: str) -> None:
    if message not in _seen:
        _seen.add(message)
        warnings.warn(message, stacklevel=2)
