"""The kernel language's names as Python objects: annotations, built-in functions, `@qd.func`,
kernels.

Inside a kernel these objects are recognised by identity in the frontend; outside a kernel most of
them only explain that they belong inside one. The compiler imports this package and nothing else of
qdlab.
"""

from __future__ import annotations

import contextlib
import inspect
import platform
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from . import matrix
from .binding import check_annotations
from .errors import QdCompileValueError, QuadrantsSyntaxError
from .matrix import Matrix, MatrixType, Vector, VectorType  # noqa: F401 - language names
from .ranges import Ndrange
from .types import DType


class Func:
    """`@qd.func`: inlined into every kernel (or func) that calls it."""

    def __init__(self, fn: Callable, requires_top_level: bool = False) -> None:
        if hasattr(fn, "__code__"):
            check_annotations(fn)  # one naming nothing is refused here, as in Quadrants
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.requires_top_level = requires_top_level
        """Only callable at the top level of a kernel (its loops must stay parallel ones)."""
        parts = getattr(fn, "__qualname__", "").split(".")
        self.classfunc = len(parts) > 1 and parts[-2] != "<locals>"
        """Defined in a class body: called as a method, its `self` is the caller's struct (its
        writes stay), as the reference's class funcs take it."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        raise RuntimeError(
            f"@qd.func `{self.__name__}` can only be called from a kernel or another @qd.func"
        )

    def __get__(self, obj: object, owner: type | None = None) -> Func | BoundFunc:
        """`obj.method`: the func with `obj` as its `self`, as a Python method is bound (Quadrants
        binds its funcs the same way), so a bound func kept in a list or an attribute
        (`self.update = self._update_elastic`) still has its object when a kernel calls it."""
        return self if obj is None else BoundFunc(self, obj)


class BoundFunc:
    """A `@qd.func` method bound to an object (`Func.__get__`): a kernel calling it inlines the
    func with the object as its first argument."""

    __slots__ = ("__self__", "func")

    def __init__(self, func: Func, obj: object) -> None:
        self.func, self.__self__ = func, obj

    @property
    def __name__(self) -> str:
        return self.func.__name__

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        return self.func(self.__self__, *args, **kwargs)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BoundFunc)
            and other.func is self.func
            and other.__self__ is self.__self__
        )

    def __hash__(self) -> int:
        return hash((id(self.func), id(self.__self__)))

    def __repr__(self) -> str:
        return f"<bound qd.func {self.__name__} of {self.__self__!r}>"


def func(fn: Callable | None = None, **options: object) -> Func | Callable[[Callable], Func]:
    """`@qd.func`, `@qd.func(requires_top_level=True)`: always inlined. Also callable in a kernel,
    `qd.func(f)(x)`, which inlines the Python function `f` there."""
    top = bool(options.get("requires_top_level", False))
    if fn is None:
        return lambda f: Func(f, requires_top_level=top)
    return Func(fn, requires_top_level=top)


class PyFunc(Func):
    """`@qd.pyfunc`: a `@qd.func` that Python may call too: in a kernel it is inlined like any
    func; outside one, the Python function runs as it is."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        return self.fn(*args, **kwargs)


def pyfunc(fn: Callable) -> PyFunc:
    """`@qd.pyfunc`."""
    return PyFunc(fn)


class RealFunc(Func):
    """`@qd.real_func`: a function with Quadrants' real-call semantics. Every parameter is
    annotated (checked here, as Quadrants does when it decorates), arguments are passed by value
    except a `qd.ref(dtype)` one, its loops run serially, and `return` may stand anywhere (in a
    loop, an `if`). qdlab lowers each call in its caller, so a recursive one is refused."""

    def __init__(self, fn: Callable) -> None:
        super().__init__(fn)
        params = list(inspect.signature(fn).parameters.values())
        if self.classfunc:
            params = params[1:]  # a method's `self`, as in Quadrants (a data-oriented object)
        for p in params:
            if p.annotation is inspect.Parameter.empty:
                raise QuadrantsSyntaxError(
                    "Quadrants kernels parameters must be type annotated: parameter "
                    f"`{p.name}` of @qd.real_func `{fn.__name__}` has none."
                )


def real_func(fn: Callable) -> RealFunc:
    """`@qd.real_func`."""
    return RealFunc(fn)


