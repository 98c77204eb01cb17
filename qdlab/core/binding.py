"""Binding a call's arguments to a function's parameters, for kernels and `@qd.func`s alike.

Both report a mistake in Quadrants' words (`Missing argument 'b'`, `Unexpected argument 'c'`,
`Too many arguments`, `Multiple values for argument 'a'`), so code that matches them keeps working.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable


class BindError(Exception):
    """The arguments do not bind; the message says which one and how."""


def parameters(fn: Callable) -> tuple[list[str], dict[str, object]]:
    """`fn`'s parameter names, in order, and the defaults of those that have one."""
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params], {
        p.name: p.default for p in params if p.default is not inspect.Parameter.empty
    }


def bind(names: list[str], defaults: dict[str, object], args: tuple, kwargs: dict) -> list:
    """The argument for each parameter, in order: positional ones first, then keywords, then
    defaults; BindError when that leaves one unbound, bound twice, or unknown."""
    if len(args) > len(names):
        raise BindError("Too many arguments")
    values = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise BindError(f"Unexpected argument '{name}'")
        if name in values:
            raise BindError(f"Multiple values for argument '{name}'")
        values[name] = value
    for name in names:
        if name not in values:
            if name not in defaults:
                raise BindError(f"Missing argument '{name}'")
            values[name] = defaults[name]
    return [values[n] for n in names]
