"""The kernel language's built-in functions, as tables: what a call lowers to.

`BUILTINS` maps the name of a `qd.*` built-in (`qd.sqrt`, `qd.atomic_add`, `qd.math.popcnt`, ...)
to its entry; `PYTHON_CALLS` does the same for the Python functions a kernel may call (`print`,
`min`, `len`, `qd.static`, ...), found by identity. `Calls.lower_call` looks the callee up and
calls the entry; nothing is found by building a name at run time (the vector methods' table is
`vector_ops.METHODS`).

An entry's `arity` says what its lowering takes: a count `n` (the call's `n` positional arguments,
lowered; another count is an error), `ANY` (all of them, lowered) or `NODE` (the call's syntax
tree, for a built-in that reads a target, keywords or a dtype itself). Adding a built-in is one
`@builtin(...)` function here (and its `qd.*` name in `qdlab.core.language` or the module that
exports it).
"""

from __future__ import annotations

import ast
import builtins as py
import math
from collections.abc import Callable, KeysView, ValuesView
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Final, TypeVar, cast

import numpy as np

from qdlab.core import decompositions, float_parts, sifakis_svd
from qdlab.core import language as lang

from ...core.errors import QdError, QdTypeError, QuadrantsCompilationError
from ...core.types import DTYPES, DType, f32, i32, i64, u1, u64
from .. import ir
from .scope import GradOf, Local, array_type, dtype_of, is_number
from .sparse import is_snode
from .vectors import ElementRef, Vec, VecLocal

if TYPE_CHECKING:
    from .visitor import Frontend

ANY: Final = -1
"""Arity of a built-in that takes any number of positional arguments (each lowered)."""
NODE: Final = -2
"""Arity of a built-in that reads the call's syntax tree itself."""


class Typing(Enum):
    """How a math built-in of one argument types its result (`Calls.unary` applies it)."""

    SAME = "same"
    """The argument's type (`abs`, `sign`)."""
    FLOAT = "float"
    """A float function: an integer argument is converted to `default_fp` first (`sqrt`)."""
    REAL = "real"
    """A float function of real inputs only (`sin`): an integer value is a QuadrantsTypeError, as
    in Quadrants; a Python integer is converted to `default_fp`."""
    ROUNDING = "rounding"
    """`floor`, `ceil`, `round`: a float keeps its type; an integer value is a QuadrantsTypeError,
    as in Quadrants, and a Python integer is its own result."""
    PREDICATE = "predicate"
    """`isnan`, `isinf`: a u1, false for an integer."""


@dataclass(frozen=True)
class Entry:
    """One built-in: its name, its arity (a count, `ANY` or `NODE`), its lowering and, for a math
    function of one argument, its typing rule."""

    name: str
    arity: int
    lower: Callable[..., object]
    typing: Typing | None = None

    def __call__(self, fe: Frontend, node: ast.Call) -> object:
        if self.arity == NODE:
            return self.lower(fe, node)
        return self.lower(fe, *fe.call_args(node, None if self.arity == ANY else self.arity))


Lower = TypeVar("Lower", bound=Callable[..., object])
"""A lowering function (the decorators give it back as it is)."""
BUILTINS: dict[str, Entry] = {}
"""`qd.*` built-ins by name."""
PYTHON_CALLS: dict[int, tuple[object, Entry]] = {}
"""Python functions a kernel may call, by the `id` of the function (Python's own live as long as
the process): (the function, its entry)."""


def builtin(*names: str, arity: int, typing: Typing | None = None) -> Callable[[Lower], Lower]:
    """Registers the decorated lowering for each `qd.<name>`."""

    def register(fn: Lower) -> Lower:
        for name in names:
            assert name not in BUILTINS, name
            BUILTINS[name] = Entry(name, arity, fn, typing)
        return fn

    return register


def unary_typing(fn: str) -> Typing:
    """The typing rule of unary op `fn`: its built-in's, else `SAME` (`neg`, `bitnot`)."""
    entry = BUILTINS.get(fn)
    return entry.typing if entry is not None and entry.typing is not None else Typing.SAME


def python_call(*funcs: object, arity: int) -> Callable[[Lower], Lower]:
    """Registers the decorated lowering for calls of each of `funcs`."""

    def register(fn: Lower) -> Lower:
        for f in funcs:
            PYTHON_CALLS[id(f)] = (f, Entry(getattr(f, "__name__", repr(f)), arity, fn))
        return fn

    return register


def python_entry(callee: object) -> Entry | None:
    found = PYTHON_CALLS.get(id(callee))
    return found[1] if found is not None and found[0] is callee else None