@dataclass(frozen=True)
class Ref:
    """`qd.ref(qd.f32)`: a @qd.real_func parameter that is the caller's local variable itself (an
    assignment or `+=` in the body changes the caller's variable)."""

    dtype: object


def ref(dtype: object) -> Ref:
    return Ref(dtype)


class Autodiff(Enum):
    """Which kernel a compile makes of a `@qd.kernel`: the function itself, its reverse-mode
    gradient (`kernel.grad`), its forward-mode one (under `qd.ad.FwdMode`), or the function
    checked under a validating tape."""

    NONE = "none"
    REVERSE = "reverse"
    FORWARD = "forward"
    VALIDATION = "validation"
    """The function itself, its reads and writes of fields with a gradient checked
    (`qd.ad.Tape(validation=True)`: `compiler/passes/validation.py`)."""

    def __bool__(self) -> bool:
        return self is not Autodiff.NONE

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def of(mode: bool | str) -> Autodiff:
        """The mode a kernel object keeps (False, True for the gradient, "forward",
        "validation")."""
        if mode in ("forward", "validation"):
            return Autodiff(mode)
        return Autodiff.REVERSE if mode else Autodiff.NONE


class KernelDef:
    """A `@qd.kernel` as the language sees it: the Python function it was made from and its name.
    `qdlab.Kernel`, which compiles and launches, derives from it."""

    fn: Callable
    name: str
    autodiff: bool
    """The reverse-mode gradient of the function rather than the function."""


class DeviceIntrinsic:
    """A GPU intrinsic of `qd.simt` (`qd.simt.block.sync`, `subgroup.shuffle`, `warp.ballot`...):
    qdlab compiles it for no arch yet, so a kernel that calls it is refused while compiling, with
    Quadrants' CPU words (`qd.block.sync is not supported for arch Arch.x64`), and so is a call
    from Python. `name` is how the message names it; `arch` gives the current arch's name."""

    def __init__(self, name: str, arch: Callable[[], str]) -> None:
        self.name = name
        self.arch = arch
        self.__name__ = self.__qualname__ = name.rsplit(".", 1)[-1]

    def unsupported(self, arch: str) -> str:
        if arch == "cpu":
            arch = "arm64" if platform.machine().lower() in ("arm64", "aarch64") else "x64"
        return f"{self.name} is not supported for arch Arch.{arch}"

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise QdCompileValueError(self.unsupported(self.arch()))

    def __repr__(self) -> str:
        return f"<GPU intrinsic {self.name}>"


class Builtin:
    """A function of the kernel language, compiled by the frontend (`qd.sqrt`,
    `qd.atomic_add`, ...)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.__name__ = self.__qualname__ = name  # as Quadrants' functions (pytest's ids read it)

    def __call__(self, *args: object, **kwargs: object) -> object:
        out = matrix.host_call(self.name, args) if not kwargs else NotImplemented
        if out is NotImplemented:
            raise RuntimeError(f"qd.{self.name}() can only be used inside a @qd.kernel or @qd.func")
        return out

    def __repr__(self) -> str:
        return f"qd.{self.name}"


MATH = [
    "sqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "exp",
    "log",
    "floor",
    "ceil",
    "round",
    "abs",
    "pow",
    "min",
    "max",
    "atan2",
    "asin",
    "acos",
    "rsqrt",
    "select",
    "clamp",
    "sign",
    "fract",
    "log2",
    "exp2",
    "isnan",
    "isinf",
    "mix",
]
_OTHER = [
    "ndrange",
    "grouped",
    "loop_config",
    "atomic_add",
    "atomic_sub",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_mul",
    "atomic_exchange",
    "atomic_cas",
    "random",
    "randn",
    "clock_counter",
    "volatile_load",
    "get_addr",
    "cast",
    "bit_cast",
    "raw_div",
    "raw_mod",
    "bit_shr",
    "svd",
    "polar_decompose",
    "sym_eig",
    "solve",
    "zero",
    "one",
    "graph_do_while",
    "block_local",
    "cache_read_only",
    "no_activate",
    "frexp",
    "stop_grad",
    "assume_in_range",
    "mesh_local",
    "mesh_patch_idx",
    "global_thread_idx",
    "eig",
    "make_spd",
]


class NdrangeBuiltin(Builtin):
    """`qd.ndrange`: a loop's index space in a kernel; in Python, an iterable of index tuples."""

    def __call__(self, *args: object, **kwargs: object) -> Ndrange:
        return Ndrange(*args, **kwargs)


