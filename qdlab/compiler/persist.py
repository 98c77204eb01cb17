"""The compiler's memos on disk (`stmt_memo`, `construct_memo`): IR written with `pickle`, limited
to the compiler's own objects both ways.

An entry holds ops, values, types, locations, plans and plain data, nothing else: writing one that
reaches any other object (a user's value in an attribute, a field) is refused, so no entry stands
for something a process holds and another does not; reading one may make only the compiler's
classes and plain containers, so an entry that was tampered with cannot name another callable to
run. Either refusal, or anything else that goes wrong, leaves the entry to be made anew.

Entries are written by one thread of the process (`save_later`) once none has been queued for
QUIET_S, so a compile neither waits for pickling and files nor shares the interpreter with them
(~1.5 ms of an edit: a statement and a construct); the ones still queued at exit are written
before it ends. What a memo queues is never changed after (detached ops, a prepared
construct's canonical IR).
"""

from __future__ import annotations

import atexit
import io
import logging
import os
import pickle
import queue
import threading

from . import keys

log = logging.getLogger("qdlab")

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


QUIET_S = 0.05
"""How long the writer waits for more entries before it writes what it has."""
_queue: queue.SimpleQueue = queue.SimpleQueue()
_done = threading.Condition()
_pending = 0
_thread: threading.Thread | None = None


def save_later(store: object, kind: str, key: object, value: object) -> None:
    """Write `value` as the `kind` memo's entry for its in-process `key` in `store`'s disk tier
    (`BinaryCache.put_own`, under `keys.memo_key`), in the writer thread; nothing when it cannot
    be written."""
    global _pending, _thread
    with _done:
        if _thread is None:
            _thread = threading.Thread(target=_write_all, name="qdlab-memo-writer", daemon=True)
            _thread.start()
        _pending += 1
    _queue.put((store, kind, key, value))


def _write_all() -> None:
    """Wait for entries; once none has come for QUIET_S (the compile that queued them is done,
    most likely), write them all."""
    while True:
        batch = [_queue.get()]
        while True:
            try:
                batch.append(_queue.get(timeout=QUIET_S))
            except queue.Empty:
                break
        for item in batch:
            _write(*item)


def _write(store: object, kind: str, key: object, value: object) -> None:
    global _pending
    try:
        where = keys.memo_key(kind, key)
        data = dumps(value) if where is not None else None
        if data is not None:  # else it holds what only this process has: kept there alone
            store.put_own(where, data)  # type: ignore[attr-defined]
    except Exception:  # a cache that fails to write, say: the entry is made anew
        log.debug("[MEMO] a %s entry was not written", kind, exc_info=True)
    finally:
        with _done:
            _pending -= 1
            _done.notify_all()


@atexit.register
def flush(timeout: float = 30.0) -> None:
    """Wait until every queued entry is written (at exit; a test before it reads them)."""
    with _done:
        _done.wait_for(lambda: _pending == 0, timeout)


def _after_fork_in_child() -> None:
    """The child has no writer thread: what the parent had queued is the parent's to write."""
    global _queue, _done, _pending, _thread
    _queue, _done, _pending, _thread = queue.SimpleQueue(), threading.Condition(), 0, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
