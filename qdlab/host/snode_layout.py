"""The bytes Quadrants' CPU backend gives a layout tree, as `SNode._cell_size_bytes` and
`_offset_bytes_in_parent_cell` report them.

qdlab keeps each field in an array of its own, so these figures describe Quadrants' layout, not
qdlab's storage: a cell of a dense level is a C struct of what was put under it, in order (each
level under it as an array of its cells, each field's scalars, each `BitpackedFields` word),
every member aligned to its largest scalar and the cell padded to that alignment; a place node's
cell is 0 bytes. A tree's root cell holds the levels made under `qd.root` since the previous
materialization (a kernel launch or one of these queries starts a new tree). Where qdlab cannot
know Quadrants' answer (a pointer, bitmasked, dynamic or quant_array level, a field made with
`shape=` beside the levels, a quantised field placed bare), a query is a NotImplementedError
rather than a guess.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, cast

from ..core.types import DType
from . import state
from .field import Field, MemberField, close_tree, live_fields
from .quant import BitpackedFields

if TYPE_CHECKING:
    from .snode import SNode


def _refuse(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"qdlab does not know the byte layout Quadrants gives {what}; only dense levels, fields "
        "and BitpackedFields are described."
    )


def _scalar_bytes(dtype: object, label: str) -> int:
    if not isinstance(dtype, DType):
        raise _refuse(f"the quantised field {label} placed outside a BitpackedFields")
    return max(1, dtype.bits // 8)


def member_extent(member: object) -> tuple[int, int]:
    """(bytes, alignment) a member takes in its parent's cell."""
    if isinstance(member, BitpackedFields):
        n = member.struct.physical.bits // 8
        return n, n
    if isinstance(member, MemberField):
        n = _scalar_bytes(member.owner.dtype, str(member))
        return n, n
    if isinstance(member, Field):
        n = _scalar_bytes(member.dtype, member._label())
        return n * math.prod(member.element), n
    if _is_level(member):
        size, align = cell(cast("SNode", member))
        return size * math.prod(cast("SNode", member).extents), align
    raise _refuse(f"a {type(member).__name__}")


def _is_level(member: object) -> bool:
    """An SNode (snode.py, which imports this module, defines the class)."""
    return hasattr(member, "members") and hasattr(member, "extents")


def members(node: SNode, tree: int | None = None) -> list[object]:
    """What was put under `node` since the latest `qd.init`, in order; under a root, only what
    belongs to layout tree `tree`."""
    root = node._parent is None
    return [
        m
        for epoch, in_tree, m in node.members
        if epoch == state.epoch and (not root or in_tree == tree)
    ]


def tree_of(member: object) -> int | None:
    return getattr(member, "_tree", getattr(member, "_tree_id", None))


def layout(node: SNode, tree: int | None = None) -> list[tuple[object, int]]:
    """Each member of `node`'s cell (of tree `tree`'s root cell) with its byte offset there."""
    if node.kind != "dense" or node.quant_bits:
        raise _refuse(f"a {'quant_array' if node.quant_bits else node.kind} level")
    out, offset = [], 0
    for m in members(node, tree):
        size, align = member_extent(m)
        offset = -(-offset // align) * align
        out.append((m, offset))
        offset += size
    return out


def cell(node: SNode) -> tuple[int, int]:
    """(bytes, alignment) of one cell of `node`."""
    end, align = 0, 1
    for m, offset in layout(node):
        size, a = member_extent(m)
        end, align = max(end, offset + size), max(align, a)
    return -(-end // align) * align, align


def _check_root(node: SNode, tree: int | None) -> None:
    """Under the root, the levels' order is known only when no field of the tree was made with
    `shape=` (Quadrants puts such a field's own level under the root when it is made)."""
    placed = {id(f) for m in members(node, tree) for f in _fields_under(m)}
    for f in live_fields():
        if (
            f.epoch == state.epoch
            and f._tree_id == tree
            and f.primal is None
            and f.dual_of is None
            and f.placed
            and not (f.name or "").startswith("<")  # a sparse level's own bookkeeping
            and id(f) not in placed
        ):
            raise _refuse(f"a tree holding the field {f._label()}, made with shape=")


def _fields_under(member: object) -> list[object]:
    if isinstance(member, BitpackedFields):
        return [f for f, _, _ in member.fields]
    if isinstance(member, MemberField):
        return [member.owner]
    if _is_level(member):
        return [f for m in members(cast("SNode", member)) for f in _fields_under(m)]
    return [member]


def cell_size_bytes(node: SNode) -> int:
    close_tree()  # as Quadrants materializes the tree when asked
    if node._parent is None:
        raise _refuse("a root, whose cell holds every tree made under it")
    return cell(node)[0]


def offset_bytes_in_parent_cell(node: SNode | None, member: object) -> int:
    """Where `member` starts in a cell of its parent `node` (0 at the top)."""
    close_tree()
    if node is None:
        return 0
    tree = tree_of(member)
    if node._parent is None:
        _check_root(node, tree)
    for m, offset in layout(node, tree):
        if m is member or (isinstance(m, MemberField) and m.owner is member):
            return offset
    raise _refuse(f"{member!r}, which qdlab did not see placed under {node!r}")
