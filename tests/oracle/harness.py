"""Backend-neutral runner for the oracle corpus in ``kernels.py``.

Why this module exists: the reference side (``run_reference.py``, importing ``quadrants``) and the
qdlab side (``test_oracle.py``) must load the kernels and build/convert/collect arguments in
exactly the same way, and they can never share a process (both bundle LLVM).  This module holds
that shared logic and imports neither implementation: the backend module is passed in.
"""

from __future__ import annotations

import importlib.util
import zlib
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

KERNELS_PATH = Path(__file__).with_name("kernels.py")

_NP_TO_QD = {
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}


def load_kernels(backend: ModuleType, module_name: str) -> ModuleType:
    """Execute ``kernels.py`` as ``module_name`` with the global ``qd`` bound to ``backend``.

    The backend must already be initialised (``backend.init(...)``) by the caller.
    """
    spec = importlib.util.spec_from_file_location(module_name, KERNELS_PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    mod.qd = backend  # type: ignore[attr-defined]
    spec.loader.exec_module(mod)
    return mod


def case_seed(name: str) -> int:
    """Stable per-case seed (independent of case order and of PYTHONHASHSEED)."""
    return zlib.crc32(name.encode())


def to_backend(backend: ModuleType, arr: np.ndarray, element_axes: int = 0) -> Any:
    """Copy a NumPy array into a fresh ``backend.ndarray`` of the same dtype and shape; with
    ``element_axes``, its last 1 or 2 axes are the shape of a vector or matrix element."""
    dtype = getattr(backend, _NP_TO_QD[arr.dtype])
    shape = arr.shape
    if element_axes:
        element = shape[len(shape) - element_axes :]
        shape = shape[: len(shape) - element_axes]
        maker = backend.types.vector if element_axes == 1 else backend.types.matrix
        dtype = maker(*element, dtype)
    nd = backend.ndarray(dtype, shape)
    nd.from_numpy(np.ascontiguousarray(arr))
    return nd


def call_args(backend: ModuleType, case: Any, args: list[Any]) -> list[Any]:
    """The case's inputs as the kernel gets them: `ndarray_args` as ``backend.ndarray``s."""
    elements = dict(case.elements)
    return [
        to_backend(backend, a, elements.get(k, 0)) if k in case.ndarray_args else a
        for k, a in enumerate(args)
    ]


def run_case(backend: ModuleType, case: Any) -> dict[str, np.ndarray]:
    """Run one case on fresh inputs; return ``{"arg<k>": array, "ret": array}`` copies."""
    rng = np.random.default_rng(case_seed(case.name))
    args = case.make_inputs(rng)
    converted = call_args(backend, case, args)
    ret = case.kernel(*converted)
    sync = getattr(backend, "sync", None)
    if sync is not None:
        sync()
    result: dict[str, np.ndarray] = {}
    for k in case.outputs:
        a = converted[k]
        result[f"arg{k}"] = np.array(a.to_numpy() if hasattr(a, "to_numpy") else a, copy=True)
    if case.returns:
        result["ret"] = np.asarray(ret.to_numpy() if hasattr(ret, "to_numpy") else ret)
    return result


def flatten(case_name: str, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Keys for one case in a flat ``.npz``: ``<case>/<output>``."""
    return {f"{case_name}/{key}": value for key, value in outputs.items()}


def unflatten(npz: Any) -> dict[str, dict[str, np.ndarray]]:
    """Inverse of :func:`flatten` over a whole loaded ``.npz``."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for key in npz.files:
        case_name, _, output = key.partition("/")
        out.setdefault(case_name, {})[output] = npz[key]
    return out


def case_names() -> list[str]:
    """Case names in registration order, read from ``kernels.py`` without executing it.

    Used at pytest collection time, when neither implementation may be imported yet.  A case is
    a function decorated with ``@case(...)``; its name is the ``name=`` keyword or the function's.
    """
    import ast

    tree = ast.parse(KERNELS_PATH.read_text())
    names: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if not (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name)):
                continue
            if dec.func.id == "case":
                explicit = [k.value for k in dec.keywords if k.arg == "name"]
                name = explicit[0].value if explicit else node.name  # type: ignore[attr-defined]
                names.append(name)
    return names
