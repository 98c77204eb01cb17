"""`@qd.dataclass` and `qd.types.struct(...)`: struct types with typed members (scalars, vectors and
matrices, other struct types), as the reference has them.

A struct type is a Python class whose `__qd_struct__` maps each member to its type; its instances
hold member values converted to those types (an `i16` member given 65537 holds 1, as in the
reference). As a kernel parameter a struct is flattened like a dataclass (`host/struct_args.py`):
each member is a parameter of its own (`a.b.x`), and the struct's `@qd.func` methods are inlined
with it as `self`. `Foo.field(shape=...)` makes a struct field (`host/struct_field.py`).
"""

from __future__ import annotations

import inspect
import typing
from typing import TypeGuard

import numpy as np

from ..compiler.frontend.struct_values import members_of
from ..core.errors import QdSyntaxError, QdTypeError
from ..core.fields import FieldBase
from ..core.language import ArrayAnnotation, Matrix, MatrixType
from ..core.types import DType
from . import vector_args
from .array_args import NDARRAYS, annotation, scalar_type
from .struct_field import StructField, struct_field


def is_struct_type(t: object) -> TypeGuard[type]:
    """Whether `t` is a `@qd.dataclass` / `qd.types.struct` type."""
    return members_of(t) is not None


def convert(value: object, t: object, name: str) -> object:
    """A member's value as its type holds it."""
    if is_struct_type(t):
        if getattr(type(value), "__qd_anonymous_struct__", False):
            value = dict(vars(value))  # `qd.Struct(a=1)`: its members
        if isinstance(value, dict):
            return t(**value)
        if isinstance(value, (int, float, np.generic, Matrix, list, tuple)):
            return t(value)  # as `t(value)` in Quadrants: its first member, the others zero
        if not isinstance(value, t):
            raise QdTypeError(
                f"member `{name}` must be a {t.__name__}, not {type(value).__name__}."
            )
        return value
    if isinstance(t, MatrixType):
        return value if isinstance(value, Matrix) else t(*np.asarray(value).ravel().tolist())
    dtype = scalar_type(t)
    if not isinstance(dtype, DType):
        return value
    if not isinstance(value, (bool, int, float, np.generic)):
        raise QdTypeError(
            f"member `{name}` must be a number ({dtype}), not {type(value).__name__}."
        )
    if dtype.is_float:
        return float(value)
    return bool(value) if dtype.bits == 1 else int(np.array(value).astype(dtype.np))


def _init(self: object, *args: object, **kwargs: object) -> None:
    members = members_of(type(self)) or {}
    if len(args) > len(members):
        raise TypeError(f"{type(self).__name__} takes {len(members)} members, got {len(args)}")
    values = dict(zip(members, args))
    for k, v in kwargs.items():
        if k not in members:
            raise TypeError(f"{type(self).__name__} has no member `{k}`")
        values[k] = v
    for k, t in members.items():
        v = values.get(k, 0 if not (members_of(t) or isinstance(t, MatrixType)) else None)
        if v is None:  # a struct's default, or a matrix's zeros
            v = t() if is_struct_type(t) else t(*[0] * int(np.prod(t.shape)))  # type: ignore[operator, union-attr]
        object.__setattr__(self, k, convert(v, t, k))


def _repr(self: object) -> str:
    inner = ", ".join(f"{k}={getattr(self, k)!r}" for k in members_of(type(self)) or {})
    return f"{type(self).__name__}({inner})"


def _eq(self: object, other: object) -> bool:
    return type(self) is type(other) and all(
        np.all(getattr(self, k) == getattr(other, k)) for k in members_of(type(self)) or {}
    )


def dataclass(cls: type) -> type:
    """`@qd.dataclass`: the class's annotated names are its members (a default value is refused, as
    in the reference); its other attributes (`@qd.func` methods, Python methods) stay."""
    try:
        hints = inspect.get_annotations(cls, eval_str=True)
    except Exception:  # noqa: BLE001 - an annotation its module cannot evaluate
        hints = dict(getattr(cls, "__annotations__", {}))
    for name, t in hints.items():
        if name in vars(cls):
            raise QdSyntaxError("Default value in @dataclass is not supported.")
        if is_tensor(t):
            raise ValueError(f"Invalid data type {t}")
    members, groups = unpack(hints)
    namespace = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    namespace.update(
        __qd_struct__=members,
        _unpacked_groups=groups,
        members=dict(members),
        __init__=_init,
        __repr__=_repr,
        __eq__=_eq,
        __hash__=None,
        field=classmethod(struct_field),
    )
    return type(cls.__name__, cls.__bases__, namespace)


def unpacked_name(group: str, index: int) -> str:
    """The scalar member that holds entry `index` of unpacked vector member `group`."""
    return f"_{group}{index}"