class GroupedBuiltin(Builtin):
    """`qd.grouped`: in a kernel, a loop whose index is a vector; at compile time
    (`qd.static(qd.grouped(qd.ndrange(2, 3)))`), the index vectors of an ndrange."""

    def __call__(self, *args: object, **kwargs: object) -> object:
        if len(args) == 1 and isinstance(args[0], Ndrange) and not kwargs:
            return [Vector(list(index)) for index in args[0]]
        return super().__call__(*args, **kwargs)


BUILTINS: dict[str, Builtin] = {
    n: NdrangeBuiltin(n) if n == "ndrange" else GroupedBuiltin(n) if n == "grouped" else Builtin(n)
    for n in MATH + _OTHER
}


@contextlib.contextmanager
def graph_parallel_context() -> Iterator[None]:
    """`with qd.graph.parallel_context():` in a `graph=True` kernel: a fork/join region of
    `with qd.graph.parallel():` sections, which the program guarantees independent. qdlab runs the
    sections one after another (as Quadrants does off CUDA); outside a kernel it does nothing."""
    yield


@contextlib.contextmanager
def graph_parallel() -> Iterator[None]:
    """`with qd.graph.parallel():` one section of a `qd.graph.parallel_context()` region; outside
    a kernel it does nothing."""
    yield


@contextlib.contextmanager
def checkpoint(cp_id: object, yield_on: object) -> Iterator[None]:
    """`with qd.checkpoint(cp_id, yield_on=flag):` in a `@qd.kernel(graph=True, checkpoints=True)`
    kernel: a stage the launch pauses after when its body leaves the 0-d i32 ndarray `flag`
    non-zero, and that `kernel.resume(..., from_checkpoint=cp_id)` starts from. Outside a kernel it
    does nothing."""
    del cp_id, yield_on
    yield


class graph:  # lowercase, as it mirrors the `qd.graph` namespace
    """`qd.graph.do_while(c)`: `while qd.graph.do_while(c):` runs its body, then again while the
    0-d i32 ndarray `c` is not zero. `qd.graph.parallel_context()` / `qd.graph.parallel()`: a region
    of independent sections (run one after another in qdlab)."""

    do_while = BUILTINS["graph_do_while"]
    parallel_context = staticmethod(graph_parallel_context)
    parallel = staticmethod(graph_parallel)


class GraphStatus:
    """What a launch of a `checkpoints=True` kernel returns: `yielded` (a checkpoint's `yield_on`
    flag was non-zero) and `checkpoint` (that checkpoint's label, as given: an int or the IntEnum
    member; None when it did not yield)."""

    __slots__ = ("checkpoint", "yielded")

    def __init__(self, yielded: bool, checkpoint: object = None) -> None:
        self.yielded = yielded
        self.checkpoint = checkpoint

    def __repr__(self) -> str:
        if self.yielded:
            return f"GraphStatus(yielded=True, checkpoint={self.checkpoint!r})"
        return "GraphStatus(yielded=False)"


def static(value: object, *rest: object) -> object:
    """Compile-time evaluation marker: `if qd.static(cond):`, `for i in qd.static(range(3)):`."""
    return (value, *rest) if rest else value


def qd_int(x: Any) -> int:
    """`qd.lang.impl.qd_int(x)`: `int(x)`, in a kernel too (a cast to `default_ip`)."""
    return int(x)


def qd_float(x: Any) -> float:
    """`qd.lang.impl.qd_float(x)`: `float(x)`, in a kernel too (a cast to `default_fp`)."""
    return float(x)


def qd_bool(x: object) -> bool:
    """`qd.lang.impl.qd_bool(x)`: `bool(x)`, in a kernel too."""
    return bool(x)


def static_print(*args: object, **kwargs: Any) -> None:
    """`qd.static_print(...)`: `print` while the kernel compiles (once per compile, no runtime
    cost); a runtime value prints as what it is (`Value(x: f32)`), not its value."""
    print(*args, **kwargs)


