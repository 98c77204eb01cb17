"""`qd.ad.Tape`: record kernel launches, then run their gradient kernels in reverse."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np

from . import field, state

if TYPE_CHECKING:
    from typing_extensions import Self


class Tape:
    """`with qd.ad.Tape(loss=loss): k1(...); k2(...)` then reads `x.grad`.

    On entry the loss (an array of one element, with a gradient buffer) is set to 0, as Quadrants
    does, so a second tape over the same kernels computes the same loss; on exit its gradient is
    set to 1 and every recorded kernel's `.grad` runs, last first, on the same arguments. The
    gradients of ndarrays accumulate, as in Quadrants: clear `.grad` buffers between tapes
    (`x.grad.fill(0)`); `clear_gradients` (on by default) sets every field's gradient to 0 on
    entry, as Quadrants does. `validation` and `grad_check` are taken for Quadrants' signature.
    """

    def __init__(
        self,
        loss: object = None,
        clear_gradients: bool = True,
        validation: bool = False,
        grad_check: object = None,
    ) -> None:
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.calls: list[tuple[object, tuple, dict]] = []

    def record(self, kernel: object, args: tuple, kwargs: dict) -> None:
        self.calls.append((kernel, args, kwargs))

    def __enter__(self) -> Self:
        if state.tape is not None:
            raise RuntimeError("qd.ad.Tape cannot be nested")
        if self.loss is not None:
            if int(np.prod(getattr(self.loss, "shape", None) or np.shape(self.loss))) != 1:
                raise RuntimeError("The loss of `Tape` must be an ndarray with only one element")
            if getattr(self.loss, "grad", None) is None:
                raise RuntimeError(
                    "Gradients of loss are not allocated, please set needs_grad=True for all "
                    "ndarrays that are required by autodiff."
                )
            self.loss.fill(0.0)  # type: ignore[attr-defined]
        state.tape = self
        if self.clear_gradients:
            field.clear_gradients()  # as Quadrants' Tape does: every field's gradient starts at 0
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        state.tape = None
        if kind is not None:
            return
        if self.loss is not None:
            self.loss.grad.fill(1)  # type: ignore[attr-defined]
        for kernel, args, kwargs in reversed(self.calls):
            kernel.grad(*args, **kwargs)  # type: ignore[attr-defined]
