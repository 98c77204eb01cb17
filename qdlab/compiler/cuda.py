"""The CUDA backend: per-construct PTX, cached like CPU objects, loaded and launched with CuPy.

A unit's PTX module holds one `.entry` per task (see `codegen/nvptx.py`). A launch uploads the argument words,
zeroes the temporary buffer on the device and runs every task in stream order: parallel tasks as a grid that
fills the device (grid-stride loops), serial tasks as one thread. NumPy arrays are copied to the device and back
around each call; CuPy arrays, PyTorch CUDA tensors (anything with `__cuda_array_interface__`) and `qd.ndarray`s
made under `arch=qd.cuda` stay on the device and pass by pointer. CuPy is imported only when a kernel compiles
or runs under `arch=qd.cuda`; producing PTX (`qd.compile_ptx`) needs neither CuPy nor a GPU.
"""

from __future__ import annotations

import hashlib
import math
import threading
from dataclasses import dataclass, replace
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..ndarray import Ndarray
from . import gate, ir, runtime, split
from .cache import BinaryCache
from .config import Config
from .errors import QdError
from .offload import HDR_CODE, HDR_RNG, Plan, arg_words, message_ops, offload
from .types import ArrayType, DType, i32

MASK64 = (1 << 64) - 1
PTX_VERSION = "nvptx-1"


# -- device -------------------------------------------------------------------------------------------------
@cache
def available() -> bool:
    """True when CuPy imports and sees a CUDA device."""
    try:
        import cupy
        return bool(cupy.is_available())
    except Exception:  # noqa: BLE001 - no CuPy, no driver, no device: all mean "not available"
        return False


def require() -> Any:
    if not available():
        raise QdError("qd.cuda/qd.gpu: no CUDA device is available in this process (CuPy missing or "
                      "cupy.is_available() is False); use qd.cpu, or qd.compile_ptx(kernel, ...) to inspect "
                      "the PTX a kernel would produce.")
    import cupy
    return cupy


@cache
def device_sm() -> str:
    cupy = require()
    return f"sm_{cupy.cuda.Device().compute_capability}"


@cache
def multiprocessors() -> int:
    cupy = require()
    return int(cupy.cuda.Device().attributes["MultiProcessorCount"])


