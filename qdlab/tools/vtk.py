"""`qd.tools.write_vtk(field, filename)`: a 2-D or 3-D scalar field to a VTK rectilinear grid
(`filename.vtr`), its values as the cell data `scalar`; needs the `pyevtk` package."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np


def write_vtk(scalar_field: Any, filename: str) -> None:
    try:
        grid_to_vtk = importlib.import_module("pyevtk.hl").gridToVTK  # optional
    except ImportError:
        raise RuntimeError(
            "Failed to import pyevtk. Please install it via `pip install pyevtk` first."
        ) from None
    values = scalar_field.to_numpy()
    if values.ndim not in (2, 3):
        raise ValueError("The input field must be a 2D or 3D scalar field.")
    if values.ndim == 2:
        values = values[np.newaxis, :, :]
        z = np.array([0, 1])
    else:
        z = np.arange(0, values.shape[2])
    x = np.arange(0, values.shape[0] + 1)
    y = np.arange(0, values.shape[1] + 1)
    grid_to_vtk(filename, x=x, y=y, z=z, cellData={"scalar": values})


__all__ = ["write_vtk"]
