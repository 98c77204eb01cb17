"""Struct arguments of a kernel, on the host: a `dataclasses.dataclass` parameter, and the object a
`qd.template()` parameter, or a data-oriented method's `self`, passes.

A struct's members that are kernel arguments become parameters of their own, named by their path
(`s.x`, `s.inner.v`; `compiler/frontend/structs.py` says how the frontend reads them): a dataclass's
members by their annotations (ndarrays, scalars, vectors, nested dataclasses), an object's by what
it holds (its `qd.ndarray`s are arguments, everything else is a compile-time value). Launching never
walks a struct: for each type of struct argument the kernel keeps the member paths its compiles read
(`Paths`), reads them with one `operator.attrgetter` and keys the launch on a summary of each (an
ndarray's signature, a scalar's type, a compile-time value's value or content); a member never read
is neither read nor keyed, and its words stay zero (`Members`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import inspect
import itertools
import operator
import types
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard, cast

import numpy as np

from ..compiler.frontend.fingerprint import UNKNOWN, fingerprint
from ..compiler.frontend.structs import (
    ITEMS,
    METHOD,
    OPAQUE,
    PARAM,
    STRUCT,
    VALUE,
    Member,
    StructRef,
    follow,
    path_steps,
    path_text,
)
from ..core import abi
from ..core.errors import QdArgumentError, QdArgumentTypeError, QdTypeError, QdValueError
from ..core.fields import FieldBase
from ..core.language import ArrayAnnotation, BoundFunc, Func, KernelDef, MatrixType
from ..core.matrix import Matrix, Vector
from ..core.types import ArrayType, DType, TensorType
from . import state, struct_types, vector_args
from .array_args import (
    NDARRAYS,
    annotation,
    array_arg,
    array_key,
    default_array_type,
    host_arrays,
    scalar_arg,
    scalar_type,
)
from .data_oriented import lifts_primitives
from .launch import array_launch, is_member, launch_params
from .struct_field import StructField
from .tensor import MatrixTensor, Tensor, VectorTensor, unwrap

if TYPE_CHECKING:
    from ..compiler.pipeline import Compiled
    from .kernel import Kernel

SCALARS = (bool, int, float, str, type(None))
PRIMITIVES = (bool, int, float)
"""The members a data-oriented object bakes per instance, or (`template_primitives=False`) passes
as scalar parameters: exactly these types (a NumPy scalar is a compile-time value either way)."""
MAX_MEMBERS = 10_000
"""Objects one walk of a struct visits at most (a struct holding itself is walked once)."""


def is_struct_type(ann: object) -> TypeGuard[type]:
    """A class whose members a kernel parameter is flattened into: a `dataclasses.dataclass`, or
    a `@qd.dataclass` / `qd.types.struct(...)` type."""
    return isinstance(ann, type) and (
        dataclasses.is_dataclass(ann) or struct_types.members_of(ann) is not None
    )


def is_data_oriented(x: object) -> bool:
    """A `@qd.data_oriented` class, or an instance of one."""
    return bool(getattr(x if isinstance(x, type) else type(x), "__qd_data_oriented__", False))


def is_struct(v: object) -> bool:
    """Whether a template argument (or a member of one) is a struct, whose members the kernel reads
    one by one: a dataclass or data-oriented instance, or an instance of a class of the user's own
    (not a number, container, function, class, module, enum, or an object of qdlab or NumPy)."""
    t = type(v)
    if t in SCALARS or isinstance(v, (type, types.ModuleType, tuple, list, dict, DType)):
        return False  # a DType is a (frozen) dataclass, but a template value, not a struct
    if dataclasses.is_dataclass(v) or is_data_oriented(t):
        return True
    module = (getattr(t, "__module__", None) or "builtins").split(".")[0]
    return (
        hasattr(v, "__dict__")
        and not callable(v)
        and module not in ("builtins", "qdlab", "numpy", "enum", "types", "functools")
        and not isinstance(v, (Func, KernelDef))
        and not hasattr(t, "__members__")  # an enum
    )


@functools.cache
def member_annotations(cls: type) -> dict[str, object]:
    """A dataclass's fields (or a struct type's members) and their annotations, evaluated (a
    string annotation is looked up in its module)."""
    members = struct_types.members_of(cls)
    if members is not None:
        return members
    try:
        hints: dict[str, object] = {}
        for klass in reversed(cls.__mro__):
            hints.update(inspect.get_annotations(klass, eval_str=True))
    except Exception:  # noqa: BLE001 - an annotation naming what its module cannot see
        hints = {}
    out = {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(cls)}
    for t in out.values():
        if isinstance(t, MatrixType):  # unpacked: only a @qd.dataclass member, as in Quadrants
            t.refuse_unpacked("instantiate")
    return out


def is_frozen(t: type) -> bool:
    """A `@dataclasses.dataclass(frozen=True)` class: its instances' members never change."""
    params = getattr(t, "__dataclass_params__", None)
    return bool(getattr(params, "frozen", False))


def flat_name(basename: str, child: str) -> str:
    """A dataclass member's flattened parameter name, as Quadrants spells it (`__qd_s__qd_x`; a
    name already flattened gets `__qd_<child>` appended)."""
    prefix = basename if basename.startswith("__qd_") else f"__qd_{basename}"
    return f"{prefix}__qd_{child}"


frozen_plans: dict[tuple[int, type, str], tuple[set[str], tuple[tuple[str, str, Any], ...]]] = {}
"""Per (the set of flattened member names a kernel variant reads, by identity; the frozen dataclass
type; the parameter's name): that set and the plan `frozen_plan` made from it. Emptied by
`qd.init` / `qd.reset`."""


def frozen_plan(
    used: set[str], cls: type, basename: str, fields: dict[str, Any]
) -> tuple[tuple[str, str, Any], ...]:
    """The members of a frozen dataclass parameter a kernel variant reads, in declaration order:
    (member, flattened name, annotation) for each field of `fields` (name -> `dataclasses.Field`)
    whose flattened name is in `used`. Cached per `used` set; an entry is only served to the very
    set it was made for (a new set at a reused address gets a plan of its own)."""
    key = (id(used), cls, basename)
    entry = frozen_plans.get(key)
    if entry is not None and entry[0] is used:
        return entry[1]
    members = {f.name for f in dataclasses.fields(cls)}  # not ClassVar / InitVar pseudo-fields
    plan = tuple(
        (f.name, flat_name(basename, f.name), f.type)
        for f in fields.values()
        if f.name in members and flat_name(basename, f.name) in used
    )
    frozen_plans[key] = (used, plan)
    return plan


def frozen_members(v: object) -> dict[str, object]:
    """A frozen dataclass instance's members, a `qd.Tensor` as what it holds: read once, then kept
    on the instance as `_qd_dc_unwrapped` (as in Quadrants), since they cannot change."""
    cached = getattr(v, "_qd_dc_unwrapped", None)
    if isinstance(cached, dict):
        return cached
    out = {f.name: unwrap(getattr(v, f.name)) for f in dataclasses.fields(cast(Any, v))}
    try:
        object.__setattr__(v, "_qd_dc_unwrapped", out)
    except AttributeError:  # a class with __slots__: read anew each time
        pass
    return out


def content(v: object) -> str:
    """A struct's (or a value's) content, its ndarrays by signature: what decides the code a kernel
    compiles from it, not what its arrays hold."""
    return fingerprint(v, _by_signature)


