"""`qd.sparse`: Quadrants' sparse grids (`grid`, a struct field on a bitmasked SNode, and `usage`,
its active fraction). qdlab has no sparse SNodes (`bitmasked`, `pointer`), so both raise a
NotImplementedError naming themselves."""

__all__ = ["grid", "usage"]


def grid(field_dict: dict, shape: tuple) -> object:
    """`qd.sparse.grid(members, shape)`: not in qdlab (it needs a bitmasked SNode)."""
    raise NotImplementedError(
        "qd.sparse.grid is not supported in qdlab: it places a struct field on a bitmasked "
        "(sparse) SNode, which qdlab does not have; use a dense qd.Struct.field."
    )


def usage(x: object) -> float:
    """`qd.sparse.usage(grid)`: not in qdlab (there are no sparse grids)."""
    raise NotImplementedError(
        "qd.sparse.usage is not supported in qdlab: there are no sparse grids (qd.sparse.grid)."
    )