# -- math ------------------------------------------------------------------------------------------
FLOAT_FUNCTIONS = ("sqrt", "exp", "log", "rsqrt")
REAL_FUNCTIONS = ("sin", "cos", "tan", "tanh", "asin", "acos")
UNARY = {
    **dict.fromkeys(FLOAT_FUNCTIONS, Typing.FLOAT),
    **dict.fromkeys(REAL_FUNCTIONS, Typing.REAL),
    "log2": Typing.FLOAT,
    "exp2": Typing.FLOAT,
    "fract": Typing.FLOAT,
    "abs": Typing.SAME,
    "sign": Typing.SAME,
    "isnan": Typing.PREDICATE,
    "isinf": Typing.PREDICATE,
}
"""The math functions of one argument (`qd.sqrt(x)`), each with its typing rule."""


def _unary(name: str) -> Callable[..., object]:
    return lambda fe, x: fe.unary(name, x)


for _name, _typing in UNARY.items():
    builtin(_name, arity=1, typing=_typing)(_unary(_name))


def _rounding(fn: str) -> Callable[..., object]:
    def lower(fe: Frontend, node: ast.Call) -> object:
        """`qd.floor(x)`, and `qd.floor(x, qd.i32)` with a result dtype."""
        if len(node.args) == 2:
            x, dtype = fe.call_args(node, 2)
            if not isinstance(dtype, DType):
                raise fe.error(f"qd.{fn}(x, dtype) needs a dtype such as qd.i32.", QdTypeError)
            return fe.cast_all(fe.unary(fn, x), dtype)
        return fe.unary(fn, fe.call_args(node, 1)[0])

    return lower


for _name in ("floor", "ceil", "round"):
    builtin(_name, arity=NODE, typing=Typing.ROUNDING)(_rounding(_name))


def _bit_count(fn: str) -> Callable[..., object]:
    def lower(fe: Frontend, x: object) -> object:
        """`qd.math.popcnt/clz/ffs(x)`: an i32 count of the bits of an integer; of each entry of
        a vector or matrix."""
        if fe.is_vec(x):
            return fe.vmap(lambda e: lower(fe, e), fe.vec_of(x))
        v = fe.value(x)
        if not dtype_of(v).is_int:
            raise fe.error(
                f"'{fn}' takes integral inputs only, however '{v.type}' is provided.", QdTypeError
            )
        return fe.emit(ir.Unary, [v], i32, fn=fn)

    return lower


for _name in ("popcnt", "clz", "ffs"):
    builtin(_name, arity=1)(_bit_count(_name))


@builtin("mix", arity=3)
def lower_mix(fe: Frontend, x: object, y: object, a: object) -> object:
    return fe.binop("add", fe.binop("mul", x, fe.binop("sub", 1.0, a)), fe.binop("mul", y, a))


@builtin("min", arity=ANY)
def lower_min(fe: Frontend, *xs: object) -> object:
    return fe.reduce2("min", list(xs))


@builtin("max", arity=ANY)
def lower_max(fe: Frontend, *xs: object) -> object:
    return fe.reduce2("max", list(xs))


def _binary(op: str) -> Callable[..., object]:
    return lambda fe, x, y: fe.binop(op, x, y)


for _name, _op in (
    ("pow", "pow"),
    ("atan2", "atan2"),
    ("add", "add"),
    ("raw_div", "rawdiv"),
    ("raw_mod", "rawmod"),
):
    builtin(_name, arity=2)(_binary(_op))


@builtin("logical_not", arity=1)
def lower_logical_not(fe: Frontend, x: object) -> object:
    if is_number(x):
        return int(not x)
    return fe.cast(fe.emit(ir.Cmp, [fe.truth(x), fe.const(0, u1)], u1, pred="eq"), i32)


@builtin("bit_shr", arity=2)
def lower_bit_shr(fe: Frontend, x: object, n: object) -> object:
    """A logical shift right: the bits of a signed value shift as if it were unsigned."""
    v = fe.value(x)
    t = dtype_of(v)
    if not t.is_int:
        raise fe.error(f"qd.bit_shr needs integer operands, not {t}.", QdTypeError)
    unsigned = DTYPES[f"u{t.bits}"] if t.bits > 1 else t
    shifted = fe.binop("shr", fe.cast(v, unsigned), n)
    return fe.cast(fe.value(shifted), t)


@builtin("clamp", arity=3)
def lower_clamp(fe: Frontend, x: object, lo: object, hi: object) -> object:
    return fe.binop("min", fe.binop("max", x, lo), hi)


@builtin("select", arity=3)
def lower_select(fe: Frontend, c: object, a: object, b: object) -> object:
    if fe.is_vec(c) or fe.is_vec(a) or fe.is_vec(b):
        return fe.vmap(fe.select, c, a, b)
    return fe.select(c, a, b)


@builtin("cast", arity=2)
def lower_cast(fe: Frontend, x: object, t: object) -> object:
    if t in (int, float, bool):  # as in Quadrants: the default integer / float type, u1
        t = {int: fe.default_ip, float: fe.default_fp, bool: u1}[t]
    if not isinstance(t, DType):
        raise fe.error("qd.cast(x, dtype) needs a dtype such as qd.i32.", QdTypeError)
    return fe.cast_all(x, t)


