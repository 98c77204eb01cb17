"""`qd.ad.Tape`: record kernel launches, then run their gradient kernels in reverse;
`qd.ad.FwdMode`: run kernels in forward mode, their fields' duals computed alongside."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..core.errors import QdAssertionError, QdRuntimeError, QdTypeError, QdValueError
from ..core.fields import AutodiffMode, SNodeGradType
from ..core.types import f64
from . import field, pyquadrants, state

if TYPE_CHECKING:
    from typing_extensions import Self


class Loss(Protocol):
    """What a tape's loss is: a 0-d field, or an array of one element with a gradient buffer (a
    `qd.ndarray`, a `qd.Tensor`)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def grad(self) -> Any: ...

    def fill(self, value: float) -> None: ...

    def to_numpy(self) -> Any: ...


class Tape:
    """`with qd.ad.Tape(loss=loss): k1(...); k2(...)` then reads `x.grad`.

    On entry the loss (an array of one element, with a gradient buffer) is set to 0, as Quadrants
    does, so a second tape over the same kernels computes the same loss; on exit (given a loss) its
    gradient is set to 1 and the gradient of every recorded call runs, last first, on the same
    arguments (`calls`: (kernel or `qd.ad.grad_replaced` function, args)). The gradients of
    ndarrays accumulate, as in Quadrants: clear `.grad` buffers between tapes (`x.grad.fill(0)`);
    `clear_gradients` (on by default) sets every field's gradient to 0 on entry, as Quadrants does.

    `validation=True` (with `qd.init(debug=True)`) checks the global data access rule in the
    kernels launched inside (`compiler/passes/validation.py`); `grad_check=[x, ...]` compares
    each listed field's gradient with central finite differences of the recorded calls
    (`GradChecker`; an f64 loss).
    """

    def __init__(
        self,
        loss: Loss | None = None,
        clear_gradients: bool = True,
        validation: bool = False,
        grad_check: list | None = None,
    ) -> None:
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.validation = validation
        self.calls: list[tuple[Any, tuple]] = []
        self.modes: list[AutodiffMode] = []
        self.entered = False
        self.gradient_evaluated = False
        if validation and not state.config().debug:
            warnings.warn(
                "Debug mode is disabled, autodiff valid check will not work. Please specify "
                "`qd.init(debug=True)` to enable the check.",
                Warning,
                stacklevel=2,
            )
        self.grad_checker: GradChecker | None = None
        if grad_check:
            if not isinstance(grad_check, list):
                raise QdAssertionError(  # an AssertionError there
                    "grad_check should be a list of fields that need to check gradients."
                )
            self.grad_checker = GradChecker(loss, grad_check)

    def insert(self, func: Any, args: tuple) -> None:
        """Record a launch (a kernel's, or a `qd.ad.grad_replaced` function's call)."""
        self.modes.append(func.autodiff_mode)
        if self.validation:
            func.autodiff_mode = AutodiffMode.VALIDATION
        self.calls.append((func, args))

    def __enter__(self) -> Self:
        if self.entered:
            raise QdAssertionError("Tape can be entered only once.")
        self.entered = True
        if state.tape is not None:
            raise RuntimeError("qd.ad.Tape cannot be nested")
        if isinstance(self.loss, field.Field):  # Quadrants' words, and which field it is
            if self.loss.shape:
                raise RuntimeError(
                    "The loss of `Tape` must be a 0-D field, i.e. scalar; it is "
                    f"{self.loss._described()}."
                )
            if not self.loss.has_grad():
                raise RuntimeError(
                    f"Gradients of loss are not allocated: the loss of `Tape`, "
                    f"{self.loss._described()}, needs qd.field(..., needs_grad=True)."
                )
        elif self.loss is not None:
            if int(np.prod(getattr(self.loss, "shape", None) or np.shape(self.loss))) != 1:  # type: ignore[arg-type]
                raise RuntimeError("The loss of `Tape` must be an ndarray with only one element")
            if getattr(self.loss, "grad", None) is None:
                raise RuntimeError(
                    "Gradients of loss are not allocated, please set needs_grad=True for all "
                    "ndarrays that are required by autodiff."
                )
        if self.clear_gradients:
            clear_all_gradients()  # as Quadrants' Tape does: every field's gradient starts at 0
        if self.validation:
            clear_all_gradients(SNodeGradType.ADJOINT_CHECKBIT)
        if self.loss is not None:
            self.loss.fill(0.0)
        state.tape = self
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        state.tape = None
        try:
            if kind is None and self.loss is not None:
                self.grad()
        finally:
            for (func, _), mode in zip(self.calls, self.modes):
                func.autodiff_mode = mode

    def grad(self) -> None:
        """Run the recorded calls' gradients, last first (on exit, when the tape has a loss)."""
        if not self.entered:
            raise QdAssertionError("Before evaluating gradients tape must be entered.")
        if self.gradient_evaluated:
            raise QdAssertionError("Gradients of grad can be evaluated only once.")
        if self.loss is not None:
            self.loss.grad.fill(1)
        for func, args in reversed(self.calls):
            if hasattr(func, "grad"):
                func.grad(*args)
        self.gradient_evaluated = True
        if self.grad_checker is not None:
            self.grad_checker.check(self.calls)