def rescale_index(a: object, b: object, index: object) -> object:
    """`qd.rescale_index(a, b, I)`, in a kernel: the index `I` of field `a` scaled to field `b`'s
    shape, axis by axis (`I[k] // (a.shape[k] // b.shape[k])` to a coarser field,
    `I[k] * (b.shape[k] // a.shape[k])` to a finer one)."""
    raise RuntimeError("qd.rescale_index() can only be used inside a @qd.kernel or @qd.func")


def loop_unique(val: object, covers: object = None) -> object:
    """`quadrants.lang.misc.loop_unique(v, covers=...)`: a hint that `v` differs between the
    iterations of the loop (Quadrants may drop atomics on the fields it covers); `v` itself."""
    return val


def _kernel_only(name: str) -> RuntimeError:
    return RuntimeError(f"qd.{name}() can only be used inside a @qd.kernel or @qd.func")


def is_active(node: object, indices: object) -> object:
    """`qd.is_active(snode, I)`, in a kernel: whether cell `I` of a pointer or bitmasked SNode is
    active (1 or 0)."""
    raise _kernel_only("is_active")


def activate(node: object, indices: object) -> None:
    """`qd.activate(snode, I)`, in a kernel: activate cell `I` (and the cells above it)."""
    raise _kernel_only("activate")


def deactivate(node: object, indices: object) -> None:
    """`qd.deactivate(snode, I)`, in a kernel: deactivate cell `I`, zero-filling what it holds."""
    raise _kernel_only("deactivate")


def length(node: object, indices: object) -> object:
    """`qd.length(dynamic_snode, I)`, in a kernel: the length of the dynamic cell under `I`."""
    raise _kernel_only("length")


def append(node: object, indices: object, val: object) -> object:
    """`qd.append(dynamic_snode, I, v)`, in a kernel: `v` appended to the dynamic cell under
    `I`; its position (the old length)."""
    raise _kernel_only("append")


def static_assert(cond: object, msg: str | None = None) -> None:
    """`qd.static_assert(cond, msg)`: a compile-time check inside a kernel; outside one, a plain
    assertion."""
    assert cond, msg


@dataclass(frozen=True)
class ArrayAnnotation:
    """`qd.types.NDArray[qd.f32, 1]` / `qd.types.ndarray(dtype=, ndim=, ...)`; None fields are taken
    from the argument. `dtype` may be a vector or matrix type (`NDArray[qd.math.vec3, 1]`)."""

    dtype: DType | MatrixType | None = None
    ndim: int | None = None
    needs_grad: bool | None = None
    boundary: str = "unsafe"

    def __or__(self, other: object) -> OptionalArray:
        if other is not None:
            return NotImplemented
        return OptionalArray(self)

    __ror__ = __or__


@dataclass(frozen=True)
class OptionalArray:
    """`qd.types.NDArray[...] | None`: an ndarray parameter that may be given None, tested in the
    kernel by `qd.static(a is None)` as Quadrants allows."""

    array: ArrayAnnotation


class _AnnotationClass(type):
    """`isinstance(ann, qd.types.NDArray)`: true of every ndarray annotation, as in Quadrants (where
    the annotations are instances of that class)."""

    def __instancecheck__(cls, x: object) -> bool:
        return isinstance(x, ArrayAnnotation)


class NDArray(metaclass=_AnnotationClass):
    """Annotation for ndarray parameters: `NDArray[qd.f32, 2]`, `NDArray[qd.f32]`, or bare
    `NDArray`."""

    def __class_getitem__(cls, item: object) -> ArrayAnnotation:
        items = item if isinstance(item, tuple) else (item,)
        dtype = items[0] if items else None
        ndim = items[1] if len(items) > 1 else None
        return ArrayAnnotation(dtype, ndim)  # type: ignore[arg-type]


def ndarray_type(
    dtype: DType | None = None,
    ndim: int | None = None,
    needs_grad: bool | None = None,
    boundary: str = "unsafe",
    element_dim: int | None = None,
    element_shape: tuple[int, ...] | None = None,
) -> ArrayAnnotation:
    if boundary not in ("unsafe", "clamp"):
        raise ValueError(f"boundary must be 'unsafe' or 'clamp', not {boundary!r}")
    if element_dim is not None or element_shape is not None:
        dtype = element_type(dtype, element_dim, element_shape)  # type: ignore[assignment]
    return ArrayAnnotation(dtype, ndim, needs_grad, boundary)


