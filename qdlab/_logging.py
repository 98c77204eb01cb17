"""Quadrants' logging API (`qd.set_logging_level(qd.WARN)`, `qd._logging.info("...")`, ...) on the
`qdlab` logger, the one qdlab's own warnings go through (shown on stderr by `state.StderrHandler`).
Level names are Quadrants' strings; `trace` is below `debug`, as there."""

from __future__ import annotations

import inspect
import os

from .host import state

TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL = "trace", "debug", "info", "warn", "error", "critical"
supported_log_levels = [DEBUG, TRACE, INFO, WARN, ERROR, CRITICAL]


def _level(level: str) -> int:
    number = state.LOG_LEVELS.get(str(level).lower())
    if number is None:
        raise ValueError(
            f"logging level must be one of {', '.join(supported_log_levels)}, not {level!r}"
        )
    return number


def set_logging_level(level: str) -> None:
    """Messages at `level` and above show from now on (also `qd.init(log_level=...)`)."""
    state.log.setLevel(_level(level))


def is_logging_effective(level: str) -> bool:
    """Whether a message at `level` shows now (Quadrants' default level is `info`)."""
    return state.log.isEnabledFor(_level(level))


def _get_logging(level: str):
    """The log function of `level` (Quadrants' name: programs that replace `qd._logging.warn` and
    the like restore them with it)."""
    number = state.LOG_LEVELS[level]

    def log(msg: object, *args: object, **kwargs: object) -> None:
        if not state.log.isEnabledFor(number):
            return  # no frame inspection unless the message shows
        text = str(msg).format(*args, **kwargs) if args or kwargs else str(msg)
        caller = inspect.stack(0)[1]
        where = f"{os.path.basename(caller.filename)}:{caller.function}@{caller.lineno}"
        state.log.log(number, f"[{where}] {text}")

    log.__name__ = level
    return log


trace, debug, info, warn, error, critical = (
    _get_logging(n) for n in (TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL)
)

__all__ = [  # what `qd.*` has of it, as in Quadrants 1.3.3 (the functions stay in `qd._logging`)
    "CRITICAL",
    "DEBUG",
    "ERROR",
    "INFO",
    "TRACE",
    "WARN",
    "is_logging_effective",
    "set_logging_level",
]
