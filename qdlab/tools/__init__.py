"""`qd.tools`: Quadrants' utilities that need no kernel: `PLYWriter` (NumPy arrays to `.ply`
files, `qd.tools.np2ply`), `write_vtk` (a 2-D or 3-D scalar field to a VTK grid through `pyevtk`,
`qd.tools.vtk`) and `diagnose` (the system's description, `qd.tools.diagnose.main()`)."""

from . import diagnose, np2ply, vtk
from .np2ply import PLYWriter
from .vtk import write_vtk

__all__ = ["PLYWriter", "diagnose", "np2ply", "vtk", "write_vtk"]
