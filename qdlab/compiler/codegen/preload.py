"""LLVM's library put in memory by a thread while the front end works, when a compile will need it.

A new process that must compile (a miss on its kernel's manifest) needs llvmlite's binding once the
front end has made the construct's LLVM IR; loading that library (`libllvmlite.so`, ~180 MB: its
relocations and LLVM's static initialisers) is most of the import's ~35-50 ms. CPython loads
libraries with the GIL held, so a thread importing the binding would stop the front end as long; a
thread calling the C library's `dlopen` through ctypes releases it, and the binding's own load of
the same path later finds the library in memory. A `fork()` waits for that call first (a child that
inherits the loader's lock taken would hang in its first import).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading

from . import elf

_RTLD_NOW = 2
"""How ctypes opens a library (RTLD_NOW, local symbols): the binding's `CDLL` gets the same
handle."""
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _path() -> str | None:
    spec = importlib.util.find_spec("llvmlite")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "binding", "libllvmlite.so")
    return path if os.path.isfile(path) else None


def _open(path: str) -> None:
    elf.process().dlopen(os.fsencode(path), _RTLD_NOW)  # the GIL released meanwhile; never closed


def start() -> None:
    """Start loading LLVM's library in a thread, unless llvmlite's binding is in already or a load
    has started."""
    global _thread
    if "llvmlite.binding" in sys.modules or not sys.platform.startswith("linux"):
        return
    with _lock:
        if _thread is not None:
            return
        path = _path()
        if path is None:
            return
        _thread = threading.Thread(target=_open, args=(path,), name="qdlab-llvm-load", daemon=True)
        _thread.start()


def wait() -> None:
    """Return once no load is in progress."""
    t = _thread
    if t is not None and t is not threading.current_thread():
        t.join()


os.register_at_fork(before=wait)
