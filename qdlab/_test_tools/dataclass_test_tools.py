"""Values for dataclass parameters, made from their annotations alone: an ndarray of 10 along
each axis for an ndarray member, a 1-d `qd.i32` field of 10 for a template one, a dataclass for
a nested dataclass."""

from __future__ import annotations

import dataclasses
from typing import Any

import qdlab as qd
from qdlab.core.language import ArrayAnnotation
from qdlab.host.struct_args import member_annotations


def _make_child_obj(obj_type: Any) -> Any:
    if isinstance(obj_type, ArrayAnnotation):
        if obj_type.ndim is None or obj_type.dtype is None:
            raise TypeError(f"{obj_type}: give the dtype and ndim to build an ndarray for it")
        return qd.ndarray(obj_type.dtype, shape=(10,) * obj_type.ndim)
    if dataclasses.is_dataclass(obj_type) and isinstance(obj_type, type):
        return build_struct(obj_type)
    if obj_type is qd.Template or isinstance(obj_type, qd.Template):
        return qd.field(qd.i32, (10,))
    raise TypeError(f"no value to build for the annotation {obj_type!r}")


def build_struct(struct_type: Any) -> Any:
    """An instance of the dataclass `struct_type`, each member built from its annotation (a string
    one, under `from __future__ import annotations`, looked up in its module)."""
    members = member_annotations(struct_type)
    return struct_type(**{name: _make_child_obj(t) for name, t in members.items()})


def build_obj_tuple_from_type_dict(name_to_type: dict[str, Any]) -> tuple[Any, ...]:
    """One value per annotation, in the dict's order."""
    return tuple(_make_child_obj(t) for t in name_to_type.values())
