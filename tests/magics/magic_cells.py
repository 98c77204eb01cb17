"""Cells and a runner shared by the magic tests (a module of its own: conftest names clash across
folders)."""

from __future__ import annotations

import itertools

from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import CapturedIO, capture_output

_unique = itertools.count(1)


def run(ip: InteractiveShell, cell: str) -> tuple[object, CapturedIO]:
    """Run a cell; return IPython's ExecutionResult and what the cell printed and displayed."""
    with capture_output() as cap:
        result = ip.run_cell(cell)
    return result, cap


def six_loops(name: str = "six") -> str:
    """A kernel of six loops (cell lines 5-6, 7-8, ..., 15-16 under a `%%qdkernel` line).

    Each call makes constants no earlier test used, because loaded constructs are shared by the
    whole process.
    """
    c = next(_unique) * 8.0
    return f"""
@qd.kernel
def {name}(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = {c + 1.0}
    for i in range(x.shape[0]):
        y[i] = {c + 2.0}
    for i in range(x.shape[0]):
        x[i] += y[i] * {c + 3.0}
    for i in range(x.shape[0]):
        y[i] *= {c + 4.0}
    for i in range(x.shape[0]):
        x[i] -= {c + 6.0}
    for i in range(x.shape[0]):
        y[i] += x[i] + {c + 7.0}
"""


def edited(cell: str) -> str:
    """The same cell with only the fourth loop changed."""
    first, rest = cell.split("y[i] *= ", 1)
    value, tail = rest.split("\n", 1)
    return f"{first}y[i] *= {float(value) + 1.0}\n{tail}"
