"""The vocabulary every layer shares: dtypes, errors, the kernel language's names as Python objects
(`language.py`), vectors and matrices, field and range descriptions, settings (`config.py`), the
launch ABI (`abi.py`), argument binding, and every key and symbol name (`keys.py`). Imports nothing
of qdlab above it."""

__version__ = "0.1.0"
"""qdlab's version (also in pyproject.toml): part of every cache entry and key."""

import os

QDLAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The folder of the qdlab package: its code is described by a stamp of its files, not followed
(`compiler/frontend/fingerprint.py`), and its core's and compiler's sources make the compiler's
version (`keys.py`)."""
