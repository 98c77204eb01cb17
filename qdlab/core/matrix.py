"""`qd.Vector`, `qd.Matrix` and their types (`qd.types.vector(3, qd.f32)`, `qd.math.vec3`).

Outside a kernel a vector or matrix is a small NumPy-backed value (construct, index, swizzle,
arithmetic, `to_numpy`); inside one the frontend recognises these same objects by identity and
unrolls every operation into scalar IR. An element of a vector or matrix ndarray read on the host
(`a[i]`) is a view: writing to it writes the array.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import product

import numpy as np

from .errors import QuadrantsRuntimeError, QuadrantsSyntaxError
from .types import DType, f32, i32, u32

SWIZZLE_GROUPS = ("xyzw", "rgba", "stpq")
"""Names of the first four entries of a vector, as in GLSL: `v.x`, `v.rgb`, `v.stp`."""
DEFAULTS: dict[str, DType] = {"fp": f32, "ip": i32, "up": u32}
"""The default float, signed and unsigned types (`qd.init(default_fp=...)`): what `float`, `int`
and `qd.math.vec3` mean. `qd.init` updates it."""
ndarray_maker: Callable | None = None
"""`qd.ndarray`, registered by `qdlab.host.ndarray` when it loads (the language cannot import the
runtime); `qd.Vector.ndarray` and `qd.Matrix.ndarray` go through it."""
field_maker: Callable | None = None
tensor_maker: Callable | None = None
"""`qdlab.host.tensor.compound_tensor`, which `qd.Vector.tensor` / `qd.Matrix.tensor` call with
their own name (set when it loads)."""
"""`qd.field`, registered by `qdlab.host.field`; `qd.Vector.field`, `qd.Matrix.field` and
`vec3.field` go through it."""


def resolve_dtype(dt: object) -> DType | None:
    """A dtype as written (`qd.f32`, `float`, `int`, or a default's name) as a DType."""
    if dt is None or isinstance(dt, DType):
        return dt
    if dt is float:
        return DEFAULTS["fp"]
    if dt is int:
        return DEFAULTS["ip"]
    if dt is bool:
        return DEFAULTS["ip"]
    if isinstance(dt, str) and dt in DEFAULTS:
        return DEFAULTS[dt]
    if isinstance(dt, (type, np.dtype)):
        from .types import from_numpy  # lazy: only for NumPy dtypes given as a dtype

        t = from_numpy(np.dtype(dt))
        if t is not None:
            return t
    raise TypeError(f"{dt!r} is not a dtype such as qd.f32")


def swizzle_group(name: str) -> str | None:
    """The group (`xyzw`, `rgba`, `stpq`) a swizzle pattern of 1 to 4 letters is written in."""
    if not 1 <= len(name) <= 4:
        return None
    for group in SWIZZLE_GROUPS:
        if all(c in group for c in name):
            return group
    return None


def swizzle_error(name: str, n: int) -> str | None:
    """Why `name` cannot be read from a vector of `n` entries, or None if it can."""
    group = swizzle_group(name) or ""
    valid = set(group[:n])
    if set(name) - valid:
        return f"vec{n} only has attributes={tuple(sorted(valid))}, got={tuple(name)}"
    return None


def swizzle_indices(name: str) -> list[int]:
    group = swizzle_group(name) or ""
    return [group.index(c) for c in name]


def _flatten_args(n_entries: int, args: tuple) -> list:
    """The entries a type call gets (`vec4(v.xyz, 1.0)`, `mat2([[1, 2], [3, 4]])`, `vec3(0)`)."""
    if len(args) == 1 and isinstance(args[0], (int, float, np.number)):
        return [args[0]] * n_entries
    if len(args) == 1:
        args = tuple(args[0]) if not isinstance(args[0], Matrix) else (args[0],)
    out: list = []
    for x in args:
        if isinstance(x, Matrix):
            out.extend(x.entries.ravel().tolist())
        elif isinstance(x, np.ndarray):
            out.extend(x.ravel().tolist())
        elif isinstance(x, (list, tuple)):
            for y in x:
                out.extend(y.entries.ravel().tolist() if isinstance(y, Matrix) else np.ravel(y))
        else:
            out.append(x)
    return out


class MatrixType:
    """`qd.types.matrix(n, m, dtype)`: the type of an n x m matrix; call it to make one."""

    ndim = 2

    def __init__(self, n: int | None = None, m: int | None = None, dtype: object = None) -> None:
        self.n = int(n) if n is not None else None
        self.m = int(m) if m is not None else None
        self._dtype = dtype

    @property
    def dtype(self) -> DType | None:
        return resolve_dtype(self._dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        """`(n, m)` or `(n,)`; an entry is None in an annotation that takes any size
        (`qd.types.matrix()`)."""
        return (self.n, self.m) if self.ndim == 2 else (self.n,)  # type: ignore[return-value]

    def get_shape(self) -> tuple[int, ...]:
        return self.shape

    def element_type(self) -> DType | None:
        return self.dtype

    unpacked = False
    """`qd.types.vector(n, dtype, unpacked=True)`: only a `@qd.dataclass` member's type, which the
    struct stores as n scalar members `_<name>0` ... (`obj.r[i]`, `i` known at compile time, is
    `obj._r<i>`)."""
    unpacked_made = False
    """Whether this process has made an unpacked vector type (until then no kernel statement is
    searched for `obj.r[i]`)."""

    def refuse_unpacked(self, what: str) -> None:
        """Quadrants' refusal (its words) to `what` ("instantiate", "create a field of" ...) an
        unpacked vector type."""
        if self.unpacked:
            raise QuadrantsSyntaxError(
                f"cannot {what} a vector declared with unpacked=True; the unpacked layout is "
                "only honored on ``@qd.dataclass`` field annotations. Either drop "
                "``unpacked=True`` or use the type in an annotation like ``r: "
                "qd.types.vector(N, dtype, unpacked=True)`` on a class decorated with "
                "@qd.dataclass."
            )

    def __call__(self, *args: object) -> Matrix:
        self.refuse_unpacked("instantiate")
        if not args:
            raise QuadrantsSyntaxError(
                "Custom type instances need to be created with an initial value."
            )
        entries = _flatten_args(math.prod(self.shape), args)
        if len(entries) != math.prod(self.shape):
            raise QuadrantsSyntaxError(
                f"{self.to_string()} needs {math.prod(self.shape)} entries, got {len(entries)}."
            )
        arr = np.array(entries).reshape(self.shape)
        return (Vector if self.ndim == 1 else Matrix)(arr, self.dtype)

    def ndarray(self, shape: object, needs_grad: bool = False) -> object:
        self.refuse_unpacked("create an ndarray of")
        return _host(ndarray_maker)(self, shape, needs_grad)

    def field(self, *args: object, **kwargs: object) -> object:
        """`vec3.field(shape=n)`: a field of this vector or matrix type."""
        self.refuse_unpacked("create a field of")
        return _host(field_maker)(self, *args, **kwargs)

    def to_string(self) -> str:
        dt = self.dtype or ""
        if self.ndim == 1:
            return f"VectorType[{self.n}, {dt}]"
        return f"MatrixType[{self.n},{self.m}, {dt}]"

    def __repr__(self) -> str:
        return self.to_string()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MatrixType) and (self.ndim, self.shape, self.dtype) == (
            other.ndim,
            other.shape,
            other.dtype,
        )

    def __hash__(self) -> int:
        return hash((self.ndim, self.shape, str(self.dtype)))


class VectorType(MatrixType):
    """`qd.types.vector(n, dtype)`, `qd.math.vec3`: the type of an n-vector."""

    ndim = 1

    def __init__(self, n: int | None = None, dtype: object = None, unpacked: bool = False) -> None:
        super().__init__(n, 1, dtype)
        if unpacked:
            self.unpacked = MatrixType.unpacked_made = True


def vector(n: int | None = None, dtype: object = None, *, unpacked: bool = False) -> VectorType:
    """`qd.types.vector(n, dtype)`; `qd.types.vector()` annotates an ndarray of vectors of any
    size and dtype; `unpacked=True` (a `@qd.dataclass` member's type only) stores its entries as
    scalar members."""
    return VectorType(n, dtype, unpacked)


def matrix(n: int | None = None, m: int | None = None, dtype: object = None) -> MatrixType:
    """`qd.types.matrix(n, m, dtype)`."""
    return MatrixType(n, m, dtype)


def _entries(x: object) -> object:
    return x.entries if isinstance(x, Matrix) else np.asarray(x) if isinstance(x, list) else x


def _wrap(arr: object) -> object:
    """A NumPy result as a vector (1-D), a matrix (2-D) or a scalar."""
    if isinstance(arr, np.ndarray) and arr.ndim in (1, 2):
        return (Vector if arr.ndim == 1 else Matrix)(arr)
    return arr


def _binary(fn: Callable, reflected: bool = False) -> Callable:
    def method(self: Matrix, other: object) -> object:
        a, b = self.entries, _entries(other)
        return _wrap(fn(b, a) if reflected else fn(a, b))

    return method


class Matrix:
    """A matrix (or, as `Vector`, a vector) of scalars: row-major NumPy `entries`."""

    __array_priority__ = 1000

    def __init__(self, arr: object, dt: object = None) -> None:
        dtype = resolve_dtype(dt)
        if isinstance(arr, Matrix):
            arr = arr.entries
        if not isinstance(arr, (list, tuple, np.ndarray)):
            raise TypeError("A Matrix/Vector can only be initialized with an array-like object")
        if len(arr) and isinstance(arr[0], Matrix) and not isinstance(arr, np.ndarray):
            raise TypeError("cols/rows required when using list of vectors")
        entries = arr if isinstance(arr, np.ndarray) and dtype is None else None
        if entries is None:
            entries = np.array(arr, dtype.np if dtype is not None else None)
        if entries.ndim not in (1, 2):
            raise TypeError(f"a Matrix has 1 or 2 axes, not {entries.ndim}")
        self.entries, self.dt = entries, dtype
        # the shape, fixed once made (instance attributes, as Quadrants' are)
        self.ndim: int = entries.ndim
        self.n: int = entries.shape[0]
        self.m: int = entries.shape[1] if entries.ndim == 2 else 1

    # -- shape -------------------------------------------------------------------------------------

    def get_shape(self) -> tuple[int, ...]:
        return tuple(self.entries.shape)

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        if self.ndim == 1:
            return iter(self.entries[i] for i in range(self.n))
        return iter([self.entries[i, j] for j in range(self.m)] for i in range(self.n))

    # -- entries -----------------------------------------------------------------------------------
    def _key(self, indices: object) -> tuple:
        key = indices if isinstance(indices, tuple) else (indices,)
        if len(key) != self.ndim:
            raise IndexError(f"Expected {self.ndim} indices, got {len(key)}")
        return key

    def __getitem__(self, indices: object) -> object:
        return _wrap(self.entries[self._key(indices)])

    def __setitem__(self, indices: object, value: object) -> None:
        self.entries[self._key(indices)] = _entries(value)

    def _swizzle(self, name: str) -> object:
        """`v.xy`: the entries a swizzle pattern names (a scalar for one letter)."""
        error = swizzle_error(name, self.n)
        if error:
            raise QuadrantsSyntaxError(error)
        idx = swizzle_indices(name)
        return self.entries[idx[0]] if len(idx) == 1 else Vector(self.entries[idx])

    def _set_swizzle(self, name: str, value: object) -> None:
        """`v.xy = (1, 2)`: the entries a swizzle pattern names, written."""
        error = swizzle_error(name, self.n)
        if error:
            raise QuadrantsSyntaxError(error)
        idx = swizzle_indices(name)
        values = np.ravel(_entries(value))
        if len(idx) > 1 and len(values) != len(idx):
            raise QuadrantsRuntimeError(f"value len does not match the swizzle pattern={name}")
        self.entries[idx] = values if len(idx) > 1 else values[0]

    def to_numpy(self, dtype: object = None) -> np.ndarray:
        return self.entries.copy() if dtype is None else self.entries.astype(dtype)

    def to_list(self) -> list:
        return self.entries.tolist()

    def fill(self, value: object) -> None:
        self.entries.fill(value)

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self.entries if dtype is None else self.entries.astype(dtype)

    def __str__(self) -> str:
        return str(self.entries)

    def __repr__(self) -> str:
        return str(self.entries)

    __hash__ = object.__hash__

    # -- arithmetic (element-wise, NumPy's broadcasting) -------------------------------------------
    __add__, __radd__ = _binary(np.add), _binary(np.add, True)
    __sub__, __rsub__ = _binary(np.subtract), _binary(np.subtract, True)
    __mul__, __rmul__ = _binary(np.multiply), _binary(np.multiply, True)
    __truediv__, __rtruediv__ = _binary(np.true_divide), _binary(np.true_divide, True)
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide), _binary(np.floor_divide, True)
    __mod__, __rmod__ = _binary(np.mod), _binary(np.mod, True)
    __pow__, __rpow__ = _binary(np.power), _binary(np.power, True)
    __and__, __rand__ = _binary(np.bitwise_and), _binary(np.bitwise_and, True)
    __or__, __ror__ = _binary(np.bitwise_or), _binary(np.bitwise_or, True)
    __xor__, __rxor__ = _binary(np.bitwise_xor), _binary(np.bitwise_xor, True)
    __lshift__, __rlshift__ = _binary(np.left_shift), _binary(np.left_shift, True)
    __rshift__, __rrshift__ = _binary(np.right_shift), _binary(np.right_shift, True)
    __eq__, __ne__ = _binary(np.equal), _binary(np.not_equal)  # type: ignore[assignment]
    __lt__, __le__ = _binary(np.less), _binary(np.less_equal)
    __gt__, __ge__ = _binary(np.greater), _binary(np.greater_equal)
    __matmul__, __rmatmul__ = _binary(np.matmul), _binary(np.matmul, True)

    def __neg__(self) -> object:
        return _wrap(-self.entries)

    def __pos__(self) -> Matrix:
        return self

    def __abs__(self) -> object:
        return _wrap(np.abs(self.entries))

    def __invert__(self) -> object:
        return _wrap(~self.entries)

    # -- methods -----------------------------------------------------------------------------------
    def dot(self, other: Matrix) -> object:
        return np.dot(self.entries, _entries(other))

    def cross(self, other: Matrix) -> object:
        return _wrap(np.cross(self.entries, _entries(other)))

    def outer_product(self, other: Matrix) -> Matrix:
        return Matrix(np.outer(self.entries, _entries(other)))

    def norm_sqr(self) -> object:
        return (self.entries**2).sum()

    def norm(self, eps: float = 0) -> object:
        return np.sqrt(self.norm_sqr() + eps)

    def norm_inv(self, eps: float = 0) -> object:
        return 1.0 / self.norm(eps)

    def normalized(self, eps: float = 0) -> object:
        return _wrap(self.entries / self.norm(eps))

    def transpose(self) -> object:
        return Matrix(self.entries.T)

    def determinant(self) -> object:
        return np.linalg.det(self.entries)

    def inverse(self) -> object:
        return Matrix(np.linalg.inv(self.entries))

    def trace(self) -> object:
        if self.ndim != 2 or self.n != self.m:
            raise QuadrantsSyntaxError(
                f"expected a square matrix, got shape {tuple(self.entries.shape)}"
            )
        return np.trace(self.entries)

    def sum(self) -> object:
        return self.entries.sum()

    def max(self) -> object:
        return self.entries.max()

    def min(self) -> object:
        return self.entries.min()

    def any(self) -> bool:
        return bool(self.entries.any())

    def all(self) -> bool:
        return bool(self.entries.all())

    def cast(self, dtype: object) -> object:
        return _wrap(self.entries.astype(resolve_dtype(dtype).np))  # type: ignore[union-attr]

    def frobenius_inner(self, other: Matrix) -> object:
        return (self.entries * _entries(other)).sum()

    # -- constructors ------------------------------------------------------------------------------
    @staticmethod
    def zero(dt: object, n: int, m: int | None = None) -> Matrix:
        shape = (n,) if m is None else (n, m)
        return (Vector if m is None else Matrix)(np.zeros(shape, resolve_dtype(dt).np))  # type: ignore[union-attr]

    @staticmethod
    def one(dt: object, n: int, m: int | None = None) -> Matrix:
        shape = (n,) if m is None else (n, m)
        return (Vector if m is None else Matrix)(np.ones(shape, resolve_dtype(dt).np))  # type: ignore[union-attr]

    @staticmethod
    def unit(n: int, i: int, dt: object = None) -> Vector:
        t = resolve_dtype(dt) or DEFAULTS["fp"]
        v = np.zeros(n, t.np)
        v[i] = 1
        return Vector(v)

    @staticmethod
    def identity(dt: object, n: int) -> Matrix:
        return Matrix(np.eye(n, dtype=resolve_dtype(dt).np))  # type: ignore[union-attr]

    @staticmethod
    def diag(dim: int, val: object) -> Matrix:
        return Matrix(np.diag([val] * dim))

    @staticmethod
    def rows(rows: list) -> Matrix:
        return Matrix([list(np.ravel(_entries(r))) for r in rows])

    @staticmethod
    def cols(cols: list) -> Matrix:
        return Matrix(np.array([list(np.ravel(_entries(c))) for c in cols]).T)

    @classmethod
    def ndarray(
        cls, n: int, m: int, dtype: object, shape: object, needs_grad: bool = False
    ) -> object:
        """`qd.Matrix.ndarray(n, m, dtype, shape)`: an ndarray of n x m matrices."""
        return _host(ndarray_maker)(MatrixType(n, m, dtype), shape, needs_grad)

    @classmethod
    def field(cls, n: int, m: int, dtype: object, *args: object, **kwargs: object) -> object:
        """`qd.Matrix.field(n, m, dtype, shape)`: a field of n x m matrices."""
        return _host(field_maker)(MatrixType(n, m, dtype), *args, **kwargs)

    @classmethod
    def tensor(cls, n: int, m: int, dtype: object, shape: object, **kwargs: object) -> object:
        """`qd.Matrix.tensor(n, m, dtype, shape, backend=...)`: a `qd.Tensor` of n x m matrices."""
        return _host(tensor_maker)("qd.Matrix.tensor", MatrixType(n, m, dtype), shape, **kwargs)


