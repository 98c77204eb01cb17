"""Compile-time expressions that call code: recorded with their result, and evaluated again before
a kernel compiled with them is served.

A fingerprint describes a value by its content, but an expression that calls a function
(`qd.static(load_cfg()["substeps"])`) may read what no fingerprint covers: a file, the clock, the
environment, a socket, state held in C. Such an expression is recorded as a dependency of its own:
its text, the compile-time locals it names (literals, or template arguments of the kernel), and
the fingerprint of its result. The manifest tier and the statement memo check it as any other
dependency, by evaluating it again where it was written (the function's globals and closure) and
comparing the result's fingerprint, so the functions it calls are run once more and never
fingerprinted themselves: what the kernel baked in is their result. An expression that names a
local the check cannot rebuild (a vector, a field, an object passed to a @qd.func) is recorded
UNKNOWN, and the kernel is always compiled.

Calls of the callables in `pure` do not count: their result follows from the values they are
given, which are recorded by name as any other read. Operators, subscripts, conversions and
attribute reads of the user's objects are not calls here; an attribute chain from a global is
read again by the check (a property runs again), the others are trusted to follow from the
objects' content.
"""

from __future__ import annotations

import ast
import builtins
import functools
import json
import math
import types

from .fields import dep_fingerprint
from .fingerprint import UNKNOWN
from .scope import dotted
from .source import closure_values
from .structs import StructRef

PREFIX = "<evaluated>"
"""The name a recorded evaluation goes under among a kernel's dependencies."""

_PURE = frozenset(
    {
        *(abs, all, any, bool, callable, chr, complex, dict, divmod, enumerate, float),
        *(frozenset, getattr, hasattr, int, isinstance, issubclass, len, list, max, min, ord),
        *(pow, range, reversed, round, set, slice, sorted, str, sum, tuple, type, zip),
        *(v for v in vars(math).values() if callable(v)),
    }
)
_CONTAINERS = (str, bytes, tuple, list, dict, set, frozenset, int, float, complex, range)
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: a C type's, never a class statement's


def pure(callee: object) -> bool:
    """Whether calling `callee` gives a result that follows from its arguments alone: one of
    Python's built-ins that read nothing else, `math`, a C type (`np.float32`), a method of a
    built-in container (`cfg.get("n")`), or qdlab's own (`qd.func`, `qd.types.vector`)."""
    try:
        if callee in _PURE:
            return True
    except TypeError:  # unhashable
        return False
    if isinstance(callee, type):
        return bool(callee.__flags__ & _IMMUTABLE_TYPE) or _ours(callee)
    if isinstance(callee, types.BuiltinMethodType) and type(callee.__self__) in _CONTAINERS:
        return True
    return _ours(callee) or _ours(type(callee))


def _ours(x: object) -> bool:
    module = getattr(x, "__module__", None)
    return isinstance(module, str) and (module == "qdlab" or module.startswith("qdlab."))


def calls_code(node: ast.expr, env: dict) -> bool:
    """Whether evaluating `node` in `env` calls anything but what `pure` allows. A callee is
    looked up as a name or an attribute chain; any other (`fs[0]()`, `f()()`) counts."""
    for n in ast.walk(node):
        if not isinstance(n, ast.Call):
            continue
        path = dotted(n.func)
        if path is None:
            return True
        head, *attrs = path.split(".")
        try:
            callee = env[head] if head in env else getattr(builtins, head)
            for a in attrs:
                callee = getattr(callee, a)
        except Exception:  # noqa: BLE001 - not found, or a property that raised: the call counts
            return True
        if not pure(callee):
            return True
    return False


def record(node: ast.expr, env: dict, local: set[str], templates: dict | None) -> str | None:
    """The dependency name of `node` evaluated in `env`, where `local` are the names `env` holds
    that the function's globals and closure do not (its locals, the kernel's parameters); None
    when one of those is neither a literal nor a template argument (`templates`: the kernel's, or
    None inside a @qd.func), so the check could not evaluate it again."""
    literals, given = {}, []
    for name in sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & local):
        value = env[name]
        if templates is not None and name in templates and templates[name] is value:
            given.append(name)
        elif _literal(value):
            literals[name] = repr(value)
        else:
            return None
    return PREFIX + json.dumps([ast.unparse(node), literals, given])


def fingerprint_now(fn: object, name: str, templates: dict | None) -> str:
    """The fingerprint of the result of the evaluation recorded as `name`, evaluated again in
    `fn` (with the kernel's `templates`, when it named one)."""
    text, literals, given = json.loads(name[len(PREFIX) :])
    env = dict(fn.__globals__)  # type: ignore[attr-defined]
    env.update(closure_values(fn))
    env.update({k: ast.literal_eval(v) for k, v in literals.items()})
    for k in given:  # a struct argument (a dataclass, an object of the user's class) by its object
        v = templates[k]  # type: ignore[index]
        env[k] = v.value if isinstance(v, StructRef) else v
    return dep_fingerprint(eval(_code(text), env))


def unknown() -> tuple[str, str]:
    """(name, fingerprint) of an evaluation that cannot be checked: the kernel is compiled."""
    return PREFIX, UNKNOWN


@functools.lru_cache(maxsize=4096)
def _code(text: str) -> types.CodeType:
    return compile(text, "<qd.static>", "eval")


def _literal(v: object) -> bool:
    """A value `repr` writes and `ast.literal_eval` reads back as the same value."""
    if type(v) in (bool, int, str, type(None)):
        return True
    if type(v) is float:
        return math.isfinite(v)
    return type(v) in (tuple, list) and all(map(_literal, v))  # type: ignore[arg-type]
