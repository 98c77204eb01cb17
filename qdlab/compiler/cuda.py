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
import time
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import gate, ir, runtime, split
from .cache import BinaryCache
from .config import Config
from .errors import QdError
from .offload import HDR_CODE, HDR_RNG, Plan, message_ops, offload

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
    messages: list[ir.Op]
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
                   message_ops([op for t in plan.tasks for op in t.ops], config.debug), status, text, plan, k)


def kernel_units(spec: Any, config: Config, sm: str) -> list[PtxUnit]:
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
    return [build_ptx(p, config, None, sm) for p in parts]


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


def build(k: ir.Kernel, config: Config, cache: BinaryCache) -> Any:
    """`pipeline.build` under `arch=qd.cuda`: compile or fetch the PTX, load it, and wrap it as a Unit."""
    from .pipeline import Built
    t0 = time.perf_counter()
    sm = device_sm()
    u = build_ptx(k, config, cache, sm)
    fns = load(u)
    unit = runtime.Unit(u.key, fns, u.kinds, [False] * len(fns), u.tmp_bytes, u.messages)
    unit.__dict__["block_dims"] = u.block_dims
    unit.__dict__["ptx"] = u.ptx
    return Built(unit, u.plan, u.kernel, u.key, u.text, u.status, (time.perf_counter() - t0) * 1e3)


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


class Launcher(runtime.Launcher):
    """Runs one compiled variant on the GPU: uploads words, launches each task, copies NumPy arrays back."""

    def __post_init__(self) -> None:
        super().__post_init__()
        cupy = require()
        self.cupy = cupy
        self.words_dev = cupy.zeros(self.words.shape, np.int64)
        self.tmp_dev = cupy.zeros(self.tmp.shape, np.int64)
        self.threads_per_sm = 2048

    def device_values(self, values: list) -> tuple[list, list]:
        """Values with every host array replaced by a device copy; and (host, device) pairs to copy back."""
        out, back = [], []
        for p, v in zip(self.params, values):
            if v is None or not isinstance(v, tuple):
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
            if isinstance(v, tuple):
                arr, grad = v
                w[k] = _device_pointer(arr)
                w[k + 1] = _device_pointer(grad) if grad is not None else 0
                w[k + 2:k + 2 + arr.ndim] = arr.shape
            else:
                super().fill([v if q is p else None for q in self.params])

    def overlapping(self, values: list) -> list[tuple[str, str]]:
        bad = []
        for i, gi, j, gj in self.alias_pairs:
            a, b = values[i][1 if gi else 0], values[j][1 if gj else 0]
            if a is None or b is None or a.nbytes == 0 or b.nbytes == 0:
                continue
            if type(a) is not type(b) and (hasattr(a, "__cuda_array_interface__")
                                           != hasattr(b, "__cuda_array_interface__")):
                continue  # one on the host, one on the device: never the same memory
            alo, blo = _pointer(a), _pointer(b)
            if alo < blo + b.nbytes and blo < alo + a.nbytes:
                bad.append((self.params[i].name + (".grad" if gi else ""),
                            self.params[j].name + (".grad" if gj else "")))
        return bad

    def grid(self, block: int) -> int:
        return max(1, multiprocessors() * max(1, self.threads_per_sm // block))

    def run(self, values: list, seed: int) -> object:
        with self.lock:
            dvalues, back = self.device_values(values)
            self.fill(dvalues)
            self.words_dev.set(self.words)
            self.launches += 1
            key = (seed * 0x9E3779B97F4A7C15 + self.name_hash + self.launches * 0xD1B54A32D192ED03) & MASK64
            args = (self.words_dev, self.tmp_dev)
            for unit in self.units:
                self.tmp[:] = 0
                self.tmp[HDR_RNG // 8] = key - (1 << 64) if key >= (1 << 63) else key
                self.tmp_dev.set(self.tmp)
                for fn, kind, bd in zip(unit.fns, unit.kinds, unit.__dict__["block_dims"]):
                    if kind == "parallel_for":
                        fn((self.grid(bd),), (bd,), args)
                    else:
                        fn((1,), (1,), args)
                if unit.messages:
                    code = int(self.tmp_dev[HDR_CODE // 8].get())
                    if code:
                        self.tmp[:] = self.tmp_dev.get()
                        self.raise_error(unit)
            if self.returns:
                self.tmp[:] = self.tmp_dev.get()
            for host, dev in back:
                dev.get(out=host)
            return self.read_returns()


def _pointer(a: Any) -> int:
    if hasattr(a, "__cuda_array_interface__"):
        return _device_pointer(a)
    return int(a.ctypes.data)


def launcher_type(config: Config) -> type[runtime.Launcher]:
    return Launcher if config.arch == "cuda" else runtime.Launcher

