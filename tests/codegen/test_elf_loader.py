"""qdlab's own object loader (`codegen/elf.py`) against MCJIT, and what it must refuse.

A cache hit in a new process links its objects by hand so as not to import llvmlite's binding; the
code it runs must be the code MCJIT would run, and anything it does not understand goes to MCJIT."""

from __future__ import annotations

import ctypes
import json
import math
import os
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import pytest

from qdlab.compiler.codegen import elf, host, jit

pytestmark = pytest.mark.skipif(not elf.supported(), reason="the loader takes x86-64 Linux objects")

MODULE = """
@table = private unnamed_addr constant [4 x float] [float 1.5, float -2.25, float 3.0, float 0.125]
@calls = internal global i64 0
@message = private unnamed_addr constant [6 x i8] c"hello\\00"
declare float @sinf(float)
declare ptr @memset(ptr, i32, i64)
declare i64 @strlen(ptr)

define float @{name}(float %x, i32 %k, ptr %out) nounwind {{
  %n = load i64, ptr @calls
  %n1 = add i64 %n, 1
  store i64 %n1, ptr @calls
  %p = getelementptr [4 x float], ptr @table, i32 0, i32 %k
  %t = load float, ptr %p
  %s = call float @sinf(float %x)
  %r = fmul float %s, %t
  call ptr @memset(ptr %out, i32 7, i64 16)
  %len = call i64 @strlen(ptr @message)
  %lf = sitofp i64 %len to float
  %r2 = fadd float %r, %lf
  ret float %r2
}}

define i64 @{name}_calls() nounwind {{
  %n = load i64, ptr @calls
  ret i64 %n
}}
"""


def objects(name: str, opt: int, **machine: str) -> bytes:
    jit.host()  # the native target initialised
    mod = llvm.parse_assembly(MODULE.format(name=name))
    if not machine:
        return jit.compile_text(str(mod), opt)[0]
    tm = llvm.Target.from_triple(jit.host()[0]).create_target_machine(opt=opt, **machine)
    return tm.emit_object(mod)


def run(address: int, calls: int, x: float, k: int) -> tuple[float, bytes, int]:
    f = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float, ctypes.c_int32, ctypes.c_void_p)(address)
    out = (ctypes.c_uint8 * 16)()
    got = f(x, k, ctypes.addressof(out))
    return got, bytes(out), ctypes.CFUNCTYPE(ctypes.c_int64)(calls)()


def perms(address: int) -> str:
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, mode = line.split()[:2]
            lo, hi = (int(x, 16) for x in span.split("-"))
            if lo <= address < hi:
                return mode
    return "unmapped"


@pytest.mark.parametrize("opt", [0, 3])
def test_same_results_as_mcjit(opt: int) -> None:
    """Constants, a writable global, libm and libc calls: the hand-linked object computes what
    the MCJIT-linked one does, bit for bit, with code read + execute and constants read-only."""
    mine = elf.load([(objects(f"e{opt}", opt), [f"e{opt}", f"e{opt}_calls"])])
    theirs = jit.load_many([(objects(f"m{opt}", opt), [f"m{opt}", f"m{opt}_calls"])])
    assert mine is not None
    for x, k in [(0.5, 0), (2.0, 1), (-1.25, 3)]:
        a, b = run(*mine[0], x, k), run(*theirs[0], x, k)
        assert a[0] == b[0] and a[1] == b[1] == b"\x07" * 16
        assert math.isclose(a[0], math.sin(x) * [1.5, -2.25, 3.0, 0.125][k] + 5, rel_tol=1e-6)
    assert run(*mine[0], 1.0, 2)[2] == 4  # its own counter, untouched by the other object's
    assert perms(mine[0][0]) == "r-xp"


REFUSED = {
    "undefined symbol": """
declare i32 @qdlab_not_defined_anywhere()
define i32 @f() nounwind {
  %r = call i32 @qdlab_not_defined_anywhere()
  ret i32 %r
}""",
    "a constructor section": """
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }]
  [{ i32, ptr, ptr } { i32 65535, ptr @f, ptr null }]
define void @f() nounwind {
  ret void
}""",
    "a GOT relocation (PIC, small code model)": """
@environ = external global ptr
define ptr @f() nounwind {
  %e = load ptr, ptr @environ
  ret ptr %e
}""",
    "unwind tables (a function that may unwind)": """
define i32 @f() {
  ret i32 1
}""",
    "thread-local storage": """
@t = thread_local global i32 3
define i32 @f() nounwind {
  %v = load i32, ptr @t
  ret i32 %v
}""",
}


