"""The compiler: frontend, IR, passes, split, gate, codegen, runtime and cache; `pipeline.py` runs
them."""

__version__ = "0.1.0"
"""qdlab's version (also in pyproject.toml): part of every cache entry and key."""