def _by_signature(x: Any) -> str | None:
    """An ndarray by its signature, a field by its identity key (`FieldBase.key`)."""
    if type(x) in NDARRAYS:
        return f"ndarray:{x._sig}"
    if isinstance(x, (FieldBase, StructField)):
        return f"field:{x.key}"
    return None


def template_key(v: object) -> object:
    """What tells two template arguments apart: plain values by value, anything else by its content
    (a `repr` can hide a difference, and an identity can hide a mutation); a value whose content
    cannot be described gets a key of its own on every call, so it always compiles anew rather than
    run stale code (one that says UNKNOWN: it names nothing another process could meet again)."""
    if isinstance(v, (int, float, bool, str, type(None))):
        return (type(v).__name__, v)
    if isinstance(v, (FieldBase, StructField)):
        return v.key  # one specialisation per field
    if isinstance(v, tuple):
        return tuple(template_key(x) for x in v)
    if isinstance(v, Tensor) and type(v) in TENSORS and vars(v).keys() == {"_impl"}:
        return ("tensor", template_key(v._impl))  # what it holds, not its data
    fp = content(v)
    if fp != UNKNOWN:
        return (type(v).__name__, fp)
    key = by_identity(v)
    return key if key is not None else (type(v).__name__, f"{UNKNOWN}#{next(_unique)}")


def by_identity(v: object) -> tuple | None:
    """A data-oriented object whose content cannot be described (Genesis' SAP coupler keeps its
    contact handlers, each holding solvers, in a list) by its instance token, as Quadrants keys a
    data-oriented object; a list or tuple of them item by item. None for anything else."""
    if is_data_oriented(v) and not isinstance(v, type):
        token = instance_token(v)
        return None if token is None else (IDENTITY, type(v), token)
    if (type(v) is list or type(v) is tuple) and v:
        items = [by_identity(x) for x in cast("list | tuple", v)]
        return None if None in items else (type(v), *items)
    return None


IDENTITY = f"{UNKNOWN}:instance"
"""Names UNKNOWN: a signature holding such a key is of this process only (the statement memo
stays out of its kernel, as for any argument known only by identity)."""


_unique = itertools.count()
TENSORS = (Tensor, VectorTensor, MatrixTensor)
"""The `qd.Tensor` wrappers: one with nothing but what it wraps is keyed as that (its field or
ndarray), never by its data, which is run-time data the compiled code does not hold."""


def launch_key(v: object) -> object:
    """`template_key`'s distinctions in a launch key, which describes a struct's values at every
    launch: a small numeric NumPy array, or a `qd.Vector` / `qd.Matrix` of one, by what its content
    describes (dtype, shape, bytes; the vector's attributes) without the walk (a Genesis MPM step
    spent half its time describing such members), a short list or tuple of numbers by their types
    and values; anything else as `template_key`."""
    t = type(v)
    if t is np.ndarray:
        key = numbers(v)
        if key is not None:
            return key
    elif t is list or t is tuple:
        items = cast("list | tuple", v)
        if len(items) <= SMALL_LIST and all(type(x) in PRIMITIVES for x in items):
            return (t, *[(type(x), repr(x)) for x in items])  # `self._materials_idx = [0]`
    elif (t is Vector or t is Matrix) and vars(v).keys() == MATRIX_ATTRS:
        m = cast(Matrix, v)
        key = numbers(m.entries)
        shape = (m.ndim, m.n, m.m)
        if key is not None and type(m.dt) in (DType, type(None)) and set(map(type, shape)) == {int}:
            return (t, m.dt, *shape, key)
    return template_key(v)


SMALL_LIST = 64
"""The longest list or tuple of numbers `launch_key` describes by its values."""
MATRIX_ATTRS = {"entries", "dt", "ndim", "n", "m"}
"""What a `qd.Matrix` holds (`launch_key` describes one holding anything else by content)."""
NUMBER_KINDS, NUMBER_BYTES = frozenset("biufc"), 4096


def numbers(a: object) -> tuple | None:
    """A NumPy array of numbers (not a subclass, at most NUMBER_BYTES) by dtype, shape and bytes;
    None for anything else."""
    if type(a) is not np.ndarray:
        return None
    arr = cast(np.ndarray, a)
    if arr.dtype.kind not in NUMBER_KINDS or arr.nbytes > NUMBER_BYTES:
        return None
    return (np.ndarray, arr.dtype, arr.shape, arr.tobytes())


def summary(v: Any) -> object:
    """A compile-time member value in a launch key: a number by type and value, an ndarray by
    signature, a function or class by identity, anything else by content."""
    t = type(v)
    if t in SCALARS or isinstance(v, np.generic):
        return (t, v)
    if t in NDARRAYS:
        return v._sig
    if isinstance(v, (Func, KernelDef, type, types.FunctionType, types.ModuleType)):
        return v
    if isinstance(v, BoundFunc):  # `obj.f`: the func, and the object by what it holds
        return (v.func, template_key(v.__self__))
    return launch_key(v)


def baked(v: Any) -> object:
    """A compile-time member value of a data-oriented object in a launch key: a primitive as
    BAKED, since the object's instance token stands for it (`Paths.key`): Quadrants bakes it when
    the kernel first compiles for that instance and serves that code to the instance after it
    changes. A func bound to another data-oriented object (Genesis' MPM keeps each material's
    `update_stress` in a list) is that func and that object's token, its members baked the same
    way (Quadrants keys neither: the list is the instance's); a list or tuple of them entry by
    entry, and so a list or tuple of data-oriented objects (FEM's materials, the SAP coupler's
    contact handlers), each by its token (`by_identity`), not described at every launch.
    Anything else as `summary`."""
    t = type(v)
    if t in SCALARS or isinstance(v, np.generic):
        return BAKED
    if t is BoundFunc and is_data_oriented(v.__self__):
        token = instance_token(v.__self__)
        if token is not None:
            return (v.func, token)
    elif (t is list or t is tuple) and v and all(type(x) is BoundFunc for x in v):
        return (t, *map(baked, v))
    elif (t is list or t is tuple) and v and all(map(is_data_oriented, v)):
        key = by_identity(v)  # Genesis' FEM keeps its materials so: each by its token
        if key is not None:
            return key
    return summary(v)


def frozen(v: Any) -> object:
    """A primitive that `template_primitives=False` made a scalar parameter, in a launch key: its
    type is the one of the kernel's first compile for the instance (a float where an integer was
    is refused at launch, `Members.checked`), so it keys nothing."""
    return None


BAKED = "baked"
_tokens: dict[int, tuple[weakref.ref, int]] = {}
"""id of a data-oriented object -> (a weak reference to it, its token); an entry leaves with its
object."""
_token_count = itertools.count()


def instance_token(a: object) -> int | None:
    """A number for `a` that no other object alive or dead ever gets in this process; None for an
    object with no weak references (which is then keyed by its primitives' values)."""
    entry = _tokens.get(id(a))
    if entry is not None and entry[0]() is a:
        return entry[1]
    i = id(a)

    def gone(ref: weakref.ref) -> None:
        if _tokens.get(i, (None,))[0] is ref:
            del _tokens[i]

    try:
        ref = weakref.ref(a, gone)
    except TypeError:
        return None
    _tokens[i] = (ref, next(_token_count))
    return _tokens[i][1]