@builtin("bit_cast", arity=2)
def lower_bit_cast(fe: Frontend, x: object, t: object) -> object:
    v = fe.value(x)
    if not isinstance(t, DType) or t.bits != dtype_of(v).bits:
        raise fe.error("qd.bit_cast needs a dtype of the same width.", QdTypeError)
    return fe.emit(ir.Cast, [v], t, bitcast=True)


@builtin("zero", arity=1)
def lower_zero(fe: Frontend, x: object) -> object:
    """`qd.zero(x)`: the reductions' identity over field elements, of `x`'s type."""
    return like(fe, x, 0)


@builtin("one", arity=1)
def lower_one(fe: Frontend, x: object) -> object:
    return like(fe, x, 1)


def like(fe: Frontend, x: object, k: int) -> object:
    if fe.is_vec(x):
        return fe.vmap(lambda e: fe.const(k, dtype_of(fe.value(e))), fe.vec_of(x))
    return fe.const(k, dtype_of(fe.value(x)))


@builtin("frexp", arity=1)
def lower_frexp(fe: Frontend, x: object) -> object:
    """`m, e = qd.frexp(x)`: `x == m * 2**e`, `0.5 <= |m| < 1`, m of x's float type (an integer is
    converted to `default_fp` first), e an i32; as `np.frexp`."""
    if fe.is_vec(x):
        raise fe.error("qd.frexp takes a scalar; call it on each entry of a vector.", QdTypeError)
    v = fe.value(x)
    t = dtype_of(v)
    if not t.is_float:
        v, t = fe.cast(v, fe.default_fp), fe.default_fp
    wide = t if t.bits in (32, 64) else f32  # an f16 goes through f32: the same parts
    it = DTYPES[f"i{wide.bits}"]
    m, e = cast(
        tuple,
        fe.inline_call(float_parts.frexp, [fe.cast(v, wide), wide, wide.bits, it], {}, "qd.frexp"),
    )
    return (fe.cast(fe.value(m), t) if wide is not t else m), e


# -- effects ---------------------------------------------------------------------------------------
ATOMICS = {
    "atomic_add": "add",
    "atomic_sub": "sub",
    "atomic_min": "min",
    "atomic_max": "max",
    "atomic_and": "and",
    "atomic_or": "or",
    "atomic_xor": "xor",
    "atomic_mul": "mul",
    "atomic_exchange": "xchg",
}


def _atomic(op: str) -> Callable[..., object]:
    def lower(fe: Frontend, node: ast.Call) -> object:
        if len(node.args) != 2:
            raise fe.error("an atomic takes (target, value).", QdTypeError)
        target, value_node = node.args
        place = fe.place(target)
        if place is None:
            raise fe.error(not_writable(op))
        return fe.update(place, op, fe.visit(value_node), True, f"`{ast.unparse(target)}`")

    return lower


for _name, _op in ATOMICS.items():
    builtin(_name, arity=NODE)(_atomic(_op))


def not_writable(op: str) -> str:
    name = {"xchg": "atomic_exchange"}.get(op, f"atomic_{op}")
    return (
        f"cannot use a non-writable target as the first operand of '{name}': the target of "
        "an atomic must be an array element or a local variable, e.g. "
        "`qd.atomic_add(a[i], 1)`."
    )


@builtin("atomic_cas", arity=NODE)
def lower_atomic_cas(fe: Frontend, node: ast.Call) -> object:
    """`qd.atomic_cas(s, expected, desired)`: the old value; `s` becomes `desired` when it held
    `expected`, in one atomic step on an array element (a scalar one), and as a load, a compare
    and a store on a local (the reference demotes a local's CAS to exactly this). Integers only,
    in Quadrants' words."""
    if len(node.args) != 3:
        raise fe.error("qd.atomic_cas takes (dest, expected, desired).", QdTypeError)
    target = node.args[0]
    local = fe.find_local(target.id) if isinstance(target, ast.Name) else None
    if isinstance(local, Local) and isinstance(target, ast.Name):
        t = dtype_of(local.ref)
        expected, desired = cas_operands(fe, node, t)
        old = fe.emit(ir.LocalLoad, [local.ref], t, target.id)
        hit = fe.emit(ir.Cmp, [old, expected], u1, pred="eq")
        fe.emit(ir.LocalStore, [local.ref, fe.emit(ir.Select, [hit, desired, old], t)])
        return old
    ref, items = fe.place(target) or (None, None)
    accesses, shape = (
        fe.element_access(ref, items)
        if isinstance(ref, ElementRef) and not isinstance(items, str)
        else ([], None)
    )
    if not isinstance(ref, ElementRef) or shape != ():
        raise fe.error(
            "qd.atomic_cas(dest, expected, desired) takes a scalar local variable or a scalar "
            "array element as its dest (`qd.atomic_cas(a[i], 0, 1)`).",
            QdTypeError,
        )
    t = dtype_of(ref.array)
    expected, desired = cas_operands(fe, node, t)
    if getattr(fe.field_of(ref.array), "_quant", None):
        raise fe.error("qd.atomic_cas does not take a quantised field's element.", QdTypeError)
    return fe.emit(ir.AtomicCas, [ref.array, *accesses[0], expected, desired], t, "old")


