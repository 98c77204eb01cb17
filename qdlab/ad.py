"""`qd.ad`: reverse and forward mode over whole programs (`Tape`, `FwdMode`, ...), under the path
Quadrants code uses; defined in `qdlab.host.tape`."""

from .host.tape import (
    FwdMode,
    Tape,
    clear_all_gradients,
    grad_for,
    grad_replaced,
    no_grad,
)

__all__ = ["FwdMode", "Tape", "clear_all_gradients", "grad_for", "grad_replaced", "no_grad"]