# -- compiling ----------------------------------------------------------------------------------------------
def cache_key(text: str, config: Config, sm: str) -> str:
    from .pipeline import COMPILER_VERSION
    h = hashlib.sha256()
    for part in (COMPILER_VERSION, PTX_VERSION, "nvptx64-nvidia-cuda", sm, config.codegen_key(), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def emit_ptx(k: ir.Kernel, plan: Any, key: str, config: Config, sm: str) -> str:
    from .codegen import nvptx, nvptx_jit
    module, _ = nvptx.emit_module(k, plan, f"qd_{key[:24]}", config.debug, nvptx_jit.data_layout(sm))
    return nvptx_jit.to_ptx(str(module), sm, config.opt_level)


@dataclass
class PtxUnit:
    """One construct (or whole kernel) as PTX: its text, task symbols and launch shapes."""

    key: str
    ptx: str
    symbols: list[str]
    kinds: list[str]
    block_dims: list[int]
    tmp_bytes: int
    messages: list[runtime.Message]
    status: str
    text: str
    """The canonical IR text the key hashes."""
    plan: Plan
    kernel: ir.Kernel


def build_ptx(k: ir.Kernel, config: Config, cache: BinaryCache | None, sm: str) -> PtxUnit:
    """Compile (or fetch from the cache) one unit's PTX; the kernel is canonicalised as on the CPU."""
    from .codegen.nvptx import block_dim
    from .passes import run_passes
    from .pipeline import _canonical
    from .printer import print_kernel
    k = _canonical(k)
    run_passes(k)
    text = print_kernel(k)
    key = cache_key(text, config, sm)
    plan = offload(k)
    status = "reused"
    data = cache.get(key) if cache is not None else None
    if data is None:
        status = "compiled"
        data = emit_ptx(k, plan, key, config, sm).encode()
        if cache is not None:
            cache.put(key, data)
    return PtxUnit(key, data.decode(), [f"qd_{key[:24]}_t{i}" for i in range(len(plan.tasks))],
                   [t.kind for t in plan.tasks], [block_dim(t) for t in plan.tasks], plan.tmp_bytes,
                   [runtime.Message.of(op) for op in message_ops([op for t in plan.tasks for op in t.ops], config.debug)],
                   status, text, plan, k)


def kernel_units(spec: Any, config: Config, sm: str, cache: BinaryCache | None = None) -> list[PtxUnit]:
    """The PTX units of a kernel as `compile_kernel` would split it: one per construct, or the whole kernel."""
    from .passes import run_passes
    from .pipeline import lower
    from .verify import verify
    kernel, _ = lower(spec, config)
    verify(kernel)
    run_passes(kernel)
    verify(kernel)
    constructs = split.constructs(kernel)
    facts = gate.Facts(kernel, constructs, config.as_dict(), spec.autodiff)
    fallback = gate.check(facts) if config.per_offload else None
    parts = [split.slice_kernel(kernel, c) for c in constructs] if config.per_offload and fallback is None \
        else [kernel]
    return [build_ptx(p, config, cache, sm) for p in parts]


def ptx_text(units: list[PtxUnit], kernel_name: str, sm: str) -> str:
    """The units' PTX modules, each under a header comment naming the construct and its tasks."""
    out = []
    for index, u in enumerate(units):
        tasks = ", ".join(f"{s} ({kind}, block {bd})" for s, kind, bd in zip(u.symbols, u.kinds, u.block_dims))
        out.append(f"// qdlab: kernel `{kernel_name}`, unit {index} of {len(units)} for {sm}; tasks: {tasks}\n"
                   f"{u.ptx}")
    return "\n".join(out)


_modules: dict[tuple[str, int], Any] = {}


def load(unit: PtxUnit) -> list[Any]:
    """The unit's task functions on the current device (each module is loaded once per process)."""
    cupy = require()
    slot = (unit.key, cupy.cuda.Device().id)
    if slot not in _modules:
        module = cupy.cuda.function.Module()
        module.load(unit.ptx.encode() + b"\0")
        _modules[slot] = module
    return [_modules[slot].get_function(s) for s in unit.symbols]


# -- arrays -------------------------------------------------------------------------------------------------
class DeviceArray:
    """A kernel argument that lives on the device: anything with `__cuda_array_interface__` (CuPy, PyTorch)."""

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
        dense = [self.dtype.itemsize * math.prod(self.shape[d + 1:]) for d in range(self.ndim)]
        contiguous = strides is None or all(s == d for s, d, n in zip(strides, dense, self.shape) if n > 1)
        self.flags = SimpleNamespace(c_contiguous=contiguous, writeable=not cai["data"][1])


# -- launching ----------------------------------------------------------------------------------------------
def _device_pointer(a: Any) -> int:
    return int(a.__cuda_array_interface__["data"][0])


def _pointer(a: Any) -> int:
    return _device_pointer(a) if hasattr(a, "__cuda_array_interface__") else int(a.ctypes.data)


class Launcher:
    """Runs one compiled variant on the GPU: uploads words, launches each task, copies NumPy arrays back."""

    THREADS_PER_SM = 2048

    def __init__(self, name: str, params: list[ir.Param], returns: list, units: list[PtxUnit]) -> None:
        self.cupy = require()
        self.name, self.params, self.returns, self.units = name, params, returns, units
        self.fns = [load(u) for u in units]
        self.layout = arg_words(params)
        nwords = max(1, sum((2 + p.type.ndim) if isinstance(p.type, ArrayType) else 1 for p in params))
        self.words = np.zeros(nwords, np.int64)
        self.tmp = np.zeros(max(u.tmp_bytes for u in units) // 8, np.int64)
        self.words_dev = self.cupy.zeros(self.words.shape, np.int64)
        self.tmp_dev = self.cupy.zeros(self.tmp.shape, np.int64)
        self.lock = threading.Lock()
        self.stream = runtime.RandomStream(name)

    def to_device(self, values: list) -> tuple[list, list]:
        """Values with each host array replaced by a device copy, and the (host, device) pairs to copy back."""
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

    def fill(self, values: list) -> None:
        w = self.words
        for p, v, k in zip(self.params, values, self.layout):
            t = p.type
            if v is None:
                continue
            if isinstance(t, ArrayType):
                arr, grad = v
                w[k] = _pointer(arr)
                w[k + 1] = _pointer(grad) if grad is not None else 0
                w[k + 2:k + 2 + t.ndim] = arr.shape
            elif t.is_float:
                w[k:k + 1].view(np.float32 if t.bits == 32 else np.float64)[0] = v
                if t.bits == 32:
                    w[k] &= 0xFFFFFFFF
            else:
                iv = int(v) & MASK64
                w[k] = iv - (1 << 64) if iv >= (1 << 63) else iv

    def grid(self, block: int) -> int:
        return max(1, multiprocessors() * max(1, self.THREADS_PER_SM // block))

    def run(self, values: list, seed: int) -> object:
        with self.lock:
            dvalues, back = self.to_device(values)
            self.fill(dvalues)
            self.words_dev.set(self.words)
            key = self.stream.next_key(seed)
            args = (self.words_dev, self.tmp_dev)
            for unit, fns in zip(self.units, self.fns):
                self.tmp[:] = 0
                self.tmp[HDR_RNG // 8] = key
                self.tmp_dev.set(self.tmp)
                for fn, kind, bd in zip(fns, unit.kinds, unit.block_dims):
                    if kind == "parallel_for":
                        fn((self.grid(bd),), (bd,), args)
                    else:
                        fn((1,), (1,), args)
                if unit.messages and int(self.tmp_dev[HDR_CODE // 8].get()):
                    self.tmp[:] = self.tmp_dev.get()
                    runtime.Launcher.raise_error(self, unit)  # type: ignore[arg-type]
            if self.returns:
                self.tmp[:] = self.tmp_dev.get()
            for host, dev in back:
                dev.get(out=host)
            return runtime.Launcher.read_returns(self) if self.returns else None  # type: ignore[arg-type]


_variants: dict[tuple, Launcher] = {}


def launch(kernel: Any, *args: object) -> object:
    """Run `kernel` (a `@qd.kernel`) on the GPU: compile its constructs to PTX on first use, then launch.

    Device arrays (`__cuda_array_interface__`: CuPy, PyTorch; `qd.ndarray` made by `cuda.ndarray`) pass by
    pointer; NumPy arrays and host `qd.ndarray`s are copied to the device and back.
    """
    from .. import state
    from .pipeline import KernelSpec
    require()
    device: dict[int, DeviceArray] = {}
    bound = []
    for k, a in enumerate(args):
        if hasattr(a, "__cuda_array_interface__") and not isinstance(a, DeviceNdarray):
            d = device[k] = DeviceArray(a)
            bound.append(np.empty((0,) * d.ndim, d.dtype))  # stands in for the signature only
        else:
            bound.append(a)
    sig, values, templates = kernel.bind(tuple(bound), {})
    for k, d in device.items():
        if not d.flags.c_contiguous:
            raise ValueError(f"kernel `{kernel.name}`: device argument `{kernel.param_names[k]}` is not "
                             "C-contiguous.")
        values[k] = (d, None)
    config = kernel.config() if hasattr(kernel, "config") else state.config()
    config = replace(config, arch="cuda")
    slot = (id(kernel), sig, state.generation, config.codegen_key())
    launcher = _variants.get(slot)
    if launcher is None:
        params = [ir.Param(n, i32 if isinstance(t, tuple) else t) for n, t in zip(kernel.param_names, sig)]
        spec = KernelSpec(kernel.fn, kernel.name, params, kernel.returns, templates, kernel.autodiff)
        units = kernel_units(spec, config, device_sm(), state.cache())
        launcher = _variants[slot] = Launcher(kernel.name, params, kernel.returns, units)
    return launcher.run(values, config.random_seed)


def sync() -> None:
    if available():
        require().cuda.get_current_stream().synchronize()


# -- qd.ndarray on the device --------------------------------------------------------------------------------
class DeviceNdarray(Ndarray):
    """`qd.ndarray` whose storage is a CuPy array on the current device; kernels get it by pointer."""

    def __init__(self, dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False) -> None:
        cupy = require()
        super().__init__(dtype, 0)
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        self.arr = cupy.zeros(shape, self.dtype.np)
        self.grad = DeviceNdarray(self.dtype, shape) if needs_grad else None

    def to_numpy(self) -> np.ndarray:
        return self.arr.get()

    def from_numpy(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(np.asarray(array), self.dtype.np)
        if array.shape != self.arr.shape:
            raise ValueError(f"from_numpy: shape {array.shape} does not match the ndarray's {self.arr.shape}")
        self.arr.set(array)

    def __getitem__(self, index: object) -> object:
        return self.arr[index].get()

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        host = self.arr.get()
        return host if dtype is None else host.astype(dtype)

    def __repr__(self) -> str:
        return "qd.ndarray on cuda" + super().__repr__().removeprefix("qd.ndarray")


def ndarray(dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False) -> DeviceNdarray:
    return DeviceNdarray(dtype, shape, needs_grad)
