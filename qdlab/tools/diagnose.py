"""`qd.tools.diagnose.main()`: prints what a bug report needs about this system."""

from __future__ import annotations

import os
import platform
import sys


def main() -> None:
    from .. import __version__  # lazy: the package imports this module

    print("Quadrants system diagnose (qdlab):")
    print()
    print(f"python: {sys.version}")
    print(f"system: {sys.platform}")
    print(f"executable: {sys.executable}")
    print(f"platform: {platform.platform()}")
    print(f"architecture: {' '.join(platform.architecture())}")
    print(f"uname: {platform.uname()}")
    print(f"PATH: {os.environ.get('PATH')}")
    print(f"PYTHONPATH: {sys.path}")
    print(f"qdlab: {__version__}")


__all__ = ["main"]
