"""NVPTX LLVM IR text to PTX text, with libdevice linked in when the module calls it.

Kept apart from `nvptx.py` for the same reason `jit.py` is apart from `llvm.py`: a run whose
constructs are all cache hits never builds LLVM IR. Needs no GPU and no CUDA driver: PTX is text,
and `ptxas` (from the `nvidia-cuda-nvcc-cu12` wheel, when installed) can assemble it here to check
it.
"""

from __future__ import annotations

import glob
import os
import shutil
import threading
from functools import cache

import llvmlite.binding as llvm

from ...core.config import sm_number
from ...core.errors import QdError
from .nvptx import TRIPLE

_lock = threading.Lock()
PTX_FEATURES = {70: "+ptx80", 75: "+ptx80", 80: "+ptx80", 86: "+ptx80", 89: "+ptx80", 90: "+ptx80"}
"""PTX ISA 8.0 (CUDA 12.0) for the architectures up to Hopper; newer ones need the ISA that
introduced them."""


@cache
def _init() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


@cache
def target_machine(sm: str, opt: int) -> llvm.TargetMachine:
    _init()
    n = sm_number(sm)
    features = PTX_FEATURES.get(n, "+ptx86" if n < 120 else "+ptx87")
    return llvm.Target.from_triple(TRIPLE).create_target_machine(
        cpu=f"sm_{n}", features=features, opt=opt
    )


def data_layout(sm: str = "sm_80") -> str:
    return str(target_machine(sm, 3).target_data)


def libdevice_path() -> str | None:
    """libdevice.10.bc: `$QDLAB_LIBDEVICE`, the nvidia-cuda-nvcc wheel, or a CUDA toolkit."""
    env = os.environ.get("QDLAB_LIBDEVICE")
    if env and os.path.exists(env):
        return env
    roots = []
    try:
        import nvidia.cuda_nvcc as nvcc  # type: ignore[import-not-found]  # lazy: an optional wheel

        roots.extend(nvcc.__path__)
    except ImportError:
        pass
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(os.environ[var])
    roots.extend(sorted(glob.glob("/usr/local/cuda*"), reverse=True))
    for root in roots:
        path = os.path.join(root, "nvvm", "libdevice", "libdevice.10.bc")
        if os.path.exists(path):
            return path
    return None


@cache
def _libdevice_bitcode() -> bytes:
    path = libdevice_path()
    if path is None:
        raise QdError(
            "CUDA math functions (qd.sin, qd.exp, ...) need libdevice, which was not found: "
            "install `nvidia-cuda-nvcc-cu12`, or set QDLAB_LIBDEVICE to the path of "
            "libdevice.10.bc."
        )
    with open(path, "rb") as f:
        return f.read()


def optimize(llvm_ir: str, sm: str, opt: int) -> llvm.ModuleRef:
    _init()
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    if any(f.is_declaration and f.name.startswith("__nv_") for f in mod.functions):
        lib = llvm.parse_bitcode(_libdevice_bitcode())
        lib.triple, lib.data_layout = mod.triple, mod.data_layout
        mod.link_in(lib)
        for f in mod.functions:
            if f.name.startswith("__nv") and not f.is_declaration:
                f.linkage = "internal"
    tm = target_machine(sm, opt)
    pto = llvm.create_pipeline_tuning_options(speed_level=max(opt, 1))
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(
        mod, pb
    )  # at least O1: NVVMReflect must fold libdevice's __nvvm_reflect
    return mod


def to_ptx(llvm_ir: str, sm: str, opt: int) -> str:
    with _lock:
        return target_machine(sm, opt).emit_assembly(optimize(llvm_ir, sm, opt))


def ptxas() -> str | None:
    """The `ptxas` of the nvidia-cuda-nvcc wheel, or one on PATH; None when neither is installed."""
    try:
        import nvidia.cuda_nvcc as nvcc  # type: ignore[import-not-found]  # lazy: an optional wheel

        for root in nvcc.__path__:
            path = os.path.join(root, "bin", "ptxas")
            if os.access(path, os.X_OK):
                return path
    except ImportError:
        pass
    return shutil.which("ptxas")
