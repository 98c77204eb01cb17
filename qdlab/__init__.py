"""qdlab: Quadrants-style kernels compiled per top-level construct, cached per construct, explained
in notebooks.

import qdlab as qd
qd.init(arch=qd.cpu)

@qd.kernel
def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
"""

from __future__ import annotations

from types import SimpleNamespace as _Namespace  # (`import types` would hide qd.types)

from . import ad, algorithms, experimental, interop, linalg, math, profiler, sparse, tools, types
from ._logging import (
    CRITICAL,
    DEBUG,
    ERROR,
    INFO,
    TRACE,
    WARN,
    is_logging_effective,
    set_logging_level,
)
from .compiler.runtime import check_pool as _check_pool
from .core import __version__ as __version__
from .core.errors import (
    QdArgumentError,
    QdArgumentTypeError,
    QdAssertionError,
    QdCallError,
    QdCompileValueError,
    QdError,
    QdIndexError,
    QdInitOptionError,
    QdNameError,
    QdRecursionError,
    QdRuntimeError,
    QdSyntaxError,
    QdTypeError,
    QdValueError,
    QuadrantsAssertionError,
    QuadrantsCompilationError,
    QuadrantsIndexError,
    QuadrantsNameError,
    QuadrantsRuntimeError,
    QuadrantsRuntimeTypeError,
    QuadrantsSyntaxError,
    QuadrantsTypeError,
)
from .core.fields import MAX_NUM_INDICES
from .core.language import (
    BUILTINS,
    GraphStatus,
    Matrix,
    Template,
    Vector,
    activate,
    append,
    checkpoint,
    deactivate,
    func,
    graph,
    graph_parallel,
    graph_parallel_context,
    is_active,
    length,
    pyfunc,
    real_func,
    ref,
    rescale_index,
    static,
    static_assert,
    static_print,
    stream_parallel,
    template,
)
from .core.language import types as namespace
from .core.types import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64
from .host import python_core as _python_core
from .host.api import (
    cache_stats,
    cfg,
    clear_cache,
    clock_freq_hz,
    compile_ptx,
    dump_compile_config,
    explain,
    init,
    reset,
    sync,
)
from .host.archs import Arch, amdgpu, arm64, cpu, cuda, gpu, metal, python, vulkan, x64
from .host.buffer_view import BufferView
from .host.data_oriented import data_oriented
from .host.extensions import Extension as extension
from .host.extensions import is_extension_enabled, is_extension_supported
from .host.field import Field, MatrixField, ScalarField, field
from .host.kernel import Kernel, kernel
from .host.ndarray import MatrixNdarray, Ndarray, ScalarNdarray, VectorNdarray, ndarray
from .host.perf_dispatch import perf_dispatch
from .host.snode import (
    BitpackedFields,
    FieldsBuilder,
    Mesh,
    MeshInstance,
    SNode,
    axes,
    deactivate_all_snodes,
    i,
    ij,
    ijk,
    ijkl,
    ijl,
    ik,
    ikl,
    il,
    j,
    jk,
    jkl,
    jl,
    k,
    kl,
    l,
    root,
)
from .host.stream import Event, Stream, create_event, create_stream
from .host.struct_field import StructField
from .host.struct_types import Struct, dataclass, struct
from .host.tensor import Backend, MatrixTensor, Tensor, VectorTensor, tensor, wrap
from .lang import exception as exception  # so that `qd.lang.impl...` chains resolve
from .lang import impl as impl
from .lang import misc as misc
from .lang import ops as ops
from .lang import simt
from .lang import util as util
from .lang._fast_caching import pure
from .lang.simt._tile import outer
from .profile import Profile, profile
from .types.enums import DeviceCapability, Format, Layout

int8, int16, int32, int64 = i8, i16, i32, i64
uint1, uint8, uint16, uint32, uint64 = u1, u8, u16, u32, u64
x86_64 = x64
float16, float32, float64 = f16, f32, f64

