"""`qd.BufferView` in a kernel: a view `[offset, offset + size)` of a 1-D array, as Quadrants lowers
it. A parameter annotated `BufferView` is a struct argument of three members (`arr`, `offset`,
`size`: `qdlab/host/buffer_view.py`), which the frontend reads as a `View` as soon as the name is
read; a view made in the kernel (`BufferView(arr, off, n)`, `v.subview(off, n)`, `v[a:b]`) is a
`View` of the values given. `v[i]` is `arr[offset + i]` (an element of a vector or matrix array
as for the array itself), `v.size`, `v.offset`, `v.shape` (`(size,)`). A view passes to a
`@qd.func` whose parameter is annotated `BufferView[...]` as it is.

Under `debug=True` each access, subview and view made in a kernel is checked as Quadrants checks
them, with its messages (a `QuadrantsAssertionError` naming the kernel, the view's offset and size,
and the chain of functions from the kernel to the access); `tid` is the thread's index within its
block, which is 0 on the CPU. Without `debug` nothing is checked (an index past the view reads the
array beyond it, as in Quadrants).

A part of the frontend's visitor: mixed into `Frontend`; uses its `emit`, `error`, `value`,
`binop`, `compare`, `member`, `array_shape`, `print_op_parts`, `visit`, `config`, `loc`, `kernel`
and `call_sites`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ...core.errors import QdSyntaxError, QdTypeError, SourceLoc
from ...core.types import i32, u1
from .. import ir

CALLSTACK_WARNING_BYTES = 1024


def is_view_type(x: object) -> bool:
    """`BufferView`, `BufferView[dtype]` or an instance of either."""
    return bool(getattr(x, "__qd_buffer_view__", False))


@dataclass(frozen=True)
class View:
    """A view while compiling: its array and its offset and size (values or Python ints)."""

    arr: ir.Value
    offset: object
    size: object


@dataclass(frozen=True)
class ViewMethod:
    """`v.subview`, before its call."""

    view: View
    name: str


class Views:
    """Mixed into `Frontend`: reading, indexing and making views."""

    def view_of(self, ref: object) -> View:
        """A `BufferView` struct argument as a view (its three members read)."""
        return View(*(self.member(ref, m) for m in ("arr", "offset", "size")))

    def view_attribute(self, view: View, attr: str) -> object:
        if attr == "size":
            return view.size
        if attr == "offset":
            return view.offset
        if attr == "shape":
            return (view.size,)
        if attr == "arr":
            return view.arr
        if attr in ("subview", "get_ndarray"):
            return ViewMethod(view, attr)
        raise self.error(
            f"a BufferView has no attribute `{attr}` in a kernel (it has `size`, `offset`, "
            "`shape` and `subview`).",
            QdTypeError,
        )

    def call_view_method(self, method: ViewMethod, node: ast.Call) -> object:
        if method.name == "get_ndarray":
            return method.view.arr
        offset, size = self.view_call_args(node, ("offset", "size"), "subview()")
        return self.subview(method.view, offset, size)

    def view_call_args(self, node: ast.Call, names: tuple[str, ...], what: str) -> list[object]:
        given = [self.visit(a) for a in node.args]
        kwargs = {kw.arg: self.visit(kw.value) for kw in node.keywords}
        for name in names[len(given) :]:
            if name not in kwargs:
                raise self.error(f"{what} takes {', '.join(names)}.", QdTypeError)
            given.append(kwargs.pop(name))
        if len(given) != len(names) or kwargs:
            raise self.error(f"{what} takes {', '.join(names)}.", QdTypeError)
        return given

    def make_view(self, node: ast.Call) -> View:
        """`BufferView(arr, offset, size)` in a kernel."""
        arr, offset, size = self.view_call_args(node, ("arr", "offset", "size"), "BufferView()")
        if isinstance(arr, View):
            raise self.error(
                "Cannot nest BufferView(view, ...); use view.subview(offset, size) instead.",
                QdTypeError,
            )
        if not (isinstance(arr, ir.Value) and ir.is_array(arr) and arr.type.ndim == 1):
            raise self.error("BufferView() takes a 1D ndarray.", QdTypeError)
        offset, size = self.view_int(offset), self.view_int(size)
        if self.config.debug:
            length = self.array_shape(arr)[0]
            self.view_checks(
                [
                    ("ge", offset, 0),
                    ("ge", size, 0),
                    ("le", self.binop("add", offset, size), length),
                ],
                [
                    "BufferView construction out of range: offset=",
                    offset,
                    ", size=",
                    size,
                    ", ndarray length=",
                    length,
                    ".",
                ],
            )
        return View(arr, offset, size)

    def subview(self, view: View, offset: object, size: object) -> View:
        offset, size = self.view_int(offset), self.view_int(size)
        if self.config.debug:
            name, stack = self.view_callstack()
            self.view_checks(
                [
                    ("ge", offset, 0),
                    ("ge", size, 0),
                    ("le", self.binop("add", offset, size), view.size),
                ],
                [
                    f"BufferView subview Out Of Range: kernel[{name}] tid=",
                    0,
                    ", subview offset=",
                    offset,
                    ", subview size=",
                    size,
                    ", parent size=",
                    view.size,
                    f".\nCallstack:\n{stack}",
                ],
            )
        return View(view.arr, self.binop("add", view.offset, offset), size)

    def view_subscript(self, view: View, node: ast.Subscript) -> object:
        """`v[a:b]` (a subview; Python's defaults, no step); an index is `view_index`'s."""
        s = node.slice
        if isinstance(s, ast.Slice):
            if s.step is not None:
                raise self.error(
                    "BufferView slice does not support an explicit step in kernels.",
                    QdSyntaxError,
                )
            start = 0 if s.lower is None else self.visit(s.lower)
            stop = view.size if s.upper is None else self.visit(s.upper)
            return self.subview(view, start, self.binop("sub", stop, start))
        return None

    def view_index(self, view: View, node: ast.Subscript) -> tuple[ir.Value, object]:
        """`v[i]`: the array and its index `offset + i` (checked under `debug`)."""
        if isinstance(node.slice, ast.Tuple):
            raise self.error("BufferView only supports 1D indexing in kernels.", QdSyntaxError)
        i = self.view_int(self.visit(node.slice))
        if self.config.debug:
            name, stack = self.view_callstack()
            self.view_checks(
                [("ge", i, 0), ("lt", i, view.size)],
                [
                    f"BufferView Out Of Range: kernel[{name}] tid=",
                    0,
                    ", got index ",
                    i,
                    " (offset=",
                    view.offset,
                    ", size=",
                    view.size,
                    f").\nCallstack:\n{stack}",
                ],
            )
        return view.arr, self.binop("add", i, view.offset)

    def view_int(self, x: object) -> object:
        """An offset, size or index: a Python int as it is, a value as an i32."""
        if isinstance(x, bool) or not isinstance(x, (int, ir.Value)):
            raise self.error(
                f"a BufferView offset, size or index must be an integer, not {x!r}.", QdTypeError
            )
        if isinstance(x, int):
            return x
        if not x.type.is_int:
            raise self.error(
                f"a BufferView offset, size or index must be an integer, not {x.type}.", QdTypeError
            )
        return x if x.type == i32 else self.emit(ir.Cast, [x], i32)

    def view_checks(self, conds: list[tuple[str, object, object]], pieces: list[object]) -> None:
        """One assert per condition, each with the message of `pieces` (text, and values shown
        with `%d`)."""
        parts, values, specs = self.print_op_parts(
            [p if isinstance(p, str) else (p, "d") for p in pieces]
        )
        message = "".join(p if isinstance(p, str) else "%d" for p in pieces)
        for pred, a, b in conds:
            cond = self.compare(pred, a, b)
            if isinstance(cond, bool):
                if cond:
                    continue
                cond = self.const(0, u1)
            self.emit(ir.Assert, [cond, *values], message=message, parts=parts, specs=specs)

    def view_callstack(self) -> tuple[str, str]:
        """The kernel's name and the chain of functions from it to here, one per line, as
        Quadrants shows them (`name (file:line of its def)`, indented by depth)."""
        sites: list[SourceLoc] = [
            s for s in (self.kernel.flags.def_loc, *self.call_sites) if s is not None
        ]
        lines = [
            "  " * depth + f"{s.kernel} ({s.filename}:{s.lineno})" for depth, s in enumerate(sites)
        ]
        stack = "\n".join(lines) if lines else "<unknown>"
        name = sites[0].kernel if sites else "<unknown>"
        return name, stack