def method(v: Any) -> object:
    """A method path (`self.f`, or `self.g = self.f`) in a launch key: the func it calls; its
    object is the struct, whose own paths are keyed."""
    return v.func if isinstance(v, BoundFunc) else summary(v)


def items(v: Any) -> object:
    """A list of structs a `qd.static` loop read item by item (`ITEMS`) in a launch key: its type
    and length; each item's own paths are keyed."""
    return (type(v), len(v)) if isinstance(v, (list, tuple)) else summary(v)


_gone = object()
"""What `follow` gives for a member path an object no longer has."""


def getter(*paths: str) -> Callable[[Any], Any]:
    """`operator.attrgetter(*paths)`, where a path may also step into a list (`handlers[0].x`,
    `ITEMS`): an item no longer there is an AttributeError, as a missing attribute is."""
    if not any("[" in p for p in paths):
        return operator.attrgetter(*paths)
    walks = [path_steps(p) for p in paths]

    def one(a: Any, steps: list[str | int]) -> Any:
        value = follow(a, steps, _gone)
        if value is _gone:
            raise AttributeError(f"no member {steps}")
        return value

    if len(walks) == 1:
        (steps,) = walks
        return lambda a: one(a, steps)
    return lambda a: tuple([one(a, steps) for steps in walks])


class StructArg:
    """One struct argument while its kernel compiles: what each of its members is
    (`compiler.structs.StructArg`), and the parameters of those that are kernel arguments."""

    def __init__(self, kernel: str, root: str, value: object, typed: type | None) -> None:
        self.kernel, self.root = kernel, root
        self.params: dict[str, object] = {}
        """Member parameters found by `declare`, name -> type, in order."""
        self.items = MemberParams()
        """The same, as they enter the kernel's signature."""
        self.ref = StructRef(self, (), value, typed)
        """The struct as the frontend sees it."""
        self.values: list[str] = []
        """The content of a dataclass's compile-time members (an object's is its whole content)."""
        self.lifts = lifts_primitives(value)
        """`@qd.data_oriented(template_primitives=False)`: the primitives it holds, on itself or
        on the structs it holds, are scalar parameters."""

    def declare(self) -> None:
        """Walk the struct once: each member that is a kernel argument becomes a parameter. A
        frozen dataclass whose walk met only frozen dataclasses, qdlab ndarrays and members typed
        by their annotations declares the same parameters for as long as it lives (its members
        cannot be rebound, an ndarray's type is fixed when it is made): the walk is kept for it,
        until `qd.reset()` / `qd.init()` (Genesis passes ~10 such structs to each of
        its kernels, walked at each kernel's first launch). Any other object's walk is kept with
        what it read (`Walk`), and served while a check of it finds the same (a Genesis solver
        reaches some 3,000 members, walked again at each of its kernels' first launch)."""
        root, annotation = self.ref.value, self.ref.annotation
        memo = _declared.get(root) if annotation is not None else None
        if memo is not None and memo[0] == state.generation and memo[1] is annotation:
            self.params, self.items = dict(memo[2]), memo[2]
            return
        walk = _walks.get(root) if annotation is None else None
        if walk is not None and walk.holds():
            self.params, self.items = dict(walk.items), walk.items
            return
        walk = Walk() if annotation is None else None
        todo, seen = [self.ref], {id(self.ref.value)}
        fixed = annotation is not None
        while todo and len(seen) < MAX_MEMBERS:
            ref = todo.pop(0)
            fixed = fixed and ref.annotation is not None and is_frozen(type(ref.value))
            if ref.annotation is None:  # an object, by what it holds: each member as last found
                known, values = self.known(ref)
                if walk is not None:
                    walk.known.append(known)
                    walk = walk if known.look is not None else None
                found = [
                    (attr, Member(kind, unwrap(values[k]), t))
                    for k, (attr, kind, t) in enumerate(zip(known.names, known.kinds, known.types))
                    if kind in (PARAM, STRUCT, ITEMS)
                ]
            else:
                found = [(attr, self.member(ref, attr)) for attr in self.attributes(ref)]
            for attr, m in found:
                name = f"{ref.name}.{attr}"
                if m.kind == PARAM:
                    self.params[name] = m.type
                    fixed = fixed and (
                        type(m.value) in NDARRAYS or not isinstance(m.type, ArrayType)
                    )
                elif m.kind == ITEMS:  # each item's members, by its index
                    for k, item in enumerate(cast("list", m.value)):
                        if id(item) not in seen:
                            seen.add(id(item))
                            todo.append(StructRef(self, (*ref.path, attr, f"[{k}]"), item))
                elif m.kind == STRUCT and id(m.value) not in seen:
                    seen.add(id(m.value))
                    todo.append(StructRef(self, (*ref.path, attr), m.value, m.annotation))
                    if ref.annotation is not None and m.annotation is None:
                        self.values.append(f"{name}={content(m.value)}")  # held by what it holds
                elif m.kind == VALUE and ref.annotation is not None:
                    self.values.append(f"{name}={content(m.value)}")
                fixed = fixed and m.kind in (PARAM, STRUCT, METHOD)
        self.items = MemberParams(self.params.items())
        if todo or self.values:
            return
        if fixed:
            _declared.put(root, (state.generation, annotation, self.items))
        elif walk is not None:
            walk.items = self.items
            _walks.put(root, walk)

    def known(self, ref: StructRef) -> tuple[Known, tuple]:
        """The members of an object read by what it holds, classified (`untyped`) or as they were
        when last classified, and their values now."""
        obj = ref.value
        known = _known.get(obj)
        if known is not None and known.lifts == self.lifts:
            values = known.check()
            if values is not None:
                return known, values
        names = tuple(member_names(obj))
        values = _values(attrgetter(names), obj, len(names))
        members = [
            self.untyped(obj, attr, unwrap(v), f"{ref.name}.{attr}")
            for attr, v in zip(names, values)
        ]
        known = Known(self.lifts, names, [m.kind for m in members], [m.type for m in members])
        if known.keep(obj, values):
            _known.put(obj, known)
        return known, values

    def attributes(self, ref: StructRef) -> list[str]:
        """The members of a struct typed by its annotations (an object's are `known`)."""
        return list(member_annotations(ref.annotation))

    def member(self, ref: StructRef, attr: str) -> Member:
        held = ref.value
        frozen = is_frozen(type(held)) and not isinstance(held, type)
        members = frozen_members(held) if frozen else {}
        # a qd.Tensor member is what it holds
        value = members[attr] if attr in members else unwrap(getattr(held, attr))
        name = f"{ref.name}.{attr}"
        typed = member_annotations(ref.annotation) if ref.annotation is not None else {}
        m = (
            self.typed(typed[attr], value, name)
            if attr in typed
            else self.untyped(ref.value, attr, value, name)
        )
        if m.kind == PARAM and name in self.params:
            return Member(PARAM, value, self.params[name])
        return m

    def typed(self, ann: Any, v: object, name: str) -> Member:
        """A dataclass member, by its annotation."""
        if is_data_oriented(ann):
            raise QdTypeError(
                f"kernel `{self.kernel}`: member `{name}` is annotated with the @qd.data_oriented "
                f"class {ann.__name__}, which a dataclass parameter cannot hold (its members are "
                "typed by annotations, a data-oriented object's by what it holds); pass the "
                "struct through a `qd.template()` parameter instead."
            )
        if is_struct_type(ann):
            if isinstance(v, type) or not is_struct_type(type(v)):
                raise QdTypeError(
                    f"kernel `{self.kernel}`: member `{name}` must be a {ann.__name__}, not "
                    f"{type(v).__name__}."
                )
            return Member(STRUCT, v, annotation=type(v))
        a = annotation(ann)
        if a is Tensor:  # an ndarray or a field (held as a value), whichever the member is
            if isinstance(v, FieldBase):
                return self.untyped(None, "", v, name)
            a = ArrayAnnotation()
        if isinstance(a, ArrayAnnotation):
            return Member(PARAM, v, array_arg(v, a, self.kernel, name)[2])
        if isinstance(a, MatrixType):
            t, _ = vector_args.bind(v, a, lambda x, t: x, self.kernel, name, None)
            return Member(PARAM, v, t)
        if isinstance(a, DType) or a in (int, float):
            t = scalar_type(a)
            if not isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_)):
                raise QdTypeError(
                    f"kernel `{self.kernel}`: member `{name}` must be a number ({t}), not "
                    f"{type(v).__name__}."
                )
            return Member(PARAM, v, t)
        return self.untyped(None, "", v, name)  # qd.Template, object, Any: by what it holds

    def untyped(self, owner: object, attr: str, v: object, name: str) -> Member:
        """A member of an object (or a dataclass member annotated `qd.Template`), by its value."""
        t = type(v)
        if t in SCALARS and not (self.lifts and owner is not None and t in PRIMITIVES):
            return Member(VALUE, v)
        if t in NDARRAYS:
            return Member(PARAM, v, default_array_type(v, self.kernel, name))
        kernel = getattr(v, "kernel", None)
        if isinstance(kernel, KernelDef):  # a bound @qd.kernel method: kernels call no kernels
            return Member(VALUE, kernel)
        if is_struct(v):
            return Member(STRUCT, v)
        if isinstance(v, (list, tuple)) and v and all(map(is_struct, v)):  # Genesis' gs.List too
            return Member(ITEMS, v)
        if isinstance(v, BoundFunc) and v.__self__ is owner:  # `self.f`, `self.g = self.f`
            return Member(METHOD, v.func)
        if self.lifts and owner is not None and type(v) in PRIMITIVES:
            return Member(PARAM, v, scalar_type(float if type(v) is float else int))
        return Member(VALUE, v)


