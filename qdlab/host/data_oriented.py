"""`@qd.data_oriented` classes: their `@qd.kernel` methods bind `self` as a template argument, so
the ndarrays it holds (on itself, or on the objects and dataclasses it holds) are kernel
arguments, its other values are compile-time values, and its `@qd.func` methods are inlined with
`self` bound (`host/struct_args.py` and `compiler/frontend/structs.py` do the work; this module only
binds)."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

from ..core.errors import QdSyntaxError

if TYPE_CHECKING:
    from .kernel import Kernel


def data_oriented(
    cls: type | None = None, *, stable_members: bool = False, template_primitives: bool = True
) -> typing.Any:
    """`@qd.data_oriented`: marks a class whose instances kernels take as `self` or as a
    `qd.template()` argument. Its primitive members (`int`, `float`, `bool`) are compile-time
    values, baked per instance when a kernel first compiles for it (a later change to one is not
    seen, as in Quadrants); `template_primitives=False` makes each one the kernel reads a run-time
    scalar argument instead (an `int` or `bool` a `default_ip`, a `float` a `default_fp`), read
    at every launch. `stable_members` is Quadrants' hint that member arrays are never reassigned:
    qdlab keys launches on them either way."""

    def mark(c: type) -> type:
        c.__qd_data_oriented__ = True
        c.__qd_template_primitives__ = bool(template_primitives)
        return c

    del stable_members
    return mark if cls is None else mark(cls)


def lifts_primitives(obj: object) -> bool:
    """Whether `obj` is of a class decorated `@qd.data_oriented(template_primitives=False)` (the
    nearest decorated class in its MRO decides)."""
    for klass in type(obj).__mro__:
        flag = vars(klass).get("__qd_template_primitives__")
        if flag is not None:
            return flag is False
    return False


def is_method(fn: typing.Callable) -> bool:
    """Whether `fn` was defined in a class body (its first parameter is then the instance)."""
    parts = fn.__qualname__.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


class BoundKernel:
    """`obj.step`: a `@qd.kernel` method bound to an instance; calling it passes the instance as
    the kernel's first (template) argument. `.grad` is bound the same way."""

    __slots__ = ("kernel", "obj")

    def __init__(self, kernel: Kernel, obj: object) -> None:
        self.kernel, self.obj = kernel, obj

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        return self.kernel(self.obj, *args, **kwargs)

    @property
    def grad(self) -> BoundKernel:
        return BoundKernel(self.kernel.grad, self.obj)

    def resume(self, *args: object, **kwargs: object) -> object:
        """`obj.step.resume(..., from_checkpoint=label)` of a `checkpoints=True` kernel."""
        __tracebackhide__ = True
        resume = getattr(self.kernel, "resume")  # noqa: B009 - a CheckpointKernel's only
        return resume(self.obj, *args, **kwargs)

    def __getattr__(self, name: str) -> object:
        return getattr(self.kernel, name)

    def __repr__(self) -> str:
        return f"<bound qd.kernel {self.kernel.name} of {self.obj!r}>"


def bind(kernel: Kernel, obj: object) -> BoundKernel:
    """`Kernel.__get__`: the kernel bound to `obj`, which must be of a data-oriented class."""
    if not getattr(type(obj), "__qd_data_oriented__", False):
        raise QdSyntaxError(
            f"kernel `{kernel.name}` is a method of {type(obj).__name__}: decorate the class "
            "with @qd.data_oriented."
        )
    return BoundKernel(kernel, obj)