def cas_operands(fe: Frontend, node: ast.Call, t: DType) -> tuple[ir.Value, ir.Value]:
    """`qd.atomic_cas`'s expected and desired values as the dest's type `t`, integers only."""
    values = [fe.value(fe.visit(a), t) for a in node.args[1:]]
    if not t.is_int or not dtype_of(values[1]).is_int:
        raise fe.error(
            f"'atomic_cas' requires integer operands, got dest '*{t}' and val "
            f"'{dtype_of(values[1])}'.",
            QdTypeError,
        )
    return fe.cast(values[0], t), fe.cast(values[1], t)


@builtin("random", arity=NODE)
def lower_random(fe: Frontend, node: ast.Call) -> ir.Value:
    dtype = fe.visit(node.args[0]) if node.args else fe.default_fp
    if node.keywords:
        dtype = fe.visit(node.keywords[0].value)
    if not isinstance(dtype, DType):
        raise fe.error("qd.random(dtype) needs a dtype such as qd.f32.", QdTypeError)
    fe.random_sites += 1
    return fe.emit(ir.Random, [], dtype, site=fe.random_sites)


@builtin("clock_counter", arity=0)
def lower_clock_counter(fe: Frontend) -> ir.Value:
    """Raw cycles or ticks of the processor's counter (not nanoseconds), as Quadrants gives on
    the CPU (`llvm.readcyclecounter`) and CUDA (`clock64`)."""
    return fe.emit(ir.Clock, [], i64)


@builtin("randn", arity=NODE)
def lower_randn(fe: Frontend, node: ast.Call) -> object:
    """A standard normal draw, by Box-Muller from two uniform draws in [0, 1)."""
    u, v = lower_random(fe, node), lower_random(fe, node)
    t = dtype_of(u)
    if not t.is_float:
        raise fe.error(f"qd.randn(dtype) needs a float dtype, not {t}.", QdTypeError)
    log = fe.unary("log", fe.binop("sub", fe.const(1.0, t), u))
    r = fe.unary("sqrt", fe.binop("mul", fe.const(-2.0, t), log))
    return fe.binop("mul", r, fe.unary("cos", fe.binop("mul", fe.const(2 * math.pi, t), v)))


@builtin("volatile_load", arity=NODE)
def lower_volatile_load(fe: Frontend, node: ast.Call) -> object:
    target = node.args[0] if len(node.args) == 1 else None
    local = fe.find_local(target.id) if isinstance(target, ast.Name) else None
    if isinstance(local, (Local, VecLocal)):
        raise fe.error(
            "qd.volatile_load() requires a global lvalue (field / ndarray subscript); "
            "function-scope local arrays are not visible to other threads.",
            QdTypeError,
        )
    if len(node.args) != 1 or not isinstance(node.args[0], ast.Subscript):
        raise fe.volatile_target_error(node.args[0] if node.args else None)
    ref, items = fe.place(node.args[0]) or (None, None)
    if not isinstance(ref, ElementRef) or isinstance(items, str):
        raise fe.volatile_target_error(node.args[0])
    accesses, shape = fe.element_access(ref, items)  # a vector element: each entry, volatile
    dtype = array_type(ref.array).dtype
    loads = [fe.emit(ir.VolatileLoad, [ref.array, *idx], dtype, grad=ref.grad) for idx in accesses]
    return loads[0] if not shape else Vec(tuple(loads), shape)


@builtin("get_addr", arity=NODE)
def lower_get_addr(fe: Frontend, node: ast.Call) -> object:
    """`qd.get_addr(x, [i, j])`: the address of a field's element, as a u64 (of its first entry
    for a vector or matrix field)."""
    if len(node.args) != 2 or node.keywords:
        raise fe.error("qd.get_addr(f, indices) takes a field and its element's indices.")
    target = ast.copy_location(ast.Subscript(node.args[0], node.args[1], ast.Load()), node)
    array, indices = fe.subscript_target(target)
    base, grad = GradOf.unpack(array)
    f = fe.field_of(base)
    if f is None:
        raise fe.error(
            "qd.get_addr(f, indices) takes a field (an ndarray's address is its data "
            "pointer's business).",
            QdTypeError,
        )
    if getattr(f.primal or f, "blocked", False):
        raise fe.error(
            "qd.get_addr on a field whose dense layout splits an axis over levels with "
            "another between: qdlab stores it in axis order, so no address of it would be "
            "the reference's."
        )
    if fe.config.arch == "cuda":
        raise fe.error("qd.get_addr is supported on the CPU in qdlab.")
    zeros = [fe.const(0, i32) for _ in array_type(base).element]
    return fe.emit(ir.Addr, [base, *indices, *zeros], u64, grad=grad)


