"""The host CPU's part of every cache key, read without loading LLVM.

A cached object is valid on a machine whose LLVM would make the same code: the same LLVM (the
llvmlite release), the same target, the same CPU name and features. LLVM derives the last two from
the processor's CPUID leaves and the operating system's XCR0 alone (`sys::getHostCPUName`,
`getHostCPUFeatures`), so on x86-64 Linux the key holds a digest of those words (and names the C
library), read here by a few bytes of machine code instead of asking LLVM: importing llvmlite's
binding costs a new process more than loading all its cached objects. Words that name the core the
thread runs on (the APIC ids of leaf 1) are left out. Elsewhere the key asks LLVM (`jit.host`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
from functools import cache

import llvmlite

from . import elf

_CPUID = bytes.fromhex(
    "53"  # push rbx
    "89f8"  # mov eax, edi      (leaf)
    "89f1"  # mov ecx, esi      (sub-leaf)
    "4989d0"  # mov r8, rdx     (out)
    "0fa2"  # cpuid
    "418900"  # mov [r8], eax
    "41895804"  # mov [r8+4], ebx
    "41894808"  # mov [r8+8], ecx
    "4189500c"  # mov [r8+12], edx
    "5b"  # pop rbx
    "c3"  # ret
)
_XGETBV = bytes.fromhex(
    "31c9"  # xor ecx, ecx
    "0f01d0"  # xgetbv
    "48c1e220"  # shl rdx, 32
    "4809d0"  # or rax, rdx
    "c3"  # ret
)
_LEAVES = (
    (0, 0, (0, 1, 2, 3)),  # the highest leaf, the vendor
    (1, 0, (0, 2, 3)),  # family, model, stepping, features (not ebx: the APIC id)
    (7, 0, (0, 1, 2, 3)),
    (7, 1, (0, 1, 2, 3)),
    (7, 2, (0, 1, 2, 3)),
    (0xD, 1, (0,)),
    (0x14, 0, (1,)),
    (0x19, 0, (1,)),
    (0x1E, 1, (0, 1, 2, 3)),
    (0x24, 0, (0, 1, 2, 3)),
    (0x80000000, 0, (0,)),
    (0x80000001, 0, (2, 3)),
    (0x80000008, 0, (1,)),
)
"""(leaf, sub-leaf, which of eax, ebx, ecx, edx): what LLVM's host detection reads, and a few
neighbours it may read in later releases (a word too many only makes the key more particular)."""


def _words() -> list[int]:
    cpuid = ctypes.CFUNCTYPE(None, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p)(
        elf.code(_CPUID)
    )
    regs = (ctypes.c_uint32 * 4)()

    def read(leaf: int, sub: int) -> list[int]:
        cpuid(leaf, sub, ctypes.addressof(regs))
        return list(regs)

    top, top_ext = read(0, 0)[0], read(0x80000000, 0)[0]
    out = []
    for leaf, sub, which in _LEAVES:
        supported = leaf <= (top_ext if leaf >= 0x80000000 else top)
        got = read(leaf, sub) if supported else [0, 0, 0, 0]
        out += [got[k] for k in which]
    if read(1, 0)[2] & (1 << 27):  # OSXSAVE: the OS enables XGETBV
        out.append(ctypes.CFUNCTYPE(ctypes.c_uint64)(elf.code(_XGETBV))())
    return out


@cache
def parts() -> tuple[str, ...]:
    """(what the digest covers and the C library, the llvmlite release, the digest of the CPUID
    words), or LLVM's own (triple, cpu name, cpu features) where the words cannot be read this
    way."""
    if elf.supported():  # whichever loader links the objects
        words = _words()
        digest = hashlib.sha256(struct.pack(f"<{len(words)}Q", *words)).hexdigest()
        try:
            libc = os.confstr("CS_GNU_LIBC_VERSION") or "no glibc"
        except (ValueError, OSError):
            libc = "no glibc"
        return (f"x86_64-linux {libc} cpuid+xcr0", llvmlite.__version__, digest)
    from . import jit  # lazy: llvmlite's binding

    return jit.host()
