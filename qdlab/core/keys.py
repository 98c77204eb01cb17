"""Every name the compiler, the caches and the loaders agree on, each decided here once.

- `compiler_version()`: qdlab's version and a digest of the compiler's (and the language's) own
  source, so a cache never serves a binary that another compiler built. Computed on first need, not
  at import.
- `construct_key`: a construct's binary, from its canonical IR text, the target, the code-generation
  options and the compiler version. `manifest_key`: a kernel's manifest, from its source, argument
  signature, every setting, the target and the compiler version (where the kernel sits is left out).
- `memo_key`: a statement's or a construct's memo entry on disk, from its in-process key.
- `prefix` / `symbol`: the names of a unit's task functions in its object (or PTX module).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from functools import cache
from pathlib import Path

from . import QDLAB_DIR, __version__
from .config import Config

MANIFEST_FORMAT = "manifest-1"


@cache
def compiler_version() -> str:
    """qdlab's version and a digest of the core's and the compiler's sources. The digest is
    recorded beside the compiler's bytecode under the files' names, sizes and modification times
    (what Python checks before it trusts a `.pyc`): a new process stats ~80 files instead of
    reading and hashing them (~0.6 of ~2.5 ms of its first compile); a read-only install digests
    them in every process."""
    files = _sources()
    stamp = _digest(tuple((p, st.st_size, st.st_mtime_ns) for p, st in files))
    record = Path(__file__).parent / "__pycache__" / f"qdlab-version-{stamp[:32]}.txt"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        got = record.read_text()
        if _VERSION.fullmatch(got):
            return got
    h = hashlib.sha256()
    for path, _ in files:
        with open(path, "rb") as f:
            h.update(f.read())
    version = f"qdlab-{__version__}+{h.hexdigest()[:16]}"
    with contextlib.suppress(OSError):
        record.parent.mkdir(exist_ok=True)
        tmp = record.with_name(f"{record.name}.{os.getpid()}.tmp")
        tmp.write_text(version)
        os.replace(tmp, record)
    return version


_VERSION = re.compile(r"qdlab-[\w.+-]+\+[0-9a-f]{16}")


def _sources() -> list[tuple[str, os.stat_result]]:
    """The `.py` files of the core and the compiler, in a fixed order, with their stats."""
    out = []
    for top in (os.path.join(QDLAB_DIR, "core"), os.path.join(QDLAB_DIR, "compiler")):
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    out.append((path, os.stat(path)))
    return out


def _digest(parts: tuple) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(str(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def construct_key(text: str, config: Config, target_parts: tuple[str, ...]) -> str:
    return _digest((compiler_version(), *target_parts, config.codegen_key(), text))


def runtime_key(text: str, target_parts: tuple[str, ...]) -> str:
    """The key of a piece of the runtime built as LLVM IR (`codegen/driver.py`)."""
    return _digest(("runtime-1", compiler_version(), *target_parts, text))


def manifest_key(source: str, signature: str, config: Config, target_parts: tuple[str, ...]) -> str:
    return _digest(
        (
            MANIFEST_FORMAT,
            compiler_version(),
            *target_parts,
            source,
            signature,
            repr(sorted(config.compile_settings().items())),
        )
    )


def memo_key(kind: str, key: object) -> str | None:
    """Where a compiler memo keeps an entry on disk (`stmt_memo`, `construct_memo`): the entry's
    in-process key as written by `repr`, and the compiler version. None when that text names an
    object by its address (`<... at 0x...>`): another process may hold another object there."""
    text = repr(key)
    return None if " at 0x" in text else _digest(("memo-1", kind, compiler_version(), text))


def prefix(key: str, fresh: int | None = None) -> str:
    """The symbol prefix of a unit; `fresh` (a `--no-cache` compile) makes names no other load
    shares."""
    return f"qd_{key[:24]}" if fresh is None else f"qd_{key[:24]}_f{fresh}"


def symbol(unit_prefix: str, task: int) -> str:
    return f"{unit_prefix}_t{task}"
