"""The compiler's memos on disk (`stmt_memo`, `construct_memo`): IR written with `pickle`, limited
to the compiler's own objects both ways.

An entry holds IR as rows (`flatten`), types, locations, launch facts and plain data, nothing
else: writing one that reaches any other object (a user's value in an attribute, a field) is
refused, so no entry stands for something a process holds and another does not; reading one may
make only the compiler's classes and plain containers, so an entry that was tampered with cannot
name another callable to run. Either refusal, or anything else that goes wrong, leaves the entry to
be made anew.

Entries are written by one thread of the process (`save_later`) once none has been queued for
QUIET_S, so a compile neither waits for pickling and files nor shares the interpreter with them
(~1.5 ms of an edit: a statement and a construct), and only the first entry of a batch wakes that
thread; the ones still queued at exit are written before it ends. What a memo queues is never
changed after (a statement's rows, a prepared construct's canonical IR), so a construct is flattened
there too. `load` reads an entry back.
"""

from __future__ import annotations

import atexit
import io
import logging
import os
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Protocol

from ...core import keys
from ...core.errors import SourceLoc
from .. import ir

log = logging.getLogger("qdlab")

PACKAGES = ("qdlab.compiler", "qdlab.core")
"""The packages whose classes an entry may hold: the compiler's and the shared vocabulary's."""
PLAIN = frozenset(
    {type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset}
)
BUILTINS = frozenset({"set", "frozenset", "list", "dict", "tuple", "complex", "bytearray"})
"""The builtins an entry may name (the reconstructors of containers in older protocols)."""


def _ours(module: str | None) -> bool:
    return module is not None and any(module == p or module.startswith(p + ".") for p in PACKAGES)


_MUTABLE = (list, dict, set)


