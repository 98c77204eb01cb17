"""`qd.ad`: reverse and forward mode over whole programs (`Tape`, `FwdMode`, ...), under the path
Quadrants code uses; defined in `qdlab.host.tape`."""

from .host.tape import FwdMode, Tape

__all__ = ["FwdMode", "Tape"]