@builtin("loop_config", arity=NODE)
def lower_loop_config(fe: Frontend, node: ast.Call) -> None:
    for kw in node.keywords:
        v = fe.resolve_static(kw.value)
        if kw.arg == "serialize":
            fe.serialize_next = bool(v)
        elif kw.arg == "name":
            fe.loop_name = str(v)
        elif kw.arg == "block_dim":
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1024:
                raise fe.error("qd.loop_config(block_dim=...) needs an integer from 1 to 1024.")
            fe.block_dim = v
        elif kw.arg not in ("parallelize", "block_dim_adaptive", "bit_vectorize"):
            raise fe.error(f"qd.loop_config has no option `{kw.arg}`.")


def _hint(name: str) -> Callable[..., object]:
    def lower(fe: Frontend, node: ast.Call) -> None:
        """`qd.block_local(a, b)`, `qd.cache_read_only(...)`, `qd.mesh_local(...)`: Quadrants'
        hints to cache fields in faster storage; qdlab has none, and a hint changes no value, so
        it checks that each argument is a field and does nothing."""
        fields_of(fe, node, name)

    return lower


def fields_of(fe: Frontend, node: ast.Call, name: str) -> list[ir.Value]:
    """The arrays a call's arguments name (`qd.stop_grad(x)`, the caching hints); an argument that
    is no field is a QuadrantsTypeError."""
    if node.keywords:
        raise fe.error(f"qd.{name} takes fields, and no keyword arguments.", QdTypeError)
    out = []
    for a in node.args:
        base = GradOf.unpack(fe.visit(a))[0]
        if not (isinstance(base, ir.Value) and ir.is_array(base)):
            raise fe.error(f"qd.{name} takes fields.", QdTypeError)
        out.append(base)
    return out


for _name in ("block_local", "cache_read_only", "mesh_local"):
    builtin(_name, arity=NODE)(_hint(_name))


@builtin("stop_grad", arity=NODE)
def lower_stop_grad(fe: Frontend, node: ast.Call) -> None:
    """`qd.stop_grad(x)`: in the block it is called in (and the blocks nested in it, before and
    after the call), the reverse-mode gradient does not flow into field `x` through its reads.
    The frontend marks those loads `stop_grad` once the kernel is lowered (`mark_stopped`)."""
    fe.stopped_grads.setdefault(fe.block, set()).update(fields_of(fe, node, "stop_grad"))


@builtin("assume_in_range", arity=4)
def lower_assume_in_range(
    fe: Frontend, val: object, base: object, low: object, high: object
) -> object:
    """`qd.assume_in_range(val, base, low, high)`: Quadrants' hint that `val` lies in
    `[base + low, base + high)`, for its block-local caching; the value itself, untouched."""
    return val


@builtin("mesh_patch_idx", arity=0)
def lower_mesh_patch_idx(fe: Frontend) -> object:
    raise fe.error(
        "qd.mesh_patch_idx() is only valid within mesh-for loops.", QuadrantsCompilationError
    )


@builtin("global_thread_idx", arity=0)
def lower_global_thread_idx(fe: Frontend) -> object:
    raise fe.error(
        "qd.global_thread_idx() (the id of the thread running this iteration) is not supported in "
        "qdlab: a loop's work is split into chunks, not given to numbered threads.",
        QuadrantsCompilationError,
    )


@builtin("no_activate", arity=NODE)
def lower_no_activate(fe: Frontend, node: ast.Call) -> None:
    """`qd.no_activate(snode, ...)`: Quadrants' promise that this kernel's writes under those
    SNodes land in active cells only, so it may skip activating; qdlab's activation of an active
    cell changes nothing, so it checks that each argument is an SNode and does nothing."""
    for a in node.args:
        if not is_snode(fe.resolve_static(a)):
            raise fe.error("qd.no_activate takes SNodes (`qd.root.dynamic(...)`).", QdTypeError)


@builtin("graph_do_while", arity=NODE)
def lower_graph_do_while(fe: Frontend, node: ast.Call) -> None:
    raise fe.error(
        "qd.graph.do_while(c) is only the test of a `while`: `while qd.graph.do_while(c):`."
    )


# -- decompositions (@qd.funcs of qdlab.core.decompositions) ---------------------------------------
SYM_EIG_SIZES = "Symmetric eigen solver currently supports sizes up to 6×6."
SIZES_MESSAGE = {
    "svd": "SVD only supports 2×2 and 3×3 matrices.",
    "polar_decompose": "Polar decomposition only supports 2×2 and 3×3 matrices.",
    "sym_eig": SYM_EIG_SIZES,
    "eig": "Eigen solver only supports 2×2 matrices.",
    "make_spd": SYM_EIG_SIZES,
}
"""A decomposition's error for a matrix of a size it does not take, in Quadrants' words."""
SIFAKIS = ("svd", "polar_decompose")
"""The decompositions whose 3x3 case is McAdams/Sifakis' SVD, which Quadrants runs in f32 or f64."""