def _copy(v: object) -> object:
    """`v` with its lists, dicts and sets copied, deep: a pass that edits an attribute in place
    edits no other op's."""
    if isinstance(v, list):
        return [_copy(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    if isinstance(v, set):
        return {_copy(x) for x in v}
    return v


def flatten(
    ops: list[ir.Op], outside: list[ir.Value], loc: Callable[[SourceLoc], SourceLoc] | None = None
) -> list:
    """`ops` as nested rows of plain data, one per op: its class, operands (numbered: `outside`
    first, then each block argument and result in the order they are defined), attributes (copied
    deep), whether they hold a container, result type and name, location (through `loc`), and
    blocks. Pickle walks an object graph depth first, and IR is linked every way (users, parents,
    owners), so ops as objects would go as deep as the longest chain of values (a 200-op chain
    passes the default recursion limit); rows go as deep as the blocks nest. A value from elsewhere
    (KeyError) or a real call (TypeError, its function elsewhere) is refused."""
    number = {v: k for k, v in enumerate(outside)}

    def row(op: ir.Op) -> tuple:
        if isinstance(op, ir.Call):
            raise TypeError("a real call")
        args = []
        for r in op.regions:
            args.append([(a.type, a.name) for a in r.args])
            for a in r.args:
                number[a] = len(number)
        operands = [number[v] for v in op.operands]
        res = op.result
        if res is not None:
            number[res] = len(number)
        blocks = [(a, [row(o) for o in r.ops]) for a, r in zip(args, op.regions)]
        deep = any(isinstance(x, _MUTABLE) for x in op.attrs.values())
        where = op.loc if loc is None or op.loc is None else loc(op.loc)
        return (
            type(op),
            operands,
            _copy(op.attrs) if deep else dict(op.attrs),
            deep,
            None if res is None else (res.type, res.name),
            where,
            blocks,
        )

    return [row(op) for op in ops]


def unflatten(
    rows: list,
    outside: list[ir.Value],
    into: ir.Block,
    loc: Callable[[SourceLoc], SourceLoc] | None = None,
) -> None:
    """The ops `flatten` wrote, appended to `into` (attributes copied again, locations through
    `loc`); `outside` stands for the values it numbered first. Built field by field, as
    `Op.__init__` would build them: replaying a big kernel's statements makes every op of it
    (`stmt_memo.py`)."""
    values = list(outside)
    add, Value, Block = values.append, ir.Value, ir.Block

    def make(rows: list, block: ir.Block) -> None:
        out = block.ops
        for cls, operands, attrs, deep, res, where, blocks in rows:
            op = object.__new__(cls)
            op.attrs = _copy(attrs) if deep else attrs.copy()
            regions: list[ir.Block] = []
            for args, _ in blocks:
                vs = [Value(t, n) for t, n in args]
                values.extend(vs)
                region = Block(vs)
                region.parent = op
                regions.append(region)
            op.regions = regions
            op.operands = used = [values[k] for k in operands]
            for v in used:
                v.users.append(op)
            if res is None:
                op.result = None
            else:
                op.result = v = Value(res[0], res[1], op)
                add(v)
            op.loc = where if loc is None or where is None else loc(where)
            op.parent = block
            out.append(op)
            for (_, inner), region in zip(blocks, regions):
                make(inner, region)

    make(rows, into)


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
_lock = threading.Condition()
"""Guards `_queued` and `_pending`; the writer waits on it for a first entry, and `flush` for the
last one to be written."""
_queued: list[Callable[[], None]] = []
_pending = 0
"""Jobs queued or running."""
_thread: threading.Thread | None = None
_writing = threading.Lock()
"""Held by the writer while it writes a batch, and by a fork: a child would inherit the cache's
lock held by a thread it does not have, and block on its first compile."""


class Store(Protocol):
    """Where the memos keep their entries: a `BinaryCache`'s disk tier."""

    def get_own(self, key: str) -> bytes | None: ...

    def put_own(self, key: str, payload: bytes) -> None: ...


def load(store: Store | None, kind: str, key: object) -> object | None:
    """The `kind` memo's entry for its in-process `key` from `store`'s disk tier (`save_later`
    wrote it), or None: no store, no such entry, or bytes that are not one."""
    where = keys.memo_key(kind, key) if store is not None else None
    data = store.get_own(where) if store is not None and where is not None else None
    return _read_entry(kind, key, data) if data is not None else None


PICKLED_BYTES = 64 << 20
"""How many bytes of pickled entries a process keeps (`_pickled`)."""
_pickled: OrderedDict[tuple[str, object], bytes] = OrderedDict()
"""Entries as their bytes on disk, by (memo, key): each read or written lately. A kernel's bundle
is written again after each compile of it that used another set of entries (an edit); it is made
of these bytes, not of its entries pickled again (~45 ms of a Genesis solver kernel's edit, in the
writer thread, which shares the interpreter with the compile)."""
_pickled_lock = threading.Lock()
_pickled_size = [0]


def _remember_bytes(kind: str, key: object, data: bytes) -> None:
    with _pickled_lock:
        old = _pickled.pop((kind, key), None)
        _pickled[(kind, key)] = data
        _pickled_size[0] += len(data) - (len(old) if old is not None else 0)
        while _pickled_size[0] > PICKLED_BYTES and _pickled:
            _pickled_size[0] -= len(_pickled.popitem(last=False)[1])


def _bytes_of(kind: str, key: object, value: Callable[[], object]) -> bytes | None:
    """The entry as its bytes on disk: those read or written lately, else `value()` pickled. A
    memo that makes an entry again under the same key (what it read no longer holds) writes it
    with `save_later`, queued before the bundle that holds it, so these are its bytes then."""
    with _pickled_lock:
        data = _pickled.get((kind, key))
    if data is None:
        data = dumps(value())
        if data is not None:
            _remember_bytes(kind, key, data)
    return data


def _read_entry(kind: str, key: object, data: bytes) -> object | None:
    got = loads(data)
    if got is not None:
        _remember_bytes(kind, key, data)
    return got


def save_later(store: Store | None, kind: str, key: object, value: Callable[[], object]) -> None:
    """Write what `value()` gives (in the writer thread: IR in it as `flatten` gives it) as the
    `kind` memo's entry for its in-process `key` in `store`'s disk tier (`BinaryCache.put_own`,
    under `keys.memo_key`); nothing when there is no store or it cannot be written."""
    if store is not None:
        later(lambda: _write(store, kind, key, value))


class Bundle:
    """The entries of one memo that a kernel's latest compile used, kept on disk together as well
    as one by one: a new process that compiles the kernel reads them in one step (one file) where
    it read one file per statement and per construct (~5 ms of a new process's edit at 20 loops),
    and unpickles each entry as it is asked for. Only a prefetch: an entry read with a bundle is
    served for its own key alone, checked as one read by itself; a key it lacks is looked for in
    its own file."""

    def __init__(self, kind: str) -> None:
        self.entries, self.kind = kind, f"{kind}-bundle"
        self._lock = threading.Lock()
        self._waiting: dict[object, bytes] = {}
        """Entries read with a bundle and not asked for yet, by key, as their bytes: a bundle is
        (key, pickled entry) pairs, unpickled entry by entry as they are asked for."""
        self._read: set[object] = set()
        """The bundles this process has read (or looked for)."""
        self._held: dict[object, frozenset] = {}
        """(key, hash of its bytes) of each entry of the bundle last read or written, by the
        bundle's key."""

    def take(self, store: Store | None, bundle: object, key: object, stats: dict) -> object | None:
        """What `bundle`'s bundle holds for `key`; the bundle is read from `store` the first time
        this process asks it for anything (`stats["reads"]` counts it)."""
        with self._lock:
            known = bundle in self._read
            self._read.add(bundle)
        if not known and store is not None:
            got = load(store, self.kind, bundle)
            stats["reads"] += 1
            try:
                items = dict(got) if isinstance(got, list) else {}
            except (TypeError, ValueError):  # not (hashable key, entry) pairs: read one by one
                items = {}
            items = {k: v for k, v in items.items() if isinstance(v, bytes)}
            with self._lock:
                if len(self._waiting) > 4096:  # bundles of kernels never compiled again
                    self._waiting.clear()
                self._waiting.update(items)
                self._held[bundle] = frozenset((k, hash(v)) for k, v in items.items())
        with self._lock:
            data = self._waiting.pop(key, None)
        return _read_entry(self.entries, key, data) if data is not None else None

    def keep(
        self, store: Store | None, bundle: object, used: Sequence[tuple[object, Callable]]
    ) -> None:
        """Write `used` ((key, what its own entry holds) pairs) as `bundle`'s bundle, later,
        unless the last one read or written holds the same entries (an entry made again under
        its key, what it read having changed, is another entry)."""
        if store is None or not used:
            return

        def write() -> None:  # in the writer thread, key and all, as `_write`
            where = keys.memo_key(self.kind, bundle)
            if where is None:
                return
            items = [(k, _bytes_of(self.entries, k, value)) for k, value in used]
            items = [(k, entry) for k, entry in items if entry is not None]  # this process's alone
            held = frozenset((k, hash(entry)) for k, entry in items)
            with self._lock:
                if self._held.get(bundle) == held:
                    return
                self._held[bundle] = held
            data = dumps(items)
            if data is None:  # a key that is this process's alone: the others without it
                data = dumps([item for item in items if dumps(item) is not None])
            if data is not None and store is not None:
                store.put_own(where, data)

        later(write)


def later(job: Callable[[], None]) -> None:
    """Run `job` in the writer thread, after the compile that queued it (a manifest's disk copy,
    say). Only the first job of a batch wakes the writer: a compile that queues forty is not
    interrupted forty times."""
    global _pending, _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_write_all, name="qdlab-memo-writer", daemon=True)
            _thread.start()
        _queued.append(job)
        _pending += 1
        if _pending == 1:
            _lock.notify_all()


def _write_all() -> None:
    """Wait for jobs; once none has come for QUIET_S (the compile that queued them is done, most
    likely), run them all."""
    global _pending
    while True:
        with _lock:
            _lock.wait_for(lambda: _queued)
        seen = 0
        while seen != len(_queued):  # a length read without the lock: at worst one more pause
            seen = len(_queued)
            time.sleep(QUIET_S)
        with _writing:
            with _lock:
                batch = _queued[:]
                del _queued[:]
            for job in batch:
                try:
                    job()
                except Exception:  # a cache that fails to write, say: the entry is made anew
                    log.debug("[MEMO] a queued write failed", exc_info=True)
                finally:
                    with _lock:
                        _pending -= 1
                        _lock.notify_all()


def _write(store: Store, kind: str, key: object, value: Callable[[], object]) -> None:
    where = keys.memo_key(kind, key)
    if where is None:
        return
    data = dumps(value())  # pickled anew: an entry made again under its key replaces the old
    if data is not None:  # else it holds what only this process has: kept there alone
        _remember_bytes(kind, key, data)
        store.put_own(where, data)


@atexit.register
def flush(timeout: float = 30.0) -> None:
    """Wait until every queued job is done (at exit; a test before it reads what they wrote)."""
    with _lock:
        _lock.wait_for(lambda: _pending == 0, timeout)


def _after_fork_in_child() -> None:
    """The child has no writer thread: what the parent had queued is the parent's to write."""
    global _lock, _queued, _pending, _thread, _writing
    _lock, _queued, _pending, _thread = threading.Condition(), [], 0, None
    _writing = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(  # the lock as it is then: a child has a new one
        before=lambda: _writing.acquire(),
        after_in_parent=lambda: _writing.release(),
        after_in_child=_after_fork_in_child,
    )
