"""`print` in a kernel: how each value is formatted, as Quadrants does it (C's printf).

A value the kernel computes is printed with a printf conversion chosen by its type: `%d` for
integers (unsigned ones as unsigned), `%f` for f32 and `%.12f` for f64; a format spec (`{x:.3f}`,
`"{:d}".format(n)`) is a printf spec without the `%` (`.3f`, `08d`, `e`, `.2`), checked against the
value's type. Python values (constants, template arguments) are formatted by Python itself while
the kernel compiles.
"""

from __future__ import annotations

import re
import string

from .types import DType

SPEC = re.compile(
    r"^(?P<flags>[-+ #0]*)(?P<width>\d+)?(?:\.(?P<precision>\d+))?"
    r"(?:hh|h|ll|l|L|q|j|z|t)?(?P<conv>[diouxXeEfFgGaA])?$"
)
"""A printf spec without its `%` (length modifiers are accepted and dropped)."""
SIGNED, UNSIGNED, REAL = "di", "uxXo", "eEfFgGaA"


class SpecError(Exception):
    """A format spec that is not printf's, or does not fit the value's type."""


class FieldError(Exception):
    """A `.format` template whose fields do not match its arguments."""


def conversion(dtype: DType, spec: str = "") -> str:
    """The printf conversion (`%.3f`) that prints a `dtype` value under format spec `spec`."""
    m = SPEC.match(spec)
    if m is None:
        raise SpecError(f"'{spec}' is not a valid printf specifier.")
    conv = m["conv"]
    allowed = REAL if dtype.is_float else SIGNED if dtype.is_signed else UNSIGNED
    if conv is not None and conv not in allowed:
        raise SpecError(f"'{spec}' doesn't match '{dtype}'.")
    if conv is None:
        conv = "f" if dtype.is_float else "d"
    precision = m["precision"]
    if precision is None and dtype.is_float and dtype.bits == 64 and conv in "eEfF":
        precision = "12"
    width = m["width"] or ""
    return f"%{m['flags']}{width}{'.' + precision if precision is not None else ''}{conv}"


def format_value(conv: str, value: object) -> str:
    """`value` printed under printf conversion `conv` (by Python's `%`, which is printf's)."""
    if conv[-1] in "aA":
        text = float.hex(float(value))  # type: ignore[arg-type]
        return text.upper() if conv[-1] == "A" else text
    return conv % value  # type: ignore[operator]


def fields(template: str, args: list, kwargs: dict) -> list[str | tuple[object, str]]:
    """`template.format(*args, **kwargs)` as pieces: literal text, and (argument, spec) for each
    field. Auto-numbered `{}` and numbered `{1}` fields follow Python's rules."""
    out: list[str | tuple[object, str]] = []
    positions: list[tuple[int, int]] = []
    """(index into `out`, positional argument) of each numbered field."""
    auto, needed, used = 0, 0, set()
    for text, name, spec, _ in string.Formatter().parse(template):
        if text:
            out.append(text)
        if name is None:
            continue
        if name == "":
            name = str(auto)
            auto += 1
        if name.isdigit():
            needed = max(needed, int(name) + 1)
            positions.append((len(out), int(name)))
            out.append((None, spec or ""))
        elif name in kwargs:
            used.add(name)
            out.append((kwargs[name], spec or ""))
        else:
            raise FieldError(f"Keyword '{name}' not found.")
    if needed != len(args):
        raise FieldError(
            f"Expected {needed} positional argument(s), but received {len(args)} instead."
        )
    for name in kwargs:
        if name not in used:
            raise FieldError(f"Keyword '{name}' not used.")
    for at, k in positions:
        out[at] = (args[k], out[at][1])  # type: ignore[index]
    return out