globals().update(BUILTINS)
_lib = _Namespace(
    core=_Namespace(
        Arch=Arch,
        QuadrantsRuntimeError=QuadrantsRuntimeError,
        get_max_num_indices=lambda: MAX_NUM_INDICES,
        test_threading=_check_pool,
    ),
    utils=_Namespace(import_qd_python_core=lambda: _python_core),
)
"""Where Quadrants' tests find its runtime error class (`qd._lib.core.QuadrantsRuntimeError`), its
arch enum (`qd._lib.core.Arch(int(qd.cfg.arch))`, how Genesis restarts the runtime), the
thread pool's self-test (`qd._lib.core.test_threading()`) and its core module's version and folder
(`qd._lib.utils.import_qd_python_core()`)."""
namespace.struct = staticmethod(struct)  # `qd.types.struct`: the namespace is the language's
del exception, impl, misc, namespace, ops, util  # reached as `qd.lang.<name>`, as in Quadrants

__all__ = [  # noqa: PLE0604 - `*BUILTINS` adds the built-ins' names (its keys are strings)
    "Struct",
    "StructField",
    "Backend",
    "MatrixTensor",
    "Tensor",
    "VectorTensor",
    "tensor",
    "wrap",
    "CRITICAL",
    "DEBUG",
    "ERROR",
    "INFO",
    "TRACE",
    "WARN",
    "is_logging_effective",
    "set_logging_level",
    "ad",
    "algorithms",
    "simt",
    "outer",
    "experimental",
    "interop",
    "linalg",
    "sparse",
    "axes",
    "BitpackedFields",
    "Mesh",
    "MeshInstance",
    "field",
    "Field",
    "FieldsBuilder",
    "i",
    "ij",
    "ijk",
    "ijkl",
    "ijl",
    "ik",
    "ikl",
    "il",
    "jkl",
    "jl",
    "kl",
    "j",
    "jk",
    "k",
    "l",
    "MatrixField",
    "root",
    "ScalarField",
    "SNode",
    "amdgpu",
    "Arch",
    "cfg",
    "extension",
    "is_extension_enabled",
    "is_extension_supported",
    "metal",
    "vulkan",
    "Kernel",
    "Layout",
    "perf_dispatch",
    "Event",
    "Stream",
    "create_event",
    "create_stream",
    "BufferView",
    "Matrix",
    "MatrixNdarray",
    "Ndarray",
    "ScalarNdarray",
    "QdArgumentError",
    "QdArgumentTypeError",
    "QdAssertionError",
    "QdError",
    "QdCallError",
    "QdCompileValueError",
    "QdIndexError",
    "QdInitOptionError",
    "QdNameError",
    "QdRecursionError",
    "QdRuntimeError",
    "QdSyntaxError",
    "QdTypeError",
    "QdValueError",
    "QuadrantsAssertionError",
    "QuadrantsCompilationError",
    "QuadrantsIndexError",
    "QuadrantsNameError",
    "QuadrantsRuntimeError",
    "QuadrantsRuntimeTypeError",
    "QuadrantsSyntaxError",
    "QuadrantsTypeError",
    "Template",
    "Vector",
    "VectorNdarray",
    "cache_stats",
    "clear_cache",
    "compile_ptx",
    "cpu",
    "cuda",
    "data_oriented",
    "dataclass",
    "explain",
    "f16",
    "f32",
    "f64",
    "func",
    "graph",
    "GraphStatus",
    "checkpoint",
    "graph_parallel",
    "graph_parallel_context",
    "real_func",
    "ref",
    "gpu",
    "i8",
    "i16",
    "i32",
    "i64",
    "init",
    "kernel",
    "math",
    "ndarray",
    "Profile",
    "profile",
    "pure",
    "reset",
    "static",
    "static_assert",
    "static_print",
    "rescale_index",
    "is_active",
    "activate",
    "deactivate",
    "deactivate_all_snodes",
    "length",
    "append",
    "clock_freq_hz",
    "stream_parallel",
    "sync",
    "template",
    "types",
    "u1",
    "u8",
    "u16",
    "u32",
    "u64",
    "x64",
    "x86_64",
    "arm64",
    "python",
    "uint1",
    "DeviceCapability",
    "Format",
    "dump_compile_config",
    "profiler",
    "pyfunc",
    "tools",
    *BUILTINS,
]


def load_ipython_extension(ipython: object) -> None:
    """`%load_ext qdlab`: registers the `%%qdkernel` and `%qdlab` magics."""
    from . import magics  # lazy: IPython, only when a notebook loads the extension

    magics.load_ipython_extension(ipython)


def unload_ipython_extension(ipython: object) -> None:
    from . import magics  # lazy: IPython

    magics.unload_ipython_extension(ipython)
