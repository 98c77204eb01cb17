"""Counted nouns in messages and views: "1 construct", "2 constructs"."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and `word`, in the plural (`many`, else `word` + "s") unless `n` is 1."""
    return f"{n} {word if n == 1 else many or word + 's'}"
