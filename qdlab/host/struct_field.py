"""Struct fields: `S.field(shape=...)` of a `@qd.dataclass` or `qd.types.struct(...)` type, and
`qd.Struct.field({...}, shape=...)`.

A struct field is one field per member (a nested struct member is a struct field of its own), all
of the same shape: `s.pos` is the member's field, with everything a field has. Kernels see each
member as the field it is (`s[i].pos` is `s.pos[i]`), so the split's gate tells members apart as
it tells fields apart. On the host, `s[i]` is a view of element `i` whose members read and write
the fields (`s[i].a = 1`), `to_numpy()` a dict of the members' arrays (nested dicts for nested
structs), as the reference gives them.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..compiler.frontend.struct_values import members_of
from ..core.errors import QdValueError
from ..core.fields import Layout, StructFieldBase
from ..core.language import Matrix
from . import state
from .field import TOKEN, Field, field

_uids = itertools.count()


class StructField(StructFieldBase):
    """A field of a struct type: `members` maps each member's name to its field."""

    members: dict[str, Field | StructField]  # type: ignore[assignment]  # narrower than the base's
    name: str
    uid: int
    soa: bool
    key: tuple

    def __init__(
        self,
        struct_type: type,
        members: dict[str, Field | StructField],
        name: str = "",
        soa: bool = False,
    ) -> None:
        object.__setattr__(self, "struct_type", struct_type)
        object.__setattr__(self, "soa", soa)
        """Made with `layout=qd.Layout.SOA`: its members are zero-copy viewable one by one (an
        AOS struct field's are not in Quadrants, whose members share a cell; qdlab keeps each
        member apart either way, so only what `copy=False` allows differs)."""
        object.__setattr__(self, "members", members)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "uid", next(_uids))
        object.__setattr__(self, "key", ("structfield", TOKEN, self.uid))
        object.__setattr__(self, "field_dict", dict(members))
        """Its members' fields by name (an instance attribute, as in Quadrants)."""
        StructFieldBase._made = True

    # -- members -----------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> object:
        members = self.__dict__.get("members", {})
        if name in members:
            return members[name]
        if name == "grad":  # as an instance attribute, as in Quadrants; found when it is read, so
            return self._grad()  # that `qd.root.lazy_grad()` after making the field gives it one
        raise AttributeError(f"struct field has no member `{name}`")

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a struct field's member `{name}` cannot be replaced")

    @property
    def keys(self) -> list[str]:
        """The members' names (a property, as the reference has it)."""
        return list(self.members)

    field_dict: dict[str, Field | StructField]
    grad: StructField | None

    def get_member_field(self, key: str) -> object:
        return self.members[key]

    def _leaves(self) -> list[Field]:  # type: ignore[override]
        """Every scalar, vector and matrix field it holds, nested structs' too, in member order."""
        out: list[Field] = []
        for m in self.members.values():
            out.extend(m._leaves() if isinstance(m, StructField) else [m])
        return out

    @property
    def shape(self) -> tuple[int, ...]:
        return self._leaves()[0].shape

    @property
    def _index_offset(self) -> tuple[int, ...]:
        return self._leaves()[0]._index_offset

    @property
    def dtype(self) -> object:
        """Its first member's scalar type, as Quadrants answers (its representative SNode's)."""
        return self._leaves()[0].dtype

    @property
    def layout(self) -> tuple[int, ...] | None:
        """None: a struct field has no layout tag of its own, as in Quadrants."""
        return None

    @property
    def snode(self) -> object:
        """Its first member's place, as Quadrants' representative SNode."""
        return self._leaves()[0].snode

    def parent(self, n: int = 1) -> object:
        """The SNode `n` levels above its first member's place (`Field.parent`)."""
        return self._leaves()[0].parent(n)

    def to_dlpack(self, versioned: bool = False) -> object:
        raise NotImplementedError(
            "a struct field is no single tensor: export its members (`s.a.to_dlpack()`)."
        )

    def _grad(self) -> StructField | None:
        """The members' gradients as a struct field, as Quadrants has one (allocated or not:
        `has_grad()`) when every member is a float; None when one is not."""
        grads: dict[str, Field | StructField] = {}
        for k, m in self.members.items():
            g = m.grad
            if g is None:  # every leaf needs a gradient: none is missing
                return None
            grads[k] = g
        return StructField(
            self.struct_type, grads, f"{self.name}.grad" if self.name else "", self.soa
        )

    def has_grad(self) -> bool:
        """Whether its members' gradients are allocated (a method, as in Quadrants)."""
        return all(f.has_grad() for f in self._leaves())

    def has_dual(self) -> bool:
        """Whether its members' duals are allocated (forward mode)."""
        return all(f.has_dual() for f in self._leaves())

    def _signature(self) -> str:
        """Its members' types and shape, as a manifest checks a struct field reached by name."""
        parts = [
            f"{k}:{m._signature() if isinstance(m, StructField) else (m.dtype, m.element)}"
            for k, m in self.members.items()
        ]
        return f"{self.struct_type.__name__}{{{','.join(parts)}}}{self.shape}{self._index_offset}"

    def __qd_fingerprint__(self) -> str:
        return f"structfield:{TOKEN}:{self.uid}"

    # -- host access -------------------------------------------------------------------------------
    def __getitem__(self, index: object) -> StructElement:
        self._leaves()[0]._key_of(index)  # checks the index
        return StructElement(self, index)

    def __setitem__(self, index: object, value: object) -> None:
        StructElement(self, index).assign(value)

    def _missing(self, value: dict) -> str | None:
        """The path of the first member (of a nested struct's too) that a dict of member values
        lacks, or None."""
        for k, m in self.members.items():
            if k not in value:
                return k
            given = value[k]
            inner = (
                m._missing(given)
                if isinstance(m, StructField) and isinstance(given, dict)
                else None
            )
            if inner is not None:
                return f"{k}.{inner}"
        return None

    def to_numpy(self, *, copy: bool | None = True) -> dict[str, object]:
        """Each member's array; `copy` as a field's, per member (`_member_copy`)."""
        copy = self._member_copy(copy, "")
        return {k: m.to_numpy(copy=copy) for k, m in self.members.items()}

    def _member_copy(self, copy: bool | None, arch: str) -> bool | None:
        """`copy` for each member: an AOS struct field's members are never a zero-copy view, as in
        Quadrants (`copy=None` copies them, `copy=False` is refused in its words)."""
        if self.soa or copy is True:
            return copy
        if copy is None:
            return True
        dtype = next(iter(self._leaves())).dtype.name
        raise ValueError(f"Zero-copy not available for {arch}dtype={dtype}")

    def from_numpy(self, arrays: object) -> None:
        if not isinstance(arrays, dict):
            raise QdValueError(
                "a struct field's from_numpy takes a dict of arrays, one per member."
            )
        for k, m in self.members.items():
            m.from_numpy(arrays[k])  # every member, as there

    def to_torch(self, device: object = None, *, copy: bool | None = True) -> dict[str, object]:
        """Each member's tensor; `copy` as a field's, per member (`_member_copy`)."""
        arch = state.config().arch
        copy = self._member_copy(copy, f"arch={'x64' if arch == 'cpu' else arch}, ")
        return {k: m.to_torch(device=device, copy=copy) for k, m in self.members.items()}

    def from_torch(self, tensors: object) -> None:
        if not isinstance(tensors, dict):
            raise QdValueError(
                "a struct field's from_torch takes a dict of tensors, one per member."
            )
        for k, m in self.members.items():
            m.from_torch(tensors[k])  # every member, as there

    def fill(self, value: object) -> None:
        for f in self._leaves():
            f.fill(value)

    def copy_from(self, other: object) -> None:
        if not isinstance(other, StructField) or other.keys != self.keys:
            raise TypeError("a struct field copies from a struct field with the same members")
        for k, m in self.members.items():
            m.copy_from(other.members[k])

    def __iter__(self) -> object:
        raise NotImplementedError("Struct for is only available in Quadrants scope.")

    def __str__(self) -> str:
        return str(self.to_numpy())

    def __repr__(self) -> str:
        return "<qd.StructField>"


