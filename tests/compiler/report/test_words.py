"""Counted nouns in messages and views."""

from __future__ import annotations

from qdlab.core.words import plural


def test_plural() -> None:
    assert plural(1, "construct") == "1 construct"
    assert [plural(n, "construct") for n in (0, 2)] == ["0 constructs", "2 constructs"]
    assert (
        plural(2, "entry", "entries") == "2 entries" and plural(1, "entry", "entries") == "1 entry"
    )
