"""`quadrants._tensor`, as far as programs reach into it: the tensor factory's names and
`_with_layout`, which tags an ndarray allocated in memory's order with its layout."""

from .host.tensor import Backend, Tensor, tensor
from .host.tensor import with_layout as _with_layout

__all__ = ["Backend", "Tensor", "_with_layout", "tensor"]