class MemberParams(tuple):
    """A struct argument's member parameters, (name, type) pairs, in a kernel's signature: its
    hash and repr are made once (a Genesis solver's kernels each hold ~1,000 of them, and a
    signature is hashed at each lookup); a kept walk serves the same object to every kernel."""

    def __hash__(self) -> int:
        got = self.__dict__.get("hash")
        if got is None:
            got = self.__dict__["hash"] = tuple.__hash__(self)
        return got

    def __repr__(self) -> str:
        got = self.__dict__.get("repr")
        if got is None:
            got = self.__dict__["repr"] = tuple.__repr__(self)
        return got

    def __reduce__(self) -> tuple:
        return (MemberParams, (tuple(self),))  # a hash is of its process (string hashes)


class ByIdentity:
    """Values kept for objects by their identity while they live (held weakly: dropped with the
    object; an object with no weak reference keeps nothing)."""

    def __init__(self) -> None:
        self.held: dict[int, tuple[weakref.ref, object]] = {}

    def get(self, obj: object) -> Any:
        got = self.held.get(id(obj))
        return got[1] if got is not None and got[0]() is obj else None

    def put(self, obj: object, value: object) -> None:
        key = id(obj)
        with contextlib.suppress(TypeError):
            self.held[key] = (weakref.ref(obj, lambda _: self.held.pop(key, None)), value)


def member_names(v: object) -> list[str]:
    """The members of an object a kernel reads by what it holds: a dataclass's fields, then
    what else its `__dict__` holds."""
    names = [f.name for f in dataclasses.fields(v)] if dataclasses.is_dataclass(v) else []
    held = getattr(v, "__dict__", {})
    return names + [k for k in held if k not in names] if names else list(held)


class Look(NamedTuple):
    """What a walk read of one struct object (`Known`)."""

    obj: weakref.ref
    names: tuple[str, ...]
    """Its members' names; `plain`: they are its `__dict__`'s keys."""
    plain: bool
    read: Callable
    """Their getter (an `operator.attrgetter`)."""
    classes: tuple[type, ...]
    """Their values' types."""
    same: list[int]
    """The positions of the ndarrays and structs it holds,"""
    wrapped: list[int]
    """and of those it holds in a `qd.Tensor`,"""
    ids: tuple[int, ...]
    """and their ids (`_ids`)."""
    lists: list[int]
    """The positions of its lists and tuples of other values,"""
    items: tuple[tuple[type, ...], ...]
    """and their items' types."""
    checks: list[tuple[int, str, object]]
    """(position, kind, `shape`) of each list of structs and each other wrapped value."""


class Known:
    """What `StructArg.declare` found in one object it reads by what it holds (a data-oriented
    solver, an object a template argument passes, a struct either holds): each member's kind and
    parameter type, kept with what it read (`Look`), so that the next walk that reaches the object
    knows cheaply and exactly whether classifying its members again would find the same.

    A member's kind and parameter type follow from its value's type but for these: an ndarray's
    type is its signature (made with it; it is released only by `qd.reset()` / `qd.init()`, which
    start a new generation), a struct's parameters are its own members' (it is `Known` on its
    own), and a list's or tuple's kind follows from its items (a list of structs is walked item
    by item). So the record holds while the object lives and holds the same member names, each
    member value is of the same type, each ndarray, struct and list of structs holds the same
    objects, and each other list or tuple holds items of the same types. What it read is held
    weakly, so a dropped scene is freed; an ndarray or struct that dies drops the record (its id
    may be reused). Other values (numbers, fields, dicts, functions) are compile-time values
    whatever they hold: the launch key and the manifest check those."""

    def __init__(self, lifts: bool, names: tuple[str, ...], kinds: list[str], types: list) -> None:
        self.generation, self.lifts = state.generation, lifts
        self.names, self.kinds, self.types = names, kinds, types
        """Each member's name, kind and parameter type (None for a member that is none)."""
        self.look: Look | None = None
        self.refs: list[weakref.ref] = []
        self.live = True

    def _dead(self, _ref: weakref.ref) -> None:
        self.live = False

    def _hold(self, obj: object) -> weakref.ref | None:
        try:
            ref = weakref.ref(obj, self._dead)
        except TypeError:
            return None
        self.refs.append(ref)
        return ref

    def keep(self, obj: object, values: tuple) -> bool:
        """Keep what was read of `obj` (its members' `values`); False when it cannot be checked
        later (it, or a struct or ndarray it holds, takes no weak reference)."""
        ref = self._hold(obj)
        if ref is None:
            return False
        same, wrapped, lists, checks = [], [], [], []
        for k, (v, kind) in enumerate(zip(values, self.kinds)):
            if kind == VALUE and not isinstance(v, (list, tuple, Tensor)):
                continue  # its type decides
            u = unwrap(v)
            if kind == STRUCT or (kind == PARAM and type(u) in NDARRAYS):
                if self._hold(u) is None:
                    return False
                (same if u is v else wrapped).append(k)
            elif kind != ITEMS and u is v and isinstance(u, (list, tuple)):
                lists.append(k)
            elif kind == ITEMS or u is not v:
                checks.append((k, kind, shape(u, kind)))
        names = self.names
        plain = tuple(getattr(obj, "__dict__", ())) == names
        ids, items = _ids(values, same, wrapped), _items(values, lists)
        classes = tuple(map(type, values))
        read = attrgetter(names)
        self.look = Look(ref, names, plain, read, classes, same, wrapped, ids, lists, items, checks)
        return True

    def check(self) -> tuple | None:
        """The object's member values when classifying them again would find what this record
        holds, else None."""
        look = self.look
        if look is None or not self.live or self.generation != state.generation:
            return None
        ref, names, plain, read, classes, same, wrapped, ids, lists, items, checks = look
        obj = ref()
        if obj is None or (tuple(obj.__dict__) if plain else tuple(member_names(obj))) != names:
            return None
        try:
            values = _values(read, obj, len(names))
        except Exception:  # noqa: BLE001 - a member gone, or raising: classified again, to say so
            return None
        if tuple(map(type, values)) != classes or _ids(values, same, wrapped) != ids:
            return None
        if _items(values, lists) != items:
            return None
        for k, kind, expected in checks:
            if shape(unwrap(values[k]), kind) != expected:
                return None
        return values


