"""How a kernel launches a compiled variant: the launch plan made once when the variant is compiled
(what each parameter is, the words of the fields it uses, how to read its struct members), and the
one function that turns an array into its launch words and extent.

The words themselves are the ABI's (`qdlab.core.abi`): per array its data pointer, its gradient
buffer's pointer and its extents; per scalar its value; per vector its entries; the fields' hidden
array parameters last. A `qd.ndarray` makes its words once, when it is allocated (its buffer never
moves); a NumPy array, a torch tensor or a field's storage makes them with `array_launch` when it
is passed.
"""

from __future__ import annotations

import ctypes
import mmap
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import numpy as np

from ..compiler.runtime import cuda as cuda_runtime
from ..core import abi

if TYPE_CHECKING:
    from ..compiler import ir
    from ..compiler.pipeline import Compiled
    from .struct_args import Members

ARRAY, TEMPLATE, SCALAR, VECTOR, TENSOR = "array", "template", "scalar", "vector", "tensor"
"""Kinds of kernel parameter (VECTOR: a vector or matrix by value; TENSOR: `x: qd.Tensor`, an
ndarray as ARRAY is or a field as TEMPLATE is, whichever the argument holds)."""

Storage: TypeAlias = Any
"""An array's memory: a NumPy array on the host, or a CuPy array (anything with
`__cuda_array_interface__`) on the GPU. Both have `shape`, `ndim`, `nbytes` and `dtype`; a CuPy
array is copied to and from the host with `get()` / `set()`. (No common type: CuPy is optional.)"""


class HostArray(Protocol):
    """What `copy_from` takes: anything with a host copy of its elements (an ndarray, a field)."""

    def to_numpy(self) -> np.ndarray: ...


MAPPED_BYTES = 1 << 22
"""From this size up (NumPy's own threshold for asking for huge pages) host memory is mapped."""


def zeros(shape: tuple[int, ...], dtype: np.dtype | type) -> np.ndarray:
    """A zeroed host array for a field or an ndarray. From 4 MiB up NumPy asks the system for
    transparent huge pages (`madvise`), and where it honours that only for such requests (the
    common `madvise` setting) the first touch of each 2 MiB page may wait for the system to
    compact memory: measured 4-5 ms a page, Genesis' differentiable MPM grid 0.3 s a frame the first
    time a kernel zeroes it (against 0.03 s in 4 KiB pages), its whole scene build 4.4 s -> 1.6 s. A
    plain anonymous mapping here gets the system's default pages (zeroed, touched lazily, never
    moved); the program's own NumPy arrays keep NumPy's choice."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if nbytes < MAPPED_BYTES:
        return np.zeros(shape, dt)
    return np.frombuffer(mmap.mmap(-1, nbytes), dt).reshape(shape)


TorchTensor: TypeAlias = Any
"""A `torch.Tensor` (PyTorch is optional: the type checker may not see it)."""

Extent = tuple[int, int, int, int]
"""(data pointer, bytes, gradient pointer, gradient bytes): what the launch's overlap check of
arrays reads (`runtime.overlapping`)."""


def _data_offset() -> int | None:
    """Where a NumPy array object keeps its data pointer: NumPy's C struct of an array starts with
    the object header and then `char *data`, so in CPython it is read at `id(arr) +
    object.__basicsize__`, ~10x faster than `arr.ctypes.data` (which makes a helper object per
    read). Checked here against `ctypes.data` on a base array and a view; None (read `ctypes.data`)
    if it differs, or outside CPython, where an id is not an address."""
    if sys.implementation.name != "cpython":
        return None
    offset = object.__basicsize__
    base = np.arange(4.0)
    for probe in (base, base[1:], np.zeros((2, 3), np.float32).T):
        if ctypes.c_void_p.from_address(id(probe) + offset).value != probe.ctypes.data:
            return None
    return offset


_DATA = _data_offset()
_read_pointer = ctypes.c_void_p.from_address


def array_launch(
    arr: Storage, grad: Storage = None, shape: tuple[int, ...] | None = None
) -> tuple[tuple[int, ...], Extent]:
    """An array's launch words and its extent: `arr` a NumPy array or a device array (CuPy, a
    torch CUDA tensor), `grad` its gradient buffer or None; `shape` the extents the words give
    when they are not `arr`'s own (a field's storage in memory's order)."""
    if type(arr) is not np.ndarray:
        data = cuda_runtime.pointer(arr)
    elif _DATA is None:
        data = arr.ctypes.data
    else:  # a NumPy array's data pointer, read from the array object (`_data_offset`)
        data = _read_pointer(id(arr) + _DATA).value or 0
    g, g_bytes = (0, 0) if grad is None else (cuda_runtime.pointer(grad), grad.nbytes)
    words = abi.array_words(data, g, arr.shape if shape is None else shape)
    return words, (data, arr.nbytes, g, g_bytes)


