"""LLVM's library loaded by a thread while a compile's front end runs (`codegen/preload.py`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="dlopen, /proc")


def run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_library_in_memory_before_the_binding_is_imported() -> None:
    got = run("""
        import sys
        from qdlab.compiler.codegen import preload
        preload.start()
        preload.wait()
        mapped = "libllvmlite.so" in open("/proc/self/maps").read()
        print(mapped, "llvmlite.binding" in sys.modules)
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        print(bool(llvm.get_process_triple()))
    """)
    assert got == ["True", "False", "True"]


def test_fork_while_the_library_loads() -> None:
    """A child forked while the thread is in `dlopen` imports the binding and compiles."""
    got = run("""
        import os
        from qdlab.compiler.codegen import preload
        preload.start()
        pid = os.fork()
        if pid == 0:
            from qdlab.compiler.codegen import jit
            obj, _ = jit.compile_text("define i32 @f() nounwind {\\n  ret i32 7\\n}", 2)
            os._exit(0 if obj.startswith(b"\\x7fELF") else 1)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """)
    assert got == ["0"]