class StructElement:
    """`s[i]` on the host: a view of one element; its members read and write the fields."""

    _owner: StructField
    _index: object

    def __init__(self, owner: StructField, index: object) -> None:
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_index", index)

    def __getattr__(self, name: str) -> object:
        m = self._owner.members.get(name)
        if m is None:
            raise AttributeError(f"{self._owner.struct_type.__name__} has no member `{name}`")
        return m[self._index]

    def __setattr__(self, name: str, value: object) -> None:
        m = self._owner.members.get(name)
        if m is None:
            raise AttributeError(f"{self._owner.struct_type.__name__} has no member `{name}`")
        m[self._index] = value

    @property
    def keys(self) -> list[str]:
        return self._owner.keys

    def assign(self, value: object) -> None:
        """`s[i] = S(...)`, or a dict with every member's value (of a nested struct's, a dict or a
        struct value); a member the dict lacks is a KeyError naming it, as in Quadrants, and then
        nothing is written. A `qd.Struct(...)` value is taken as the dict of its members."""
        if getattr(type(value), "__qd_anonymous_struct__", False):
            value = dict(vars(value))
        if isinstance(value, dict):
            missing = self._owner._missing(value)
            if missing is not None:
                raise KeyError(
                    f"`{missing}`: an element of a {self._owner.struct_type.__name__} field is set "
                    f"from a dict without this member; give every member ({', '.join(self.keys)})."
                )
        for k in self._owner.members:
            if isinstance(value, dict):
                setattr(self, k, value[k])
            elif isinstance(value, StructElement) or members_of(type(value)) is not None:
                setattr(self, k, getattr(value, k))
            else:
                raise TypeError(
                    f"an element of a {self._owner.struct_type.__name__} field takes a "
                    f"{self._owner.struct_type.__name__} or a dict, not {type(value).__name__}."
                )

    def __getitem__(self, key: str) -> object:
        """`s[i]["a"]`: a member by name, as `s[i].a`."""
        if key not in self._owner.members:
            raise KeyError(key)
        return getattr(self, key)

    def __setitem__(self, key: str, value: object) -> None:
        if key not in self._owner.members:
            raise KeyError(key)
        setattr(self, key, value)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {}
        for k in self._owner.members:
            v = getattr(self, k)
            if isinstance(v, StructElement):
                out[k] = v.to_dict()
            elif isinstance(v, Matrix):
                out[k] = v.to_list() if hasattr(v, "to_list") else v.entries.tolist()  # type: ignore[attr-defined]
            else:
                out[k] = v
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StructElement):
            other = other.to_dict()
        elif members_of(type(other)) is not None:
            other = {k: getattr(other, k) for k in self._owner.members}
        if not isinstance(other, dict):
            return NotImplemented
        mine = self.to_dict()
        return mine.keys() == other.keys() and all(
            (mine[k] == other[k])
            if isinstance(mine[k], dict)
            else np.all(np.asarray(mine[k]) == np.asarray(other[k]))
            for k in mine
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.to_dict())


def struct_field(
    struct_type: type,
    shape: object = None,
    name: str = "",
    offset: object = None,
    needs_grad: bool = False,
    needs_dual: bool = False,
    layout: object = None,
) -> StructField:
    """`S.field(shape=..., needs_grad=...)`: one field per member (a struct field for a nested
    struct); without a shape the members are placed later (`qd.root.dense(...).place(s)`). The
    layout (`qd.Layout.AOS` / `SOA`) changes no value, so it is accepted and ignored."""
    members: dict[str, Field | StructField] = {}
    for k, t in (members_of(struct_type) or {}).items():
        label = f"{name}.{k}" if name else k
        if isinstance(t, type) and members_of(t) is not None:
            members[k] = struct_field(t, shape, label, offset, needs_grad, needs_dual, layout)
        else:
            members[k] = field(
                t, shape, name=label, offset=offset, needs_grad=needs_grad, needs_dual=needs_dual
            )
    if not members:
        raise QdValueError(f"{struct_type.__name__} has no members to make a field of.")
    return StructField(struct_type, members, name, layout == Layout.SOA)