class Walk:
    """One `StructArg.declare` walk of an object a kernel reads by what it holds: the parameters it
    declared and the `Known` records of the objects it visited, in order; served to the next bind
    of the object while every record holds (a Genesis solver reaches some 300 objects and 3,000
    members, walked at each of its kernels' first launch)."""

    def __init__(self) -> None:
        self.generation = state.generation
        self.items = MemberParams()
        """The parameters it declared (`StructArg.items`)."""
        self.known: list[Known] = []

    def holds(self) -> bool:
        """Whether walking again would find what this walk found."""
        if self.generation != state.generation:
            return False
        return all(known.check() is not None for known in self.known)


def attrgetter(names: Sequence[str]) -> Callable:
    """`operator.attrgetter(*names)`, or `tuple` for no names (`_values`)."""
    return operator.attrgetter(*names) if names else tuple


def _values(read: Callable, obj: object, n: int) -> tuple:
    """What `read` (an `attrgetter` of `n` names) gives, as a tuple."""
    got = read(obj) if n else ()
    return (got,) if n == 1 else got


def _ids(values: tuple, same: list[int], wrapped: list[int]) -> tuple:
    """The ids of the values at `same`, then of what the `qd.Tensor`s at `wrapped` hold."""
    return (*[id(values[k]) for k in same], *[id(values[k]._impl) for k in wrapped])


def _items(values: tuple, at: list[int]) -> tuple:
    """The types of the items of the lists and tuples at `at`."""
    return tuple([tuple(map(type, values[k])) for k in at])


def shape(u: object, kind: str) -> object:
    """What decides the parameters of a member holding `u` (of kind `kind`) beyond its type."""
    if kind == ITEMS:
        return (type(u), tuple(map(id, cast("list", u))))
    if isinstance(u, (list, tuple)):
        return (type(u), tuple(map(type, u)))
    return type(u)


_walks = ByIdentity()
"""`Walk`s of struct objects, by identity (dropped with the object)."""
_known = ByIdentity()
"""`Known` records of the objects walks visited, by identity (dropped with the object)."""


_declared = ByIdentity()
"""A frozen dataclass's `StructArg.declare` walk: (the runtime's generation, the annotation it was
walked under, the parameters)."""


def described(t: type) -> str:
    """A struct type with its members (`Struct(center: vec3, radius: f32)`), else its name: two
    `qd.types.struct` types share the name `Struct`."""
    members = struct_types.members_of(t)
    if not members:
        return t.__name__
    return f"{t.__name__}({', '.join(f'{k}: {_type_name(v)}' for k, v in members.items())})"


def _type_name(t: object) -> str:
    return getattr(t, "__name__", None) or str(t)


def bind(kernel: Kernel, name: str, a: object, typed: type | None) -> tuple[tuple, StructRef]:
    """A struct argument's entry in the kernel's signature, and the StructRef its compile reads;
    the signature holds its member parameters and the content of its compile-time members."""
    if typed is not None and not isinstance(a, typed):
        if getattr(typed, "__qd_buffer_view__", False):  # Quadrants' error for a view's
            raise QdArgumentError(
                f"kernel `{kernel.name}`: argument `{name}` must be a BufferView (`data[a:b]`, "
                f"`qd.BufferView(data, offset, size)`), not {type(a).__name__}."
            )
        raise QdArgumentTypeError(
            f"kernel `{kernel.name}`: Argument {type(a)} cannot be converted into required type "
            f"{described(typed)}: argument `{name}` is of type {described(type(a))}."
        )
    if typed is None and dataclasses.is_dataclass(a) and not is_data_oriented(a):
        warnings.warn(
            f"kernel `{kernel.name}`: a dataclass passed to the qd.Template-annotated kernel "
            f"parameter `{name}` is deprecated; annotate the parameter with the dataclass "
            f"itself (`{name}: {type(a).__name__}`).",
            DeprecationWarning,
            stacklevel=5,
        )
    arg = StructArg(kernel.name, name, a, typed)
    arg.declare()
    if typed is None and _undescribable.get(a) is not None:
        what = learned_key(kernel, name, a)  # its content was found undescribable before
    else:
        what = content(type(a)) + "|" + "|".join(arg.values) if typed is not None else content(a)
        if UNKNOWN in what:
            _undescribable.put(a, True)
            what = learned_key(kernel, name, a)
    return ("template", "struct", what, arg.items), arg.ref


_undescribable = ByIdentity()
"""Struct objects whose whole content a fingerprint could not describe (Genesis' solvers reach a C
object): keyed by the paths their kernels read from then on (`learned_key`, which is exact
whatever the object holds) instead of walking their content again at each bind, some 3 ms a
Genesis solver."""


def learned_key(kernel: Kernel, name: str, a: object) -> str:
    """A struct argument whose whole content cannot be described (a solver object that reaches a
    C object, an image): keyed by the member paths the kernel's compiles have read from objects of
    its type, as its launch key is (`Paths`), once one has; until then, by a key never equal to
    another, so it compiles anew rather than run stale code."""
    key = kernel.params[kernel.param_names.index(name)].key
    paths = key.by_type.get(type(a)) if isinstance(key, StructKey) else None
    if paths is None:
        return f"{UNKNOWN}:{next(_unique)}"
    try:  # by value, not by instance: instances holding the same values share the code
        return f"paths:{(paths.by_value(a) if paths.per_instance else paths.key(a))!r}"
    except (AttributeError, TypeError):  # a path it no longer has: compiled anew
        return f"{UNKNOWN}:{next(_unique)}"


