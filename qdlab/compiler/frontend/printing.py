"""`print` in a kernel: how each value is formatted, as Quadrants does it (C's printf).

A value the kernel computes is printed with a printf conversion chosen by its type: `%d` for
integers (unsigned ones as unsigned), `%f` for f32 and `%.12f` for f64; a format spec (`{x:.3f}`,
`"{:d}".format(n)`) is a printf spec without the `%` (`.3f`, `08d`, `e`, `.2`), checked against the
value's type. Python values (constants, template arguments) are formatted by Python itself while
the kernel compiles.
"""

from __future__ import annotations

import ast
import re
import string

from ...core.errors import QdTypeError
from ...core.types import DType
from .. import ir
from .scope import dtype_of

SPEC = re.compile(
    r"^(?P<flags>[-+ #0]*)(?P<width>\d+)?(?:\.(?P<precision>\d+))?"
    r"(?:hh|h|ll|l|L|q|j|z|t)?(?P<conv>[diouxXeEfFgGaA])?$"
)
"""A printf spec without its `%` (length modifiers are accepted and dropped)."""
PERCENT = re.compile(r"%(?P<spec>[-+ #0]*\d*(?:\.\d+)?[diouxXeEfFgGaAsr%])")
"""A conversion of a `"..." % (...)` template."""
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


class Prints:
    """`print(...)`, and the formatted message of an `assert`: mixed into `Frontend`; uses its
    `visit`, `value`, `emit`, `error`, `resolve_static`, `is_vec`, `vec_of` and `print_parts`."""

    def print_(self, node: ast.Call) -> None:
        """`print(*args, sep=, end=)`: f-strings, `"...".format(...)` and format specs, formatted
        as Quadrants does (`printing`)."""
        options = {"sep": " ", "end": "\n"}
        for kw in node.keywords:
            if kw.arg in options:
                value = self.resolve_static(kw.value)
                options[kw.arg] = "" if value is None else str(value)
            else:
                raise self.error(f"print() in a kernel takes sep= and end=, not {kw.arg}=.")
        pieces: list[str | tuple[object, str]] = []
        for k, a in enumerate(node.args):
            if k:
                pieces.append(options["sep"])
            pieces.extend(self.print_pieces(a))
        pieces.append(options["end"])
        parts, values, specs = self.print_op_parts(pieces)
        self.emit(ir.Print, values, parts=parts, specs=specs)

    def print_op_parts(
        self, pieces: list[str | tuple[object, str]]
    ) -> tuple[list[str | None], list[ir.Value], list[str]]:
        """Text and (value, spec) pieces as a Print's `parts` (text, or None for the next value),
        its values, and each value's printf conversion."""
        parts: list[str | None] = []
        values: list[ir.Value] = []
        specs: list[str] = []
        for piece in pieces:
            if isinstance(piece, str):
                parts.append(piece)
                continue
            x, spec = piece
            if isinstance(x, (str, int, float)) and not isinstance(x, ir.Value):
                parts.append(format(x, spec) if spec else str(x))
                continue
            shown = self.shown(x)
            for v in shown:  # a vector shows as `[1, 2, 3]`, each entry under the spec
                if isinstance(v, str):
                    parts.append(v)
                    continue
                try:
                    specs.append(conversion(dtype_of(v), spec))
                except SpecError as e:
                    raise self.error(str(e), QdTypeError) from None
                parts.append(None)
                values.append(v)
        return parts, values, specs

    def print_pieces(self, a: ast.expr) -> list[str | tuple[object, str]]:
        """One argument of `print` as literal text and (value, format spec) pieces."""
        if isinstance(a, ast.JoinedStr):
            out: list[str | tuple[object, str]] = []
            for p in a.values:
                if isinstance(p, ast.Constant):
                    out.append(str(p.value))
                    continue
                assert isinstance(p, ast.FormattedValue), p  # what an f-string holds besides text
                spec = "".join(self.print_pieces(p.format_spec)) if p.format_spec else ""  # type: ignore[arg-type]
                out.append((self.visit(p.value), spec))
            return out
        if (
            isinstance(a, ast.Call)
            and isinstance(a.func, ast.Attribute)
            and a.func.attr == "format"
            and isinstance(a.func.value, ast.Constant)
            and isinstance(a.func.value.value, str)
        ):
            args = [self.print_value(self.visit(x)) for x in a.args]
            kwargs = {kw.arg: self.print_value(self.visit(kw.value)) for kw in a.keywords}
            try:
                return fields(a.func.value.value, args, kwargs)
            except FieldError as e:
                raise self.error(str(e)) from None
        return [(self.print_value(self.visit(a)), "")]

    def print_value(self, x: object) -> object:
        """A number printed on its own or through `.format` is a kernel value, printed as one (as
        in Quadrants; inside an f-string, Python formats it)."""
        return self.value(x) if isinstance(x, (bool, int, float)) else x

    def assert_pieces(self, msg: ast.expr) -> list[str | tuple[object, str]] | None:
        """An assert's message formatted with values of the kernel, as pieces (`print`'s): an
        f-string, `"...".format(...)` or `"..." % (...)`; None for a message that is text."""
        if isinstance(msg, ast.BinOp) and isinstance(msg.op, ast.Mod):
            if not (isinstance(msg.left, ast.Constant) and isinstance(msg.left.value, str)):
                return None
            args = msg.right.elts if isinstance(msg.right, ast.Tuple) else [msg.right]
            values = [self.print_value(self.visit(a)) for a in args]
            return self.percent_pieces(msg.left.value, values)
        if isinstance(msg, ast.JoinedStr) or (
            isinstance(msg, ast.Call)
            and isinstance(msg.func, ast.Attribute)
            and msg.func.attr == "format"
        ):
            return self.print_pieces(msg)
        return None

    def percent_pieces(self, template: str, values: list) -> list[str | tuple[object, str]]:
        """`template % values` as pieces: each conversion takes the next value (a kernel value
        printed under it, a Python value formatted now)."""
        out: list[str | tuple[object, str]] = []
        at, k = 0, 0
        for m in PERCENT.finditer(template):
            out.append(template[at : m.start()])
            at = m.end()
            spec = m["spec"]
            if spec == "%":
                out.append("%")
                continue
            if k >= len(values):
                raise self.error("not enough arguments for format string")
            x, k = values[k], k + 1
            if isinstance(x, ir.Value):
                out.append((x, "" if spec[-1] in "sr" else spec))
            else:
                out.append(("%" + spec) % x)
        if k != len(values):
            raise self.error("not all arguments converted during string formatting")
        out.append(template[at:])
        return [p for p in out if p != ""]