def _decomposition(name: str, sizes: tuple[int, ...]) -> Callable[..., object]:
    def lower(fe: Frontend, node: ast.Call) -> object:
        args = fe.call_args(node)
        kw = {k.arg: fe.visit(k.value) for k in node.keywords}
        if not args:
            raise fe.error(f"qd.{name}(A, dt=None) needs a matrix.", QdTypeError)
        a = fe.vec_of(args[0])
        dt = args[1] if len(args) > 1 else kw.get("dt")
        dt = fe.type_dtype(dt) if dt is not None else fe.default_fp
        x = args[0]
        element = array_type(x).element if isinstance(x, ir.Value) and ir.is_array(x) else ()
        n = a.n if a is not None else element[0] if element else None  # a matrix field's too
        if isinstance(n, int) and n not in sizes:  # as Quadrants words it (a matrix field too)
            raise fe.error(f"{SIZES_MESSAGE[name]} (qd.{name} got {n}x{n}).", QdTypeError)
        if a is None or a.ndim != 2 or a.n != a.m:
            raise fe.error(
                f"qd.{name} takes a square matrix of size {' or '.join(map(str, sizes))}, not "
                f"{a or args[0]!r}.",
                QdTypeError,
            )
        if name in SIFAKIS and a.n == 3 and dt not in sifakis_svd.SIFAKIS_SWEEPS:
            raise fe.error(
                f"qd.{name} of a 3x3 matrix computes in f32 or f64, not {dt}.", QdTypeError
            )
        return fe.inline_call(getattr(decompositions, name), [a, dt], {}, f"qd.{name}")

    return lower


for _name, _sizes in (
    ("svd", (2, 3)),
    ("polar_decompose", (2, 3)),
    ("sym_eig", (1, 2, 3, 4, 5, 6)),
    ("eig", (2,)),
    ("make_spd", (1, 2, 3, 4, 5, 6)),
):
    builtin(_name, arity=NODE)(_decomposition(_name, _sizes))


@builtin("solve", arity=NODE)
def lower_solve(fe: Frontend, node: ast.Call) -> object:
    """`qd.solve(A, b, dt=None)`: x with A x = b for a 2x2 or 3x3 A, in dt (default_fp)."""
    args = fe.call_args(node)
    kw = {k.arg: fe.visit(k.value) for k in node.keywords}
    if len(args) < 2:
        raise fe.error("qd.solve(A, b, dt=None) needs a matrix and a vector.", QdTypeError)
    a, b = fe.vec_of(args[0]), fe.vec_of(args[1])
    if a is None or a.ndim != 2 or a.n != a.m:
        raise fe.error("qd.solve: only square matrices are supported.", QdTypeError)
    if not 2 <= a.n <= 3:
        raise fe.error(
            f"qd.solve: only 2×2 and 3×3 matrices are supported (got {a.n}x{a.n}).", QdTypeError
        )
    if b is None or b.ndim != 1 or b.n != a.n:
        raise fe.error(
            f"qd.solve: Matrix and Vector dimension mismatch ({a.n}x{a.n} and {b or args[1]!r}).",
            QdTypeError,
        )
    dt = args[2] if len(args) > 2 else kw.get("dt")
    dt = fe.type_dtype(dt) if dt is not None else fe.default_fp
    return fe.inline_call(decompositions.solve, [a, b, dt], {}, "qd.solve")


# -- Python's functions, and qd.static / qd.static_assert ------------------------------------------
@python_call(lang.static, arity=NODE)
def lower_static(fe: Frontend, node: ast.Call) -> object:
    with fe.static_scope():
        if len(node.args) == 1:
            return fe.resolve_static(node.args[0])
        return tuple(fe.resolve_static(a) for a in node.args)


@python_call(lang.static_assert, arity=NODE)
def lower_static_assert(fe: Frontend, node: ast.Call) -> None:
    """`qd.static_assert(cond, msg)`: checked while compiling; the condition is Python."""
    if not 1 <= len(node.args) <= 2:
        raise fe.error("qd.static_assert takes a condition and an optional message.")
    try:
        with fe.static_scope():  # as `qd.static(...)`, in Quadrants
            cond = fe.resolve_static(node.args[0])
    except QdError:
        if isinstance(fe.visit(node.args[0]), ir.Value):
            raise fe.error(
                "Static assert with non-static condition: qd.static_assert checks a condition "
                "known while compiling; use `assert` (checked with debug=True) for a runtime "
                "one.",
                QdTypeError,
            ) from None
        raise
    if not cond:
        with fe.static_scope():
            msg = fe.resolve_static(node.args[1]) if len(node.args) > 1 else None
        raise fe.error(
            f"static assertion failed: {msg or ast.unparse(node.args[0])}",
            QuadrantsCompilationError,
        )


@python_call(print, arity=NODE)
def lower_print(fe: Frontend, node: ast.Call) -> None:
    fe.print_(node)