def manifest_signature(names: list[str], sig: tuple, templates: dict) -> tuple[str, frozenset]:
    """The signature a kernel's manifest is keyed on, and the template arguments it checks member
    by member. A struct argument with no describable content (a solver object), or a field passed
    as a template, has a key of this process only (`learned_key`, `FieldBase.key`); the manifest
    keys it by its type instead, and records the fingerprint of every member path its compile read
    (`manifest.member_deps`), so another process serves it only when each is what it was."""
    entries, by_members = [], set()
    fields: dict[int, str] = {}  # a field passed twice (`dot(r, r)`) compiles as one field
    for name, entry in zip(names, sig):
        if isinstance(entry, tuple) and entry[:2] == ("template", "struct"):
            what = entry[2]
            if what.startswith(("paths:", UNKNOWN)):
                t = type(templates[name].value)
                entry = (*entry[:2], f"members:{t.__module__}.{t.__qualname__}", *entry[3:])
                by_members.add(name)
        elif isinstance(entry, tuple) and isinstance(templates.get(name), FieldBase):
            entry = ("template", "field", fields.setdefault(id(templates[name]), name))
            by_members.add(name)
        entries.append(entry)
    return repr(tuple(entries)), frozenset(by_members)


class Paths:
    """The member paths of one type of struct argument that the kernel's compiles read, and the
    launch key they make: the type, then a summary of each path's value."""

    def __init__(self, t: type) -> None:
        self.type = t
        self.kinds: dict[tuple[str, ...], Callable[[Any], object]] = {}
        self.get: Callable[[Any], Any] | None = None
        self.summaries: tuple = ()
        self.sigs: Callable[[Any], Any] | None = None
        """When every path read is an array: one getter of their `qd.ndarray` signatures."""
        self.per_instance = False
        """Whether keys start with the argument's `instance_token` (a data-oriented object's
        primitives, baked or frozen per instance)."""
        self.used: set[str] = set()
        """A frozen dataclass type's: the flattened names of the members read (`frozen_plan`)."""
        self.last: tuple[tuple, tuple, list[tuple[int, Callable[[Any], bool] | None]]] | None = None
        """The values of the last key made, the key, and the positions of the values whose part
        of the key can change while they are the same object (`keeps`), each with its test that
        it has not (`unchanged_check`): a launch with the same objects reuses the key, each of
        those tested or described again."""
        self.roots: list = []
        """Weak references to the struct `last` was read from (`released_with`)."""

    def frozen_plan(self, name: str, members: dict) -> None:
        """Record, for a frozen dataclass type, the plan of the members the kernel's compiles
        read as kernel arguments (`frozen_plans`)."""
        used = self.used | {
            flat_name(name, path[0])
            for (root, path), kind in members.items()
            if root == name and kind == PARAM and len(path) == 1
        }
        if used != self.used or not self.used:
            self.used = used
        fields = {f.name: f for f in dataclasses.fields(self.type)}
        frozen_plan(self.used, self.type, name, fields)

    def learn(self, paths: dict[tuple[str, ...], Callable[[Any], object]]) -> bool:
        """Add what one compile read (path -> its summary function); True if anything is new."""
        new = {p: f for p, f in paths.items() if self.kinds.get(p) is not f}
        if not new:
            return False
        self.kinds.update(new)
        self.last = None
        self.get = getter(*(path_text("", p) for p in self.kinds))
        self.summaries = tuple(self.kinds.values())
        self.per_instance = any(f is baked or f is frozen for f in self.summaries)
        arrays = all(f is array_key for f in self.summaries)
        self.sigs = getter(*(path_text("", (*p, "_sig")) for p in self.kinds)) if arrays else None
        return True

    def key(self, a: object) -> tuple:
        if self.per_instance:
            token = instance_token(a)
            if token is None:
                return ("by value", *self.by_value(a))
            return (token, *self.by_path(a))
        return self.by_path(a)

    def by_value(self, a: object) -> tuple:
        """The key with the primitives `baked` stands for described by value."""
        if self.get is None:
            return (self.type,)
        values = self.get(a) if len(self.summaries) > 1 else (self.get(a),)
        return (
            self.type,
            *[summary(v) if f is baked else f(v) for f, v in zip(self.summaries, values)],
        )

    def by_path(self, a: object) -> tuple:
        if self.sigs is not None:
            try:
                return (self.type, self.sigs(a))  # all qd.ndarrays: one C call
            except AttributeError:
                pass  # a NumPy array among them
        if self.get is None:
            return (self.type,)
        values = self.get(a)
        if len(self.summaries) == 1:
            return (self.type, self.summaries[0](values))
        last = self.last
        if last is not None and (
            all(map(operator.is_, values, last[0])) or all(map(same, values, last[0]))
        ):
            parts = None
            for i, unchanged in last[2]:  # the values a key describes by content
                if unchanged is not None and unchanged(values[i]):
                    continue
                if parts is None:
                    parts = list(last[1])
                parts[i + 1] = self.summaries[i](values[i])  # described again
            return last[1] if parts is None else tuple(parts)
        key = (self.type, *[f(v) for f, v in zip(self.summaries, values)])
        self.last = (
            values,
            key,
            [
                (i, unchanged_check(v, key[i + 1]))
                for i, (f, v) in enumerate(zip(self.summaries, values))
                if not keeps(f, v)
            ],
        )
        self.roots = released_with(self, (a,))
        return key


class StructKey:
    """The launch key of a struct parameter's argument (an entry of `Kernel.key_fns`): its `Paths`
    for a type seen before; a plain template value by `template_key`; otherwise a TypeError, which
    sends the launch the slow way (bind, compile, learn)."""

    def __init__(self, typed: bool) -> None:
        self.typed = typed
        self.by_type: dict[type, Paths] = {}

    def __call__(self, a: object) -> object:
        paths = self.by_type.get(type(a))
        if paths is not None:
            return paths.key(a)
        if self.typed or is_struct(a):
            raise TypeError("a struct of a type not seen yet")
        return launch_key(a)


ZERO, ARRAY_WORDS, VECTOR_WORDS, SCALAR_WORD = "zero", "array", "vector", "scalar"
"""How a member parameter fills its launch words."""
SUMMARY: dict[str, Callable[[Any], object]] = {
    STRUCT: type,
    ITEMS: items,
    VALUE: summary,
    OPAQUE: launch_key,
    METHOD: method,
}
"""How a member path that is not a parameter is summarised in a launch key."""


def learn(kernel: Kernel, compiled: Compiled, templates: dict) -> tuple[Members | None, bool]:
    """After a compile: each struct parameter learns the paths it read, for its argument's type.
    The reader of the variant's members (None when it reads none), and whether a key changed."""
    launched = launch_params(compiled)
    params = {p.name: p.type for p in launched}
    changed = False
    for k, name in enumerate(kernel.param_names):
        ref, key = templates.get(name), kernel.params[k].key
        if not isinstance(ref, StructRef) or not isinstance(key, StructKey):
            continue
        lifted = lifts_primitives(ref.value)
        per_instance = is_data_oriented(ref.value)
        paths = {
            path: (
                array_key
                if isinstance(params.get(path_text(name, path)), ArrayType)
                else frozen
                if lifted and isinstance(params.get(path_text(name, path)), DType)
                else type
            )
            if kind == PARAM
            else baked
            if kind == VALUE and per_instance
            else SUMMARY[kind]
            for (root, path), kind in compiled.members.items()
            if root == name
        }
        known = key.by_type.setdefault(type(ref.value), Paths(type(ref.value)))
        changed |= known.learn(paths)
        if is_frozen(known.type):
            known.frozen_plan(name, compiled.members)
    if any(is_member(p) for p in launched):
        return Members(kernel, compiled), changed
    return None, changed


