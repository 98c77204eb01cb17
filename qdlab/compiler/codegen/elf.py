"""Native objects linked into this process by hand, without llvmlite's binding.

A new process whose constructs all come from the cache only has to put their objects in memory,
relocate them and call them; importing llvmlite's binding for MCJIT to do it costs more than the
rest of such a start together (~35-80 ms: the LLVM library is loaded and initialised). Our objects
are simple: x86-64 relocatable ELF, static relocation model and LLVM's large code model (every
address an absolute 64-bit word), no unwind tables, no constructors, the only external symbols
libm's and libc's. This loader takes exactly that kind and refuses anything else (`load` returns
None and the caller hands the objects to MCJIT, `jit.load_many`): an unknown section type or
relocation, an undefined symbol the process lacks, a 32-bit field a value does not fit. What is
not such an object at all (another machine or format, a table, section, name or relocation out of
its bounds, a symbol asked for that it does not define) is `Malformed`: raised before any byte is
mapped, never handed to MCJIT, which would crash on it (or give address 0 for the missing symbol).
`check` runs the same reading on an object from elsewhere (the compile server) before it is kept.

The objects of one call share one anonymous mapping: code pages become read + execute, constants
read-only, writable data stays read + write. Mappings live as long as the process (MCJIT frees
nothing either: a launcher may hold any task). `QDLAB_ELF_LOADER=0` sends every object to MCJIT.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import struct
import sys
import threading

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
_RELA = struct.Struct("<QQq")
_U64, _I32, _U32 = struct.Struct("<Q"), struct.Struct("<i"), struct.Struct("<I")

_PROGBITS, _SYMTAB, _STRTAB, _RELA_T, _NOTE, _NOBITS = 1, 2, 3, 4, 7, 8
_IGNORED = {0, _SYMTAB, _STRTAB, _NOTE, 17, 0x6FFF4C03, 0x6FFF4C0C}
"""Section types that take no memory: null, symbols and names (read apart), notes, COMDAT groups,
LLVM's address-significance and call-graph tables."""
_WRITE, _ALLOC, _EXEC, _TLS = 1, 2, 4, 0x400
_STT_TLS, _STT_IFUNC = 6, 10
_UNDEF, _ABS, _COMMON = 0, 0xFFF1, 0xFFF2
_WEAK = 2
_R_NONE, _R_64, _R_PC32, _R_PLT32, _R_32, _R_32S, _R_PC64 = 0, 1, 2, 4, 10, 11, 24
_RUN_AT_LOAD = (".ctors", ".dtors", ".init", ".fini", ".preinit")
"""Sections of code a loader is expected to run (MCJIT too leaves them to its caller)."""
_PAGE = mmap.PAGESIZE
_PROT_R, _PROT_RW, _PROT_RX = 1, 3, 5

_lock = threading.Lock()
_mappings: list[mmap.mmap] = []
"""Every mapping made, kept for the life of the process."""
_libc: ctypes.CDLL | None = None


def _after_fork_in_child() -> None:
    """A fresh lock for the child: one taken by a thread in the middle of a load would stay taken
    there (the thread is not forked). Nothing the lock guards is left half-done in the child, at
    worst a mapping nobody uses. Not taken before the fork: a thread settling an upgrade holds
    `tiers`' lock and waits for this one, and the fork takes that lock (measured: a deadlock)."""
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Refused(Exception):
    """An object this loader does not take (MCJIT will)."""


class Malformed(ValueError):
    """Bytes that are not a sound object of this host, or lack a symbol asked for: nobody loads
    them."""


_MAX_BYTES = 1 << 30
"""The most memory the sections of one load may take (a larger size is a corrupt table)."""
_WIDTH = {_R_64: 8, _R_PC64: 8, _R_PC32: 4, _R_PLT32: 4, _R_32: 4, _R_32S: 4}
"""Bytes each relocation type writes."""


def supported() -> bool:
    """The platform's objects are the kind this loader takes."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def enabled() -> bool:
    return supported() and os.environ.get("QDLAB_ELF_LOADER", "1") != "0"


def process() -> ctypes.CDLL:
    """The process's own symbols (the C library's `mprotect` and `dlopen`, libm), opened once."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _libc.dlopen.restype = ctypes.c_void_p
        _libc.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return _libc


def _external(name: str, weak: bool) -> int:
    """The address of a symbol of the process (libm, libc), as MCJIT's resolver finds it."""
    try:
        return ctypes.cast(process()[name], ctypes.c_void_p).value or 0
    except AttributeError:
        if weak:
            return 0
        raise Refused(f"undefined symbol {name}") from None


def _private(size: int) -> mmap.mmap:
    """Anonymous read + write memory of this process alone (a forked child gets a copy, as of
    MCJIT's memory; Python's default for anonymous maps is shared)."""
    return mmap.mmap(
        -1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=mmap.PROT_READ | mmap.PROT_WRITE
    )


