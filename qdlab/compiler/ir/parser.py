"""Reads the printer's canonical text back into an `ir.Kernel`, so pass tests can be "IR text in, IR
text out".

The grammar is the printer's, one op per line (an op's line may end in `[// line N]`):

    kernel NAME(PARAM: TYPE, ...) [-> (TYPE, ...)] {
      [%result =] OPNAME [%operand, ...] [{key=value, ...}] [: TYPE] [(%arg: TYPE, ...)] [{]
      } else [(%arg: TYPE, ...)] {
    }

`print_kernel(parse(text)) == text` holds for every printed kernel; a `// line N` comment becomes
the op's `loc`, so text printed `with_locs=True` round-trips too. Value names lose their printer
suffix (`%x.1` is a value named `x`, `%3` an unnamed one); the printer gives the same suffixes back
because it names values in the order it meets them, and so does this parser.
"""

from __future__ import annotations

import ast
import re

from ...core.errors import SourceLoc
from ...core.types import DTYPES, ArrayType, DType, LocalType, TensorType, Type
from .. import ir

OPS: dict[str, type[ir.Op]] = {
    cls.name: cls
    for cls in vars(ir).values()
    if isinstance(cls, type) and issubclass(cls, ir.Op) and cls.name != "op"
}
"""Op classes by their printed name."""

_HEADER = re.compile(r"kernel (\w+)\((.*?)\)(?: -> \((.*?)\))? \{$")
_PARAM = re.compile(r"([\w.]+): (ndarray<[^>]*>|local<[^>]*>|\w+(?:\[[\dx]+\])?)")
_RESULT = re.compile(r"(%[\w.]+) = ")
_OPNAME = re.compile(r"(\w+)")
_OPERAND = re.compile(r" ?(%[\w.]+),?")
_TYPE = re.compile(r" : (ndarray<[^>]*>|local<[^>]*>|\w+)")
_REGION_ARGS = re.compile(r" ?\((.*?)\)")
_LOC = re.compile(r"  // line (\d+)$")


class ParseError(Exception):
    """The text is not IR as the printer writes it."""


def parse_type(text: str) -> Type:
    if text in DTYPES:
        return DTYPES[text]
    if text.startswith("local<") and text.endswith(">"):
        return LocalType(DTYPES[text[6:-1]])
    if text.startswith("ndarray<") and text.endswith(">"):
        element, ndim, *flags = (part.strip() for part in text[8:-1].split(","))
        dtype, shape = _shaped(element)
        layout = next((f[7:] for f in flags if f.startswith("layout=")), None)
        return ArrayType(
            dtype,
            int(ndim),
            "grad" in flags,
            "clamp" if "clamp" in flags else "unsafe",
            shape,
            tuple(int(a) for a in layout.split("x")) if layout is not None else None,
            "soa" in flags,
        )
    if text.endswith("]"):
        return TensorType(*_shaped(text))
    raise ParseError(f"unknown type {text!r}")


def _scalar(text: str) -> DType:
    """A return value's type, which is a scalar's."""
    t = parse_type(text)
    if not isinstance(t, DType):
        raise ParseError(f"a kernel returns scalars, not {text!r}")
    return t


def _shaped(text: str) -> tuple[DType, tuple[int, ...]]:
    """`f32` -> (f32, ()); `f32[2x3]` -> (f32, (2, 3))."""
    name, _, dims = text.partition("[")
    if name not in DTYPES:
        raise ParseError(f"unknown type {text!r}")
    return DTYPES[name], tuple(int(d) for d in dims.rstrip("]").split("x")) if dims else ()


