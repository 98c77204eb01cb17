"""Binding a call's arguments to a function's parameters, for kernels and `@qd.func`s alike.

Both report a mistake in Quadrants' words (`Missing argument 'b'`, `Unexpected argument 'c'`,
`Too many arguments`, `Multiple values for argument 'a'`), so code that matches them keeps working.
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable
from types import FunctionType
from typing import cast

from .errors import QdSyntaxError, SourceLoc

ANNOTATION_ERRORS = (NameError, AttributeError, SyntaxError)
"""What evaluating an annotation raises that Quadrants reports as an invalid annotation."""


class BindError(Exception):
    """The arguments do not bind; the message says which one and how."""


def parameters(fn: Callable) -> tuple[list[str], dict[str, object]]:
    """`fn`'s parameter names, in order, and the defaults of those that have one."""
    params = inspect.signature(fn).parameters.values()
    return [p.name for p in params], {
        p.name: p.default for p in params if p.default is not inspect.Parameter.empty
    }


def check_annotations(fn: Callable) -> None:
    """`fn`'s annotations evaluate (string annotations included); one naming nothing, or not
    Python, is `invalid_annotation`, as Quadrants refuses it when it decorates. qdlab also takes
    the name of the class whose body defines `fn` (a method returning its own struct type), which
    exists only once the body has run. Anything else an annotation raises goes on as raised."""
    try:
        inspect.get_annotations(fn, eval_str=True)
    except ANNOTATION_ERRORS as e:
        parts = getattr(fn, "__qualname__", "").split(".")
        if isinstance(e, NameError) and len(parts) > 1 and e.name == parts[-2]:
            return
        raise invalid_annotation(fn, e) from None


def invalid_annotation(fn: Callable, e: Exception, loc: SourceLoc | None = None) -> QdSyntaxError:
    """Quadrants' QuadrantsSyntaxError for an annotation of `fn` that does not evaluate, at `loc`
    (else at the `def`)."""
    if loc is None:
        code = cast("FunctionType", fn).__code__
        line = linecache.getline(code.co_filename, code.co_firstlineno)
        loc = SourceLoc(fn.__name__, code.co_filename, code.co_firstlineno, 0, line)
    qualname = getattr(fn, "__qualname__", fn.__name__)
    return QdSyntaxError(f"Invalid type annotation in `{qualname}`: {e}", loc)


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
