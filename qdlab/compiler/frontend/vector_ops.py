"""Arithmetic on vectors and matrices in a kernel: entry-by-entry operators with scalars broadcast,
`@`, the methods (`dot`, `cross`, `norm`, `inverse` ...) and reductions, each unrolled into scalar
ops in the order the reference evaluates them (so results match it bit for bit). A part of the
frontend's visitor."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence

from ...core.errors import QdTypeError
from ...core.types import DType
from .. import ir
from .scope import dtype_of
from .vectors import Vec, VecMethod, describe_shape

OPERATOR_TEXT = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "truediv": "/",
    "floordiv": "//",
    "mod": "%",
    "pow": "**",
    "and": "&",
    "or": "|",
    "xor": "^",
    "shl": "<<",
    "shr": ">>",
}


class VectorOps:
    """Mixed into `Frontend`; uses its `binop`, `compare`, `unary`, `cast`, `value`, `truth`,
    `emit`, `error`, `vec_of`, `vmap`, `make_vec`, `need_vec`, `writable_vec` and
    `store_vec_local`."""

    def vec_binop(self, op: str, a: object, b: object) -> Vec:
        va, vb = self.vec_of(a), self.vec_of(b)
        if va is not None and vb is not None and va.shape != vb.shape:
            raise self.error(
                f"unsupported operand shapes for `{OPERATOR_TEXT.get(op, op)}`: a "
                f"{describe_shape(va.shape)} {va.shape} and a {describe_shape(vb.shape)} "
                f"{vb.shape}; both sides need one shape (or one side a scalar).",
                QdTypeError,
            )
        return self.vmap(lambda x, y: self.binop(op, x, y), va or a, vb or b)

    def vec_compare(self, pred: str, a: object, b: object) -> Vec:
        va, vb = self.vec_of(a), self.vec_of(b)
        if va is not None and vb is not None and va.shape != vb.shape:
            raise self.error(
                f"cannot compare a {describe_shape(va.shape)} {va.shape} with a "
                f"{describe_shape(vb.shape)} {vb.shape}.",
                QdTypeError,
            )
        return self.vmap(lambda x, y: self.compare(pred, x, y), va or a, vb or b)

    def total(self, terms: Sequence[ir.Value]) -> ir.Value:
        """`((t0 + t1) + t2) + ...`: the reference's left-to-right sum."""
        acc = terms[0]
        for t in terms[1:]:
            acc = self.binop("add", acc, t)
        return acc

    def matmul(self, a: object, b: object) -> object:
        va, vb = self.vec_of(a), self.vec_of(b)
        if va is None or vb is None:
            raise self.error(
                "`@` multiplies two vectors or matrices; use `*` with a scalar.", QdTypeError
            )
        if va.ndim == 1 and vb.ndim == 2:  # a row vector: (B^T a)
            va, vb = self.transposed(vb), va
        inner_a = va.n if va.ndim == 1 else va.m
        if inner_a != vb.n:
            raise self.error(
                f"dimension mismatch between {va.shape} and {vb.shape} for matrix multiplication.",
                QdTypeError,
            )
        if va.ndim == 1:
            return self.dot(va, vb)
        k = va.m
        if vb.ndim == 1:
            return Vec(
                tuple(
                    self.total([self.binop("mul", va.at(i, j), vb.at(j)) for j in range(k)])
                    for i in range(va.n)
                ),
                (va.n,),
            )
        return Vec(
            tuple(
                self.total([self.binop("mul", va.at(i, t), vb.at(t, j)) for t in range(k)])
                for i in range(va.n)
                for j in range(vb.m)
            ),
            (va.n, vb.m),
        )

    def transposed(self, v: Vec) -> Vec:
        return Vec(tuple(v.at(i, j) for j in range(v.m) for i in range(v.n)), (v.m, v.n))

    def dot(self, a: Vec, b: Vec) -> object:
        if a.ndim != 1 or b.ndim != 1:
            raise self.error("dot() takes two vectors.", QdTypeError)
        if a.shape != b.shape:
            raise self.error(
                f"dot() of vectors of different sizes: {a.shape} and {b.shape}.", QdTypeError
            )
        return self.total([self.binop("mul", x, y) for x, y in zip(a.entries, b.entries)])

    # -- methods -----------------------------------------------------------------------------------
    def call_method(self, m: VecMethod, node: ast.Call) -> object:
        args = [self.visit(a) for a in node.args]
        kwargs = {kw.arg: self.visit(kw.value) for kw in node.keywords}
        lower = METHODS.get(m.name)
        if lower is None:
            raise self.error(f"a {m.vec} has no method `{m.name}` in a kernel.", QdTypeError)
        return lower(self, m.vec, m, *args, **kwargs)

    def other(self, x: object, what: str) -> Vec:
        return self.need_vec(x, what)

    def m_dot(self, v: Vec, m: VecMethod, other: object) -> object:
        return self.dot(v, self.other(other, "dot()"))

    def m_cross(self, v: Vec, m: VecMethod, other: object) -> object:
        w = self.other(other, "cross()")
        if v.ndim != 1 or w.shape != v.shape or v.n not in (2, 3):
            raise self.error(
                f"cross() takes two 3-vectors (or two 2-vectors), not shapes {v.shape} and "
                f"{w.shape}.",
                QdTypeError,
            )
        x, y = v.entries, w.entries

        def d(i: int, j: int) -> ir.Value:
            return self.binop("sub", self.binop("mul", x[i], y[j]), self.binop("mul", x[j], y[i]))

        if v.n == 2:
            return d(0, 1)
        return Vec((d(1, 2), d(2, 0), d(0, 1)), (3,))

    def m_outer_product(self, v: Vec, m: VecMethod, other: object) -> Vec:
        w = self.other(other, "outer_product()")
        if v.ndim != 1 or w.ndim != 1:
            raise self.error("outer_product() takes two vectors.", QdTypeError)
        return Vec(
            tuple(self.binop("mul", a, b) for a in v.entries for b in w.entries),
            (v.n, w.n),
        )

    def m_norm_sqr(self, v: Vec, m: VecMethod | None = None) -> object:
        return self.total([self.binop("mul", e, e) for e in v.entries])

    def m_frobenius_inner(self, v: Vec, m: VecMethod, other: object) -> object:
        w = self.other(other, "frobenius_inner()")
        if w.shape != v.shape:
            raise self.error(f"frobenius_inner() of shapes {v.shape} and {w.shape}.", QdTypeError)
        return self.total([self.binop("mul", a, b) for a, b in zip(v.entries, w.entries)])

    def plus_eps(self, x: object, eps: object) -> object:
        return x if isinstance(eps, (int, float)) and eps == 0 else self.binop("add", x, eps)

    def m_norm(self, v: Vec, m: VecMethod | None = None, eps: object = 0) -> object:
        return self.unary("sqrt", self.plus_eps(self.m_norm_sqr(v), eps))

    def m_norm_inv(self, v: Vec, m: VecMethod | None = None, eps: object = 0) -> object:
        return self.unary("rsqrt", self.plus_eps(self.m_norm_sqr(v), eps))

    def m_normalized(self, v: Vec, m: VecMethod | None = None, eps: object = 0) -> Vec:
        if v.ndim != 1:
            raise self.error("normalized() takes a vector.", QdTypeError)
        inv = self.binop("truediv", 1, self.plus_eps(self.m_norm(v), eps))
        return self.vec_binop("mul", inv, v)

    def m_transpose(self, v: Vec, m: VecMethod | None = None) -> Vec:
        if v.ndim == 1:
            raise self.error(
                "`transpose()` cannot apply to a vector. If you want something like "
                "`a @ b.transpose()`, write `a.outer_product(b)` instead.",
                QdTypeError,
            )
        return self.transposed(v)

    def square(self, v: Vec, what: str) -> int:
        if v.ndim != 2 or v.n != v.m:
            raise self.error(f"expected a square matrix, got shape {v.shape}.", QdTypeError)
        return v.n

    def m_trace(self, v: Vec, m: VecMethod | None = None) -> object:
        n = self.square(v, "trace()")
        return self.total([v.at(i, i) for i in range(n)])

    def m_determinant(self, v: Vec, m: VecMethod | None = None) -> object:
        n = self.square(v, "determinant()")
        if n > 4:
            raise self.error(
                f"determinant() supports matrices up to 4x4, not {n}x{n}.", QdTypeError
            )
        return self.det(v, n)

    def det(self, v: Vec, n: int) -> ir.Value:
        """The cofactor expansion the reference writes out for 1x1 to 4x4."""
        b = self.binop

        def e(i: int, j: int) -> ir.Value:
            return v.at(i % n, j % n)

        def minor2(r0: int, r1: int, c0: int, c1: int) -> ir.Value:
            return b("sub", b("mul", e(r0, c0), e(r1, c1)), b("mul", e(r1, c0), e(r0, c1)))

        if n == 1:
            return v.at(0, 0)
        if n == 2:
            return b("sub", b("mul", e(0, 0), e(1, 1)), b("mul", e(0, 1), e(1, 0)))
        if n == 3:
            t0 = b("mul", e(0, 0), minor2(1, 2, 1, 2))
            t1 = b("mul", e(1, 0), minor2(0, 2, 1, 2))
            t2 = b("mul", e(2, 0), minor2(0, 1, 1, 2))
            return b("add", b("sub", t0, t1), t2)
        terms = []
        for i in range(4):
            t = b("mul", e(i, 0), self.cofactor3(e, i + 1, 1))
            terms.append(t if i % 2 == 0 else self.unary("neg", t))
        return self.total(terms)

    def cofactor3(self, e: Callable[[int, int], ir.Value], i: int, j: int) -> ir.Value:
        """The reference's 3x3 minor of a 4x4 matrix at rows i, i+1, i+2 and columns j, j+1, j+2
        (indices mod 4)."""
        b = self.binop

        def m2(r0: int, r1: int, c0: int, c1: int) -> ir.Value:
            return b("sub", b("mul", e(r0, c0), e(r1, c1)), b("mul", e(r1, c0), e(r0, c1)))

        t0 = b("mul", e(i, j), m2(i + 1, i + 2, j + 1, j + 2))
        t1 = b("mul", e(i + 1, j), m2(i, i + 2, j + 1, j + 2))
        t2 = b("mul", e(i + 2, j), m2(i, i + 1, j + 1, j + 2))
        return b("add", b("sub", t0, t1), t2)

    def m_inverse(self, v: Vec, m: VecMethod | None = None) -> Vec:
        n = self.square(v, "inverse()")
        b = self.binop

        def e(i: int, j: int) -> ir.Value:
            return v.at(i % n, j % n)

        if n == 1:
            return Vec((self.value(b("truediv", 1.0, e(0, 0))),), (1, 1))
        if n > 12:
            raise self.error(f"inverse() supports matrices up to 12x12, not {n}x{n}.", QdTypeError)
        if n > 4:
            return self.inverse_lu(v, n)
        inv_det = b("truediv", 1.0, self.det(v, n))
        if n == 2:
            adj = [e(1, 1), self.unary("neg", e(0, 1)), self.unary("neg", e(1, 0)), e(0, 0)]
        elif n == 3:
            adj = [
                b(
                    "sub",
                    b("mul", e(i + 1, j + 1), e(i + 2, j + 2)),
                    b("mul", e(i + 2, j + 1), e(i + 1, j + 2)),
                )
                for j in range(3)
                for i in range(3)
            ]
        else:
            adj = []
            for j in range(4):
                for i in range(4):
                    c = self.cofactor3(e, i + 1, j + 1)
                    adj.append(c if (i + j) % 2 == 0 else self.unary("neg", c))
        return Vec(tuple(self.value(b("mul", inv_det, a)) for a in adj), (n, n))

    def inverse_lu(self, v: Vec, n: int) -> Vec:
        """The reference's inverse from 5x5 up: Gauss elimination with partial pivoting (the first
        row of largest |entry|), the same operations in the same order, so the same bits; its
        runtime row swap is a select per entry here. Entries stay the matrix's type."""
        b, t = self.binop, dtype_of(self.value(v.at(0, 0)))

        def put(x: object) -> ir.Value:
            return self.cast(self.value(x), t)

        a = [[put(v.at(i, j)) for j in range(n)] for i in range(n)]
        e = [[put(1 if i == j else 0) for j in range(n)] for i in range(n)]
        for k in range(n):
            pivot: object = k
            pivot_abs = self.unary("abs", a[k][k])
            for p in range(k + 1, n):
                cur_abs = self.unary("abs", a[p][k])
                bigger = self.compare("gt", cur_abs, pivot_abs)
                pivot_abs = self.select(bigger, cur_abs, pivot_abs)
                pivot = self.select(bigger, p, pivot)
            for r in range(k + 1, n):  # at most one row is the pivot: swap it with row k
                swap = self.compare("eq", pivot, r)
                for m in (a, e):
                    for j in range(n):
                        mk, mr = m[k][j], m[r][j]
                        m[k][j], m[r][j] = self.select(swap, mr, mk), self.select(swap, mk, mr)
            for i in range(k + 1, n):
                f = b("truediv", a[i][k], a[k][k])
                a[i][k] = put(f)
                for j in range(k + 1, n):
                    a[i][j] = put(b("sub", a[i][j], b("mul", f, a[k][j])))
                for j in range(n):
                    e[i][j] = put(b("sub", e[i][j], b("mul", f, e[k][j])))
        inv: list[list[object]] = [[None] * n for _ in range(n)]
        for col in range(n):
            for i in range(n - 1, -1, -1):
                acc: object = e[i][col]
                for j in range(i + 1, n):
                    acc = b("sub", acc, b("mul", a[i][j], inv[j][col]))
                inv[i][col] = put(b("truediv", acc, a[i][i]))
        return Vec(tuple(inv[i][j] for i in range(n) for j in range(n)), (n, n))

    def reduce(self, v: Vec, op: str) -> object:
        acc: object = v.entries[0]
        for x in v.entries[1:]:
            acc = self.binop(op, acc, x)
        return acc

    def m_sum(self, v: Vec, m: VecMethod | None = None) -> object:
        return self.reduce(v, "add")

    def m_max(self, v: Vec, m: VecMethod | None = None) -> object:
        return self.reduce(v, "max")

    def m_min(self, v: Vec, m: VecMethod | None = None) -> object:
        return self.reduce(v, "min")

    def m_any(self, v: Vec, m: VecMethod | None = None) -> object:
        return self.reduce(Vec(tuple(self.truth(e) for e in v.entries), v.shape), "or")

    def m_all(self, v: Vec, m: VecMethod | None = None) -> object:
        return self.reduce(Vec(tuple(self.truth(e) for e in v.entries), v.shape), "and")

    def m_cast(self, v: Vec, m: VecMethod, dtype: object) -> Vec:
        t = self.type_dtype(dtype)
        return Vec(tuple(self.cast(e, t) for e in v.entries), v.shape)

    def m_fill(self, v: Vec, m: VecMethod, value: object) -> None:
        if m.ref is not None:  # `a[i].fill(x)`: every entry of the array's element
            dtype = dtype_of(m.ref.array)
            self.element_store(m.ref, None, self.filled(m.ref.shape, value, dtype))
            return
        local = self.writable_vec(m.target) if m.target else None
        if local is None:
            raise self.error("fill() needs a vector or matrix variable, e.g. `m.fill(0)`.")
        dtype = dtype_of(local.refs[0])
        self.store_vec_local(local, self.filled(local.shape, value, dtype), m.target)

    def all_of(self, x: object, any_: bool) -> object:
        """Python's `all(v)` / `any(v)` in a kernel."""
        v = self.vec_of(x)
        if v is None:
            return self.truth(x)
        return self.m_any(v) if any_ else self.m_all(v)

    def cast_all(self, x: object, t: DType) -> object:
        """`qd.cast(v, t)`, `float(v)`: each entry converted."""
        v = self.vec_of(x)
        if v is None:
            return self.cast(self.value(x, t), t)
        return Vec(tuple(self.cast(e, t) for e in v.entries), v.shape)

    def print_parts(self, v: Vec) -> list[str | ir.Value]:
        """How `print(v)` shows a vector, `[1, 2, 3]`, or a matrix, `[[1, 2], [3, 4]]`."""
        parts: list[str | ir.Value] = []
        rows = [v.entries] if v.ndim == 1 else [r.entries for r in v.matrix_rows()]
        if v.ndim == 2:
            parts.append("[")
        for k, row in enumerate(rows):
            parts.append(", [" if k else "[")
            for j, e in enumerate(row):
                if j:
                    parts.append(", ")
                parts.append(e)
            parts.append("]")
        if v.ndim == 2:
            parts.append("]")
        return parts

    def shown(self, x: object) -> list[str | ir.Value]:
        """What `print(x)` shows: a vector or matrix by its entries, a Python list or tuple (of
        values, vectors, shapes) as `[a, b, ...]`, as the reference prints them."""
        if isinstance(x, (list, tuple)):
            out: list[str | ir.Value] = ["["]
            for k, e in enumerate(x):
                out.extend([", "] if k else [])
                out.extend(self.shown(e))
            return [*out, "]"]
        v = self.vec_of(x) if self.is_vec(x) else None
        if v is not None:
            return self.print_parts(v)
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return [str(x)]
        return [self.value(x)]


METHODS: dict[str, Callable[..., object]] = {
    "dot": VectorOps.m_dot,
    "cross": VectorOps.m_cross,
    "outer_product": VectorOps.m_outer_product,
    "norm_sqr": VectorOps.m_norm_sqr,
    "frobenius_inner": VectorOps.m_frobenius_inner,
    "norm": VectorOps.m_norm,
    "norm_inv": VectorOps.m_norm_inv,
    "normalized": VectorOps.m_normalized,
    "transpose": VectorOps.m_transpose,
    "trace": VectorOps.m_trace,
    "determinant": VectorOps.m_determinant,
    "inverse": VectorOps.m_inverse,
    "sum": VectorOps.m_sum,
    "max": VectorOps.m_max,
    "min": VectorOps.m_min,
    "any": VectorOps.m_any,
    "all": VectorOps.m_all,
    "cast": VectorOps.m_cast,
    "fill": VectorOps.m_fill,
}
"""The methods of a vector or matrix in a kernel (`v.norm()`, `m.inverse()`), by name: each is
called with the frontend, the vector, the `VecMethod` and the call's lowered arguments."""
