"""`qd.ad.Tape`: record kernel launches, then run their gradient kernels in reverse;
`qd.ad.FwdMode`: run kernels in forward mode, their fields' duals computed alongside."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..core.errors import QdAssertionError, QdRuntimeError, QdTypeError
from . import field, state

if TYPE_CHECKING:
    from typing_extensions import Self

    from .kernel import Kernel


class Loss(Protocol):
    """What a tape's loss is: a 0-d field, or an array of one element with a gradient buffer (a
    `qd.ndarray`, a `qd.Tensor`)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def grad(self) -> Any: ...

    def fill(self, value: float) -> None: ...


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
        loss: Loss | None = None,
        clear_gradients: bool = True,
        validation: bool = False,
        grad_check: object = None,
    ) -> None:
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.calls: list[tuple[Kernel, tuple, dict]] = []

    def record(self, kernel: Kernel, args: tuple, kwargs: dict) -> None:
        self.calls.append((kernel, args, kwargs))

    def __enter__(self) -> Self:
        if state.tape is not None:
            raise RuntimeError("qd.ad.Tape cannot be nested")
        if isinstance(self.loss, field.Field):  # Quadrants' words, and which field it is
            if self.loss.shape:
                raise RuntimeError(
                    "The loss of `Tape` must be a 0-D field, i.e. scalar; it is "
                    f"{self.loss.described()}."
                )
            if not self.loss.needs_grad:
                raise RuntimeError(
                    f"Gradients of loss are not allocated: the loss of `Tape`, "
                    f"{self.loss.described()}, needs qd.field(..., needs_grad=True)."
                )
        elif self.loss is not None:
            if int(np.prod(getattr(self.loss, "shape", None) or np.shape(self.loss))) != 1:  # type: ignore[arg-type]
                raise RuntimeError("The loss of `Tape` must be an ndarray with only one element")
            if getattr(self.loss, "grad", None) is None:
                raise RuntimeError(
                    "Gradients of loss are not allocated, please set needs_grad=True for all "
                    "ndarrays that are required by autodiff."
                )
        if self.loss is not None:
            self.loss.fill(0.0)
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
            self.loss.grad.fill(1)
        for kernel, args, kwargs in reversed(self.calls):
            kernel.grad(*args, **kwargs)


class FwdMode:
    """`with qd.ad.FwdMode(loss=x, param=y, seed=[...]): k(...)` then reads `x.dual`.

    Forward-mode autodiff, as Quadrants has it: on entry every field's dual is zeroed (with
    `clear_gradients`, the default) and the seed is written to `param.dual` (one value per element
    of `param`, or one for a 0-d field; with one value and a bigger `param`, its first element);
    the kernels launched inside run in forward mode (each float value of theirs paired with its
    dual: `compiler/passes/forward_mode.py`), so `loss.dual` ends holding the Jacobian-vector
    product; on exit the seed is cleared. `param` and each loss are scalar fields with a dual
    (`needs_dual=True` or `qd.root.lazy_dual()`).
    """

    def __init__(
        self,
        loss: field.ScalarField | list[field.ScalarField],
        param: field.ScalarField,
        seed: Sequence[float] | None = None,
        clear_gradients: bool = True,
    ) -> None:
        self.loss = loss if isinstance(loss, list) else [loss]
        self.param = param
        """Checked when entered, as the loss is: a scalar field with a dual."""
        self.seed = seed
        self.clear_gradients = clear_gradients
        self.entered = False

    def __enter__(self) -> Self:
        if self.entered:
            raise RuntimeError("Forward mode manager can be entered only once.")
        if state.fwd is not None:
            raise RuntimeError("qd.ad.FwdMode cannot be nested")
        self.entered = True
        roles = [f"loss[{k}]" if len(self.loss) > 1 else "loss" for k in range(len(self.loss))]
        for role, f in zip([*roles, "param"], [*self.loss, self.param]):
            if not isinstance(f, field.ScalarField):
                raise QdTypeError(
                    "qd.ad.FwdMode takes scalar fields for its loss and its param; its "
                    f"`{role}` is {type(f).__name__}."
                )
            if not f.has_dual:
                raise QdRuntimeError(
                    f"qd.ad.FwdMode's `{role}`, {f.described()}, has no dual: make it with "
                    "needs_dual=True or call qd.root.lazy_dual() first."
                )
        n = int(np.prod(self.param.shape, dtype=np.int64))
        if not self.seed:
            if n != 1:
                raise RuntimeError(
                    "`seed` is not set for non 0-D field, please specify. `seed` is a list to "
                    "specify which parameters the computed derivatives respect to."
                )
            self.seed = [1.0]
        elif len(self.seed) != n:
            raise QdAssertionError(  # an AssertionError there
                f"`seed` has {len(self.seed)} values for {n} parameters."
            )
        if self.clear_gradients:
            field.clear_duals()
        self.set_seed(False)
        state.fwd = self
        return self

    def set_seed(self, clear: bool) -> None:
        dual = self.param.dual
        if dual is None or self.seed is None:  # not entered: nothing was set
            return
        seed = list(self.seed)
        if len(seed) == 1:
            dual[None if not self.param.shape else (0,) * len(self.param.shape)] = (
                0.0 if clear else float(seed[0])
            )
        elif clear:
            dual.fill(0)
        else:
            dual.from_numpy(np.array(seed, np.float32))  # a 1-d param's, as Quadrants takes it

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        state.fwd = None
        self.set_seed(True)
