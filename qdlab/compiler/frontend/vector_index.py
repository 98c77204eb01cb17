"""Indexing vectors and matrices in a kernel: `v[k]`, `m[i, j]`, slices (`v[0:2]`, `m[:, j]`),
runtime indices (a chain of selects over the entries a local may hold, checked in range under
debug), swizzles (`v.xy`, `v.zyx`), and the elements of ndarrays of vectors, read and written one
entry at a time with the entry's indices after the outer ones. A part of the frontend's visitor.
"""

from __future__ import annotations

import ast
import math
from itertools import product

import numpy as np

from qdlab.core import language as lang

from ...core.errors import QdSyntaxError, QdTypeError
from ...core.types import DType, i32, u1
from .. import ir
from .scope import GradOf, array_type, dtype_of
from .vector_ops import METHODS
from .vectors import ElementRef, Vec, VecLocal, VecMethod, describe_shape, tensor_text
from .views import View

NEGATIVE_INDEX = "Negative indices are not supported in Quadrants kernels."
SLICE_ERROR = "Quadrants does not support variables in slice now; slice bounds must be constants."


class VectorIndexing:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `const`, `binop`, `emit`, `error`,
    `subscript_target`, `struct_item`, `vec_of`, `filled`, `scope`, `loc` and `config`."""

    # -- indexing ----------------------------------------------------------------------------------
    def index_items(self, node: ast.expr) -> list:
        """The items of a subscript (ints, runtime values, or `slice`s of constants)."""
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list = []
        for p in parts:
            if isinstance(p, ast.Slice):
                bounds = [
                    self.visit(b) if b is not None else None for b in (p.lower, p.upper, p.step)
                ]
                if any(b is not None and not isinstance(b, int) for b in bounds):
                    raise self.error(SLICE_ERROR, QdSyntaxError)
                if any(b is not None and b < 0 for b in bounds[:2]):  # a negative step is fine
                    raise self.error(NEGATIVE_INDEX, QdSyntaxError)
                out.append(slice(*bounds))
            else:
                x = self.visit(p)
                if isinstance(x, lang.Matrix):  # an index vector of qd.static(qd.grouped(...))
                    x = tuple(v.item() for v in x.entries.ravel())
                xs = x if isinstance(x, tuple) else [x]
                if any(isinstance(k, int) and not isinstance(k, bool) and k < 0 for k in xs):
                    raise self.error(NEGATIVE_INDEX, QdSyntaxError)
                out.extend(xs)
        return out

    def axes(self, shape: tuple[int, ...], items: list, what: str) -> list:
        """Per axis: an int, a list of ints (a slice: the axis stays), or an i32 value (dynamic)."""
        if len(items) != len(shape):
            raise self.error(
                f"Expected {len(shape)} indices, got {len(items)}: {what} is a "
                f"{describe_shape(shape)}.",
                QdTypeError,
            )
        out: list = []
        for n, it in zip(shape, items):
            if isinstance(it, slice):
                out.append(list(range(n))[it])
            elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
                k = int(it)
                if not -n <= k < n:
                    raise self.error(
                        f"index {k} is out of range for {what}, a {describe_shape(shape)} "
                        f"(indices 0 to {n - 1}).",
                        QdTypeError,
                    )
                out.append(k % n)
            else:
                v = self.value(it)
                if not dtype_of(v).is_int:
                    raise self.error(f"an index must be an integer, not {v.type}.", QdTypeError)
                out.append(self.cast(v, i32))
        return out

    def positions(self, shape: tuple[int, ...], axes: list) -> tuple[tuple[int, ...], list]:
        """The result's shape and, for each of its entries, the choices of flat source positions
        (one per combination of the dynamic indices)."""
        out_shape = tuple(len(a) for a in axes if isinstance(a, list))
        dyn = [d for d, a in enumerate(axes) if isinstance(a, ir.Value)]
        kept = [a if isinstance(a, list) else [a] if isinstance(a, int) else None for a in axes]
        result = []
        for pos in product(*[a for a in kept if a is not None]):
            it = iter(pos)
            fixed = [next(it) if k is not None else None for k in kept]
            choices = []
            for combo in product(*[range(shape[d]) for d in dyn]):
                idx = list(fixed)
                for d, c in zip(dyn, combo):
                    idx[d] = c
                choices.append(
                    idx[0] * (shape[1] if len(shape) == 2 else 1)
                    + (idx[1] if len(shape) == 2 else 0)
                )
            result.append(choices)
        return out_shape, result

    def dynamic_key(self, shape: tuple[int, ...], axes: list, what: str) -> ir.Value | None:
        """The combination of the dynamic indices as one i32 (checked in range under debug)."""
        dyn = [(d, a) for d, a in enumerate(axes) if isinstance(a, ir.Value)]
        if not dyn:
            return None
        key: ir.Value | None = None
        for d, v in dyn:
            if self.config.debug:
                ok = self.emit(
                    ir.Cmp, [self.cast(v, i32), self.const(shape[d], i32)], u1, pred="lt"
                )
                pos = self.emit(ir.Cmp, [v, self.const(0, i32)], u1, pred="ge")
                both = self.emit(ir.BinOp, [ok, pos], u1, op="and")
                self.emit(
                    ir.Assert,
                    [both],
                    message=f"Out of bound access: an index of {what} ({describe_shape(shape)}) is "
                    f"outside 0..{shape[d] - 1}",
                )
            key = v if key is None else self.binop("add", self.binop("mul", key, shape[d]), v)
        return key

    def choose(self, key: ir.Value, candidates: list[ir.Value]) -> ir.Value:
        """`candidates[key]`, as a chain of selects (the last one when out of range)."""
        out = candidates[-1]
        t = dtype_of(out)
        for k in range(len(candidates) - 2, -1, -1):
            hit = self.emit(ir.Cmp, [key, self.const(k, i32)], u1, pred="eq")
            out = self.emit(ir.Select, [hit, self.cast(candidates[k], t), out], t)
        return out

    def vec_index(self, v: Vec, items: list, what: str) -> object:
        """`v[k]`, `m[i, j]`, `v[0:2]`, `m[:, j]`, with constant or runtime indices."""
        axes = self.axes(v.shape, items, what)
        key = self.dynamic_key(v.shape, axes, what)
        out_shape, picks = self.positions(v.shape, axes)
        entries = [
            v.entries[c[0]] if key is None else self.choose(key, [v.entries[p] for p in c])
            for c in picks
        ]
        return entries[0] if not out_shape else Vec(tuple(entries), out_shape)

    def vec_write(self, local: VecLocal, items: list | None, x: object, what: str) -> None:
        """`v[k] = x`, `m[i, :] = row`, `v[i] += 1` with a runtime `i` (every entry it may name is
        rewritten through a select)."""
        shape = local.shape
        axes = self.axes(shape, items, what)  # type: ignore[arg-type]
        key = self.dynamic_key(shape, axes, what)
        out_shape, picks = self.positions(shape, axes)
        if out_shape:
            v = self.vec_of(x)
            if v is None:
                v = self.filled(out_shape, x, None)
            if v.shape != out_shape:
                raise self.error(
                    f"cannot assign a value of shape {v.shape} to a part of {what} of shape "
                    f"{out_shape}.",
                    QdTypeError,
                )
            values = list(v.entries)
        else:
            values = [x]
        for c, value in zip(picks, values):
            for k, p in enumerate(c):
                ref = local.refs[p]
                dtype = dtype_of(ref)
                new = self.cast(self.value(value, dtype), dtype)
                if key is not None:
                    hit = self.emit(ir.Cmp, [key, self.const(k, i32)], u1, pred="eq")
                    old = self.emit(ir.LocalLoad, [ref], dtype, ref.name)
                    new = self.emit(ir.Select, [hit, new, old], dtype)
                self.emit(ir.LocalStore, [ref, new])

    # -- elements of vector ndarrays ---------------------------------------------------------------
    def element_access(self, ref: ElementRef, items: list | None) -> tuple[list, tuple]:
        """The index lists of the entries `ref[items]` names, and the shape they form (`()`: one
        scalar). A runtime index stays a runtime index: the address computation (and its bounds
        check in debug mode) takes it."""
        shape = ref.shape
        if items is None:
            items = [slice(None)] * len(shape)
        if len(items) != len(shape):
            raise self.error(
                f"Expected {len(shape)} indices, got {len(items)}: an element of "
                f"`{ref.array.name}` is a {describe_shape(shape)}.",
                QdTypeError,
            )
        per_axis = []
        for n, it in zip(shape, items):
            if isinstance(it, slice):
                per_axis.append([self.const(k, i32) for k in range(n)[it]])
            elif isinstance(it, int) and not isinstance(it, bool):
                if not -n <= it < n:
                    raise self.error(
                        f"index {it} is out of range for an element of `{ref.array.name}`, a "
                        f"{describe_shape(shape)}.",
                        QdTypeError,
                    )
                per_axis.append(self.const(it % n, i32))
            else:
                v = self.value(it)
                if not dtype_of(v).is_int:
                    raise self.error(f"an index must be an integer, not {v.type}.", QdTypeError)
                per_axis.append(self.cast(v, i32))
        out_shape = tuple(len(a) for a in per_axis if isinstance(a, list))
        lists = [a if isinstance(a, list) else [a] for a in per_axis]
        return [list(ref.indices) + list(idx) for idx in product(*lists)], out_shape

    def element_load(self, ref: ElementRef, items: list | None = None) -> object:
        accesses, shape = self.element_access(ref, items)
        dtype = dtype_of(ref.array)
        loads = [self.emit(ir.Load, [ref.array, *idx], dtype, grad=ref.grad) for idx in accesses]
        return loads[0] if not shape else Vec(tuple(loads), shape)

    def element_store(self, ref: ElementRef, items: list | None, x: object) -> None:
        accesses, shape = self.element_access(ref, items)
        dtype = dtype_of(ref.array)
        values = self.entries_for(shape, x, f"an element of `{ref.array.name}`", dtype)
        for idx, value in zip(accesses, values):
            v = self.cast(self.value(value, dtype), dtype)
            self.emit(ir.Store, [ref.array, *idx, v], grad=ref.grad)

    def entries_for(
        self, shape: tuple[int, ...], x: object, what: str, dtype: DType | None = None
    ) -> list:
        """The entries `x` gives a target of `shape` (a scalar is broadcast, `a[i] = 0`)."""
        if not shape:
            return [x]
        v = self.vec_of(x)
        if v is None:
            return [x] * math.prod(shape)
        if v.shape != shape:
            raise self.error(
                f"cannot assign '{tensor_text(v.shape, v.dtype)}' to "
                f"'{tensor_text(shape, dtype or v.dtype)}': {what} has shape {shape}, the value "
                f"{v.shape}.",
                QdTypeError,
            )
        return list(v.entries)

    def element_atomic(self, ref: ElementRef, items: list | None, op: str, x: object) -> object:
        """An atomic on every entry `ref[items]` names (component-wise, as `+=` on a shared element
        is); the old values."""
        accesses, shape = self.element_access(ref, items)
        dtype = dtype_of(ref.array)
        values = self.entries_for(shape, x, f"an element of `{ref.array.name}`", dtype)
        if op in ("and", "or", "xor") and dtype.is_float:
            given = dtype_of(self.value(values[0], dtype))
            raise self.error(
                f"'atomic_bit_{op}' requires integer operands, got '*{dtype}' and '{given}'.",
                QdTypeError,
            )
        olds = [
            self.emit(
                ir.Atomic,
                [ref.array, *idx, self.cast(self.value(value, dtype), dtype)],
                dtype,
                op=op,
                grad=ref.grad,
            )
            for idx, value in zip(accesses, values)
        ]
        return olds[0] if not shape else Vec(tuple(olds), shape)

    def subscript_base(self, node: ast.expr) -> object:
        """The value of the base of a subscript or attribute, leaving `a[i]` of a vector ndarray
        unread (an `ElementRef`), so `a[i][0]` reads one entry."""
        if isinstance(node, ast.Subscript):
            item = self.struct_item(node)  # `self.mats[k].f`: an item of a list of structs
            if item is not None:
                return item
            outer = self.loc
            self.loc = self.scope.source.loc(node, self.scope.name)
            try:
                base = self.visit(node.value)
                if (
                    isinstance(base, View)
                    and array_type(base.arr).element
                    and not isinstance(node.slice, ast.Slice)
                ):  # `v[i][k]` of a view of vectors
                    arr, indices = self.subscript_target(node, base)
                    return ElementRef(arr, False, tuple(indices))
                arr, _ = GradOf.unpack(base)
                if isinstance(arr, ir.Value) and ir.is_array(arr) and array_type(arr).element:
                    _, indices = self.subscript_target(node)
                    return ElementRef(arr, isinstance(base, GradOf), tuple(indices))
            finally:
                self.loc = outer
        return self.visit(node)

    # -- attributes and swizzles -------------------------------------------------------------------
    def swizzle(self, name: str, n: int) -> list[int]:
        error = lang.matrix.swizzle_error(name, n)
        if error:
            raise self.error(error, QdSyntaxError)
        return lang.matrix.swizzle_indices(name)

    def vec_attribute(self, base: object, attr: str, target: str | None) -> object:
        """`v.x`, `v.zyx`, `m.n`, `v.norm` (a method), on a vector, a host `qd.Vector` or an
        element of a vector ndarray."""
        if isinstance(base, ElementRef):
            if attr == "fill":  # writes the element in place, as the reference's does
                return VecMethod(self.vec_of(self.element_load(base)), attr, None, base)  # type: ignore[arg-type]
            if lang.matrix.swizzle_group(attr) is not None and len(base.shape) == 1:
                idx = self.swizzle(attr, base.shape[0])
                got = [self.element_load(base, [k]) for k in idx]
                return got[0] if len(got) == 1 else Vec(tuple(got), (len(got),))  # type: ignore[arg-type]
            base = self.element_load(base)
        v = self.vec_of(base)
        assert v is not None
        if attr in ("n", "m"):
            return v.n if attr == "n" else v.m
        if attr == "ndim":
            return v.ndim
        if lang.matrix.swizzle_group(attr) is not None:
            if v.ndim != 1:
                raise self.error(f"a matrix has no attribute `{attr}`; index it, e.g. `m[0, 1]`.")
            got = [v.entries[k] for k in self.swizzle(attr, v.n)]
            return got[0] if len(got) == 1 else Vec(tuple(got), (len(got),))
        if attr in METHODS:
            return VecMethod(v, attr, target)
        raise self.error(f"a {v} has no attribute `{attr}`.", QdTypeError)

    def swizzle_write(self, local: VecLocal, attr: str, x: object, name: str) -> None:
        if len(local.shape) != 1:
            raise self.error(f"a matrix has no attribute `{attr}`; index it, e.g. `m[0, 1]`.")
        idx = self.swizzle(attr, local.shape[0])
        values = [x] if len(idx) == 1 else self.entries_for((len(idx),), x, f"`{name}.{attr}`")
        for k, value in zip(idx, values):
            ref = local.refs[k]
            dtype = dtype_of(ref)
            self.emit(ir.LocalStore, [ref, self.cast(self.value(value, dtype), dtype)])
