"""Vectors and matrices in a kernel, as the reference lowers them: unrolled into scalar values.

A vector or matrix is a compile-time object (`Vec`) holding one scalar IR value per entry, so every
later stage (simplify, split, gate, interface buffer, keys, printer) only ever sees scalar ops. A
vector assigned to a name is one local per entry (`VecLocal`, named `v_x`, `m_01`), so writing one
entry, a swizzle or a slice works with the existing local machinery; an element of a vector ndarray
(`a[i]`) is read and written one entry at a time, its entry's indices after the outer ones. This
file has the values, construction and locals; `vector_index.py` indexing, swizzles and the
elements of vector ndarrays; `vector_ops.py` the arithmetic and methods. A part of the frontend's
visitor.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qdlab.core import language as lang

from ...core.errors import QdTypeError, QuadrantsSyntaxError
from ...core.types import DType, LocalType, TensorType, f32, promote, u1
from .. import ir
from .scope import array_type, dtype_of, items_of

PY_OPERATORS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"}
"""Functions of Python's `operator` module a kernel may call: they lower as their operator."""


@dataclass(frozen=True)
class Vec:
    """A vector `(n,)` or matrix `(n, m)` value inside a kernel: its entries, row-major."""

    entries: tuple[ir.Value, ...]
    shape: tuple[int, ...]

    @property
    def n(self) -> int:
        return self.shape[0]

    @property
    def m(self) -> int:
        return self.shape[1] if len(self.shape) == 2 else 1

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> DType:
        return dtype_of(self.entries[0])

    def at(self, *index: int) -> ir.Value:
        flat = index[0] * self.m + index[1] if len(index) == 2 else index[0]
        return self.entries[flat]

    def rows(self) -> list[ir.Value] | list[Vec]:
        """Its entries (a vector) or rows (a matrix), as `for x in qd.static(v)` iterates them."""
        if self.ndim == 1:
            return list(self.entries)
        return self.matrix_rows()

    def matrix_rows(self) -> list[Vec]:
        """The rows of a matrix."""
        return [Vec(self.entries[i * self.m : (i + 1) * self.m], (self.m,)) for i in range(self.n)]

    def __iter__(self):
        return iter(self.rows())

    def __len__(self) -> int:
        return self.n

    def __str__(self) -> str:
        return describe_shape(self.shape, self.dtype)


@dataclass
class VecLocal:
    """A vector or matrix local variable: one local per entry."""

    refs: tuple[ir.Value, ...]
    shape: tuple[int, ...]
    parallel_depth: int

    @property
    def n(self) -> int:
        """Rows (what `qd.static(v.n)` reads at compile time)."""
        return self.shape[0]

    @property
    def m(self) -> int:
        return self.shape[1] if len(self.shape) == 2 else 1

    def __len__(self) -> int:
        return self.shape[0]