class GradChecker:
    """`qd.ad.Tape(loss, grad_check=[x, ...])`: after the gradients ran, each listed field's
    gradient is compared with central finite differences of the recorded calls, along a random
    direction, at step sizes 2**-3, 2**-5, ... 2**-29 until one agrees within 1% (Quadrants'
    check). Every field is put back as the tape found it before each run, and the calls run once
    more at the end. An AssertionError names the fields that never agree."""

    EPS = 2.0 ** np.arange(-3, -30, -2).astype(np.float64)

    def __init__(self, loss: Loss | None, to_check: list) -> None:
        self.loss, self.to_check = loss, to_check
        self.fields = field.primal_fields()
        self.backups = [f.to_numpy() for f in self.fields]

    def restore(self) -> None:
        for f, values in zip(self.fields, self.backups):
            f.from_numpy(values)

    def run(self, calls: list[tuple[Any, tuple]]) -> float:
        for func, args in calls:
            func(*args)
        loss = self.loss
        assert loss is not None  # `check` read its dtype
        return float(np.asarray(loss.to_numpy()).sum())

    def check(self, calls: list[tuple[Any, tuple]]) -> None:
        if getattr(self.loss, "dtype", None) != f64:
            raise QdAssertionError("Only f64 is supported when checking grad.")
        failed = []
        for k, x in enumerate(self.to_check):
            if x is self.loss:
                continue
            start = x.to_numpy()
            grad = x.grad.to_numpy()
            errors = []
            for eps in self.EPS:
                tangent = np.asarray(np.random.rand(*x.shape), np.float64)
                step = tangent.reshape(tangent.shape + (1,) * (start.ndim - tangent.ndim))
                self.restore()
                x.from_numpy(start + eps * step)
                plus = self.run(calls)
                self.restore()
                x.from_numpy(start - eps * step)
                minus = self.run(calls)
                numeric = (plus - minus) * 0.5 / eps
                analytic = float(np.sum(grad * step))
                err = abs(analytic - numeric)
                errors.append(err / (abs(analytic) + (1e-20 if numeric == 0 else 0.0)))
                if err * 100 <= abs(analytic):
                    break
            else:
                failed.append(f"variable {k} (relative error {min(errors):.3g})")
        self.restore()
        for func, args in calls:
            func(*args)
        if failed:
            raise QdAssertionError(
                "Grad check failed: Not all variables pass grad check: "
                + ", ".join(failed)
                + ", expected relative error 0.01."
            )


def clear_all_gradients(gradient_type: SNodeGradType = SNodeGradType.ADJOINT) -> None:
    """`qd.ad.clear_all_gradients()`: zero every field's gradient (`SNodeGradType.DUAL`: its
    dual; `ADJOINT_CHECKBIT`: its validation check bits). Quadrants compiles one clearing kernel
    per group of fields placed together, which `get_num_compiled_functions()` counts; qdlab clears
    on the host and counts each new group the same way."""
    pyquadrants.current.materialize()
    if gradient_type is SNodeGradType.ADJOINT:
        for group in field.gradient_groups():
            if group not in state.cleared_groups:
                state.cleared_groups.add(group)
                state.compiled_count += 1
        field.clear_gradients()
    elif gradient_type is SNodeGradType.DUAL:
        field.clear_duals()
    elif gradient_type is SNodeGradType.ADJOINT_CHECKBIT:
        field.clear_checkbits()
    else:
        raise QdValueError(
            f"clear_all_gradients clears gradients, duals or check bits, not {gradient_type}."
        )


def grad_replaced(func: Callable) -> Callable:
    """`@qd.ad.grad_replaced`: a Python function whose gradient is the one `@qd.ad.grad_for(it)`
    gives, instead of its kernels' (a tape records the call, not the kernels inside)."""

    def decorated(*args: object, **kwargs: object) -> None:
        if state.tape is not None:
            state.tape.insert(decorated, args)
        saved, state.tape = state.tape, None  # its kernels are not recorded
        try:
            func(*args, **kwargs)
        finally:
            state.tape = saved

    functools.update_wrapper(decorated, func)
    vars(decorated).update(grad=None, autodiff_mode=AutodiffMode.NONE)
    return decorated


def grad_for(primal: Callable) -> Callable[[Callable], Callable]:
    """`@qd.ad.grad_for(f)`: the function that is `f`'s gradient (`f` made by
    `qd.ad.grad_replaced`)."""

    def decorator(func: Callable) -> Callable:
        if not hasattr(primal, "grad"):
            raise RuntimeError(
                f"Primal function `{primal.__name__}` must be decorated by qd.ad.grad_replaced"
            )
        if primal.grad is not None:
            raise RuntimeError(
                "Primal function must be a **python** function instead of a quadrants kernel. "
                "Please wrap the quadrants kernel in a @qd.ad.grad_replaced decorated python "
                "function instead."
            )

        def decorated(*args: object, **kwargs: object) -> None:
            func(*args, **kwargs)

        vars(primal)["grad"] = decorated
        return decorated

    return decorator


def no_grad(func: Callable) -> Callable:
    """`@qd.ad.no_grad`: a Python function whose calls a tape records with no gradient (its
    kernels' gradients do not run)."""
    decorated = grad_replaced(func)
    vars(decorated)["grad"] = lambda *args, **kwargs: None
    return decorated


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
            if not f.has_dual():
                raise QdRuntimeError(
                    f"qd.ad.FwdMode's `{role}`, {f._described()}, has no dual: make it with "
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