def released_with(holder: Paths | Members, roots: Sequence[object]) -> list:
    """Weak references to the struct arguments `holder.last` was read from: when one is
    collected, `holder.last` is dropped, and with it the members it held (a dropped solver's
    ndarrays are freed, as in Quadrants, instead of living until the kernel's next launch)."""

    def drop(ref: weakref.ref) -> None:
        if any(r is ref for r in holder.roots):
            holder.last = None

    refs = []
    for root in roots:
        try:
            refs.append(weakref.ref(root, drop))
        except TypeError:  # no weak references: its members stay until the next launch
            pass
    return refs


def same(v: object, w: object) -> bool:
    """`v is w`, or both the same func bound to the same object: `self.f` of a `@qd.func` method
    is a new `BoundFunc` at each attribute read (Genesis' solvers read several at each launch)."""
    if v is w:
        return True
    return (
        isinstance(v, BoundFunc)
        and isinstance(w, BoundFunc)
        and v.func is w.func
        and v.__self__ is w.__self__
    )


def unchanged_check(value: object, part: object) -> Callable[[Any], bool] | None:
    """For a member described by content in a launch key (`keeps` is False), a test that the same
    object still has the part `part` it had, cheaper than describing it again: a NumPy array of
    numbers by its shape, dtype and bytes; a `qd.Vector` / `qd.Matrix` of one by its attributes and
    its array's; a `qd.Tensor` of a field by the field (whose key is its identity); a list or tuple
    by the identity of its items, when each is a primitive or a func bound to a data-oriented
    object that the part keys by identity. None: described again."""
    t = type(value)
    if type(part) is not tuple:
        return None
    if t is np.ndarray and part[:1] == (np.ndarray,):
        _, dtype, shape, data = part
        return lambda v: v.shape == shape and v.dtype == dtype and v.tobytes() == data
    if (t is Vector or t is Matrix) and part[:1] == (t,):
        attrs = vars(value)
        keys, held, entries = set(attrs), tuple(attrs.values()), attrs.get("entries")
        inner = unchanged_check(entries, part[-1]) if type(entries) is np.ndarray else None
        if inner is None:
            return None
        return lambda v: (
            all(map(operator.is_, vars(v).values(), held))
            and vars(v).keys() == keys
            and inner(entries)
        )
    if t in TENSORS and part[:1] == ("tensor",):
        impl = cast(Tensor, value)._impl
        if not isinstance(impl, (FieldBase, StructField)):  # an ndarray's key is its signature
            return None
        return lambda v: vars(v).keys() == {"_impl"} and v._impl is impl
    if t is list or t is tuple:
        items = tuple(cast("list | tuple", value))
        if not items or not all(
            type(x) in PRIMITIVES
            or (
                type(x) is BoundFunc
                and is_data_oriented(x.__self__)
                and (x.func, instance_token(x.__self__)) in part[1:]
            )
            or (is_data_oriented(x) and (IDENTITY, type(x), instance_token(x)) in part[1:])
            for x in items
        ):
            return None
        return lambda v: len(v) == len(items) and all(map(operator.is_, v, items))
    return None


def keeps(summarize: Callable[[Any], object], value: object) -> bool:
    """Whether a member's part of a launch key stays what it is as long as the member is the same
    object: `lasts`, or a summary that reads nothing mutable (a struct's type, a method's func),
    or a value whose summary is its identity or value (a field, an enum member, a string, a
    NumPy scalar, a func, a class, a function or a module). A NumPy array, a vector or a list is
    described again at each launch (it can change in place)."""
    if summarize is type or summarize is frozen:
        return True
    if summarize is method:
        return type(value) is BoundFunc
    return lasts(value) or isinstance(value, KEEPS)


KEEPS = (
    str,
    type(None),
    enum.Enum,
    np.generic,
    FieldBase,
    StructField,
    Func,
    KernelDef,
    type,
    types.FunctionType,
    types.ModuleType,
)
"""Values whose summary in a launch key is their identity or their (immutable) value."""


def lasts(value: object) -> bool:
    """Whether a member value's launch words stay what they are as long as it is the same object:
    a number (immutable) or a qdlab ndarray, bare or in a tensor (its words are made when it is
    allocated). A NumPy array can be resized or made read-only in place, a vector changed."""
    return type(value) in (int, float, bool) or type(unwrap(value)) in NDARRAYS


