"""The compiler's memos on disk (`stmt_memo`, `construct_memo`): IR written with `pickle`, limited
to the compiler's own objects both ways.

An entry holds ops, values, types, locations, plans and plain data, nothing else: writing one that
reaches any other object (a user's value in an attribute, a field) is refused, so no entry stands
for something a process holds and another does not; reading one may make only the compiler's
classes and plain containers, so an entry that was tampered with cannot name another callable to
run. Either refusal, or anything else that goes wrong, leaves the entry to be made anew.
"""

from __future__ import annotations

import io
import pickle

PACKAGE = __name__.rsplit(".", 1)[0]
"""`qdlab.compiler`: the modules whose classes an entry may hold."""
PLAIN = frozenset(
    {type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset}
)
BUILTINS = frozenset({"set", "frozenset", "list", "dict", "tuple", "complex", "bytearray"})
"""The builtins an entry may name (the reconstructors of containers in older protocols)."""


def _ours(module: str | None) -> bool:
    return module is not None and (module == PACKAGE or module.startswith(PACKAGE + "."))


class _Writer(pickle.Pickler):
    def reducer_override(self, obj: object) -> object:
        t = type(obj)
        if t in PLAIN or _ours(t.__module__):
            return NotImplemented
        if isinstance(obj, type) and (_ours(obj.__module__) or obj in PLAIN):
            return NotImplemented
        raise pickle.PicklingError(f"not the compiler's: {t.__module__}.{t.__qualname__}")


class _Reader(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> object:
        if _ours(module) or (module == "builtins" and name in BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"not the compiler's: {module}.{name}")


def dumps(value: object) -> bytes | None:
    """`value` written, or None when it reaches an object that is not the compiler's, or cannot be
    written (IR nested past the recursion limit)."""
    out = io.BytesIO()
    try:
        _Writer(out, protocol=5).dump(value)
    except (pickle.PicklingError, RecursionError, TypeError, AttributeError, ValueError):
        return None
    return out.getvalue()


def loads(data: bytes) -> object | None:
    """What `dumps` wrote, or None when the bytes are not such an entry."""
    try:
        return _Reader(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - damaged, tampered with, or of an older layout: made anew
        return None
