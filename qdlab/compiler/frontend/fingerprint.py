"""Fingerprints: a description of a value a kernel baked in at compile time, by its content.

Equal fingerprints compile to equal code. The frontend records one for every global, closure value
and attribute chain it reads; the manifest tier checks them again before it serves a kernel without
lowering it, and template arguments are told apart by them. A value that cannot be described
faithfully is UNKNOWN, and whatever rests on it is compiled again rather than served.

What a fingerprint describes:

- numbers, strings, containers, arrays (by dtype, shape and a hash of their bytes) and other objects
  (by their class, `__dict__`, slots and pickle state) by what they hold now;
- a function of the user's code by its code object, defaults, closure cells and the globals its
  code names (what an implicit call at compile time, a property, an `__eq__`, a `key=`, reads);
- a class of the user's code by its namespace. A class of an importable module file (not
  `__main__`, not made in a function call) is split in two: its *definition*, what the class
  statement and its decorators made of its source (annotations, a dataclass's fields and generated
  methods, an enum's members and tables: `_defined`), is described when this process first meets
  the class and reused while every name of its namespace holds the same object; the rest (its own
  attributes, the methods its source defines, its bases) is described at every check. So a value
  rebound, added or deleted on the class, or mutated in place, a global one of its methods reads,
  and an environment that made another class of the same file are all seen; what is trusted is
  that a program does not mutate in place the fields, annotations or member tables of a class it
  already used (qdlab's own struct layouts are read once per class too, `member_annotations`).
  Other classes and functions it reaches are described afresh at every check, not with it;
- a `@qd.func` or kernel by a digest of its source, read again when its code object or its file
  changed (the compiler reads that source, not the function object); a `@qd.func`'s parameter
  defaults by their values too;
- Python's, installed packages' and qdlab's functions and classes by a stamp of their file, taken
  again when the file's size or time changes; modules and qd built-ins by name.

Describing a module's class by its content rather than by its file costs one walk of its
definition per class and process: a Genesis checkout's warm `scene.build()` walked ~5 million
objects when every check described every class in full (4.4 s), ~50,000 with definitions kept and
each object described once per check (`manifest.deps_hold`).
"""

from __future__ import annotations

import contextlib
import copyreg
import enum
import functools
import hashlib
import os
import sys
import sysconfig
import types
import typing
import weakref
from collections.abc import Callable

from qdlab.core import QDLAB_DIR
from qdlab.core.fields import FieldBase, StructFieldBase
from qdlab.core.language import BoundFunc, Builtin, Func, KernelDef

from .source import MISSING, revision, source_lines

UNKNOWN = "unfingerprintable"
"""The fingerprint of a value that cannot be described faithfully: a kernel that read one gets no
manifest."""

_NODES, _DEPTH, _BYTES = 50_000, 40, 64 << 20
"""Bounds on one fingerprint: values visited, nesting, buffer bytes hashed. Past any of them:
UNKNOWN."""


def fingerprint(value: object, leaf: Callable[[object], str | None] | None = None) -> str:
    """A description of a value a kernel baked in, by content: equal fingerprints compile to equal
    code.

    Functions are described by their code, defaults, closure cells and the globals their code names
    (of a module they read, the attributes their code names); classes by their namespace (a module
    file's by its definition as first met and the rest of it now, see the module's docstring);
    arrays and other buffers by dtype, shape and a hash of their bytes; other objects by their
    `__dict__`, slots and pickle state. Modules, qd built-ins and the code of Python, installed
    packages and qdlab (by a stamp of their file) are described by name; a `@qd.func` by its
    source. Anything else, or past the bounds, is UNKNOWN. `leaf` may describe an object in its own
    words (a struct argument's ndarrays by their signature, not their data) by returning a string
    for it."""
    try:
        text = _Fingerprint(leaf=leaf).of(value, 0)
    except Exception:  # noqa: BLE001 - _Unknown, RecursionError, or what a user's __reduce__ raised
        return UNKNOWN
    return text if len(text) <= 200 else "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class _Unknown(Exception):
    pass


_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: set on C types, never on a class statement's
_SCALARS = frozenset((type(None), bool, int, float, complex, str, type(...), type(NotImplemented)))


