"""The `qd.init` options Quadrants has and qdlab takes without effect.

Programs and tests written for Quadrants pass them (`print_full_traceback=True`, `fast_math=False`,
`ad_stack_size=...`), so `qd.init` accepts every one: the value is recorded, `qd.cfg.<name>` reads
it back (Quadrants' default when it was not given), and `%qdlab config` lists it as "no effect in
qdlab". Each value below is Quadrants' default (1.3.3, on the CPU). The options that do act in qdlab
are fields of `Config`; `RENAMED` maps the Quadrants options that qdlab spells differently.
"""

from __future__ import annotations

INERT: dict[str, object] = {
    # Python-side options of quadrants.init and its special config
    "enable_fallback": True,
    "require_version": None,
    "print_non_pure": False,
    "src_ll_cache": True,
    "_test_mode": False,
    "gdb_trigger": False,
    "short_circuit_operators": True,
    "print_full_traceback": False,
    # the compile config
    "ad_stack_sparse_threshold_bytes": 104857600,
    "advanced_optimization": True,
    "auto_mesh_local_default_occupacy": 4,
    "cache_loop_invariant_global_vars": True,
    "cfg_optimization": True,
    "cuda_stack_limit": 0,
    "default_cpu_block_dim": 32,
    "default_gpu_block_dim": 128,
    "demote_dense_struct_fors": True,
    "demote_no_access_mesh_fors": True,
    "detect_read_only": True,
    "device_memory_GB": 1.0,
    "device_memory_fraction": 0.0,
    "experimental_auto_mesh_local": False,
    "external_metal_command_queue": 0,
    "external_metal_command_queue_is_torch_queue": False,
    "fast_math": True,
    "flatten_if": False,
    "force_scalarize_matrix": False,
    "half2_vectorization": False,
    "kernel_profiler": False,
    "make_block_local": True,
    "make_cpu_multithreading_loop": True,
    "make_mesh_block_local": True,
    "make_thread_local": True,
    "max_block_dim": 0,
    "mesh_localize_all_attr_mappings": False,
    "mesh_localize_from_end_mapping": False,
    "mesh_localize_to_end_mapping": True,
    "move_loop_invariant_outside_if": False,
    "num_compile_threads": 4,
    "optimize_mesh_reordered_mapping": True,
    "print_accessor_ir": False,
    "print_ir_dbg_info": False,
    "print_kernel_amdgcn": False,
    "print_kernel_asm": False,
    "print_kernel_llvm_ir": False,
    "print_kernel_llvm_ir_optimized": False,
    "print_preprocessed_ir": False,
    "print_struct_llvm_ir": False,
    "quant_opt_atomic_demotion": True,
    "quant_opt_store_fusion": True,
    "real_matrix_scalarize": True,
    "saturating_grid_dim": 0,
    "timeline": False,
    "vk_api_version": "",
}
"""Option name -> Quadrants' default."""

WHY: dict[str, str] = {
    "print_full_traceback": "errors always point at the kernel's line and show no qdlab frame",
    "short_circuit_operators": "`and` / `or` always short-circuit",
    "fast_math": "qdlab never uses fast-math",
}
"""Why an option does nothing here, where that is worth saying."""

RENAMED: dict[str, tuple[str, float]] = {
    "offline_cache_max_size_of_files": ("offline_cache_max_size_mb", 1 / 2**20),
}
"""Quadrants option -> (qdlab's `Config` field, the factor its value is converted by)."""