def _literal(node: ast.expr) -> object:
    """An attribute value: a Python literal, where `inf` and `nan` are floats and tuples print as
    lists."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_literal(e) for e in node.elts]
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal(node.operand)
        if not isinstance(value, (int, float)):
            raise ParseError(f"not a number: {ast.unparse(node)}")
        return -value
    raise ParseError(f"not an attribute value: {ast.unparse(node)}")


def _attr_end(line: str, start: int) -> int:
    """Index of the `}` closing the attribute dict that opens at `start`, skipping quoted
    strings."""
    quote, k = "", start + 1
    while k < len(line):
        c = line[k]
        if quote:
            if c == "\\":
                k += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "}":
            return k
        k += 1
    raise ParseError(f"unclosed attributes in {line!r}")


def parse_attrs(text: str) -> dict:
    call = ast.parse(f"f({text})", mode="eval").body
    assert isinstance(call, ast.Call)
    return {kw.arg: _literal(kw.value) for kw in call.keywords}


class Parser:
    def __init__(self, text: str) -> None:
        self.lines = [ln for ln in text.splitlines() if ln.strip()]
        self.pos = 0
        self.values: dict[str, ir.Value] = {}
        self.kernel_name = ""

    def value(self, name: str) -> ir.Value:
        if name not in self.values:
            raise ParseError(f"{name} is used before it is defined (line {self.pos + 1})")
        return self.values[name]

    def define(self, printed: str, v: ir.Value) -> None:
        if printed in self.values:
            raise ParseError(f"{printed} is defined twice")
        self.values[printed] = v
        v.name = _source_name(printed)

    def region_args(self, text: str) -> list[ir.Value]:
        args = []
        for item in filter(None, (s.strip() for s in text.split(", %"))):
            name, _, ty = item.partition(": ")
            v = ir.Value(parse_type(ty))
            self.define("%" + name.lstrip("%"), v)
            args.append(v)
        return args

    def kernel(self) -> ir.Kernel:
        m = _HEADER.match(self.lines[0].strip())
        if m is None:
            raise ParseError(f"expected a kernel header, got {self.lines[0]!r}")
        self.kernel_name = m.group(1)
        params = [ir.Param(n, parse_type(t)) for n, t in _PARAM.findall(m.group(2))]
        returns = [_scalar(t.strip()) for t in m.group(3).split(",")] if m.group(3) else []
        kernel = ir.Kernel(m.group(1), params, returns)
        self.pos = 1
        end = self.block(kernel.body)
        if end != "}" or self.pos != len(self.lines):
            raise ParseError(f"unexpected text after the kernel body at line {self.pos}")
        return kernel

    def block(self, block: ir.Block) -> str:
        """Parse ops into `block` up to its closing line; return that line (`}` or
        `} else ...{`)."""
        while self.pos < len(self.lines):
            line = self.lines[self.pos].strip()
            self.pos += 1
            if line == "}" or line.startswith("} else"):
                return line
            block.append(self.op(line))
        raise ParseError("missing `}` at the end of the text")

    def op(self, line: str) -> ir.Op:
        loc = None
        m = _LOC.search(line)
        if m is not None:
            loc = SourceLoc(self.kernel_name, "<ir>", int(m.group(1)), 0)
            line = line[: m.start()]
        k = 0
        result_name = None
        if m := _RESULT.match(line):
            result_name, k = m.group(1), m.end()
        m = _OPNAME.match(line, k)
        if m is None or m.group(1) not in OPS:
            raise ParseError(f"unknown op in {line!r}")
        cls, k = OPS[m.group(1)], m.end()
        operands = []
        while (m := _OPERAND.match(line, k)) is not None:
            operands.append(self.value(m.group(1)))
            k = m.end()
        attrs: dict = {}
        if line.startswith(" {", k) and k + 2 < len(line):
            end = _attr_end(line, k + 1)
            attrs = parse_attrs(line[k + 2 : end])
            k = end + 1
        result_type = None
        if m := _TYPE.match(line, k):
            result_type, k = parse_type(m.group(1)), m.end()
        op = cls(operands, result_type, attrs, None, loc)
        if result_name is not None:
            if op.result is None:
                raise ParseError(f"{line!r} names a result but gives it no type")
            self.define(result_name, op.result)
        if line[k:].strip() == "{" or line[k:].lstrip().startswith("("):
            self.regions(op, line[k:])
        elif line[k:].strip():
            raise ParseError(f"cannot read {line[k:]!r} in {line!r}")
        return op

    def regions(self, op: ir.Op, opener: str) -> None:
        while True:
            m = _REGION_ARGS.match(opener)
            region = ir.Block(self.region_args(m.group(1)) if m else [])
            region.parent = op
            op.regions.append(region)
            closer = self.block(region)
            if closer == "}":
                return
            opener = closer[len("} else") :]


def _source_name(printed: str) -> str:
    name = printed[1:].split(".")[0]
    return "" if name.isdigit() else name


def parse(text: str) -> ir.Kernel:
    """The kernel that `print_kernel` printed as `text`."""
    return Parser(text).kernel()
