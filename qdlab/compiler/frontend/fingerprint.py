"""Fingerprints: a description of a value a kernel baked in at compile time, by its content.

Equal fingerprints compile to equal code. The frontend records one for every global, closure value
and attribute chain it reads; the manifest tier checks them again before it serves a kernel without
lowering it, and template arguments are told apart by them. A value that cannot be described
faithfully is UNKNOWN, and whatever rests on it is compiled again rather than served.
"""

from __future__ import annotations

import contextlib
import copyreg
import functools
import hashlib
import os
import sys
import sysconfig
import types
import weakref
from collections.abc import Callable

from qdlab.core import QDLAB_DIR
from qdlab.core.fields import FieldBase, StructFieldBase
from qdlab.core.language import Builtin, Func, KernelDef

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
    (of a module they read, the attributes their code names); classes by their namespace; arrays and
    other buffers by dtype, shape and a hash of their bytes; other objects by their `__dict__`,
    slots and pickle state. Modules, qd built-ins and the code of Python, installed packages and
    qdlab (by a stamp of their file) are described by name; a `@qd.func` by its source. Anything
    else, or past the bounds, is UNKNOWN. `leaf` may describe an object in its own words (a struct
    argument's ndarrays by their signature, not their data) by returning a string for it."""
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
        if id(v) in self.seen:
            return f"@{self.seen[id(v)]}"
        self.seen[id(v)] = len(self.seen)
        self.alive.append(v)
        own = self.leaf(v) if self.leaf is not None else None
        return own if own is not None else self.describe(v, depth + 1)

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
            items = ",".join(f"{k}={f(x)}" for k, x in vars(v).items() if not _unsaid(k, x))
            return f"class:{v.__qualname__}({f(v.__bases__)},{items})"
        if isinstance(v, Func):
            return "func:" + source_digest(v.fn)
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
        return got  # type: ignore[return-value]

    def alone(self, v: object, d: int) -> str:
        """`v` with no back-references into the rest (for elements of a set), the bounds still
        shared."""
        sub = _Fingerprint(self.nodes, self.leaf)
        sub.bytes, sub.stamps = self.bytes, self.stamps
        try:
            return sub.of(v, d)
        finally:
            self.nodes, self.bytes = sub.nodes, sub.bytes


def _unsaid(name: str, value: object) -> bool:
    """Names of a class's namespace a description leaves out: its module's name (where it sits),
    the descriptors of its instances' `__dict__` and weak references, and what Python stores there
    by itself once asked: `__slotnames__` (`copyreg`'s, on a first pickling) and an empty
    `__annotations__` (on a first read of a class that has none)."""
    return name in ("__dict__", "__weakref__", "__module__", "__slotnames__") or (
        name == "__annotations__" and type(value) is dict and not value
    )


_NEWOBJ = copyreg.__newobj__  # type: ignore[attr-defined]


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
        return bool(filename) and filename.startswith("<frozen ")  # type: ignore[union-attr]
    return os.path.isabs(filename) and filename.startswith(_roots())


def _library(filename: str | None) -> str | None:
    """A stamp of `filename` if it is Python's, an installed package's or qdlab's (their code is
    described by that stamp, not followed), else None: the user's own code, described by content."""
    if not _is_library(filename):
        return None
    return sys.version if filename[0] == "<" else _stamp(filename)  # type: ignore[index]


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
