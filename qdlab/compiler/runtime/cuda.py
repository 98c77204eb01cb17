"""Running compiled units on an NVIDIA GPU with CuPy: loading PTX, device arrays, and the launcher.

A unit's PTX module holds one `.entry` per task. A launch uploads the argument words (packed as on
the CPU, `abi.words_struct`), and for each unit writes the header of the temporary buffer on the
device and runs its tasks in stream order: parallel tasks as a grid that fills the device
(grid-stride loops), serial tasks as one thread. NumPy arrays are copied to the device and back
around each call; CuPy arrays, PyTorch CUDA tensors (anything with `__cuda_array_interface__`) and
`qd.ndarray`s made under `arch=qd.cuda` stay on the device and pass by pointer. CuPy is imported
only here, and only once a kernel compiles or runs under `arch=qd.cuda`.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np

from ...core import abi
from ...core.errors import QdError
from ...core.types import ArrayType, DType
from .. import ir, runtime

THREADS_PER_SM = 2048


# -- device ----------------------------------------------------------------------------------------
@cache
def available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy  # lazy: CuPy, only where CUDA is asked for

        return bool(cupy.is_available())
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device: all mean "not available"
        return False


def require() -> Any:
    if not available():
        raise QdError(
            "qd.cuda/qd.gpu: no CUDA device is available in this process (CuPy missing or "
            "cupy.is_available() is False); use qd.cpu, or qd.compile_ptx(kernel, ...) to inspect "
            "the PTX a kernel would produce."
        )
    import cupy  # lazy: CuPy

    return cupy


@cache
def device_sm() -> str:
    return f"sm_{require().cuda.Device().compute_capability}"


@cache
def multiprocessors() -> int:
    return int(require().cuda.Device().attributes["MultiProcessorCount"])


def sync() -> None:
    if available():
        require().cuda.get_current_stream().synchronize()


# -- loading ---------------------------------------------------------------------------------------
_modules: dict[tuple[str, int], tuple[Any, list[str]]] = {}
"""Every PTX module loaded in this process: (name, device id) -> (module, its task symbols)."""


def load(items: list[tuple[str, bytes, list[str]]]) -> None:
    """Load (name, PTX, symbols) items onto the current device."""
    cupy = require()
    device = cupy.cuda.Device().id
    for name, ptx, symbols in items:
        module = cupy.cuda.function.Module()
        module.load(ptx + b"\0")
        _modules[(name, device)] = (module, symbols)


def functions(name: str) -> list[Any] | None:
    entry = _modules.get((name, require().cuda.Device().id))
    if entry is None:
        return None
    module, symbols = entry
    return [module.get_function(s) for s in symbols]


# -- arrays ----------------------------------------------------------------------------------------
class DeviceArray:
    """A kernel argument that lives on the device: anything with `__cuda_array_interface__` (CuPy,
    PyTorch)."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        """The caller's array, kept alive for the launch."""
        cai = obj.__cuda_array_interface__
        self.__cuda_array_interface__ = cai
        self.shape = tuple(int(s) for s in cai["shape"])
        self.ndim = len(self.shape)
        self.dtype = np.dtype(cai["typestr"])
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        strides = cai.get("strides")
        dense = [self.dtype.itemsize * math.prod(self.shape[d + 1 :]) for d in range(self.ndim)]
        contiguous = strides is None or all(
            s == d for s, d, n in zip(strides, dense, self.shape) if n > 1
        )
        self.flags = SimpleNamespace(c_contiguous=contiguous, writeable=not cai["data"][1])

    @property
    def pointer(self) -> int:
        return int(self.__cuda_array_interface__["data"][0])


def pointer(a: Any) -> int:
    """The address of an array's data: on the device for device arrays, else in host memory."""
    if hasattr(a, "__cuda_array_interface__"):
        return int(a.__cuda_array_interface__["data"][0])
    return int(a.ctypes.data)