class Members:
    """Fills a variant's struct member words from the arguments at launch: each member it read,
    found by one attribute getter per struct; zeros for the members it never read."""

    def __init__(self, kernel: Kernel, compiled: Compiled) -> None:
        names = kernel.param_names
        self.kernel = kernel.name
        self.first = len(names)
        self.params = [p for p in launch_params(compiled)[self.first :] if is_member(p)]
        used = {
            path_text(root, path)
            for (root, path), kind in compiled.members.items()
            if kind == PARAM
        }
        by_root: dict[int, list[str]] = {}
        self.kinds: list[str] = []
        """Per member parameter: ZERO (never read), ARRAY_WORDS, VECTOR_WORDS or SCALAR_WORD."""
        self.slots: list[tuple] = []
        """Per member parameter: (struct, position among that struct's values) when it is read,
        else its zero words."""
        for p in self.params:
            root, _, path = p.name.partition(".")
            self.kinds.append(
                ZERO
                if p.name not in used
                else ARRAY_WORDS
                if isinstance(p.type, ArrayType)
                else VECTOR_WORDS
                if isinstance(p.type, TensorType)
                else SCALAR_WORD
            )
            if p.name not in used:
                self.slots.append((0,) * abi.param_words(p.type))
                continue
            k = names.index(root)
            by_root.setdefault(k, []).append(path)
            self.slots.append((k, len(by_root[k]) - 1))
        self.getters = [(k, getter(*paths), len(paths) == 1) for k, paths in by_root.items()]
        self.ndarrays: tuple | None = None
        """When every member parameter is an array read from one struct: (struct, a getter of their
        `qd.ndarray` launch words, one of their extents), which fill them in two C calls."""
        if len(by_root) == 1 and all(kind is ARRAY_WORDS for kind in self.kinds):
            ((k, paths),) = by_root.items()
            self.ndarrays = (
                k,
                getter(*(f"{p}._words" for p in paths)),
                getter(*(f"{p}._extent" for p in paths)),
                len(paths) == 1,
            )
        self.last_nd: tuple[tuple, list] | None = None
        """The `ndarrays` launch words of the last launch, and the member words made of them."""
        self.written = {i - self.first for i in compiled.written if i >= self.first}
        self.last: tuple[dict[int, tuple], list, list[tuple[int, Any]]] | None = None
        """The member values of the last general fill, its words and extents, while every value is
        one whose words cannot change as long as it is the same object (`LASTING`)."""
        self.roots: list = []
        """Weak references to the structs `last` was read from (`released_with`)."""
        self.sizes = [p.type.size if isinstance(p.type, TensorType) else 0 for p in self.params]
        """Entries of each vector or matrix member parameter (0 for the others)."""

    def read(self, args: tuple) -> dict[int, tuple]:
        out = {}
        for k, get, single in self.getters:
            values = get(args[k])
            out[k] = (values,) if single else values
        return out

    def words(self, args: tuple, extents: list | None) -> list | None:
        """The member words, and their extents recorded for the alias check; None when a value
        does not fit (a vector of the wrong size): the caller binds the slow way. While the
        members are the objects of the last launch, the very list it returned (the launcher packs
        it only when it is another object, `Launcher.run_parts`)."""
        if self.ndarrays is not None:
            k, get_words, get_extents, single = self.ndarrays
            try:
                parts = get_words(args[k])
            except AttributeError:  # a NumPy array among them: the general way
                parts = None
            if parts is not None:
                parts = (parts,) if single else parts
                if extents is not None:
                    got = get_extents(args[k])
                    extents[self.first :] = (got,) if single else got
                last_nd = self.last_nd
                if last_nd is not None and all(map(operator.is_, parts, last_nd[0])):
                    return last_nd[1]
                out = list(itertools.chain.from_iterable(parts))
                self.last_nd = (parts, out)
                return out
        values = self.read(args)
        last = self.last
        if last is not None and all(
            len(v) == len(w) and all(map(operator.is_, v, w))
            for v, w in zip(values.values(), last[0].values())
        ):
            if extents is not None:
                for i, extent in last[2]:
                    extents[i] = extent
            return last[1]
        words: list = []
        found = []
        for i, (kind, slot) in enumerate(zip(self.kinds, self.slots)):
            if kind is ZERO:
                words.extend(slot)
                continue
            a: Any = unwrap(values[slot[0]][slot[1]])  # the member's value, of its kind
            if kind is ARRAY_WORDS:
                if type(a) in NDARRAYS:  # its words and extent, made when it was allocated
                    words.extend(a._words)
                    found.append((self.first + i, a._extent))
                    if extents is not None:
                        extents[self.first + i] = a._extent
                    continue
                arr, grad = (a, None) if type(a) is np.ndarray else host_arrays(a)
                arr_words, extent = array_launch(arr, grad)
                words.extend(arr_words)
                if i in self.written and not arr.flags.writeable:
                    raise QdValueError(
                        f"kernel `{self.kernel}` writes member `{self.params[i].name}`, "
                        "which is a read-only array."
                    )
                if extents is not None:
                    extents[self.first + i] = extent
            elif kind is VECTOR_WORDS:
                entries = vector_args.entries(a)
                if len(entries) != self.sizes[i]:
                    return None
                words.extend(entries)
            else:
                words.append(a)
        lasting = all(lasts(v) for vs in values.values() for v in vs)
        self.last = (values, words, found) if lasting else None
        if lasting:
            self.roots = released_with(self, [args[k] for k in values])
        return words

    def checked(self, args: tuple) -> list:
        """The member words of a launch whose words did not pack: each value converted to its
        parameter's type, or the error that names it."""
        values = self.read(args)
        words: list = []
        for p, slot in zip(self.params, self.slots):
            if len(slot) != 2:
                words.extend(slot)
                continue
            a, t = values[slot[0]][slot[1]], p.type
            if isinstance(t, DType):
                if type(a) is float and not t.is_float and lifts_primitives(args[slot[0]]):
                    raise QdTypeError(
                        f"kernel `{self.kernel}`: primitive member `{p.name}` of a "
                        "@qd.data_oriented(template_primitives=False) object was lifted as an "
                        f"integer kernel argument (its type at first compile), but is now a float "
                        f"({a!r}); coercing it would truncate. Keep the member's type stable "
                        "across launches, or use the default template_primitives=True."
                    )
                words.append(scalar_arg(a, t, self.kernel, p.name))
            elif isinstance(t, TensorType):
                entries = vector_args.entries(a)
                if len(entries) != t.size:
                    raise QdTypeError(
                        f"kernel `{self.kernel}`: member `{p.name}` has {len(entries)} entries, "
                        f"but the parameter is a {t} ({t.size} entries)."
                    )
                words.extend(scalar_arg(x, t.dtype, self.kernel, p.name) for x in entries)
            else:
                arr, grad, _ = array_arg(a, ArrayAnnotation(), self.kernel, p.name)
                words.extend(array_launch(arr, grad)[0])
        return words

    def values(self, args: tuple) -> list:
        """The members as the CUDA launcher takes them: (array, gradient) per array."""
        values = self.read(args)
        out: list = []
        for p, slot in zip(self.params, self.slots):
            t = p.type
            if len(slot) != 2:
                out.append(
                    (np.zeros((0,) * t.rank), None)
                    if isinstance(t, ArrayType)
                    else [0] * t.size
                    if isinstance(t, TensorType)
                    else 0
                )
                continue
            a = values[slot[0]][slot[1]]
            if isinstance(t, ArrayType):
                arr, grad, _ = array_arg(a, ArrayAnnotation(), self.kernel, p.name)
                out.append((arr, grad))
            else:
                out.append(vector_args.entries(a) if isinstance(t, TensorType) else a)
        return out


def describe(kernel: Kernel, compiled: Compiled, templates: dict) -> str:
    """One specialisation of a kernel, as `qd.explain` lists it: each template argument's value,
    and for a struct the members its compile read (`c: Config {mode='add', table: ndarray<f32,
    1>}`)."""
    params = {p.name: p.type for p in launch_params(compiled)}
    out = []
    for name in kernel.param_names:
        if name not in templates:
            continue
        ref = templates[name]
        if not isinstance(ref, StructRef):
            out.append(f"{name}={brief(ref)}")
            continue
        parts = []
        for (root, path), kind in compiled.members.items():
            dotted = path_text("", path)
            if root != name or kind in (STRUCT, METHOD):
                continue
            if kind == PARAM:
                parts.append(f"{dotted}: {params.get(f'{name}.{dotted}')}")
            else:
                value = getter(dotted)(ref.value) if path else ref.value
                text = brief(value)
                parts.append(
                    f"{dotted or '(whole)'}={text if len(text) < 40 else text[:37] + '...'}"
                )
        out.append(f"{name}: {type(ref.value).__name__} {{{', '.join(parts)}}}")
    return ", ".join(out) or "(no template arguments)"


PLAIN_REPRS = frozenset({"builtins", "numpy", "qdlab"})
"""Packages whose objects' `repr` is cheap and says what they hold (`brief` writes it)."""


def brief(v: object, depth: int = 0) -> str:
    """A value as `describe` lists it: its `repr` when its type's is cheap data (a number, a
    string, an enum member, a NumPy value, one of qdlab's objects, a list or tuple of such), else
    `<TypeName>`. A program's own `repr` can cost a lot and is run for every variant compiled,
    whether or not anyone looks (Genesis' inspects the call stack: 1.5 s of an MPM scene's
    build)."""
    t = type(v)
    if (t is list or t is tuple) and depth < 2:
        items = cast("list | tuple", v)
        text = ", ".join(brief(x, depth + 1) for x in items[:6]) + (
            ", ..." if len(items) > 6 else ""
        )
        return f"[{text}]" if t is list else f"({text}{',' if len(items) == 1 else ''})"
    if t is dict:
        return f"<dict of {len(cast(dict, v))}>"
    if t is BoundFunc:  # its repr is its object's
        bound = cast(BoundFunc, v)
        return f"<bound qd.func {bound.__name__} of {brief(bound.__self__, 2)}>"
    if (
        t.__repr__ is object.__repr__
        or t.__module__.partition(".")[0] in PLAIN_REPRS
        or isinstance(v, enum.Enum)
    ):
        return repr(v)
    return f"<{t.__name__}>"
