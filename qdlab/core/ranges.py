"""`qd.ndrange` outside a kernel (`list(qd.ndrange(3, 4))`, `qd.static(qd.ndrange(...))`), and the
rules a kernel's `qd.ndrange` shares with it: what an argument may be, and `axes=`.

`axes=` changes only the order the index space is visited in: physical level `p` (level 0
outermost, the last level fastest) walks canonical axis `axes[p]`; the indices given to the loop
targets stay canonical.
"""

from __future__ import annotations

import collections.abc
from collections.abc import Iterator

import numpy as np

from .errors import QdSyntaxError, QdTypeError

NOT_A_PAIR = "Every argument of ndrange should be a scalar or a tuple/list like (begin, end)"
NOT_AN_INT = "Every argument of ndrange should be an integer scalar or a tuple/list of (int, int)"


def axes_order(axes: object, n: int) -> list[int]:
    """The canonical axis each physical level walks, for `axes=` of an `n`-dimensional ndrange;
    Quadrants' errors for a wrong length, a non-integer entry or a non-permutation."""
    if axes is None:
        return list(range(n))
    order = tuple(axes)  # type: ignore[call-overload]
    if len(order) != n:
        raise QdSyntaxError(
            f"qd.ndrange(axes={order!r}) has {len(order)} entries but ndrange was called with {n} "
            "dimension argument(s); they must match."
        )
    for e in order:
        if isinstance(e, bool) or not isinstance(e, (int, np.integer)):
            raise QdTypeError(
                f"qd.ndrange(axes={order!r}) entries must be Python ints; got {type(e).__name__} "
                f"({e!r})."
            )
    if sorted(order) != list(range(n)):
        raise QdSyntaxError(f"qd.ndrange(axes={order!r}) is not a permutation of range({n}).")
    return [int(e) for e in order]


def python_bounds(arg: object) -> tuple[int, int]:
    """(begin, end) of one argument given as Python values: `n` or `(begin, end)`; an end below
    its begin is an empty axis."""
    pair = arg if isinstance(arg, collections.abc.Sequence) else (0, arg)
    if len(pair) != 2:  # type: ignore[arg-type]
        raise QdSyntaxError(NOT_A_PAIR)
    if not all(isinstance(b, (int, np.integer)) and not isinstance(b, bool) for b in pair):  # type: ignore[union-attr]
        raise QdTypeError(NOT_AN_INT)
    begin, end = (int(b) for b in pair)  # type: ignore[union-attr]
    return begin, max(begin, end)


class Ndrange:
    """The index space of `qd.ndrange(*args, axes=...)`, iterated in Python: tuples of canonical
    indices, the last physical level fastest."""

    def __init__(self, *args: object, axes: object = None) -> None:
        self.bounds = [python_bounds(a) for a in args]
        self.order = axes_order(axes, len(self.bounds))
        self.axes = None if self.order == list(range(len(self.bounds))) else tuple(self.order)
        """The permutation given, or None for the default order (as Quadrants reports it)."""

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        index = [0] * len(self.bounds)

        def level(p: int) -> Iterator[tuple[int, ...]]:
            if p == len(self.order):
                yield tuple(index)
                return
            axis = self.order[p]
            for t in range(*self.bounds[axis]):
                index[axis] = t
                yield from level(p + 1)

        return level(0)

    def __len__(self) -> int:
        n = 1
        for begin, end in self.bounds:
            n *= end - begin
        return n
