"""`qd.simt.Tile16x16` and `qd.simt.Tile32x32`, Quadrants' register tiles spread over a subgroup,
and `qd.outer`, the rank-1 update they take (`t -= qd.outer(a, b)`). The names exist on every
arch, as in Quadrants; a tile is made only on a GPU backend there, and qdlab compiles them for no
arch yet, so making one in a kernel is refused with Quadrants' CPU error."""

from __future__ import annotations

import platform
from typing import Any, NoReturn

from ...core.errors import QuadrantsSyntaxError
from ._intrinsics import arch


class OuterProduct:
    """`qd.outer(a, b)`: not a value; only the right side of `tile -= qd.outer(a, b)`."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a, self.b = a, b

    def __add__(self, other: Any) -> NoReturn:
        raise TypeError("OuterProduct does not support composition; apply each update separately")

    __radd__ = __add__


def outer(a: Any, b: Any) -> OuterProduct:
    """A deferred outer product for `tile -= qd.outer(a, b)`."""
    return OuterProduct(a, b)


class TileType:
    """`qd.simt.TileNxN`: `SIZE`, and `zeros` / `eye`, which make a tile while compiling."""

    def __init__(self, n: int) -> None:
        self.SIZE = n

    def _refuse(self) -> NoReturn:
        name = arch()
        if name == "cpu":  # as Quadrants names the host
            name = "arm64" if platform.machine().lower() in ("arm64", "aarch64") else "x64"
        raise QuadrantsSyntaxError(
            f"Tile{self.SIZE}x{self.SIZE} requires a GPU backend (cuda, metal, vulkan, amdgpu). "
            f"Current arch is Arch.{name}."
            + ("" if name in ("x64", "arm64") else " qdlab does not compile register tiles yet.")
        )

    def zeros(self, *, dtype: Any = None) -> NoReturn:
        """A zero tile (refused: see the module's docstring)."""
        self._refuse()

    def eye(self, *, dtype: Any = None) -> NoReturn:
        """An identity tile (refused: see the module's docstring)."""
        self._refuse()

    def __repr__(self) -> str:
        return f"qd.simt.Tile{self.SIZE}x{self.SIZE}"


Tile16x16 = TileType(16)
Tile32x32 = TileType(32)
