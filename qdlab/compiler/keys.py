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

import hashlib
from functools import cache
from pathlib import Path

from . import __version__
from .config import Config

MANIFEST_FORMAT = "manifest-1"


@cache
def compiler_version() -> str:
    h = hashlib.sha256()
    package = Path(__file__).parent
    for path in sorted([*package.rglob("*.py"), *(package.parent / "lang").rglob("*.py")]):
        h.update(path.read_bytes())
    return f"qdlab-{__version__}+{h.hexdigest()[:16]}"


def _digest(parts: tuple) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(str(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def construct_key(text: str, config: Config, target_parts: tuple[str, ...]) -> str:
    return _digest((compiler_version(), *target_parts, config.codegen_key(), text))


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
