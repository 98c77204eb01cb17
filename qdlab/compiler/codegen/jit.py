"""LLVM IR text to native object code, and (for the objects `elf.py` refuses) object code to
callable addresses with MCJIT.

A run whose constructs are all cache hits never imports this module on x86-64 Linux: `elf.py` links
the objects and `host.py` gives the key's host part. One MCJIT engine lives per process and tier
(engines own their target machine; sharing one crashes), and every object is added to it once.
"""

from __future__ import annotations

import threading
import time
from functools import cache

import llvmlite.binding as llvm

_lock = threading.Lock()


@cache
def _init() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@cache
def host() -> tuple[str, str, str]:
    """(triple, cpu name, cpu features): part of every cache key, since objects use the host's
    features."""
    _init()
    return (
        llvm.get_process_triple(),
        llvm.get_host_cpu_name(),
        llvm.get_host_cpu_features().flatten(),
    )


def target_machine(opt: int) -> llvm.TargetMachine:
    triple, cpu, features = host()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(
        cpu=cpu, features=features, opt=opt, reloc="static", codemodel="jitdefault"
    )


@cache
def _tm(opt: int) -> llvm.TargetMachine:
    return target_machine(opt)


def data_layout() -> str:
    return str(_tm(3).target_data)


WARM_IR = """define i64 @qd_warm(i64* %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%j, %loop]
  %a = getelementptr i64, i64* %p, i64 %i
  %v = load i64, i64* %a
  %w = mul i64 %v, 3
  store i64 %w, i64* %a
  %j = add i64 %i, 1
  %c = icmp slt i64 %j, %n
  br i1 %c, label %loop, label %done
done:
  ret i64 0
}
"""
"""A one-loop module that a compile pool worker or the compile server compiles once (target
machine, pass builder and codegen set up)."""

TUNING: dict[str, object] = {}
"""Pipeline tuning options set over each level's own (`loop_unrolling`, `loop_interleaving`, ...):
empty but in `bench/llvm_pipelines.py`, which compares pipelines with it."""


def optimize(llvm_ir: str, opt: int) -> llvm.ModuleRef:
    mod = llvm.parse_assembly(llvm_ir)
    mod.verify()
    if opt > 0:
        pto = llvm.create_pipeline_tuning_options(speed_level=opt)
        # no SLP vectorizer: llvmlite's LLVM 22 asserts in it on some straight-line code (a 3x3
        # svd's column swaps written as selects), which aborts the process (a notebook's kernel);
        # and it gave nothing measurable (bench/llvm_pipelines.py: 0.98-1.02x the run time, for
        # 0.66x the LLVM time)
        pto.slp_vectorization = False
        for name, value in TUNING.items():
            setattr(pto, name, value)
        pb = llvm.create_pass_builder(_tm(opt), pto)
        pb.getModulePassManager().run(mod, pb)
    return mod


def emit_object(mod: llvm.ModuleRef, opt: int) -> bytes:
    return _tm(opt).emit_object(mod)


def emit_assembly(llvm_ir: str, opt: int) -> str:
    return _tm(opt).emit_assembly(llvm.parse_assembly(llvm_ir))


@cache
def _engine(quick: bool = False) -> llvm.ExecutionEngine:
    """The engine optimised objects link into, or (`quick`) the one for quick objects
    (`compiler/runtime/tiers.py`): a unit's two objects define the same symbols, so they cannot
    share one."""
    _init()
    return llvm.create_mcjit_compiler(llvm.parse_assembly(""), target_machine(2))


def load_many(objects: list[tuple[bytes, list[str]]], quick: bool = False) -> list[list[int]]:
    """Link several objects with one finalisation; the addresses of each one's symbols."""
    with _lock:
        ee = _engine(quick)
        for obj, _ in objects:
            ee.add_object_file(llvm.ObjectFileRef.from_data(obj))
        ee.finalize_object()
        return [[ee.get_function_address(s) for s in symbols] for _, symbols in objects]


def compile_text(llvm_ir: str, opt: int) -> tuple[bytes, float]:
    """Optimise LLVM IR text and emit its object; returns the object and the seconds it took."""
    t0 = time.perf_counter()
    return emit_object(optimize(llvm_ir, opt), opt), time.perf_counter() - t0