def launch_params(compiled: Compiled) -> list[ir.Param]:
    """The parameters a variant's launcher takes: the kernel's own, its struct members', its
    fields' (none for a target that cannot launch)."""
    launcher: Any = compiled.launcher  # a runtime.Launcher or a cuda_runtime.Launcher
    return launcher.params if launcher is not None else []


@dataclass(frozen=True)
class Param:
    """A kernel parameter as a launch reads its argument."""

    name: str
    kind: str
    """ARRAY, TEMPLATE, SCALAR, VECTOR or TENSOR."""
    key: Callable[[Any], object]
    """What the launch cache keys its argument on; raises TypeError (or AttributeError) for an
    argument the fast path does not take."""
    size: int
    """Entries of a vector or matrix parameter (0 for the others)."""


def is_member(p: ir.Param) -> bool:
    """Whether a kernel parameter is a struct member's (`s.x`, `self.v`): the fields' hidden
    parameters, which come after every member's, have names without a dot."""
    return "." in p.name


@dataclass(eq=False)
class LaunchPlan:
    """One compiled variant of a kernel as its launches use it, made once when it is compiled."""

    compiled: Compiled
    launcher: Any
    """`compiled.launcher`: a `runtime.Launcher` (CPU) or a `cuda_runtime.Launcher`."""
    params: tuple[Param, ...]
    """The kernel's own parameters (struct members and fields come after them)."""
    kinds: tuple[str, ...]
    sizes: tuple[int, ...]
    """`params`' kinds and sizes, read per launch."""
    words: tuple[int, ...]
    """How many argument words each of `params` fills in this variant (a TENSOR parameter: as an
    array or as a template's placeholder word, as its argument was)."""
    field_words: tuple[int, ...]
    """The words of the fields the variant uses, read once from their storage."""
    members: Members | None
    """How to read its struct members' words (None: it reads none)."""
    written: tuple[int, ...]
    """The kernel's own array parameters it writes, when their arguments are checked for
    read-only arrays at launch (empty otherwise)."""
    cuts: tuple[int, int]
    """Where the launch parameters' struct members and fields begin (`Launcher.run_parts`)."""

    @classmethod
    def make(
        cls,
        compiled: Compiled,
        params: tuple[Param, ...],
        field_words: tuple[int, ...],
        members: Members | None,
    ) -> LaunchPlan:
        launched = launch_params(compiled)
        types = [p.type for p in launched[: len(params)]]
        members_end = len(params) + sum(map(is_member, launched[len(params) :]))
        return cls(
            compiled,
            compiled.launcher,
            params,
            tuple(p.kind for p in params),
            tuple(p.size for p in params),
            tuple(abi.param_words(t) for t in types),
            field_words,
            members,
            tuple(sorted(k for k in compiled.written if k < len(params)))
            if compiled.readonly_check
            else (),
            (len(params), members_end),
        )
