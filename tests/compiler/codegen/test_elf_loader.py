"""qdlab's own object loader (`codegen/elf.py`) against MCJIT, what it must refuse, and LLVM's
library loaded by a thread while a compile's front end runs (`codegen/preload.py`).

A cache hit in a new process links its objects by hand so as not to import llvmlite's binding; the
code it runs must be the code MCJIT would run, and anything it does not understand goes to MCJIT."""

from __future__ import annotations

import ctypes
import math
import os
import random
import subprocess
import sys
import textwrap

import llvmlite.binding as llvm
import pytest

from qdlab.compiler.codegen import elf, host, jit


@pytest.fixture(autouse=True)
def loader_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the loader, whatever the environment of the tests says."""
    monkeypatch.setenv("QDLAB_ELF_LOADER", "1")


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


def python(script: str) -> list[str]:
    """The words a new interpreter prints running `script`."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


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


def test_what_is_no_sound_object_is_malformed_and_never_handed_to_mcjit() -> None:
    """Junk with the ELF magic, an object cut short anywhere, one that does not define the symbol
    asked for: `Malformed`, before any byte is mapped. They used to go to MCJIT, which crashes on
    such bytes or gives address 0 for a missing symbol (the launch then called it: a segfault)."""
    real = objects("s", 0)
    junk = random.Random(1).randbytes(len(real))
    for data in [
        b"",
        b"\x7fELF not really",
        b"\x7fELF" + junk,
        *(real[:n] for n in range(len(real))),
    ]:
        with pytest.raises(elf.Malformed):
            elf.load([(data, ["s"])])
        with pytest.raises(elf.Malformed):
            elf.check(data, ["s"])
    with pytest.raises(elf.Malformed, match="does not define not_a_symbol_of_it"):
        elf.load([(real, ["s", "not_a_symbol_of_it"])])
    elf.check(real, ["s", "s_calls"])


def test_a_damaged_object_never_takes_the_loader_past_its_bounds() -> None:
    """Each of 3000 objects with a few bytes changed anywhere (headers, tables, names,
    relocations, code) is linked, refused, or `Malformed`: no other exception, no write outside
    the mapping (every table, name and relocation is checked against its bounds first)."""
    real = objects("d", 3)
    rng = random.Random(7)
    outcomes = set()
    for _ in range(3000):
        data = bytearray(real)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            outcomes.add("linked" if elf.load([(bytes(data), ["d"])]) else "refused")
        except elf.Malformed:
            outcomes.add("malformed")
    assert outcomes == {"linked", "refused", "malformed"}


@pytest.mark.process
def test_host_key_is_stable_across_cores() -> None:
    """The CPUID words in the key leave out which core read them."""
    cores = sorted(os.sched_getaffinity(0))[:2]
    seen = set()
    for core in cores:
        seen.update(
            python(f"""
                import os
                os.sched_setaffinity(0, {{{core}}})
                from qdlab.compiler.codegen import host
                print(host.parts()[2])
            """)
        )
    assert len(seen) == 1 and host.parts()[2] in seen


HOLDERS = {
    "the loader's lock": """
        with elf._lock:
            held.set()
            time.sleep(0.3)
    """,
    "the tiers' lock, then the loader's (an upgrade settling)": """
        with tiers._lock:
            held.set()
            time.sleep(0.3)  # the fork's hooks start meanwhile
            elf.load([(obj, ["f"])])
    """,
}
FORK = """
import ctypes, os, threading, time
import qdlab  # the package's own import order of the fork hooks
from qdlab.compiler.runtime import tiers
from qdlab.compiler.codegen import elf, jit
obj, _ = jit.compile_text("define i32 @f() nounwind {\\n  ret i32 7\\n}", 0)
held = threading.Event()

def hold():
HOLD

t = threading.Thread(target=hold)
t.start()
held.wait()
time.sleep(0.1)
pid = os.fork()
if pid == 0:
    got = elf.load([(obj, ["f"])])
    os._exit(0 if got and ctypes.CFUNCTYPE(ctypes.c_int32)(got[0][0])() == 7 else 1)
t.join()
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


@pytest.mark.process
@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_fork_while_another_thread_holds(holder: str) -> None:
    """A `fork()` while another thread holds a lock on the way to linking: the child gets a
    loader lock of its own, links an object and runs it. With the loader's lock inherited taken
    the child would wait forever; with a fork hook taking it, a thread settling an upgrade (which
    holds the tiers' lock, which the fork's hooks take, and then takes the loader's) and the fork
    waited for each other (measured: the conformance run hung)."""
    body = textwrap.indent(textwrap.dedent(HOLDERS[holder]).strip(), "    ")
    assert python(FORK.replace("HOLD", body)) == ["0"]


@pytest.mark.process
def test_llvm_library_in_memory_before_the_binding_is_imported() -> None:
    got = python("""
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


@pytest.mark.process
def test_fork_while_the_llvm_library_loads() -> None:
    """A child forked while the thread is in `dlopen` imports the binding and compiles."""
    got = python("""
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


def test_an_object_mcjit_links_must_define_what_it_is_loaded_for() -> None:
    """An object the loader refuses goes to MCJIT, which gives address 0 for a symbol the object
    does not define; the launch would call it: refused instead."""
    from qdlab.compiler.codegen import targets

    obj = (
        llvm.Target.from_triple(jit.host()[0])
        .create_target_machine()
        .emit_object(llvm.parse_assembly(REFUSED["unwind tables (a function that may unwind)"]))
    )
    assert elf.load([(obj, ["f"])]) is None  # MCJIT's, then
    with pytest.raises(elf.Malformed, match="does not define"):
        targets.CPU.load([("unit_without_its_task", obj, ["f", "not_in_it"])])
    assert targets.CPU.functions("unit_without_its_task") is None
