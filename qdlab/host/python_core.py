"""What Quadrants' compiled core module (`qd._lib.utils.import_qd_python_core()`) answers that
programs ask for: the version of Quadrants being run, which for qdlab is the version whose language
and API it implements, and where Quadrants keeps its files."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

QUADRANTS_VERSION = (1, 3, 3)
"""The Quadrants release qdlab implements (`qd.__version__` in Quadrants)."""


def get_version_major() -> int:
    return QUADRANTS_VERSION[0]


def get_version_minor() -> int:
    return QUADRANTS_VERSION[1]


def get_version_patch() -> int:
    return QUADRANTS_VERSION[2]


def get_version_string() -> str:
    return ".".join(map(str, QUADRANTS_VERSION))


def _process_env(name: str) -> str | None:
    """The variable as the process holds it now: `os.putenv` changes it without `os.environ`
    seeing the change, and Quadrants' core reads it with C's getenv."""
    getenv = ctypes.CDLL(None).getenv
    getenv.restype = ctypes.c_char_p
    value = getenv(name.encode())
    return value.decode() if value is not None else os.environ.get(name)


def get_repo_dir() -> str:
    """Quadrants' folder for its files: `$XDG_CACHE_HOME/quadrants/`, else
    `~/.cache/quadrants/`, as Quadrants answers (qdlab keeps its own cache elsewhere:
    `state.cache_dir()`)."""
    base = _process_env("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return os.path.join(base, "quadrants", "")


def check_require_version(require_version: str) -> None:
    """`qd.init(require_version=...)`: a RuntimeError, in Quadrants' words, unless the version qdlab
    implements has the same major version and is at least the one required
    (`major.minor[.patch][anything]`)."""
    digits = require_version
    for index, c in enumerate(require_version):
        if not (c.isdigit() or c == "."):
            digits = require_version[:index]
            break
    try:
        numbers = tuple(int(n) for n in digits.split("."))
        major, minor = numbers[0], numbers[1]
        patch = numbers[2] if len(numbers) > 2 else 0
    except (ValueError, IndexError):
        raise RuntimeError(
            "The require_version should be formatted following PEP 440, and includes major, "
            "minor, and patch number, e.g., major.minor.patch."
        ) from None
    have = QUADRANTS_VERSION
    if major != have[0] or (minor, patch) > have[1:]:
        raise RuntimeError(
            f"Quadrants version mismatch. Required version >= {major}.{minor}.{patch}, installed "
            f"version = {get_version_string()}."
        )