def element_type(
    dtype: object, element_dim: int | None, element_shape: tuple[int, ...] | None
) -> object:
    """`qd.types.ndarray(dtype, element_dim=, element_shape=)`: the element type the two (older)
    arguments describe, as Quadrants cooks them: 0 (or shape `()`) a scalar, 1 a vector, 2 a
    matrix, of `dtype` and of the sizes `element_shape` gives (any size when only the dim is
    given)."""
    if isinstance(dtype, MatrixType):
        raise TypeError(
            f'Cannot specifiy matrix dtype "{dtype}" and element shape or dim at the same time.'
        )
    if element_dim == 0 or (element_shape is not None and len(element_shape) == 0):
        return dtype
    if element_dim is not None:
        if element_dim < 0 or element_dim > 2:
            raise ValueError(
                "Only scalars, vectors, and matrices are allowed as elements of qd.types.ndarray()"
            )
        if element_shape is not None and len(element_shape) != element_dim:
            raise ValueError(
                "Both element_shape and element_dim are specified, but shape doesn't match "
                f"specified dim: {len(element_shape)}!={element_dim}"
            )
        if element_shape is None:
            return (
                matrix.vector(None, dtype) if element_dim == 1 else matrix.matrix(None, None, dtype)
            )
    assert element_shape is not None
    if len(element_shape) > 2:
        raise ValueError(
            "Only scalars, vectors, and matrices are allowed as elements of qd.types.ndarray()"
        )
    if len(element_shape) == 1:
        return matrix.vector(element_shape[0], dtype)
    return matrix.matrix(element_shape[0], element_shape[1], dtype)


class NdarrayAnnotations:
    """`qd.types.ndarray`: called, `qd.types.ndarray(dtype=, ndim=, ...)`; indexed, as a dataclass
    member's annotation often is, `qd.types.ndarray[qd.f32, 2]`."""

    def __call__(
        self,
        dtype: DType | None = None,
        ndim: int | None = None,
        needs_grad: bool | None = None,
        boundary: str = "unsafe",
        element_dim: int | None = None,
        element_shape: tuple[int, ...] | None = None,
        field_dim: object = None,
    ) -> ArrayAnnotation:
        if field_dim is not None:
            raise ValueError(
                "The field_dim argument for ndarray type is already deprecated. Please use ndim "
                "instead."
            )
        return ndarray_type(dtype, ndim, needs_grad, boundary, element_dim, element_shape)

    def __getitem__(self, item: object) -> ArrayAnnotation:
        return NDArray[item]

    def __instancecheck__(self, x: object) -> bool:
        """`isinstance(ann, qd.types.ndarray)`, as with `qd.types.NDArray`."""
        return isinstance(x, ArrayAnnotation)


class Template:
    """Annotation for a compile-time parameter: its value is baked into the kernel, one compile per
    value."""


def template() -> type[Template]:
    return Template


class sparse_matrix_builder:  # lowercase, as Quadrants spells the annotation
    """`qd.types.sparse_matrix_builder()`: a kernel parameter that takes a
    `qd.linalg.SparseMatrixBuilder`; the kernel adds triplets with `A[i, j] += v` (or `-= v`)."""


class TripletSink:
    """What a kernel's `A[i, j] += v` / `A[i, j] -= v` appends a triplet to when `A` is one (a
    `qd.linalg.SparseMatrixBuilder`): the frontend lowers it to the @qd.func call
    `A.insert_triplet(i, j, v)` (`-v` for `-=`), a method the subclass defines."""


class types:  # lowercase, as it mirrors the `qd.types` namespace
    NDArray = NDArray
    ndarray = NdarrayAnnotations()
    Template = Template
    template = staticmethod(template)
    sparse_matrix_builder = sparse_matrix_builder
    vector = staticmethod(matrix.vector)
    matrix = staticmethod(matrix.matrix)
    struct: Callable  # `qd.types.struct(...)`, set by qdlab (host/struct_types.py)


@contextlib.contextmanager
def stream_parallel() -> Iterator[None]:
    """Marks top-level loops that may run concurrently; inside a kernel this forces whole-kernel
    compilation."""
    yield