class Vector(Matrix):
    """An n-vector: `qd.Vector([1, 2, 3])`."""

    def __init__(self, arr: object, dt: object = None) -> None:
        super().__init__(arr, dt)
        if self.ndim != 1:
            raise TypeError("a Vector takes a flat list of entries")

    @classmethod
    def ndarray(  # type: ignore[override]
        cls, n: int, dtype: object, shape: object, needs_grad: bool = False
    ) -> object:
        """`qd.Vector.ndarray(n, dtype, shape)`: an ndarray of n-vectors."""
        return _host(ndarray_maker)(VectorType(n, dtype), shape, needs_grad)

    @classmethod
    def field(cls, n: int, dtype: object, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        """`qd.Vector.field(n, dtype, shape)`: a field of n-vectors."""
        return _host(field_maker)(VectorType(n, dtype), *args, **kwargs)

    @classmethod
    def tensor(cls, n: int, dtype: object, shape: object, **kwargs: object) -> object:  # type: ignore[override]
        """`qd.Vector.tensor(n, dtype, shape, backend=...)`: a `qd.Tensor` of n-vectors."""
        return _host(tensor_maker)("qd.Vector.tensor", VectorType(n, dtype), shape, **kwargs)


def _host(maker: Callable | None) -> Callable:
    """A maker of ndarrays, fields or tensors, which the host layer registers on import."""
    assert maker is not None, "qdlab.host registers it on import"
    return maker


_HOST_MATH: dict[str, Callable] = {
    "sqrt": np.sqrt,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "exp": np.exp,
    "log": np.log,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "abs": np.abs,
    "asin": np.arcsin,
    "acos": np.arccos,
    "log2": np.log2,
    "exp2": np.exp2,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "frexp": lambda x: tuple(_wrap(part) for part in np.frexp(x)),
    "sign": np.sign,
    "fract": lambda x: x - np.floor(x),
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "pow": np.power,
    "atan2": np.arctan2,
    "min": np.minimum,
    "max": np.maximum,
    "select": lambda c, a, b: np.where(c, a, b),
    "clamp": np.clip,
    "mix": lambda x, y, a: x * (1 - a) + y * a,
    "logical_not": np.logical_not,
    "add": np.add,
}
"""What the math built-ins compute when called outside a kernel (on numbers and on vectors)."""


def host_call(name: str, args: tuple) -> object:
    """`qd.<name>(*args)` outside a kernel, element-wise over vectors and matrices; NotImplemented
    when the built-in only exists inside kernels."""
    if name == "ndrange":
        return product(*(range(*a) if isinstance(a, tuple) else range(a) for a in args))
    fn = _HOST_MATH.get(name)
    if fn is None:
        return NotImplemented
    if name in ("min", "max") and len(args) > 2:
        out = args[0]
        for a in args[1:]:
            out = host_call(name, (out, a))
        return out
    return _wrap(fn(*(_entries(a) for a in args)))


def swizzle_patterns(key_group: str, required_length: int = 4) -> list[str]:
    """The swizzle patterns of 1 to `required_length` letters of `key_group` (`x`, ..., `wwww`),
    as Quadrants' `qd.lang.matrix._generate_swizzle_patterns` lists them."""
    return ["".join(p) for k in range(1, required_length + 1) for p in product(key_group, repeat=k)]


def all_swizzles() -> list[str]:
    """Every swizzle pattern (`x` ... `wwww`, in each group); the frontend's attribute table."""
    return [p for g in SWIZZLE_GROUPS for p in swizzle_patterns(g)]


def _swizzle_property(name: str) -> property:
    return property(
        lambda self: self._swizzle(name),
        lambda self, value: self._set_swizzle(name, value),
        doc=f"The entries `{name}` names (a swizzle), read and written.",
    )


for _pattern in all_swizzles():  # `v.x`, `v.xy`, `c.rgba`...: class properties, as in Quadrants
    setattr(Matrix, _pattern, _swizzle_property(_pattern))