@pytest.mark.parametrize("why", sorted(REFUSED))
def test_refuses_what_it_does_not_take(why: str) -> None:
    pic = "GOT" in why
    tm = llvm.Target.from_triple(jit.host()[0]).create_target_machine(
        reloc="pic" if pic else "static", codemodel="small" if pic else "jitdefault"
    )
    obj = tm.emit_object(llvm.parse_assembly(REFUSED[why]))
    assert elf.load([(obj, ["f"])]) is None, why


def test_refuses_what_is_not_an_object() -> None:
    assert elf.load([(b"\x7fELF not really", ["f"])]) is None
    assert elf.load([(b"", ["f"])]) is None
    real = objects("s", 0)
    assert elf.load([(real, ["not_a_symbol_of_it"])]) is None


def test_host_key_is_stable_across_cores() -> None:
    """The CPUID words in the key leave out which core read them."""
    cores = sorted(os.sched_getaffinity(0))[:2]
    seen = set()
    for core in cores:
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                textwrap.dedent(f"""
                import os
                os.sched_setaffinity(0, {{{core}}})
                from qdlab.compiler.codegen import host
                print(host.parts()[2])
            """),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        seen.add(out.stdout.strip())
    assert len(seen) == 1 and host.parts()[2] in seen


MAIN = """
import json, sys
import numpy as np
import qdlab as qd

qd.init(arch=qd.cpu)


@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    for i in x:
        y[i] = qd.sin(x[i]) * 1.5 + qd.exp(-x[i])
    s = 0.0
    for i in x:
        s += qd.sqrt(qd.abs(y[i])) + qd.atan2(x[i], 3.0)
    return s


x = qd.ndarray(qd.f32, (4096,))
x.from_numpy(np.linspace(-3, 3, 4096, dtype=np.float32))
y = qd.ndarray(qd.f32, (4096,))
s = k(x, y)
print(json.dumps([float(s), y.to_numpy().tobytes().hex(), "llvmlite.binding" in sys.modules]))
"""


def test_all_hit_process_links_without_llvmlite(tmp_path) -> None:
    """A new process whose constructs are all cached never imports llvmlite's binding, and gives
    the bits of the process that compiled them and of one linking with MCJIT."""
    (tmp_path / "main.py").write_text(MAIN)
    env = dict(os.environ, QDLAB_CACHE_DIR=str(tmp_path / "cache"))

    def once(**extra: str) -> list:
        out = subprocess.run(
            [sys.executable, "main.py"],
            cwd=tmp_path,
            env=dict(env, **extra),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.splitlines()[-1])

    first, hit, mcjit = once(), once(), once(QDLAB_ELF_LOADER="0")
    assert first[2] and not hit[2] and mcjit[2]
    assert first[:2] == hit[:2] == mcjit[:2]


def test_fork_during_a_load_leaves_the_child_able_to_load() -> None:
    """A `fork()` while another thread holds the loader's lock waits for it; the child links and
    runs an object (without the fork hook it would wait forever on the inherited lock)."""
    script = textwrap.dedent("""
        import ctypes, os, threading, time
        from qdlab.compiler.codegen import elf, jit
        obj, _ = jit.compile_text("define i32 @f() nounwind {\\n  ret i32 7\\n}", 0)
        held = threading.Event()

        def hold():
            with elf._lock:
                held.set()
                time.sleep(0.3)

        threading.Thread(target=hold).start()
        held.wait()
        pid = os.fork()
        if pid == 0:
            got = elf.load([(obj, ["f"])])
            os._exit(0 if got and ctypes.CFUNCTYPE(ctypes.c_int32)(got[0][0])() == 7 else 1)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0"]


def test_fork_while_an_upgrade_settles_does_not_deadlock() -> None:
    """A thread installing an optimised object holds the tiers' lock and then takes the loader's;
    a fork meanwhile takes the tiers' lock (its fork hook). With the loader's lock taken by a fork
    hook too, each waited for the other (measured in the conformance run)."""
    script = textwrap.dedent("""
        import ctypes, os, threading, time
        import qdlab  # the package's own import order of the fork hooks
        from qdlab.compiler import tiers
        from qdlab.compiler.codegen import elf, jit
        obj, _ = jit.compile_text("define i32 @f() nounwind {\\n  ret i32 7\\n}", 0)
        holding = threading.Event()

        def settle():
            with tiers._lock:
                holding.set()
                time.sleep(0.3)  # the fork's hooks start meanwhile
                elf.load([(obj, ["f"])])

        t = threading.Thread(target=settle)
        t.start()
        holding.wait()
        time.sleep(0.1)
        pid = os.fork()
        if pid == 0:
            got = elf.load([(obj, ["f"])])
            os._exit(0 if got and ctypes.CFUNCTYPE(ctypes.c_int32)(got[0][0])() == 7 else 1)
        t.join()
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0"]