def _up(n: int, align: int) -> int:
    return -(-n // max(align, 1)) * max(align, 1)


class _Object:
    """One object's sections to place, its symbols and its relocations, read from its bytes and
    checked against their bounds (`Malformed`)."""

    def __init__(self, data: bytes) -> None:
        try:
            self._read(data)
        except (struct.error, ValueError, IndexError, UnicodeDecodeError) as e:
            if isinstance(e, Malformed):
                raise
            raise Malformed(f"an unreadable object ({type(e).__name__})") from None

    def _read(self, data: bytes) -> None:
        head = _HEADER.unpack_from(data)
        if head[0][:7] != b"\x7fELF\x02\x01\x01" or head[1] != 1 or head[2] != 62:
            raise Malformed("not an x86-64 little-endian relocatable ELF object")
        shoff, shentsize, shnum, shstrndx = head[6], head[11], head[12], head[13]
        if shentsize != _SECTION.size or not 0 < shnum or shoff + shnum * shentsize > len(data):
            raise Malformed("the section table lies outside the object")
        self.data = data
        self.sections = [_SECTION.unpack_from(data, shoff + k * shentsize) for k in range(shnum)]
        for k, (_, kind, _, _, off, size, link, _, align, _) in enumerate(self.sections):
            if kind != _NOBITS and off + size > len(data) or link >= shnum or align > _PAGE:
                raise Malformed(f"section {k} lies outside the object")
        if shstrndx >= shnum:
            raise Malformed("no section names")
        if any(self._name(shstrndx, h[0]).startswith(_RUN_AT_LOAD) for h in self.sections):
            raise Refused("code to run at load (constructors or destructors)")
        self.placed: dict[int, int] = {}
        """Section index -> offset in the mapping, for the sections that take memory."""
        self.symbols: list[tuple[str, int, int, int]] = []
        """(name, binding, section index, value) in symbol-table order."""
        relas = []
        for k, (_, kind, flags, _, off, size, link, info, _, entsize) in enumerate(self.sections):
            if kind == _SYMTAB:
                if self.symbols or entsize != _SYMBOL.size or size % entsize:
                    raise Malformed("a second or misshapen symbol table")
                self.symbols = [
                    self._symbol(off + j * entsize, link) for j in range(size // entsize)
                ]
            elif kind == _RELA_T:
                relas.append((k, info))
            elif kind not in (_PROGBITS, _NOBITS) and (kind not in _IGNORED or flags & _ALLOC):
                raise Refused(f"section type {kind:#x}")
            elif flags & _TLS:
                raise Refused("thread-local storage")
        if sum(h[5] + h[8] for h in self.sections if h[2] & _ALLOC) > _MAX_BYTES:
            raise Malformed("sections larger than any object")
        self.relas = [r for k, target in relas for r in self._relocations(k, target)]
        """(target section, offset in it, type, symbol index, addend), each checked."""

    def _name(self, table: int, at: int) -> str:
        """The name at `at` of string table section `table`, within that section."""
        _, _, _, _, off, size, *_ = self.sections[table]
        if at >= size:
            raise Malformed("a name outside its string table")
        return self.data[off + at : self.data.index(b"\0", off + at, off + size)].decode()

    def _symbol(self, at: int, strtab: int) -> tuple[str, int, int, int]:
        name_off, info, _, shndx, value, _ = _SYMBOL.unpack_from(self.data, at)
        if shndx >= len(self.sections) and shndx not in (_ABS, _COMMON):
            raise Malformed("a symbol in a section the object does not have")
        if info & 0xF in (_STT_TLS, _STT_IFUNC) and shndx != _UNDEF:
            raise Refused("a thread-local or indirect symbol")
        return self._name(strtab, name_off), info >> 4, shndx, value

    def _relocations(self, k: int, target: int) -> list[tuple[int, int, int, int, int]]:
        _, _, _, _, off, size, _, _, _, entsize = self.sections[k]
        if entsize != _RELA.size or size % entsize or target >= len(self.sections):
            raise Malformed(f"a misshapen relocation section {k}")
        _, t_kind, t_flags, _, _, t_size, *_ = self.sections[target]
        if t_kind not in (_PROGBITS, _NOBITS) or not t_flags & _ALLOC:
            if t_flags & _ALLOC:
                raise Refused("relocations of a section that is not loaded")
            return []  # of a section that takes no memory (debug information)
        out = []
        for j in range(size // entsize):
            where, info, addend = _RELA.unpack_from(self.data, off + j * entsize)
            kind, sym = info & 0xFFFFFFFF, info >> 32
            if kind == _R_NONE:
                continue
            if kind not in _WIDTH:
                raise Refused(f"relocation type {kind}")
            if sym >= len(self.symbols) or where + _WIDTH[kind] > t_size:
                raise Malformed(f"a relocation outside its section or symbol table ({k})")
            out.append((target, where, kind, sym, addend))
        return out

    def allocated(self, want: int) -> list[int]:
        """Indices of the sections that take memory, in one of three classes: 0 code, 1 constants,
        2 writable."""
        out = []
        for k, (_, kind, flags, *_rest) in enumerate(self.sections):
            if kind in (_PROGBITS, _NOBITS) and flags & _ALLOC:
                cls = 0 if flags & _EXEC else 2 if flags & _WRITE else 1
                if cls == want:
                    out.append(k)
        return out

    def exports(self, symbols: list[str]) -> list[int]:
        """The symbol-table index of each of `symbols`, a global this object defines in a section
        it loads (`Malformed` when one is missing: the object of something else)."""
        loaded = {k for cls in range(3) for k in self.allocated(cls)}
        defined = {s[0]: j for j, s in enumerate(self.symbols) if s[2] in loaded and s[1]}
        missing = [s for s in symbols if s not in defined]
        if missing:
            raise Malformed(f"the object does not define {missing[0]}")
        return [defined[s] for s in symbols]

    def address(self, base: int, sym: int) -> int:
        name, binding, shndx, value = self.symbols[sym]
        if shndx == _UNDEF:
            return _external(name, binding == _WEAK)
        if shndx == _ABS:
            return value
        if shndx not in self.placed:
            raise Refused(f"symbol {name or sym} in a section that is not loaded")
        return base + self.placed[shndx] + value

    def relocate(self, m: mmap.mmap, base: int) -> None:
        for target, where, kind, sym, addend in self.relas:
            place = self.placed[target] + where
            value = self.address(base, sym) + addend
            if kind == _R_64:
                _U64.pack_into(m, place, value & 0xFFFFFFFFFFFFFFFF)
            elif kind == _R_PC64:
                _U64.pack_into(m, place, (value - base - place) & 0xFFFFFFFFFFFFFFFF)
            else:
                if kind in (_R_PC32, _R_PLT32):
                    value -= base + place
                lo, hi = (0, 1 << 32) if kind == _R_32 else (-(1 << 31), 1 << 31)
                if not lo <= value < hi:
                    raise Refused(f"relocation {kind} out of range")
                (_U32 if kind == _R_32 else _I32).pack_into(m, place, value)


def check(data: bytes, symbols: list[str]) -> None:
    """`data` is an object this loader takes, within its bounds, defining every one of `symbols`:
    else `Malformed` (or `Refused`)."""
    _Object(data).exports(symbols)


def load(objects: list[tuple[bytes, list[str]]]) -> list[list[int]] | None:
    """Link the objects into one new mapping; per object, the addresses of its `symbols`. None
    when one of them is not of the kind this loader takes, or the system refuses the mapping;
    `Malformed` when one is no sound object or lacks one of its `symbols`."""
    if not enabled() or not objects:
        return None
    try:
        parsed = [_Object(obj) for obj, _ in objects]
        exports = [o.exports(symbols) for o, (_, symbols) in zip(parsed, objects)]
    except Refused:
        return None
    spans, size = [], 0
    for cls in range(3):  # code, constants, data: each class starts on a page of its own
        start = size = _up(size, _PAGE)
        for o in parsed:
            for k in o.allocated(cls):
                size = _up(size, o.sections[k][8])
                o.placed[k] = size
                size += o.sections[k][5]
        spans.append((start, _up(size, _PAGE) - start))
    with _lock:
        m = _private(max(size, 1))
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        try:
            for o in parsed:
                for k, at in o.placed.items():
                    _, kind, _, _, off, n, *_ = o.sections[k]
                    if kind == _PROGBITS:
                        m[at : at + n] = o.data[off : off + n]
                o.relocate(m, base)
            out = [[o.address(base, j) for j in js] for o, js in zip(parsed, exports)]
        except Refused:
            return None  # the mapping is dropped with its exports (nothing ran from it)
        libc = process()
        for (start, n), prot in zip(spans, (_PROT_RX, _PROT_R, _PROT_RW)):
            if n and libc.mprotect(base + start, n, prot) != 0:
                return None  # the system forbids executable mappings: MCJIT's memory manager
        _mappings.append(m)
    return out


def code(machine_code: bytes) -> int:
    """A few bytes of machine code in a read + execute mapping of their own; their address."""
    with _lock:
        m = _private(_up(len(machine_code), _PAGE))
        m[: len(machine_code)] = machine_code
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        if process().mprotect(base, len(m), _PROT_RX) != 0:
            raise OSError(ctypes.get_errno(), "mprotect refused an executable mapping")
        _mappings.append(m)
    return base