@python_call(lang.static_print, arity=NODE)
def lower_static_print(fe: Frontend, node: ast.Call) -> None:
    """`qd.static_print(...)`: printed now, while compiling; nothing runs."""
    args = fe.call_args(node)
    kwargs = {kw.arg: fe.resolve_static(kw.value) for kw in node.keywords if kw.arg}
    lang.static_print(*args, **kwargs)


@python_call(lang.rescale_index, arity=NODE)
def lower_rescale_index(fe: Frontend, node: ast.Call) -> object:
    """`qd.rescale_index(a, b, I)`: `I` (a vector or list of indices) of field `a` rescaled to
    field `b`'s shape; the shapes are known while compiling."""
    if len(node.args) != 3:
        raise fe.error("qd.rescale_index(a, b, I) takes two fields and an index.", QdTypeError)
    a, b = (fe.resolve_static(x) for x in node.args[:2])
    shapes = [getattr(x, "shape", None) for x in (a, b)]
    if not all(isinstance(x, tuple) for x in shapes):
        raise fe.error("qd.rescale_index: the first two arguments must be fields.", QdTypeError)
    sa, sb = cast("tuple[tuple[int, ...], tuple[int, ...]]", tuple(shapes))
    index = fe.visit(node.args[2])
    items = list(fe.need_vec(index, "qd.rescale_index").entries)
    for k in range(min(len(items), len(sa), len(sb))):
        if sa[k] > sb[k]:
            items[k] = fe.binop("floordiv", items[k], sa[k] // sb[k])
        elif sa[k] < sb[k]:
            items[k] = fe.binop("mul", items[k], sb[k] // sa[k])
    return fe.make_vec(items, (len(items),))


@python_call(lang.loop_unique, arity=NODE)
def lower_loop_unique(fe: Frontend, node: ast.Call) -> object:
    """`loop_unique(v, covers=...)`: `v` (the hint changes no value: every write here stays
    atomic where it was)."""
    if len(node.args) not in (1, 2) or any(kw.arg != "covers" for kw in node.keywords):
        raise fe.error("loop_unique(value, covers=None) takes a value and the fields it covers.")
    return fe.visit(node.args[0])


@python_call(lang.is_active, arity=NODE)
def lower_is_active(fe: Frontend, node: ast.Call) -> object:
    return fe.sparse_is_active(node)


@python_call(lang.activate, arity=NODE)
def lower_activate(fe: Frontend, node: ast.Call) -> None:
    fe.sparse_activate(node)


@python_call(lang.deactivate, arity=NODE)
def lower_deactivate(fe: Frontend, node: ast.Call) -> None:
    fe.sparse_deactivate(node)


@python_call(lang.length, arity=NODE)
def lower_length(fe: Frontend, node: ast.Call) -> object:
    return fe.sparse_length(node)


@python_call(lang.append, arity=NODE)
def lower_append(fe: Frontend, node: ast.Call) -> object:
    return fe.sparse_append(node)


@python_call(bool, arity=1)
def lower_bool(fe: Frontend, x: object) -> object:
    return bool(x) if is_number(x) else fe.truth(x)


@python_call(int, arity=1)
def lower_int(fe: Frontend, x: object) -> object:
    return int(x) if is_number(x) else fe.cast_all(x, fe.default_ip)


python_call(lang.qd_bool, arity=1)(lower_bool)
python_call(lang.qd_int, arity=1)(lower_int)


@python_call(float, lang.qd_float, arity=1)
def lower_float(fe: Frontend, x: object) -> object:
    return float(x) if is_number(x) else fe.cast_all(x, fe.default_fp)


@python_call(py.all, arity=1)
def lower_all(fe: Frontend, x: object) -> object:
    return fe.all_of(x, False)


@python_call(py.any, arity=1)
def lower_any(fe: Frontend, x: object) -> object:
    return fe.all_of(x, True)


@python_call(abs, arity=1)
def lower_abs(fe: Frontend, x: object) -> object:
    return fe.unary("abs", x)


@python_call(sum, arity=ANY)
def lower_sum(fe: Frontend, *args: object) -> object:
    """`sum(items, start=0)` of a list, tuple or dict view (`sum([x[i] for i in range(3)])`,
    `sum(d.values())`), or of a vector's entries / a matrix's rows, added up as Python does, left
    to right."""
    if not 1 <= len(args) <= 2:
        raise fe.error("sum() takes an iterable and an optional start value.", QdTypeError)
    items, total = args[0], args[1] if len(args) == 2 else 0
    if isinstance(items, (dict, KeysView, ValuesView)):  # `sum(d.values())` of a kernel's dict
        items = list(items)
    if fe.is_vec(items):
        items = fe.need_vec(items, "sum()").rows()
    if not isinstance(items, (list, tuple)):
        raise fe.error("sum() in a kernel adds up a list, a tuple or a vector.", QdTypeError)
    for x in items:
        total = fe.binop("add", total, x)
    return total


python_call(min, arity=ANY)(lower_min)
python_call(max, arity=ANY)(lower_max)


@python_call(range, arity=NODE)
def lower_range(fe: Frontend, node: ast.Call) -> object:
    raise fe.error("range()/qd.ndrange() can only be used as the iterable of a `for`.")


@builtin("ndrange", arity=NODE)
def lower_ndrange(fe: Frontend, node: ast.Call) -> object:
    """`qd.ndrange(3, 3, 3)` outside a `for`: with extents known while compiling, the Python
    object (a `@qd.func` may return one for `qd.static(qd.grouped(...))` to unroll, as Genesis'
    MPM stencil does); else the loop's index space is not a value."""
    args = fe.call_args(node)
    kwargs = {kw.arg: fe.visit(kw.value) for kw in node.keywords}
    if all(_static_extent(x) for x in (*args, *kwargs.values())):
        return lang.Ndrange(*args, **kwargs)
    raise fe.error("qd.ndrange() with runtime extents can only be the iterable of a `for`.")


def _static_extent(x: object) -> bool:
    if isinstance(x, (tuple, list)):
        return all(_static_extent(e) for e in x)
    return isinstance(x, (int, np.integer))


@python_call(len, arity=1)
def lower_len(fe: Frontend, x: object) -> object:
    if isinstance(x, (tuple, list)):
        return len(x)
    v = fe.vec_of(x) if fe.is_vec(x) else None
    if v is not None:
        return v.n
    raise fe.not_callable(len)


# -- Quadrants' internal functions -----------------------------------------------------------------
def _internal_func_args(fe: Frontend, i: ir.Value, j: ir.Value, k: ir.Value) -> ir.Value:
    """`(i + j) * k` of two f32s and an i32, truncated to an i32 (C++'s `static_cast<int>`)."""
    product = fe.binop("mul", fe.binop("add", i, j), fe.cast(k, f32))
    return fe.cast(product, i32)


INTERNAL_FUNCTIONS: dict[str, tuple[tuple[DType, ...], Callable[..., ir.Value]]] = {
    "do_nothing": ((), lambda fe: fe.const(0, i32)),
    "refresh_counter": ((), lambda fe: fe.const(0, i32)),
    "test_internal_func_args": ((f32, f32, i32), _internal_func_args),
}
"""The internal functions `impl.call_internal(name, *args)` reaches: each one's parameter types and
its lowering, giving an i32 as Quadrants' runtime functions do."""
RUNTIME_SELF_TESTS = {
    "test_stack": "the autodiff stack (qdlab re-runs a loop's iterations instead of keeping one)",
    "test_list_manager": "the list manager of sparse SNodes (qdlab stores them densely)",
    "test_node_allocator": "the node allocator of sparse SNodes (qdlab stores them densely)",
    "test_node_allocator_gc_cpu": "the node allocator of sparse SNodes (qdlab stores them densely)",
}
"""Quadrants' internal functions that test a structure of its runtime that qdlab does not have."""


@builtin("call_internal", arity=NODE)
def lower_call_internal(fe: Frontend, node: ast.Call) -> ir.Value:
    """`impl.call_internal(name, *args, with_runtime_context=True)`: one of Quadrants' internal
    runtime functions, by name (`INTERNAL_FUNCTIONS`); an argument not of its parameter's type, or
    a wrong count, is a QuadrantsTypeError."""
    for kw in node.keywords:
        if kw.arg != "with_runtime_context":
            raise fe.error(f"impl.call_internal has no option `{kw.arg}`.", QdTypeError)
    name = fe.resolve_static(node.args[0]) if node.args else None
    if not isinstance(name, str):
        raise fe.error("impl.call_internal(name, ...) needs a function's name as a string.")
    if name not in INTERNAL_FUNCTIONS:
        why = RUNTIME_SELF_TESTS.get(name)
        raise fe.error(
            f"impl.call_internal: `{name}` tests {why}, which qdlab does not have."
            if why
            else f"impl.call_internal: qdlab has no internal function `{name}` (it has "
            f"{', '.join(INTERNAL_FUNCTIONS)}).",
            QuadrantsCompilationError,
        )
    params, lower = INTERNAL_FUNCTIONS[name]
    args = [fe.value(a) for a in fe.visit_args(node.args[1:])]
    called = f"(called with argument types {', '.join(str(a.type) for a in args)})"
    why = f"{len(args)} arguments were passed in but expected {len(params)}"
    if len(args) == len(params):
        wrong = [(n, t, a.type) for n, (t, a) in enumerate(zip(params, args), 1) if a.type != t]
        why = "" if not wrong else "expected {1} for argument #{0}, but got {2}".format(*wrong[0])
    if why:  # Quadrants' words: no argument is cast, a literal `1` is an i32
        raise fe.error(
            f"TypeError when calling `call_internal`: In a call to the operation `{name}`:\n"
            f"  {why}  {called}.",
            QdTypeError,
        )
    return lower(fe, *args)