def unpack(hints: dict[str, object]) -> tuple[dict[str, object], dict[str, tuple]]:
    """A struct's members with each `qd.types.vector(n, dtype, unpacked=True)` member as n scalar
    members (`r` as `_r0` ... `_r<n-1>`), and the unpacked groups, name -> (n, dtype, naming), as
    Quadrants' `_unpacked_groups`; a name that two members would share is refused."""
    members: dict[str, object] = {}
    groups: dict[str, tuple] = {}
    for name, t in hints.items():
        if isinstance(t, MatrixType) and t.unpacked:
            groups[name] = (t.n, t.dtype, unpacked_name)
            for i in range(t.n or 0):
                sub = unpacked_name(name, i)
                if sub in members:
                    raise QdSyntaxError(
                        f"unpacked vector field {name!r} would expand to a synthetic field {sub!r} "
                        "that collides with another member of the same struct; rename one of them."
                    )
                members[sub] = t.dtype
        elif name in members:
            raise QdSyntaxError(
                f"member name {name!r} collides with a synthetic field of an earlier vector field "
                "declared with unpacked=True; rename one of them."
            )
        else:
            members[name] = t
    return members, groups


def is_tensor(t: object) -> bool:
    """A member type a struct cannot hold, as the reference refuses it: an array annotation, or
    an ndarray, field or NumPy array given as a type (a struct holds its members by value)."""
    return isinstance(annotation(t), ArrayAnnotation) or isinstance(
        t, (*NDARRAYS, FieldBase, StructField, np.ndarray)
    )


def struct(**members: object) -> type:
    """`qd.types.struct(a=qd.i16, b=qd.f32)`: a struct type with these members."""
    cls = type("Struct", (), {"__annotations__": members, "__module__": "qd.types.struct"})
    return dataclass(typing.cast(type, cls))


def return_parts(t: type) -> list | None:
    """A struct return's leaves, in member order, as `vector_args.return_parts` gives each (its
    entry types and shape); None when a member is not a return type."""
    parts: list = []
    for m in (members_of(t) or {}).values():
        part = return_parts(m) if is_struct_type(m) else vector_args.return_parts(m)
        if part is None:
            return None
        parts.extend(part)
    return parts


def tuple_return(ann: object) -> tuple[list, list[type | None]] | None:
    """For a tuple return annotation with a struct among its elements (`tuple[qd.f32, S]`):
    each element's parts (as `return_parts` gives them) and each element's struct type (None for
    a scalar, vector or matrix); None for any other annotation, or one that is not a return
    type."""
    elements = vector_args.tuple_elements(ann)
    if elements is None or not any(is_struct_type(e) for e in elements):
        return None
    parts: list = []
    structs: list[type | None] = []
    for e in elements:
        part = return_parts(e) if is_struct_type(e) else vector_args.return_parts(e)
        if part is None:
            return None
        parts.extend(part)
        structs.append(e if is_struct_type(e) else None)
    return parts, structs


def rebuild_tuple(structs: list[type | None], values: object) -> tuple:
    """A tuple return from its parts' values (numbers, `qd.Vector`s), a struct element built from
    as many parts as it has leaves."""
    todo = list(values) if isinstance(values, tuple) else [values]
    out: list = []
    for t in structs:
        if t is None:
            out.append(todo.pop(0))
            continue
        n = len(return_parts(t) or [])
        out.append(rebuild(t, tuple(todo[:n])))
        del todo[:n]
    return tuple(out)


def rebuild(t: type, leaves: object) -> object:
    """A struct return from its leaves (numbers, `qd.Vector`s), in member order."""
    todo = list(leaves) if isinstance(leaves, tuple) else [leaves]

    def build(cls: type) -> object:
        return cls(
            **{
                k: build(m) if is_struct_type(m) else todo.pop(0)
                for k, m in (members_of(cls) or {}).items()
            }
        )

    return build(t)


class Struct:
    """`qd.Struct(a=1, v=vec)`: a struct value of an anonymous type (in a kernel, its members
    typed by their values); `qd.Struct.field({"a": qd.f32, ...}, shape=...)`: a field of an
    anonymous struct type."""

    __qd_anonymous_struct__ = True

    def __init__(self, *dicts: object, **members: object) -> None:
        for d in dicts:
            if not isinstance(d, dict):
                raise QdTypeError(f"qd.Struct takes dicts and keywords, not {type(d).__name__}.")
            members = {**d, **members}
        self.__dict__.update(members)

    def keys(self) -> list[str]:
        return list(self.__dict__)

    @property
    def entries(self) -> dict[str, object]:
        """The members, name -> value (a property, as in Quadrants)."""
        return dict(self.__dict__)

    @property
    def items(self) -> typing.ItemsView[str, object]:
        """`s.items`: the members' (name, value) pairs (a property, as in Quadrants)."""
        return self.entries.items()

    @property
    def methods(self) -> dict[str, typing.Callable]:
        """The struct type's methods: none for a `qd.Struct` value, as in Quadrants."""
        return {}

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)

    def __repr__(self) -> str:
        return repr(self.__dict__)

    @staticmethod
    def field(members: dict, **kwargs: typing.Any) -> StructField:
        return struct_field(struct(**members), **kwargs)
