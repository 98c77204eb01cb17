"""`qd.ad.Tape`: record kernel launches, then run their gradient kernels in reverse."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from . import field, state

if TYPE_CHECKING:
    from typing_extensions import Self


class Tape:
    """`with qd.ad.Tape(loss=loss): k1(...); k2(...)` then reads `x.grad`.

    On exit the loss's gradient is set to 1 and every recorded kernel's `.grad` runs, last first, on
    the same arguments. Gradients accumulate: clear `.grad` buffers between tapes
    (`x.grad.fill(0)`).
    """

    def __init__(
        self, loss: object = None, clear_gradients: bool = True, validation: bool = False
    ) -> None:
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.calls: list[tuple[object, tuple, dict]] = []

    def record(self, kernel: object, args: tuple, kwargs: dict) -> None:
        self.calls.append((kernel, args, kwargs))

    def __enter__(self) -> Self:
        if state.tape is not None:
            raise RuntimeError("qd.ad.Tape cannot be nested")
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
        grad = getattr(self.loss, "grad", None)
        if self.loss is not None:
            if grad is None:
                raise ValueError(
                    "qd.ad.Tape(loss=...) needs a qd.ndarray made with needs_grad=True"
                )
            grad.fill(1)
        for kernel, args, kwargs in reversed(self.calls):
            kernel.grad(*args, **kwargs)  # type: ignore[attr-defined]