# -- launching -------------------------------------------------------------------------------------
@dataclass
class Launcher:
    """Runs one compiled variant on the GPU: uploads words, launches each task, copies NumPy arrays
    back."""

    name: str
    params: list[ir.Param]
    returns: list[DType]
    units: list[runtime.Unit]
    alias_pairs: list[tuple[int, bool, int, bool]] = field(default_factory=list)
    stream: runtime.RandomStream | None = None

    def __post_init__(self) -> None:
        self.cupy = require()
        self.layout = abi.arg_words(self.params)
        self.packer = abi.words_struct(self.params)
        self.words_host = np.zeros(max(1, self.packer.size // 8), np.int64)
        """The argument words as uploaded: at least one word, as a kernel without parameters
        still gets a pointer."""
        self.words_dev = self.cupy.zeros(self.words_host.shape, np.int64)
        tmp_bytes = max((u.tmp_bytes for u in self.units), default=abi.HEADER_BYTES)
        self.tmp = np.zeros(tmp_bytes // 8, np.int64)  # a kernel with no work has no unit
        self.tmp_dev = self.cupy.zeros(self.tmp.shape, np.int64)
        self.iface_dev = self.cupy.zeros(abi.IFACE_SLOTS, np.int64)
        self.lock = threading.Lock()
        if self.stream is None:
            self.stream = runtime.RandomStream(self.name)

    def overlapping(self, extents: list) -> list[tuple[str, str]]:
        return runtime.overlapping(self.params, self.alias_pairs, extents)

    def to_device(self, values: list) -> tuple[list, list]:
        """Values with each host array replaced by a device copy, and the (host, device) pairs to
        copy back."""
        out, back = [], []
        for v in values:
            if not isinstance(v, tuple):
                out.append(v)
                continue
            pair = []
            for a in v:
                if a is None or hasattr(a, "__cuda_array_interface__"):
                    pair.append(a)
                    continue
                d = self.cupy.asarray(a)
                pair.append(d)
                if a.flags.writeable:
                    back.append((a, d))
            out.append(tuple(pair))
        return out, back

    def words(self, values: list) -> np.ndarray:
        """The launch's argument words, packed into `words_host`."""
        out: list = []
        for p, v in zip(self.params, values):
            if isinstance(p.type, ArrayType):
                arr, grad = v
                out.extend(
                    abi.array_words(
                        pointer(arr), pointer(grad) if grad is not None else 0, arr.shape
                    )
                )
            else:
                out.append(v if v is not None else 0)
        self.packer.pack_into(self.words_host, 0, *out)
        return self.words_host

    def grid(self, block: int) -> int:
        return max(1, multiprocessors() * max(1, THREADS_PER_SM // block))

    def run_values(self, values: list, seed: int) -> object:
        """Launch with the bound argument values: (array, gradient) per array, the number per
        scalar."""
        with self.lock:
            dvalues, back = self.to_device(values)
            self.words_dev.set(self.words(dvalues))
            key = self.stream.next_key(seed)  # type: ignore[union-attr]
            args = (self.words_dev, self.tmp_dev)
            for unit in self.units:
                self.tmp[:] = 0
                abi.HEADER.pack_into(
                    self.tmp, 0, 0, 0, 0, 0, 0, key, int(self.iface_dev.data.ptr), 0
                )
                self.tmp_dev.set(self.tmp)
                for fn, kind, bd in zip(unit.fns, unit.kinds, unit.block_dims):
                    if kind == "parallel_for":
                        fn((self.grid(bd),), (bd,), args)
                    else:
                        fn((1,), (1,), args)
                if unit.messages and int(self.tmp_dev[abi.HDR_CODE // 8].get()):
                    self.tmp[:] = self.tmp_dev.get()
                    runtime.raise_error(self.name, self.tmp, unit)
            if self.returns:
                self.tmp[:] = self.tmp_dev.get()
            for host, dev in back:
                dev.get(out=host)
            return runtime.read_returns(self.returns, self.tmp)
