"""Launching compiled kernels: argument words, the temporary buffer, threads, errors and the alias
check.

A launch fills one word per scalar and, per array, its data pointer, gradient pointer and extents;
then it runs every task of every compiled unit in source order: in one native call of the task
driver (`codegen/driver.py`) that hands back to the host only a task that needs it (a long loop,
an error, an overflow report). ctypes releases the GIL during each call, so the chunks of a
parallel task run on all cores from a small pool of Python threads. A split
kernel checks, per launch, that the array parameters its split assumed disjoint really are; if not,
that call runs the whole-kernel variant.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import logging
import os
import platform
import struct
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from ...core.abi import (
    ERR_BOUNDS,
    ERR_DEPTH,
    HDR_CODE,
    HDR_EXTENT,
    HDR_INDEX,
    HDR_MSG,
    HDR_STOP,
    HEADER,
    HEADER_BYTES,
    IFACE_SLOTS,
    MAX_CALL_DEPTH,
    MAX_CHUNKS,
    arg_words,
    ret_offset,
    segment_structs,
    words_struct,
)
from ...core.errors import (
    QdAssertionError,
    QdIndexError,
    QdRecursionError,
    QuadrantsRuntimeError,
    SourceLoc,
)
from ...core.types import DType
from .. import ir
from ..frontend import printing
from . import tiers

log = logging.getLogger("qdlab")
TASK_FN = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64
)
PRINT_FN = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int64)
DRIVE_FN = ctypes.CFUNCTYPE(
    ctypes.c_int64,
    ctypes.c_void_p,
    ctypes.c_int64,
    ctypes.c_int64,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
)
"""The task driver (`codegen/driver.py`): (task addresses, first, end, words, temporary buffer,
where it writes the index it stopped at) -> the status of that task."""
MASK64 = (1 << 64) - 1


ASSERT_TEXTS: dict[tuple[int, int], str] = {}
"""(temporary buffer's address, message index) -> a failed assertion's message with its values,
as the task reported it before failing."""


OVERFLOWS: list[tuple[int, int, str]] = []
"""(temporary buffer's address, message index, what) of each integer overflow a debug-mode task
reported (`report_overflows` prints them after the task, at their source lines)."""


def report_overflows(tmp_ptr: int, unit: Unit) -> None:
    """Print the overflows the unit's task just reported, as Quadrants' debug runtime does."""
    mine = [o for o in OVERFLOWS if o[0] == tmp_ptr]
    OVERFLOWS[:] = [o for o in OVERFLOWS if o[0] != tmp_ptr]
    ctypes.c_int64.from_address(tmp_ptr + HDR_STOP).value = 0
    for _, index, what in mine:
        loc = unit.messages[index].loc
        where = loc.frame() if loc is not None else "the kernel"
        print(f"{what} overflow detected in {where}\n", flush=True)


def _print_callback(fmt: bytes, values: ctypes.Array, n: int) -> None:
    """What a kernel's `print` prints: each part is `s<text>` or `v<dtype>\x1e<printf conversion>`
    (the values come as one word each, floats widened to f64). A format that starts with
    `\x1d<message index>` is a failed assertion's message, its first word the task's temporary
    buffer: kept in ASSERT_TEXTS for `raise_error`, not printed."""
    text = fmt.decode()
    if text.startswith("\x1c"):  # an integer overflow: reported once the task returns
        head, _, what = text.partition("\x1f")
        OVERFLOWS.append((values[0] & MASK64, int(head[1:]), what[1:]))
        ctypes.c_int64.from_address((values[0] & MASK64) + HDR_STOP).value = 1  # driver: stop
        return
    if text.startswith("\x1d"):
        head, _, text = text.partition("\x1f")
        ASSERT_TEXTS[(values[0] & MASK64, int(head[1:]))] = _formatted(text, values, 1)
        return
    print(_formatted(text, values, 0), end="", flush=True)


def _formatted(fmt: str, values: ctypes.Array, k: int) -> str:
    out = []
    for part in fmt.split("\x1f"):
        if part.startswith("s"):
            out.append(part[1:])
            continue
        dtype, conv = part[1:].split("\x1e")
        word = values[k]
        k += 1
        if dtype.startswith("f"):
            x: object = struct.unpack("<d", struct.pack("<q", word))[0]
        elif dtype.startswith("u"):
            x = (word & MASK64) & ((1 << int(dtype[1:])) - 1)
        else:
            x = word
        out.append(printing.format_value(conv, x))
    return "".join(out)


_PRINT = PRINT_FN(_print_callback)
_PRINT_ADDR = ctypes.cast(_PRINT, ctypes.c_void_p).value


MXCSR_FLUSH = 0x8040
"""The x86-64 MXCSR bits flush-to-zero (15) and denormals-are-zero (6)."""
_FENV_BYTES, _FENV_MXCSR = 32, 28
"""glibc's x86-64 `fenv_t`: 28 bytes of x87 environment, then the MXCSR word."""


def flush_denormals() -> bool:
    """Set flush-to-zero and denormals-are-zero on the calling thread, as Quadrants sets them
    when it starts (for its CPU kernels, and so for NumPy on that thread too): a subnormal float
    result is zero, a subnormal operand reads as zero. Threads started later inherit the mode.
    False where the platform offers no way (not x86-64 glibc); kernels then keep subnormals."""
    lib = _libm()
    if lib is None:
        return False
    env = ctypes.create_string_buffer(_FENV_BYTES)
    if lib.fegetenv(env) != 0:
        return False
    word = int.from_bytes(env.raw[_FENV_MXCSR:], "little") | MXCSR_FLUSH
    ctypes.memmove(ctypes.addressof(env) + _FENV_MXCSR, word.to_bytes(4, "little"), 4)
    return lib.fesetenv(env) == 0


_thread = threading.local()


def kernel_mode() -> None:
    """The calling thread in the denormal mode kernels run in (set once per thread)."""
    if not getattr(_thread, "flushing", False):
        _thread.flushing = True
        flush_denormals()


@cache
def _libm() -> ctypes.CDLL | None:
    if platform.machine() not in ("x86_64", "AMD64") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libm.so.6")
    except OSError:
        return None


class Pool:
    """Threads that run the chunks of a parallel task, all in the denormal mode kernels run in.
    Each thread, the caller too, takes the next chunk not yet taken until none is left, and the
    caller waits only for the chunks others took: on a busy host, a worker the system has not
    woken by then leaves its chunk to the caller instead of holding the launch up (the chunks,
    and so a reduction's partials and their fold, are the same whoever runs them)."""

    def __init__(self, threads: int) -> None:
        self.threads = max(1, min(threads, MAX_CHUNKS))
        self.executor = (
            ThreadPoolExecutor(self.threads - 1, "qdlab", initializer=flush_denormals)
            if self.threads > 1
            else None
        )

    def run(self, fn: Callable, words: int, tmp: int, total: int) -> int:
        n = self.threads
        if self.executor is None or n == 1:
            return fn(words, tmp, 0, 1)
        chunks = itertools.count()  # `next` on it is atomic: each chunk is taken once

        def take() -> int:
            status = 0
            while (c := next(chunks)) < n:
                status |= fn(words, tmp, c, n)
            return status

        futures = [self.executor.submit(take) for _ in range(1, n)]
        status = take()
        for f in futures:
            if not f.cancel():  # not started: nothing left for it
                status |= f.result()
        return status


def check_pool(threads: int = 20, jobs: int = 100) -> bool:
    """A self-test of `Pool` (what Quadrants' `qd._lib.core.test_threading()` does for its C++
    thread pool): `jobs` launches of a task on a pool of `threads` threads; True when each launch
    ran every chunk once with its own arguments, else a QuadrantsRuntimeError."""
    p = Pool(threads)
    seen: list[tuple[int, int, int, int]] = []

    def task(words: int, tmp: int, chunk: int, count: int) -> int:
        seen.append((words, tmp, chunk, count))  # list.append is atomic
        return 0

    try:
        for job in range(jobs):
            seen.clear()
            status = p.run(task, job, -job, 0)
            expected = [(job, -job, c, p.threads) for c in range(p.threads)]
            if status or sorted(seen) != expected:
                raise QuadrantsRuntimeError(
                    f"thread pool self-test: launch {job} ran {sorted(seen)} (status {status}), "
                    f"not each of {p.threads} chunks once"
                )
    finally:
        if p.executor is not None:
            p.executor.shutdown()
    return True


_pool: Pool | None = None


def pool() -> Pool:
    global _pool
    if _pool is None:
        _pool = Pool(int(os.environ.get("QDLAB_NUM_THREADS", "0")) or os.cpu_count() or 1)
    return _pool


def set_threads(n: int | None) -> None:
    global _pool
    _pool = Pool(n) if n else None


@dataclass(frozen=True)
class Message:
    """What the runtime reports when an op fails: the array (bounds) or the assertion, and where it
    is."""

    array: str
    text: str
    loc: SourceLoc | None

    @classmethod
    def of(cls, op: ir.Op) -> Message:
        if isinstance(op, ir.Assert):
            return cls("", op.attrs["message"], op.loc)
        if isinstance(op, ir.BinOp):  # an integer overflow (debug)
            return cls("", op.attrs["op"], op.loc)
        if isinstance(op, ir.Call):
            name = op.attrs["function"].name.split(".")[0]
            return cls(
                "", f"@qd.real_func `{name}` nested over {MAX_CALL_DEPTH:,} calls deep", op.loc
            )
        return cls(op.operands[0].name + (".grad" if op.attrs.get("grad") else ""), "", op.loc)


class Tasks(list):
    """A loaded unit's task functions, shared by every launcher that runs the unit: loading its
    optimised object later (`tiers.py`) replaces them in place (`replace`)."""

    pending: tiers.Upgrade | None = None
    """While the functions come from the unit's quick object: the upgrade that replaces them."""
    generation = 0
    """Bumped by every `replace` of any unit's tasks: a launcher's table of task addresses is
    made again when it has moved."""

    def __init__(self, addresses: Sequence[int] = ()) -> None:
        super().__init__(map(task_function, addresses))
        self.addresses = list(addresses)

    def replace(self, addresses: Sequence[int]) -> None:
        self[:] = map(task_function, addresses)
        self.addresses = list(addresses)
        Tasks.generation += 1


@dataclass
class Unit:
    """One compiled object's tasks: a construct of a split kernel, or a whole kernel."""

    key: str
    fns: list[Callable]
    kinds: list[str]
    reduces: list[bool]
    tmp_bytes: int
    messages: list[Message]
    """Ops that can report an error, numbered as the binary numbers them."""
    block_dims: list[int]
    """Threads per block of each task on a GPU."""


class RandomStream:
    """The random generator's launch key for one kernel: (seed, a hash of the kernel's whole name,
    launch count).

    The split and whole-kernel variants of a compiled kernel draw from one stream, so which
    path a launch takes never changes the numbers it draws."""

    def __init__(self, name: str) -> None:
        self.name_hash = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little")
        self.launches = 0

    def next_key(self, seed: int) -> int:
        """The key of the next launch, as a signed 64-bit word."""
        self.launches += 1
        key = (
            seed * 0x9E3779B97F4A7C15 + self.name_hash + self.launches * 0xD1B54A32D192ED03
        ) & MASK64
        return key - (1 << 64) if key >= (1 << 63) else key


@dataclass
class Launcher:
    """Runs one compiled variant (split or whole-kernel) of a kernel for one argument signature."""

    name: str
    params: list[ir.Param]
    returns: list[DType]
    units: list[Unit]
    alias_pairs: list[tuple[int, bool, int, bool]] = field(default_factory=list)
    """(param, grad, param, grad) buffers the split assumed disjoint."""
    stream: RandomStream | None = None
    """Shared by every variant of the kernel; a new one if not given."""
    times: list[tuple[str, float]] | None = None
    """While profiling (`qd.profile`): (unit key, seconds) of each unit run by each launch. None
    otherwise, and then a launch reads no clock."""
    driver: Callable | None = None
    """The task driver (`DRIVE_FN`): runs the tasks in one native call until one needs the host
    (a loop for the thread pool, an error, an overflow report); None: one call per task."""

    def __post_init__(self) -> None:
        self.layout = arg_words(self.params)
        self.packer = words_struct(self.params)
        self.words = ctypes.create_string_buffer(max(8, self.packer.size))
        self.words_ptr = ctypes.addressof(self.words)
        self.tmp_bytes = max(u.tmp_bytes for u in self.units) if self.units else HEADER_BYTES
        self.tmp = np.zeros(self.tmp_bytes // 8, np.int64)
        self.tmp_ptr = self.tmp.ctypes.data
        self.iface = np.zeros(IFACE_SLOTS, np.int64)
        self.iface_ptr = self.iface.ctypes.data
        self.lock = threading.Lock()
        self.segments: dict[tuple[int, ...], list[tuple[struct.Struct, int]]] = {}
        """`run_parts`' packers, per cut of the parameters."""
        self.packed: tuple[tuple[int, ...], tuple] | None = None
        """The cuts and parts whose words the buffer holds since the last `run_parts` (None after
        a `run`, or a pack that failed)."""
        if self.stream is None:
            self.stream = RandomStream(self.name)
        self.flat = [(u, t) for u in self.units for t in range(len(u.kinds))]
        """Every task of every unit, in launch order: what the driver runs."""
        self.table = (ctypes.c_int64 * max(1, len(self.flat)))()
        self.table_ptr = ctypes.addressof(self.table)
        self.table_gen = -1
        """`Tasks.generation` when `table` was filled with the tasks' addresses."""
        self.stop = ctypes.c_int64(0)
        self.stop_ptr = ctypes.addressof(self.stop)

    def overlapping(self, extents: list) -> list[tuple[str, str]]:
        return overlapping(self.params, self.alias_pairs, extents)

    def run(self, words: list, seed: int) -> object:
        """Launch with `words`: per array its data pointer, gradient pointer and extents; per scalar
        its value."""
        with self.lock:
            kernel_mode()
            self.packed = None
            self.packer.pack_into(self.words, 0, *words)
            return self.go(seed)

    def run_parts(self, parts: tuple[Sequence, ...], cuts: tuple[int, ...], seed: int) -> object:
        """`run` with the words in parts, one per run of the parameters `cuts` divide them into (a
        kernel's own, its struct members', its fields'): a part that is the very object the last
        launch packed is not packed again, its words are still in the buffer. The member words
        of unchanged struct members and a variant's field words stay one object from launch to
        launch, and they are most of the words (a Genesis MPM step packed ~4,000 a launch)."""
        with self.lock:
            kernel_mode()
            segments = self.segments.get(cuts)
            if segments is None:
                segments = self.segments[cuts] = segment_structs(self.params, cuts)
            last, self.packed = self.packed, None
            held = last[1] if last is not None and last[0] == cuts else None
            for k, (part, (packer, offset)) in enumerate(zip(parts, segments)):
                if held is None or part is not held[k]:
                    packer.pack_into(self.words, offset, *part)
            self.packed = (cuts, parts)
            return self.go(seed)

    def go(self, seed: int) -> object:
        """Run the units on the packed words (the caller holds the lock)."""
        key = self.stream.next_key(seed)  # type: ignore[union-attr]
        # once per launch: a unit writes only the error words, and a launch stops at an error
        HEADER.pack_into(self.tmp, 0, 0, 0, 0, 0, _PRINT_ADDR, key, self.iface_ptr, 0)
        if self.driver is None or self.times is not None:
            for unit in self.units:
                t0 = time.perf_counter() if self.times is not None else 0.0
                for task in range(len(unit.kinds)):
                    self.after(unit, task, unit.fns[task](self.words_ptr, self.tmp_ptr, 0, 0))
                if self.times is not None:
                    self.times.append((unit.key, time.perf_counter() - t0))
        else:
            if self.table_gen != Tasks.generation:
                self.table_gen = Tasks.generation
                self.table[: len(self.flat)] = [u.fns.addresses[t] for u, t in self.flat]
            start, end = 0, len(self.flat)
            while start < end:
                status = self.driver(
                    self.table_ptr, start, end, self.words_ptr, self.tmp_ptr, self.stop_ptr
                )
                stopped = self.stop.value
                if stopped >= end:
                    break
                self.after(*self.flat[stopped], status)
                start = stopped + 1
        return read_returns(self.returns, self.tmp) if self.returns else None

    def after(self, unit: Unit, task: int, status: int) -> None:
        """What the host does once task `task` of `unit` returned `status` to a call of it
        alone: run the loop on the thread pool (status > 1: its iterations), report the integer
        overflows it found (debug), raise the error it recorded."""
        if status > 1 and unit.kinds[task] == "parallel_for":
            upgrade = getattr(unit.fns, "pending", None)
            if upgrade is not None:  # a long loop waits for the optimised code
                upgrade.settle(now=True)
            fn = unit.fns[task]
            status = pool().run(fn, self.words_ptr, self.tmp_ptr, status)
            if unit.reduces[task]:
                fn(self.words_ptr, self.tmp_ptr, -1, pool().threads)
        if OVERFLOWS:
            report_overflows(self.tmp_ptr, unit)
        if status:
            raise_error(self.name, self.tmp, unit)


def overlapping(
    params: list[ir.Param], pairs: list[tuple[int, bool, int, bool]], extents: list
) -> list[tuple[str, str]]:
    """Pairs of buffers a split assumed disjoint that share memory; `extents[k]` is parameter k's
    (data pointer, bytes, gradient pointer, gradient bytes)."""
    bad = []
    for i, gi, j, gj in pairs:
        alo, an = extents[i][2:4] if gi else extents[i][0:2]
        blo, bn = extents[j][2:4] if gj else extents[j][0:2]
        if an and bn and alo < blo + bn and blo < alo + an:
            bad.append(
                (params[i].name + (".grad" if gi else ""), params[j].name + (".grad" if gj else ""))
            )
    return bad


def read_returns(returns: list[DType], tmp: np.ndarray) -> object:
    """The kernel's return values, from the words a task wrote at `ret_offset(k)`."""
    out = []
    for k, t in enumerate(returns):
        word = int(tmp[ret_offset(k) // 8])
        if t.is_float:
            x = (
                struct.unpack("<d", struct.pack("<q", word))[0]
                if t.bits == 64
                else struct.unpack("<e", struct.pack("<H", word & 0xFFFF))[0]
                if t.bits == 16
                else struct.unpack("<f", struct.pack("<I", word & 0xFFFFFFFF))[0]
            )
            out.append(float(x))
        elif t.name == "u1":
            out.append(bool(word))
        else:
            out.append(int(np.array(word).astype(t.np)))
    return None if not out else out[0] if len(out) == 1 else tuple(out)


def raise_error(kernel: str, tmp: np.ndarray, unit: Unit) -> None:
    """Raise what a task recorded in the header: a failed bounds check or assertion, at its source
    line."""
    code = int(tmp[HDR_CODE // 8])
    index = int(tmp[HDR_MSG // 8])
    m = unit.messages[index]
    if code == ERR_DEPTH:
        raise QdRecursionError(
            f"recursion too deep in kernel `{kernel}`: {m.text}, qdlab's limit (does it reach "
            "its base case?)",
            m.loc,
        )
    if code == ERR_BOUNDS:
        index, extent = int(tmp[HDR_INDEX // 8]), int(tmp[HDR_EXTENT // 8])
        raise QdIndexError(
            f"Out of bound access: index {index} is out of range for `{m.array}` (extent {extent}) "
            f"in kernel `{kernel}`.",
            m.loc,
        )
    text = ASSERT_TEXTS.pop((tmp.ctypes.data, index), m.text)
    for key in [k for k in ASSERT_TEXTS if k[0] == tmp.ctypes.data]:  # other chunks' failures
        del ASSERT_TEXTS[key]
    raise QdAssertionError(f"assertion failed in kernel `{kernel}`: {text}", m.loc)


def task_function(address: int) -> Callable:
    return TASK_FN(address)