class _Fingerprint:
    def __init__(self, nodes: int = 0, leaf: Callable[[object], str | None] | None = None) -> None:
        self.leaf = leaf
        self.seen: dict[int, int] = {}  # id -> visit number, for shared and cyclic references
        self.alive: list[object] = []  # keeps what was visited alive, so no id is reused meanwhile
        self.nodes = nodes
        self.bytes = 0
        self.defining: _Defining | None = None  # set while a class's definition is described
        self.claimed = False  # whether `leaf` described anything
        self.stamps: dict[str, object] = {}  # filename -> its stamp, in this walk

    def of(self, v: object, depth: int) -> str:
        self.nodes += 1
        if self.nodes > _NODES or depth > _DEPTH:
            raise _Unknown
        if type(v) in _SCALARS:
            self.bytes += len(v) if type(v) is str else 0  # type: ignore[arg-type]
            return f"{type(v).__name__}:{v!r}"
        if v is MISSING:
            return "missing"
        if self.defining is not None:
            if v is self.defining.cls:
                return "<class>"
            if self.defining.outside(v):
                return self.defining.child(v)
        if id(v) in self.seen:
            return f"@{self.seen[id(v)]}"
        self.seen[id(v)] = len(self.seen)
        self.alive.append(v)
        own = self.leaf(v) if self.leaf is not None else None
        if own is None:
            return self.describe(v, depth + 1)
        self.claimed = True
        return own

    def describe(self, v: object, d: int) -> str:

        def f(x: object) -> str:
            return self.of(x, d)

        t = type(v)
        if t in (tuple, list):
            return f"{t.__name__}({','.join(map(f, v))})"  # type: ignore[call-overload]
        if t in (dict, types.MappingProxyType):
            return "dict(" + ",".join(f"{f(k)}:{f(x)}" for k, x in v.items()) + ")"  # type: ignore[attr-defined]
        if t in (
            set,
            frozenset,
        ):  # iteration order differs between processes: each element on its own
            return f"{t.__name__}({','.join(sorted(self.alone(x, d) for x in v))})"  # type: ignore[attr-defined]
        if isinstance(v, type):
            name = f"{v.__module__}.{v.__qualname__}"
            file = getattr(sys.modules.get(v.__module__), "__file__", None)
            if v.__flags__ & _IMMUTABLE_TYPE:  # a C type: its module's file stands for it
                return f"class:{name}@{self.stamp(file) if file else None}"
            stamp = self.library(file)
            if stamp is not None:
                return f"class:{name}@{stamp}"
            if _module_class(v, file):
                return self.module_class(v, d)
            items = ",".join(f"{k}={f(x)}" for k, x in vars(v).items() if not _unsaid(k, x))
            return f"class:{v.__qualname__}({f(v.__bases__)},{items})"
        if isinstance(v, Func):
            return func_fingerprint(v.fn)
        if isinstance(v, BoundFunc):
            return f"boundfunc({f(v.func)},{f(v.__self__)})"
        if isinstance(v, KernelDef):
            return f"kernel:{v.autodiff}:" + source_digest(v.fn)
        if isinstance(v, Builtin):
            return f"builtin:{v.name}"
        if isinstance(v, (FieldBase, StructFieldBase)):  # by identity (contents are run-time data)
            return v.__qd_fingerprint__()  # type: ignore[attr-defined]
        if isinstance(v, types.ModuleType):
            return f"module:{v.__name__}"
        if isinstance(v, types.CodeType):
            consts = ",".join(map(f, v.co_consts))
            return (
                f"code({v.co_code.hex()}|{consts}|{v.co_names}|{v.co_varnames}|{v.co_freevars}|"
                f"{v.co_cellvars}|{v.co_argcount},{v.co_posonlyargcount},{v.co_kwonlyargcount},{v.co_flags})"
            )
        if isinstance(v, types.FunctionType):
            values = (
                f"{f(v.__defaults__)},{f(v.__kwdefaults__)},"
                f"{f(tuple(map(_cell, v.__closure__ or ())))}"
            )
            stamp = self.library(v.__code__.co_filename)
            if stamp is not None:
                return f"function:{v.__module__}.{v.__qualname__}@{stamp}({values})"
            # no module name: the same source loaded elsewhere is the same function
            return f"function:{v.__qualname__}({f(v.__code__)},{values},{self.globals_read(v, d)})"
        if isinstance(v, types.MethodType):
            return f"method({f(v.__func__)},{f(v.__self__)})"
        if isinstance(
            v, types.BuiltinFunctionType
        ):  # C functions and methods; a bound one by its object too
            bound = v.__self__
            name = f"builtin:{getattr(v, '__module__', None)}.{v.__qualname__}"
            return (
                name
                if bound is None or isinstance(bound, types.ModuleType)
                else f"{name}({f(bound)})"
            )
        if t in (staticmethod, classmethod):
            return f"{t.__name__}({f(v.__func__)})"  # type: ignore[attr-defined]
        if t is property:
            return f"property({f(v.fget)},{f(v.fset)},{f(v.fdel)})"  # type: ignore[attr-defined]
        if t is functools.cached_property:
            return f"cached_property({f(v.func)})"  # type: ignore[attr-defined]
        return self.instance(v, d)

    def instance(self, v: object, d: int) -> str:
        """An object by its class, its bytes if it has a buffer, its `__dict__`, slots and pickle
        state."""
        parts = [self.of(type(v), d)]
        try:
            view = memoryview(v)  # type: ignore[arg-type]
        except (TypeError, ValueError):  # no buffer, or one of a dtype a memoryview cannot show
            view = None
        if (
            view is not None and "O" in view.format
        ):  # pointers to objects: described by pickle state
            view = None
        if view is not None:
            self.bytes += view.nbytes
            if self.bytes > _BYTES:
                raise _Unknown
            data = view if view.c_contiguous else view.tobytes()
            parts.append(
                f"buffer:{getattr(v, 'dtype', '')}:{view.format}:{view.shape}:"
                f"{hashlib.sha256(data).hexdigest()}"
            )
        namespace = getattr(v, "__dict__", None)
        if isinstance(namespace, dict):
            parts.append(self.of(namespace, d))
        held: dict[str, object] = {}  # slot -> its value
        for cls in type(v).__mro__:
            slots = vars(cls).get("__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name.startswith("__") and not name.endswith("__"):
                    name = f"_{cls.__name__.lstrip('_')}{name}"
                if type(slot := vars(cls).get(name)) is types.MemberDescriptorType:
                    try:
                        held[name] = value = slot.__get__(v, cls)
                        parts.append(f"{name}={self.of(value, d)}")
                    except AttributeError:
                        parts.append(f"{name}=-")
        if view is None:  # the buffer already holds what pickling would copy
            try:
                reduce = copyreg.dispatch_table.get(type(v))
                state = reduce(v) if reduce else v.__reduce_ex__(4)
                if _default_state(v, state, namespace, held):
                    parts.append("pickled:dict,slots")  # nothing more than the parts above
                else:
                    parts.append(self.of(state, d))
            except TypeError:  # cannot be pickled: then its dict or slots must be all it holds
                if len(parts) == 1 and namespace is None:
                    raise _Unknown from None
        return "object(" + ",".join(parts) + ")"

    def globals_read(self, fn: types.FunctionType, d: int) -> str:
        """Every global the code names, and of a module among them the attributes the code names;
        "-" for a name that is not a global (a builtin, an attribute). A name computed at run time
        is not seen."""
        names = list(dict.fromkeys(_names(fn.__code__)))
        g = fn.__globals__
        out = []
        for n in names:
            value = g.get(n, MISSING)
            out.append(f"{n}={'-' if value is MISSING else self.of(value, d)}")
            if isinstance(value, types.ModuleType):
                out += [f"{n}.{a}={self.of(vars(value)[a], d)}" for a in names if a in vars(value)]
        return ";".join(out)

    def library(self, filename: str | None) -> str | None:
        return self.stamp(filename) if filename and _is_library(filename) else None

    def stamp(self, filename: str) -> str | None:
        """`_library`'s stamp, or `_stamp`'s, taken once in this walk."""
        got = self.stamps.get(filename, MISSING)
        if got is MISSING:
            got = _library(filename) if _is_library(filename) else _stamp(filename)
            self.stamps[filename] = got
        return typing.cast("str | None", got)

    def module_class(self, cls: type, d: int) -> str:
        """A class of an importable module file: its definition (what its class statement and
        decorators left under dunder and sunder names, and an enum's members) as described when
        this process first met it, while each of those names still holds the same object; its own
        attributes, the methods its source defines and its bases as they are now."""
        got = _definition(cls, self.leaf)  # its walk bounded on its own, as it was taken
        if got.text is None:
            raise _Unknown
        namespace = vars(cls)
        bases = self.of(cls.__bases__, d)
        children = ",".join(self.of(c, d) for c in got.children)
        state = ",".join(f"{k}={self.of(namespace[k], d)}" for k in got.state)
        return f"class:{cls.__qualname__}#{got.text}({bases};{children};{state})"

    def alone(self, v: object, d: int) -> str:
        """`v` with no back-references into the rest (for elements of a set), the bounds still
        shared."""
        sub = _Fingerprint(self.nodes, self.leaf)
        sub.bytes, sub.defining, sub.stamps = self.bytes, self.defining, self.stamps
        try:
            return sub.of(v, d)
        finally:
            self.nodes, self.bytes = sub.nodes, sub.bytes
            self.claimed |= sub.claimed
            self.alive += sub.alive


class _Defining:
    """What a class's definition reaches that is described afresh at every check, not with the
    definition: other classes and functions of the user's code, `@qd.func`s and kernels (whose
    source is read from their file), fields. Each stands in the definition's text as its place in
    `children`."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.children: list[object] = []
        self.index: dict[int, int] = {}

    def outside(self, v: object) -> bool:
        if isinstance(v, type):
            if v.__flags__ & _IMMUTABLE_TYPE:
                return False
            return not _is_library(getattr(sys.modules.get(v.__module__), "__file__", None))
        if isinstance(v, types.FunctionType):
            return not _generated(self.cls, v) and not _is_library(v.__code__.co_filename)
        return isinstance(v, (Func, KernelDef, FieldBase, StructFieldBase))

    def child(self, v: object) -> str:
        i = self.index.get(id(v))
        if i is None:
            i = self.index[id(v)] = len(self.children)
            self.children.append(v)
        return f"<{i}>"


class _Definition:
    """A module class's definition as described when first met: valid while its namespace holds
    the same objects under the same names (`keys`, `values`)."""

    __slots__ = ("children", "cls", "ids", "keys", "state", "text", "values", "visited")

    def __init__(self, cls: type) -> None:
        namespace = vars(cls)
        self.cls = weakref.ref(cls)
        self.keys = tuple(namespace)
        self.values = tuple(namespace.values())  # alive, so their ids stay theirs
        self.ids = tuple(map(id, self.values))
        self.text: str | None = None  # None: the definition cannot be described
        self.children: tuple[object, ...] = ()
        self.state: tuple[str, ...] = ()
        self.visited: tuple[object, ...] = ()  # what the description walked (not the children)

    def holds(self, cls: type) -> bool:
        namespace = vars(cls)
        return (
            self.cls() is cls
            and tuple(namespace) == self.keys
            and tuple(map(id, namespace.values())) == self.ids
        )


_definitions: dict[tuple[int, int], _Definition] = {}
"""(id of the class, id of the leaf) -> its definition; cleared when it grows past _DEFINED."""
_DEFINED = 8192


def _definition(cls: type, leaf: Callable[[object], str | None] | None) -> _Definition:
    """The definition of `cls` (see `_Fingerprint.module_class`), described again only when a name
    of its namespace was bound to another object, added or deleted since."""
    key = (id(cls), id(leaf))
    got = _definitions.get(key)
    if got is not None and got.holds(cls):
        return got
    plain = _definitions.get((id(cls), id(None)))  # described with no leaf: the same text if
    if (  # `leaf` claims none of what it walked
        leaf is not None
        and plain is not None
        and plain.holds(cls)
        and all(leaf(x) is None for x in plain.visited)
    ):
        _definitions[key] = plain
        return plain
    got = _Definition(cls)
    defined, state = [], []
    for k, x in vars(cls).items():
        if _unsaid(k, x):
            continue
        (defined if _defined(cls, k, x) else state).append(k)
    walk = _Fingerprint(leaf=leaf)
    walk.defining = _Defining(cls)
    try:
        items = ",".join(f"{k}={walk.of(vars(cls)[k], 0)}" for k in defined)
        got.text = hashlib.sha256(items.encode()).hexdigest()[:32]
    except Exception:  # noqa: BLE001 - _Unknown, RecursionError, or what a user's __reduce__ raised
        got.text = None
    got.children = tuple(walk.defining.children)
    got.state = tuple(state)
    got.visited = tuple(walk.alive)
    if len(_definitions) >= _DEFINED:
        _definitions.clear()
    _definitions[key] = got
    if not walk.claimed:  # what a walk with no leaf gives too
        _definitions[(id(cls), id(None))] = got
    return got


_MADE = frozenset(
    {
        *("__annotations__", "__dataclass_fields__", "__dataclass_params__", "__match_args__"),
        *("__doc__", "__slots__", "__orig_bases__", "__parameters__", "__abstractmethods__"),
        *("__qd_struct__", "__qd_data_oriented__", "__qd_anonymous_struct__"),
        *("_generate_next_value_", "_new_member_", "_use_args_", "_member_names_"),
        *("_member_map_", "_value2member_map_", "_unhashable_values_", "_member_type_"),
        *("_value_repr_", "_boundary_", "_flag_mask_", "_singles_mask_", "_all_bits_"),
        "_inverted_",
    }
)
"""The names under which a class statement, `dataclasses`, `enum` and qdlab's decorators leave what
they made of the class's source: its annotations, a dataclass's fields, an enum's member tables."""


def _unsaid(name: str, value: object) -> bool:
    """Names of a class's namespace a description leaves out: its module's name (where it sits),
    the descriptors of its instances' `__dict__` and weak references, and what Python stores there
    by itself once asked: `__slotnames__` (`copyreg`'s, on a first pickling) and an empty
    `__annotations__` (on a first read of a class that has none)."""
    return name in ("__dict__", "__weakref__", "__module__", "__slotnames__") or (
        name == "__annotations__" and type(value) is dict and not value
    )


def _defined(cls: type, name: str, value: object) -> bool:
    """Whether `cls.<name>` belongs to the class's definition: what the class statement and its
    decorators made under the names of `_MADE`, an immutable value (rebinding it is seen), a member
    of an enum (which its class refuses to rebind), or a function that a decorator generated or a
    library's file holds (a dataclass's `__init__`, the wrapper of its `__repr__`). Functions of the
    user's own files are described afresh wherever they are found, definition or not."""
    if name in _MADE or type(value) in _SCALARS:
        return True
    if isinstance(cls, enum.EnumMeta) and cls._member_map_.get(name) is value:
        return True
    fn = value
    if isinstance(fn, (staticmethod, classmethod)):
        fn = fn.__func__
    elif isinstance(fn, property):
        fn = fn.fget
    code = getattr(fn, "__code__", None)
    return isinstance(code, types.CodeType) and (
        _generated(cls, fn) or _is_library(code.co_filename)
    )


def _generated(cls: type, fn: object) -> bool:
    """A function a decorator generated for `cls` from its definition (a dataclass's `__init__`):
    its code compiled from a string, not read from a file, in the class's module."""
    code = getattr(fn, "__code__", None)
    return (
        isinstance(code, types.CodeType)
        and code.co_filename.startswith("<")
        and getattr(fn, "__module__", None) == cls.__module__
    )


def _module_class(cls: type, file: str | None) -> bool:
    """A class defined at the top level (or in a class) of an importable module file, not of
    `__main__` (a script, a notebook's cells)."""
    return (
        file is not None
        and cls.__module__ != "__main__"
        and "<locals>" not in cls.__qualname__
        and os.path.isabs(file)
    )


_NEWOBJ = getattr(copyreg, "__newobj__")  # noqa: B009 - not in copyreg's stubs


def _default_state(v: object, state: object, namespace: object, held: dict[str, object]) -> bool:
    """Whether `state` (what `v.__reduce_ex__` gave) is the default one of `object`, which only
    rebuilds `v` as an instance of its class from the very objects its `__dict__` (`namespace`)
    and slots (`held`) hold: then it tells nothing they do not."""
    if type(state) is not tuple or not 2 <= len(state) <= 5 or state[0] is not _NEWOBJ:
        return False
    args = state[1]
    if type(args) is not tuple or len(args) != 1 or args[0] is not type(v):
        return False
    if any(x is not None for x in state[3:]):  # a list's or a dict's items
        return False
    own = state[2] if len(state) > 2 else None
    if type(own) is tuple and len(own) == 2:
        own, slots = own
        if type(slots) is not dict or any(held.get(k, MISSING) is not x for k, x in slots.items()):
            return False
    if own is None or own is namespace:
        return True
    return (
        type(own) is dict
        and type(namespace) is dict
        and len(own) == len(namespace)
        and all(namespace.get(k, MISSING) is x for k, x in own.items())
    )


def _names(code: types.CodeType) -> list[str]:
    """The names the code and its nested code use, and its string constants that could be names (as
    in `getattr(consts, "N")` or `globals()["N"]`)."""
    out = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out += _names(c)
        elif isinstance(c, str) and c.isidentifier():
            out.append(c)
    return out


def _cell(cell: types.CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # not filled yet
        return MISSING


_digests: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def func_fingerprint(fn: object) -> str:
    """A `@qd.func`'s fingerprint: its source, and the values of its parameters' defaults (made
    when its `def` ran, from names its text does not show: `def f(x, c=D)` with `D` rebound)."""
    text = "func:" + source_digest(fn)
    defaults = (getattr(fn, "__defaults__", None), getattr(fn, "__kwdefaults__", None))
    return text if defaults == (None, None) else f"{text}:{fingerprint(defaults)}"


def source_digest(fn: object) -> str:
    """A digest of a function's source, read again only when its `revision` changed (as
    `func_source` reads it); `inspect.getsource` tokenises the whole file for each one, which
    cost a Genesis scene's build 7 s over 2227 lookups."""
    now = revision(fn)
    got = _digests.get(fn)
    if got is None or got[0] != now:
        text = "".join(source_lines(fn)[0])
        got = (now, hashlib.sha256(text.encode()).hexdigest()[:32])
        with contextlib.suppress(TypeError):  # an object no weak reference can hold: not kept
            _digests[fn] = got
    return got[1]


@functools.cache
def _roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(
        {os.path.join(paths[k], "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
        | {os.path.join(QDLAB_DIR, "")}
    )


@functools.cache
def _is_library(filename: str | None) -> bool:
    """Whether `filename` is Python's, an installed package's or qdlab's (or frozen code)."""
    if not filename or filename[0] == "<":
        return filename is not None and filename.startswith("<frozen ")
    return os.path.isabs(filename) and filename.startswith(_roots())


def _library(filename: str | None) -> str | None:
    """A stamp of `filename` if it is Python's, an installed package's or qdlab's (their code is
    described by that stamp, not followed), else None: the user's own code, described by content."""
    if filename is None or not _is_library(filename):
        return None
    return sys.version if filename[0] == "<" else _stamp(filename)


_stamps: dict[str, tuple[int, int, str | None]] = {}
"""filename -> (mtime_ns, size, stamp) when it was last read."""


def _stamp(filename: str) -> str | None:
    """A hash of a Python file, the size and time of another (a compiled extension), None if
    unreadable. Read again whenever the file's size or time changed: a package installed in
    place, edited and reloaded in a long-lived process, has another stamp."""
    try:
        st = os.stat(filename)
    except (OSError, ValueError):
        return None
    got = _stamps.get(filename)
    if got is not None and got[0] == st.st_mtime_ns and got[1] == st.st_size:
        return got[2]
    stamp: str | None = f"{st.st_size}:{st.st_mtime_ns}"
    if filename.endswith(".py"):
        try:
            with open(filename, "rb") as fh:
                stamp = hashlib.sha256(fh.read()).hexdigest()[:16]
        except OSError:
            stamp = None
    _stamps[filename] = (st.st_mtime_ns, st.st_size, stamp)
    return stamp
