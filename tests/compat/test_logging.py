"""Quadrants' logging API on qdlab: level constants, `set_logging_level`, `is_logging_effective`
(compared with the real quadrants for every pair of levels) and the `qd._logging` functions, which
write to stderr through the `qdlab` logger with the caller's file, function and line."""

from __future__ import annotations

import itertools

import pytest

import qdlab as qd

quadrants = pytest.importorskip("quadrants")
LEVELS = ["trace", "debug", "info", "warn", "error", "critical"]


@pytest.fixture(autouse=True)
def _restore():
    yield
    qd.set_logging_level(qd.INFO)
    quadrants.set_logging_level(quadrants.INFO)


def test_the_names_are_quadrants_own() -> None:
    for name in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"):
        assert getattr(qd, name) == getattr(quadrants, name)
    assert qd._logging.supported_log_levels == quadrants._logging.supported_log_levels


def test_which_levels_are_effective_matches_quadrants() -> None:
    assert [qd.is_logging_effective(x) for x in LEVELS] == [
        quadrants.is_logging_effective(x) for x in LEVELS
    ]  # the default, info
    for level, asked in itertools.product(LEVELS, LEVELS):
        qd.set_logging_level(level)
        quadrants.set_logging_level(level)
        expected = quadrants.is_logging_effective(asked)
        assert qd.is_logging_effective(asked) == expected, (level, asked)


def test_messages_show_from_their_level_with_the_caller(capsys: pytest.CaptureFixture) -> None:
    qd.set_logging_level(qd.WARN)
    qd._logging.info("not shown")
    qd._logging.warn("shown {} {x}", 1, x=2)
    err = capsys.readouterr().err
    assert "not shown" not in err
    assert "[test_logging.py:test_messages_show_from_their_level_with_the_caller@" in err
    assert err.rstrip().endswith("shown 1 2")


def test_init_log_level_and_a_wrong_name() -> None:
    qd.init(arch=qd.cpu, log_level=qd.TRACE)
    assert qd.is_logging_effective(qd.TRACE)
    with pytest.raises(ValueError, match="logging level must be one of debug, trace, info"):
        qd.set_logging_level("loud")
    qd.init(arch=qd.cpu)
