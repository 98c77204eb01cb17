"""`quadrants.lang._template_mapper`, as far as programs reach into it: its `__builtins__`, the
interpreter's builtins mapping, in which a kernel's free names are looked up last (qdlab's
frontend does the same, `compiler/frontend/source.py`). Genesis sets `__builtins__["__debug__"]`
there to turn the `if __debug__:` checks in its kernels on or off, and kernels compiled afterwards
see it."""

from __future__ import annotations

import builtins
from typing import Any

from ..core.language import ArrayAnnotation, Template
from ..host.array_args import annotation, array_key
from ..host.struct_args import template_key
from .kernel_arguments import ArgMetadata

__builtins__ = vars(builtins)  # a dict, as in any imported module (`__main__` has the module)


class TemplateMapper:
    """Quadrants' mapping from a call's arguments to the kernel variant they select: each
    distinct tuple of features (a template argument's value or field, an array's dtype, ndim and
    layout; nothing for a scalar, whose type the annotation fixes) gets the next instance id.
    qdlab's kernels key their variants the same way (`Kernel` in `host/kernel.py`)."""

    def __init__(
        self, arguments: tuple[ArgMetadata, ...], template_slot_locations: tuple[int, ...]
    ) -> None:
        self.arguments = tuple(arguments)
        self.num_args = len(self.arguments)
        self.template_slot_locations = tuple(template_slot_locations)
        self.mapping: dict[tuple, int] = {}

    def extract(self, raise_on_templated_floats: bool, args: tuple[Any, ...]) -> tuple:
        return tuple(
            self._feature(raise_on_templated_floats, a, meta)
            for a, meta in zip(args, self.arguments)
        )

    @staticmethod
    def _feature(raise_on_templated_floats: bool, a: object, meta: ArgMetadata) -> object:
        ann = annotation(meta.annotation)
        if ann is Template or isinstance(meta.annotation, Template):
            if raise_on_templated_floats and isinstance(a, float):
                raise ValueError(
                    f"template argument `{meta.name}` is a float ({a!r}); each new value compiles "
                    "the kernel again: pass it as a `qd.f32` parameter instead."
                )
            return template_key(a)
        if isinstance(ann, ArrayAnnotation):
            try:
                return array_key(a)
            except TypeError:
                return type(a)
        return None

    def lookup(self, raise_on_templated_floats: bool, args: tuple[Any, ...]) -> tuple[int, tuple]:
        """(the instance id of these arguments' variant, their features)."""
        if len(args) != self.num_args:
            raise TypeError(f"{self.num_args} argument(s) needed but {len(args)} provided.")
        key = self.extract(raise_on_templated_floats, args)
        return self.mapping.setdefault(key, len(self.mapping)), key