@dataclass(frozen=True)
class ElementRef:
    """`a[i]` of an ndarray of vectors or matrices, before its entries are read or written."""

    array: ir.Value
    grad: bool
    indices: tuple[ir.Value, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return array_type(self.array).element


@dataclass(frozen=True)
class VecMethod:
    """`v.dot` and the like, waiting to be called; `target` is the name it was read through, for
    methods that change the vector (`v.fill(0)`), or `ref` the array element it was read from
    (`a[i].fill(0)` writes the element)."""

    vec: Vec
    name: str
    target: str | None
    ref: ElementRef | None = None


def tensor_text(shape: tuple[int, ...], dtype: DType) -> str:
    """`[Tensor (3) i32]`: the reference's name for a vector or matrix value's type."""
    return f"[Tensor ({', '.join(map(str, shape))}) {dtype}]"


def describe_shape(shape: tuple[int, ...], dtype: DType | None = None) -> str:
    what = f"vec{shape[0]}" if len(shape) == 1 else f"{shape[0]}x{shape[1]} matrix"
    return f"{what} of {dtype}" if dtype is not None else what


def component(name: str, shape: tuple[int, ...], flat: int) -> str:
    """The name of entry `flat` of a vector or matrix named `name`: `v_x`, `v_4`, `m_01`."""
    if len(shape) == 1:
        return f"{name}_{'xyzw'[flat]}" if shape[0] <= 4 else f"{name}_{flat}"
    i, j = divmod(flat, shape[1])
    return f"{name}_{i}{j}" if max(shape) <= 10 else f"{name}_{i}_{j}"


class Vectors:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `const`, `binop`, `compare`,
    `emit`, `error`, `find_local`, `resolve_static`, `scope`, `config`, `default_fp` and loop
    depths."""

    # -- values ------------------------------------------------------------------------------------
    def type_dtype(self, t: lang.MatrixType | object) -> DType | None:
        """The dtype a vector type or dtype argument stands for in this kernel (`float` is
        `default_fp`); None for None (a dtype to infer)."""
        raw = getattr(t, "_dtype", t)
        if raw in (float, "fp"):
            return self.default_fp
        if raw in (int, "ip"):
            return self.default_ip
        if raw is bool:
            return u1
        if raw == "up":
            return lang.matrix.DEFAULTS["up"]
        if isinstance(raw, DType):
            return raw
        if raw is None:
            return None
        raise self.error(f"`{raw!r}` is not a dtype such as qd.f32.", QdTypeError)

    def literal_dtype(self, x: object) -> DType:
        """The type an entry gives a vector whose dtype is inferred (`qd.Vector([1, 2.5])`)."""
        if isinstance(x, ir.Value):
            return dtype_of(self.value(x))
        if isinstance(x, bool):
            return self.default_ip
        if isinstance(x, (int, np.integer)):
            return self.default_ip
        if isinstance(x, (float, np.floating)):
            return self.default_fp
        return dtype_of(self.value(x))

    def make_vec(self, items: list, shape: tuple[int, ...], dtype: DType | None = None) -> Vec:
        """A vector or matrix of `shape` from flat `items` (numbers or values), cast to `dtype` (by
        default the promoted type of its entries)."""
        if len(items) != math.prod(shape):
            raise self.error(
                f"a {describe_shape(shape)} needs {math.prod(shape)} entries, got {len(items)}.",
                QdTypeError,
            )
        for x in items:
            if isinstance(x, (Vec, list, tuple)):
                raise self.error(
                    f"an entry of a {describe_shape(shape)} must be a scalar, not {what_of(x)}.",
                    QdTypeError,
                )
        if dtype is None:
            dtype = self.literal_dtype(items[0])
            for x in items[1:]:
                dtype = promote(dtype, self.literal_dtype(x))
        return Vec(tuple(self.cast(self.value(x, dtype), dtype) for x in items), shape)

    def host_vec(self, x: lang.Matrix) -> Vec:
        """A `qd.Vector` / `qd.Matrix` made outside the kernel, baked in as constants."""
        dtype = x.dt
        if dtype is None:
            kind = x.entries.dtype.kind
            dtype = self.default_fp if kind == "f" else u1 if kind == "b" else None
        items = [v.item() for v in x.entries.ravel()]
        return self.make_vec(items, tuple(x.entries.shape), dtype)

    def vec_of(self, x: object) -> Vec | None:
        """`x` as a vector or matrix if it is one (a `Vec`, a host `qd.Vector`, a list or tuple of
        scalars, or of rows), else None."""
        if isinstance(x, Vec):
            return x
        if isinstance(x, lang.Matrix):
            return self.host_vec(x)
        if isinstance(x, np.ndarray) and x.ndim in (1, 2):
            return self.host_vec(lang.Matrix(x))
        if isinstance(x, (list, tuple)) and x:
            if all(isinstance(r, (list, tuple, Vec)) for r in x):
                rows = [self.vec_of(r) for r in x]
                vecs = [r for r in rows if r is not None and r.ndim == 1]
                if len(vecs) == len(rows) and len({r.n for r in vecs}) == 1:
                    items = [e for r in vecs for e in r.entries]
                    return self.make_vec(items, (len(vecs), vecs[0].n))
                return None
            if all(_scalar_like(e) for e in x):
                return self.make_vec(list(x), (len(x),))
        return None

    def is_vec(self, x: object) -> bool:
        return isinstance(x, (Vec, lang.Matrix))

    def need_vec(self, x: object, what: str) -> Vec:
        v = self.vec_of(x)
        if v is None:
            raise self.error(f"{what} needs a vector or matrix, not {what_of(x)}.", QdTypeError)
        return v

    def vmap(self, fn: Callable[..., object], *xs: object) -> Vec:
        """`fn` applied entry by entry, scalars broadcast; every vector argument has one shape."""
        shape = None
        vecs: list[Vec | None] = []
        for x in xs:
            v = self.vec_of(x) if isinstance(x, (Vec, lang.Matrix, list, tuple)) else None
            if v is not None:
                if shape is not None and v.shape != shape:
                    raise self.error(
                        f"operands of shapes {shape} and {v.shape} cannot be combined entry by "
                        "entry.",
                        QdTypeError,
                    )
                shape = v.shape
            vecs.append(v)
        assert shape is not None, "vmap takes a vector or matrix"
        out = [
            fn(*(v.entries[k] if v is not None else x for v, x in zip(vecs, xs)))
            for k in range(math.prod(shape))
        ]
        return Vec(tuple(self.value(e) for e in out), shape)

    def param_vec(self, name: str, t: TensorType, index: int) -> Vec:
        """A vector or matrix kernel parameter: one `arg` per entry (`%mat_01 = arg {component=1,
        index=0}`)."""
        self.name_entries(name, t.shape)
        return Vec(
            tuple(
                self.emit(
                    ir.Arg, (), t.dtype, component(name, t.shape, k), index=index, component=k
                )
                for k in range(t.size)
            ),
            t.shape,
        )

    def return_values(self, value: object) -> list:
        """A kernel's return values, each vector or matrix one flattened into its entries (and a
        struct into its members, `struct_values.py`). A struct of a declared type returned where
        the return type's leaf has another dtype is an error, as in Quadrants (a scalar is cast)."""
        flat: list = []
        typed: list[str | None] = []  # per leaf: the declared struct type it came from
        for x in value if isinstance(value, tuple) else (value,):
            sv = self.struct_value(x)
            if sv is None:
                flat.append(x)
                typed.append(None)
                continue
            leaves = self.struct_leaves(sv)
            leaves = leaves if isinstance(leaves, tuple) else (leaves,)
            flat.extend(leaves)
            anonymous = getattr(sv.type, "__qd_anonymous_struct__", False)
            typed.extend([None if anonymous else sv.type.__name__] * len(leaves))
        values = flat
        shapes = self.lowering.return_shapes or [()] * len(self.kernel.returns)
        if len(values) != len(shapes) and len(shapes) == 1 and shapes[0]:
            values, typed = [value], [None]  # `return (1, 2, 3)` for a vec3
        if len(values) != len(shapes):
            raise self.error(
                f"expected {len(shapes)} return values, got {len(values)}.", QdTypeError
            )
        out: list = []
        for x, shape, struct in zip(values, shapes, typed):
            entries = [x]
            if shape:
                v = self.vec_of(x)
                if v is None or v.shape != shape:
                    raise self.error(
                        f"this kernel returns a {describe_shape(shape)} (shape {shape}), not "
                        f"{what_of(v or x)}.",
                        QdTypeError,
                    )
                entries = list(v.entries)
            for e in entries:
                want = self.type_dtype(self.kernel.returns[len(out)])
                got = getattr(e, "type", None)
                if struct is not None and isinstance(got, DType) and got != want:
                    raise self.error(
                        f"Return value of type {struct} cannot be converted into the required "
                        f"type: it holds a {got} where the return type has a {want}.",
                        QdTypeError,
                    )
                out.append(e)
        return out

    # -- locals ------------------------------------------------------------------------------------
    def new_vec_local(self, name: str, v: Vec, dtype: DType | None = None) -> VecLocal:
        dtype = dtype or v.dtype
        refs = []
        self.name_entries(name, v.shape)
        for k, e in enumerate(v.entries):
            ref = self.emit(ir.Alloca, (), LocalType(dtype), component(name, v.shape, k))
            self.emit(ir.LocalStore, [ref, self.cast(e, dtype)])
            refs.append(ref)
        return VecLocal(tuple(refs), v.shape, self.parallel_depth)

    def name_entries(self, name: str, shape: tuple[int, ...]) -> None:
        """Record that `v_x`, `v_y` ... are the entries of `v`: the views show one name."""
        table = self.kernel.flags.entries
        for k in range(math.prod(shape)):
            table[component(name, shape, k)] = name

    def load_vec_local(self, local: VecLocal) -> Vec:
        return Vec(
            tuple(self.emit(ir.LocalLoad, [r], dtype_of(r), r.name) for r in local.refs),
            local.shape,
        )

    def store_vec_local(self, local: VecLocal, x: object, name: str) -> None:
        v = self.vec_of(x)
        if v is None and isinstance(x, (int, float, bool, ir.Value)):
            # a scalar given to a vector local fills it, as in Quadrants (`v = 0`; the
            # `_` of `a, _, _ = f()` taking a scalar after a vector)
            value = self.value(x)
            if not ir.is_array(value):
                for ref in local.refs:
                    dtype = dtype_of(ref)
                    self.emit(ir.LocalStore, [ref, self.cast(self.value(x, dtype), dtype)])
                return
        if v is None:
            raise self.error(
                f"`{name}` is a {describe_shape(local.shape)}; it cannot be given {what_of(x)}.",
                QdTypeError,
            )
        if v.shape != local.shape:
            raise self.error(
                f"`{name}` is a {describe_shape(local.shape)} (shape {local.shape}); it cannot be "
                f"given a value of shape {v.shape}.",
                QdTypeError,
            )
        for ref, e in zip(local.refs, v.entries):
            dtype = dtype_of(ref)
            self.emit(ir.LocalStore, [ref, self.cast(e, dtype)])

    def writable_vec(self, name: str) -> VecLocal | None:
        """The vector local `name` names, making one of a vector value bound to it (a @qd.func
        parameter, passed by value); None if `name` is not a vector."""
        for frame in reversed(self.scope.frames):
            if name in frame:
                b = frame[name]
                if isinstance(b, VecLocal):
                    return b
                if isinstance(b, Vec):
                    if not self.scope.is_func and any(
                        isinstance(e.owner, ir.Arg) for e in b.entries
                    ):
                        raise self.immutable_argument(name)
                    local = self.new_vec_local(name, b)
                    frame[name] = local
                    return local
                return None
        return None

    # -- construction ------------------------------------------------------------------------------
    def construct(self, callee: object, node: ast.Call) -> Vec | object:
        """`qd.Vector([...])`, `qd.Matrix([[...]])`, `qd.math.vec3(...)` and the `qd.Matrix`
        factories, and Python's `operator.add` / `sub` / `mul` / `truediv` / `matmul` (what `+`,
        `-`, `*`, `/`, `@` do); NotImplemented for any other callee."""
        py_operator = getattr(callee, "__module__", None) == "_operator"
        name = getattr(callee, "__name__", "") if py_operator else ""
        if name in PY_OPERATORS:
            a, b = self.call_args(node, 2)
            return self.matmul(a, b) if name == "matmul" else self.binop(name, a, b)
        if callee is lang.Vector or callee is lang.Matrix:
            args, kwargs = self.call_parts(node, ("arr", "dt"))
            if not args:
                raise self.error(f"qd.{callee.__name__}() needs a list of entries.", QdTypeError)
            dt = self.type_dtype(args[1] if len(args) > 1 else kwargs.get("dt"))
            return self.from_nested(args[0], dt, callee is lang.Vector)
        if isinstance(callee, lang.MatrixType):
            try:
                callee.refuse_unpacked("instantiate")
            except QuadrantsSyntaxError as e:
                raise self.error(str(e), QuadrantsSyntaxError) from None
            return self.from_type(callee, self.visit_args(node.args))
        for name, factory in FACTORIES.items():
            if callee is getattr(lang.Matrix, name):
                code = factory.__code__
                args, kwargs = self.call_parts(node, code.co_varnames[1 : code.co_argcount])
                return factory(self, *args, **kwargs)
        return NotImplemented

    def call_parts(self, node: ast.Call, names: tuple) -> tuple[list, dict]:
        args = self.visit_args(node.args)
        kwargs = {kw.arg: self.visit(kw.value) for kw in node.keywords}
        for k in kwargs:
            if k not in names:
                raise self.error(f"unexpected keyword argument `{k}`.", QdTypeError)
        return args, kwargs

    def from_nested(self, arr: object, dtype: DType | None, vector: bool) -> Vec:
        if isinstance(arr, lang.Matrix):
            arr = arr.entries.tolist()
        if isinstance(arr, Vec):
            return Vec(tuple(self.cast(e, dtype) for e in arr.entries), arr.shape) if dtype else arr
        if not isinstance(arr, (list, tuple)) or not arr:
            raise self.error(
                "qd.Vector / qd.Matrix take a non-empty list of entries (or of rows).", QdTypeError
            )
        if not vector and all(isinstance(r, (list, tuple, Vec)) for r in arr):
            rows = [list(r.entries) if isinstance(r, Vec) else list(r) for r in arr]
            if len({len(r) for r in rows}) != 1:
                raise self.error("every row of a qd.Matrix needs the same length.", QdTypeError)
            return self.make_vec([e for r in rows for e in r], (len(rows), len(rows[0])), dtype)
        flat: list = []
        for x in arr:
            flat.extend(x.entries if isinstance(x, Vec) else [x])
        return self.make_vec(flat, (len(flat),), dtype)

    def from_type(self, t: lang.MatrixType, args: list) -> Vec:
        """`vec3(1, 2, 3)`, `vec3(0)`, `vec4(v.xyz, 1.0)`, `mat2([[1, 2], [3, 4]])`: the entries
        gathered in order, or one scalar for all of them, cast to the type's dtype."""
        dtype = self.type_dtype(t)
        shape, size = t.shape, math.prod(t.shape)
        if not args:
            raise self.error("Custom type instances need to be created with an initial value.")
        if len(args) == 1 and not isinstance(args[0], (Vec, lang.Matrix, list, tuple)):
            return self.make_vec([args[0]] * size, shape, dtype)
        items = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
        flat: list = []
        for x in items:
            v = x if isinstance(x, Vec) else self.vec_of(x) if not _scalar_like(x) else None
            flat.extend(v.entries if v is not None else [x])
        if len(flat) != size:
            raise self.error(f"{t.to_string()} needs {size} entries, got {len(flat)}.", QdTypeError)
        return self.make_vec(flat, shape, dtype)

    def filled(self, shape: tuple[int, ...], value: object, dtype: DType | None) -> Vec:
        return self.make_vec([value] * math.prod(shape), shape, dtype)

    # -- lists and comprehensions (the entries of a vector or matrix) ------------------------------
    def visit_List(self, node: ast.List) -> list:
        return [self.visit(e) for e in node.elts]

    def visit_ListComp(self, node: ast.ListComp) -> list:
        """`[f(i) for i in range(3)]`: unrolled at compile time, as a `qd.static` loop is."""
        out: list = []
        self.comprehension(node.generators, lambda: out.append(self.visit(node.elt)))
        return out

    def visit_DictComp(self, node: ast.DictComp) -> dict:
        """`{i: i * i for i in range(n) if i % 2}`: a dict made at compile time (its keys known
        then), as a list comprehension is."""
        out: dict = {}

        def entry() -> None:
            out[self.dict_key(node.key)] = self.visit(node.value)

        self.comprehension(node.generators, entry)
        return out

    def visit_Dict(self, node: ast.Dict) -> dict:
        """`{1: x, **other}`: a dict made at compile time; its keys are known then, its values
        are whatever the entries are (values at run time too), and indexing it with a key known
        at compile time picks one."""
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:  # `**other`
                other = self.visit(v)
                if not isinstance(other, dict):
                    raise self.error(f"`**` takes a dict, not {what_of(other)}.", QdTypeError)
                out.update(other)
            else:
                out[self.dict_key(k)] = self.visit(v)
        return out

    def dict_key(self, node: ast.expr) -> object:
        """A key known at compile time as itself; a value known at run time (`{x[j]: ...}`) as a
        key of its own, equal to no other, as Quadrants keys such a dict by the expression."""
        key = self.visit(node)
        if isinstance(key, ir.Value) and isinstance(key.owner, ir.Const):
            key = key.owner.attrs["value"]
        try:
            hash(key)
        except TypeError:
            key = None
        if key is None or isinstance(key, Vec):
            raise self.error(
                "a dict key in a kernel must be known at compile time (a literal, a template "
                "argument or a qd.static loop variable).",
                QdTypeError,
            )
        return key

    def comprehension(self, generators: list[ast.comprehension], body: Callable[[], None]) -> None:
        """Runs `body` once per item of the generators (nested, left to right, each `if` known at
        compile time), each target bound in a frame of its own. A generator iterates a value known
        at compile time (`range(n)`, a tuple, a dict's keys) or a vector (its entries) or matrix
        (its rows) of the kernel's."""

        def expand(k: int) -> None:
            if k == len(generators):
                body()
                return
            gen = generators[k]
            if not isinstance(gen.target, (ast.Name, ast.Tuple)):
                raise self.error("a comprehension's target must be a name or names.")
            for item in self.comprehension_items(gen.iter):
                frame: dict = {}
                names = gen.target.elts if isinstance(gen.target, ast.Tuple) else [gen.target]
                values = item if isinstance(gen.target, ast.Tuple) else [item]
                for t, v in zip(names, values):
                    if not isinstance(t, ast.Name):
                        raise self.error("a comprehension's target must be a name or names.")
                    frame[t.id] = v
                self.scope.frames.append(frame)
                try:
                    with self.static_scope():  # as Quadrants builds them
                        keep = all(self.resolve_static(c) for c in gen.ifs)
                    if keep:
                        expand(k + 1)
                finally:
                    self.scope.frames.pop()

        expand(0)

    def comprehension_items(self, node: ast.expr) -> list:
        held = self.find_local(node.id) if isinstance(node, ast.Name) else None
        if isinstance(held, (VecLocal, Vec)):
            return list(self.need_vec(self.visit(node), "a comprehension").rows())
        try:
            with self.static_scope():  # as Quadrants builds it
                it = self.resolve_static(node)
            if isinstance(it, (Vec, lang.Matrix)):
                return list(self.need_vec(it, "a comprehension").rows())
            return items_of(it)
        except TypeError:
            raise self.error(
                "a comprehension in a kernel iterates over something known at compile time, such "
                "as range(3), or over a vector or matrix."
            ) from None


