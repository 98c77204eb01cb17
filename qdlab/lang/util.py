"""`quadrants.lang.util`: what Quadrants code asks about the environment."""

from __future__ import annotations

import importlib.util


def has_pytorch() -> bool:
    """Whether PyTorch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None
