"""The `QD_*` environment variables `qd.init` reads, as Quadrants' `init` reads them.

Each option of Quadrants' compile config and special config may be set as `QD_<NAME>` (upper
case): `QD_DEBUG=1`, `QD_LOG_LEVEL=warn`, `QD_OPT_LEVEL=1`. An empty variable sets nothing; a
boolean is read as an integer (`0` off, anything else on); an option given to `qd.init` wins over
its variable, with a warning. `QD_ARCH`, `QD_DEFAULT_FP` and `QD_DEFAULT_IP` are read as Quadrants
reads them. `QD_LOAD_IR` / `QUADRANTS_LOAD_PTX` (replacement IR read at codegen, which caching
skips) are refused with caching on, as there; qdlab never reads replacement IR.
"""

from __future__ import annotations

import os

from .config import SETTINGS, Config
from .inert import INERT
from .types import f32, f64, i32, i64

OPTIONS = (
    # the compile config (`quadrants.lang.impl.default_cfg()`), less arch and the default types
    "ad_stack_experimental_enabled",
    "ad_stack_size",
    "ad_stack_sparse_threshold_bytes",
    "advanced_optimization",
    "auto_mesh_local_default_occupacy",
    "cache_loop_invariant_global_vars",
    "cfg_optimization",
    "check_out_of_bound",
    "cpu_max_num_threads",
    "cuda_stack_limit",
    "debug",
    "debug_dump_path",
    "default_cpu_block_dim",
    "default_gpu_block_dim",
    "demote_dense_struct_fors",
    "demote_no_access_mesh_fors",
    "detect_read_only",
    "device_memory_GB",
    "device_memory_fraction",
    "experimental_auto_mesh_local",
    "external_metal_command_queue",
    "external_metal_command_queue_is_torch_queue",
    "fast_math",
    "flatten_if",
    "force_scalarize_matrix",
    "half2_vectorization",
    "kernel_profiler",
    "make_block_local",
    "make_cpu_multithreading_loop",
    "make_mesh_block_local",
    "make_thread_local",
    "max_block_dim",
    "mesh_localize_all_attr_mappings",
    "mesh_localize_from_end_mapping",
    "mesh_localize_to_end_mapping",
    "move_loop_invariant_outside_if",
    "num_compile_threads",
    "offline_cache",
    "offline_cache_cleaning_factor",
    "offline_cache_cleaning_policy",
    "offline_cache_file_path",
    "offline_cache_max_size_of_files",
    "opt_level",
    "optimize_mesh_reordered_mapping",
    "print_accessor_ir",
    "print_ir",
    "print_ir_dbg_info",
    "print_kernel_amdgcn",
    "print_kernel_asm",
    "print_kernel_llvm_ir",
    "print_kernel_llvm_ir_optimized",
    "print_preprocessed_ir",
    "print_struct_llvm_ir",
    "quant_opt_atomic_demotion",
    "quant_opt_store_fusion",
    "raise_on_templated_floats",
    "random_seed",
    "real_matrix_scalarize",
    "saturating_grid_dim",
    "timeline",
    "vk_api_version",
    # the special config (options of Quadrants' Python side)
    "log_level",
    "gdb_trigger",
    "short_circuit_operators",
    "print_full_traceback",
    "unrolling_limit",
)
"""The options a `QD_<NAME>` variable sets, as in Quadrants 1.3.3."""

CASTS = {"cpu_max_num_threads": int, "offline_cache_max_size_of_files": int}
"""How a variable's text is read where the option's default (None, or a renamed option) does
not say; elsewhere the default's type says it."""

LOAD_IR_ARCHS = ("x64", "arm64", "cuda", "amdgpu")
"""The archs whose LLVM codegen reads `QD_LOAD_IR` in Quadrants."""


def _default(name: str) -> object:
    if name in SETTINGS:
        return Config.__dataclass_fields__[name].default
    return INERT.get(name)


def _cast(name: str, text: str) -> object:
    cast = CASTS.get(name)
    if cast is None:
        default = _default(name)
        cast = type(default) if default is not None else str
    if cast is bool:
        return bool(int(text))
    return cast(text)


def read(given: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """The options `given` to `qd.init` with those its `QD_*` variables set added, and the
    warnings for the variables an argument overrides."""
    options, warnings = dict(given), []
    for name in OPTIONS:
        variable = "QD_" + name.upper()
        text = os.environ.get(variable, "")
        if name in given and text:
            warnings.append(
                f'Environment variable {variable}={text} overridden by qd.init argument "{name}"'
            )
        elif text:
            options[name] = _cast(name, text)
    for name, types in (
        ("default_fp", {"32": f32, "64": f64}),
        ("default_ip", {"32": i32, "64": i64}),
    ):
        variable = "QD_" + name.upper()
        text = os.environ.get(variable, "")
        if not text:
            continue
        if options.get(name) is not None:
            warnings.append(
                f'Environment variable {variable}={text} overridden by qd.init argument "{name}"'
            )
        elif text in types:
            options[name] = types[text]
        else:
            raise ValueError(f"Invalid {variable}={text}, should be 32 or 64")
    return options, warnings


def arch(given: object) -> object:
    """The arch `qd.init` starts on: `QD_ARCH` (an arch's name) when set, else `given`."""
    return os.environ.get("QD_ARCH") or given


def dumps_ir() -> bool:
    """Whether `QD_DUMP_IR` asks for each kernel's IR to be written out."""
    return os.environ.get("QD_DUMP_IR") == "1"


def check_ir_load_against_caching(
    arch_name: str, offline_cache: bool, src_ll_cache: bool
) -> list[str]:
    """The load variables set for `arch_name` (`QD_LOAD_IR` for an LLVM arch,
    `QUADRANTS_LOAD_PTX` for CUDA); a ValueError, in Quadrants' words, when caching is on, since a
    cached kernel never reads them."""
    active = []
    if os.getenv("QD_LOAD_IR", "0") not in ("", "0") and arch_name in LOAD_IR_ARCHS:
        active.append("QD_LOAD_IR")
    if os.getenv("QUADRANTS_LOAD_PTX", "0") not in ("", "0") and arch_name == "cuda":
        active.append("QUADRANTS_LOAD_PTX")
    if active and (offline_cache or src_ll_cache):
        names = " and ".join(active)
        raise ValueError(
            f"Caching must be disabled when using {names}: replacement IR/PTX is read from "
            "debug_dump_path only for a kernel that is actually compiled, and cached kernels are "
            "returned without running codegen, so the files would be silently ignored. Pass "
            f"offline_cache=False and src_ll_cache=False to qd.init, or unset {names}."
        )
    return active