def _scalar_like(x: object) -> bool:
    return isinstance(x, (int, float, bool, np.number)) or (
        isinstance(x, ir.Value) and isinstance(x.type, DType)
    )


def what_of(x: object) -> str:
    if isinstance(x, Vec):
        return f"a {x}"
    if isinstance(x, ir.Value):
        return f"a {x.type} value"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)} item(s)"
    return f"`{x!r}`"


def _zero(fe: Vectors, dt: object, n: int, m: int | None = None) -> Vec:
    return fe.filled((n,) if m is None else (n, m), 0, fe.type_dtype(dt))


def _one(fe: Vectors, dt: object, n: int, m: int | None = None) -> Vec:
    return fe.filled((n,) if m is None else (n, m), 1, fe.type_dtype(dt))


def _unit(fe: Vectors, n: int, i: int, dt: object = None) -> Vec:
    return fe.make_vec([int(k == i) for k in range(n)], (n,), fe.type_dtype(dt) or f32)


def _identity(fe: Vectors, dt: object, n: int) -> Vec:
    return fe.make_vec([int(i == j) for i in range(n) for j in range(n)], (n, n), fe.type_dtype(dt))


def _diag(fe: Vectors, dim: int, val: object) -> Vec:
    return fe.make_vec([val if i == j else 0 for i in range(dim) for j in range(dim)], (dim, dim))


def _rows(fe: Vectors, rows: list) -> Vec:
    vs = [fe.need_vec(r, "qd.Matrix.rows") for r in rows]
    return fe.make_vec([e for v in vs for e in v.entries], (len(vs), vs[0].n))


def _cols(fe: Vectors, cols: list) -> Vec:
    vs = [fe.need_vec(c, "qd.Matrix.cols") for c in cols]
    return fe.make_vec(
        [vs[j].entries[i] for i in range(vs[0].n) for j in range(len(vs))],
        (
            vs[0].n,
            len(vs),
        ),
    )


FACTORIES = {
    "zero": _zero,
    "one": _one,
    "unit": _unit,
    "identity": _identity,
    "diag": _diag,
    "rows": _rows,
    "cols": _cols,
}
"""`qd.Matrix.zero(dt, n, m)` ... by the name of the host method they stand for in a kernel."""
