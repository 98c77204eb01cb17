"""What the compiler knows of a field (`qd.field`, `qd.Vector.field`, ...): its element type and
shape, its gradient and whether it can be used. The host side (storage, NumPy access, layouts) is
`qdlab.host.field`; a kernel that reads or writes a field gets it as a hidden array parameter
whose words the launch fills from the field's storage, so no address is ever compiled in."""

from __future__ import annotations

import enum

from .types import DType

MAX_NUM_INDICES = 12
"""The most axes a field may have, as in Quadrants (`qd._lib.core.get_max_num_indices()`)."""


class FieldBase:
    """A field as a kernel sees it: an array of `dtype` elements of shape `element` (`()` for
    scalars) over `shape`, with a `.grad` field when it needs one."""

    element: tuple[int, ...]
    grad: FieldBase | None
    primal: FieldBase | None
    """For a gradient field, the field it is the gradient of (kernels reach it as `x.grad`)."""
    name: str
    key: tuple
    """Tells this field apart from every other (in this process and in any other)."""
    _entry_of: tuple[FieldBase, tuple[int, ...]] | None = None
    """`x.get_scalar_field(i, j)`: (the matrix field `x`, the entry `(i, j)`) whose memory this
    scalar field is; a kernel reaches that memory through `x`'s hidden parameter
    (`compiler/frontend/members.py`). None for a field with memory of its own."""

    @property
    def dtype(self) -> DType:
        raise NotImplementedError

    def has_grad(self) -> bool:
        """Whether its gradient is allocated."""
        raise NotImplementedError

    def has_dual(self) -> bool:
        """Whether its dual (forward mode) is allocated."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def _index_offset(self) -> tuple[int, ...]:
        """The index of the first element along each axis (0 unless declared)."""
        raise NotImplementedError

    def _unusable(self) -> str | None:
        """Why a kernel cannot use this field now (not placed yet, dropped by `qd.reset()`), or
        None."""
        raise NotImplementedError


class StructFieldBase:
    """A field of a struct type (`S.field(shape=...)`), as a kernel sees it: one field per member,
    reached as attributes (`s.pos`); `s[i]` in a kernel is the element whose members are
    `s.pos[i]`, ... (`qdlab.host.struct_field` is the host side)."""

    members: dict[str, object]
    struct_type: type
    _made = False
    """Whether any struct field was made in this process (until then kernels skip looking)."""

    def _leaves(self) -> list[FieldBase]:
        """Every member's field (nested structs' too), in member order."""
        raise NotImplementedError

    def _signature(self) -> str:
        """Its members' types and its shape (what a manifest checks)."""
        raise NotImplementedError


class TensorBase:
    """A `qd.Tensor` (`qdlab.host.tensor`), as the compiler sees it: a kernel reads the ndarray or
    field it holds."""

    def held(self) -> object:
        """The ndarray or field this tensor holds."""
        raise NotImplementedError


class Layout(enum.Enum):
    """`qd.Layout`: how a field's or a struct's members sit in memory (never a value)."""

    AOS = 0
    SOA = 1
    NULL = 2


class AutodiffMode(enum.Enum):
    """How a kernel runs (`kernel.autodiff_mode`, Quadrants' `qd.types.enums.AutodiffMode`): as
    written, under a `qd.ad.Tape(validation=True)` (its global data access rule checked), forward
    mode, or as a gradient kernel."""

    NONE = 0
    VALIDATION = 1
    FORWARD = 2
    REVERSE = 3


class SNodeGradType(enum.Enum):
    """What a place of a field holds (`x.snode.ptr.get_snode_grad_type()`): the values, their
    gradients (`x.grad`), their duals (`x.dual`), or the validation's check bits."""

    PRIMAL = 0
    ADJOINT = 1
    DUAL = 2
    ADJOINT_CHECKBIT = 3
