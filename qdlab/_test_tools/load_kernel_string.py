"""Kernels defined by source text: the text is written to a file of its own and imported, so
the kernel has a real file for `inspect` (Quadrants' tests build kernels of 512 arguments so)."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def import_kernel_from_file(kernel_filepath: Path, kernel_name: str) -> object:
    """Import `kernel_filepath` as the module `kernel_name` and return its `kernel_name`."""
    spec = importlib.util.spec_from_file_location(kernel_name, kernel_filepath)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {kernel_filepath} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[kernel_name] = module
    spec.loader.exec_module(module)
    return getattr(module, kernel_name)


@contextmanager
def load_kernel_from_string(kernel_str: str, kernel_name: str) -> Iterator[object]:
    """`with load_kernel_from_string(src, "k") as k:` the object named `k` that `src` defines;
    the module and its file are gone afterwards."""
    with tempfile.TemporaryDirectory() as temp_dir:
        path = Path(temp_dir) / f"{kernel_name}.py"
        path.write_text(kernel_str)
        try:
            yield import_kernel_from_file(path, kernel_name)
        finally:
            sys.modules.pop(kernel_name, None)
