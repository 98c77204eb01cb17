"""The source-level first tier of the cache: a fresh process reaches a kernel's first result without lowering it.

A manifest is keyed on what decides the whole compile (the kernel's source and where it sits, its argument
signature, the settings, the host, qdlab's version) and lists the construct keys it produced, how to launch
them, and the compile-time facts the source alone does not show: every Python global, closure value and
`@qd.func` the frontend read, with a fingerprint of its value. On load every fingerprint is checked again; any
mismatch, or any construct missing from the cache, means a normal compile (whose constructs are then mostly
cache hits). A hit skips the frontend, so `per_offload_cache_observations` reports -1 for it, as the reference
does for its fastcache.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import types

from . import runtime
from .cache import BinaryCache
from .config import Config
from .errors import SourceLoc
from .source import MISSING, resolve_name

VERSION = "manifest-1"


def fingerprint(value: object) -> str:
    """A stable description of a value a kernel baked in; equal fingerprints compile to equal code."""
    from qdlab.kernel import Func, Kernel
    from qdlab.lang import Builtin
    if value is None or isinstance(value, (bool, int, float, str)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, tuple):
        return "(" + ",".join(fingerprint(v) for v in value) + ")"
    if isinstance(value, Func):
        return "func:" + hashlib.sha256(inspect.getsource(value.fn).encode()).hexdigest()[:32]
    if isinstance(value, Kernel):
        return f"kernel:{value.name}"
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, Builtin):
        return f"builtin:{value.name}"
    if isinstance(value, type) or callable(value):
        return f"callable:{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', repr(value))}"
    return f"{type(value).__module__}.{type(value).__qualname__}:{value!r}"


def key(source: str, sig: str, config: Config) -> str:
    """Where the kernel sits is left out: the same source in another file, cell or line reuses the manifest,
    and its error locations are rebased onto where the kernel is now."""
    from .codegen.jit import host
    from .pipeline import COMPILER_VERSION
    h = hashlib.sha256()
    for part in (VERSION, COMPILER_VERSION, *host(), source, sig,
                 repr(sorted(config.as_dict().items()))):
        h.update(str(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def save(cache: BinaryCache, manifest_key: str, compiled: object, deps: list[tuple[str, str, str]],
         first_line: int) -> None:
    launcher = compiled.launcher  # type: ignore[attr-defined]
    doc = {
        "units": [{"key": u.key, "kinds": u.kinds, "reduces": u.reduces, "tmp_bytes": u.tmp_bytes,
                   "messages": [[m.array, m.text, _loc(m.loc, first_line)] for m in u.messages]}
                  for u in launcher.units],
        "alias_pairs": [list(p) for p in launcher.alias_pairs],
        "written": sorted(compiled.written),  # type: ignore[attr-defined]
        "deps": [list(d) for d in deps],
    }
    cache.put(manifest_key, json.dumps(doc).encode())


def load(cache: BinaryCache, manifest_key: str, fn: object) -> dict | None:
    """The manifest under `manifest_key`, if every dependency it recorded still has the same fingerprint."""
    data = cache.get(manifest_key)
    if data is None:
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    for owner_path, name, fp in doc["deps"]:
        owner = _function(fn, owner_path)
        if owner is None or _lookup_fingerprint(owner, name) != fp:
            return None
    return doc


def units(doc: dict, cache: BinaryCache, filename: str, first_line: int) -> list[runtime.Unit] | None:
    """Load every construct object the manifest lists; None if any is gone from the cache."""
    from .codegen import jit
    from .pipeline import _loaded
    missing = []
    for u in doc["units"]:
        k = u["key"]
        if k not in _loaded:
            obj = cache.get(k)
            if obj is None:
                return None
            missing.append((k, obj, [f"qd_{k[:24]}_t{i}" for i in range(len(u["kinds"]))]))
    if missing:
        for (k, _, _), addresses in zip(missing, jit.load_many([(o, s) for _, o, s in missing])):
            _loaded[k] = addresses
    out = []
    for u in doc["units"]:
        messages = [runtime.Message(a, t, _unloc(loc, filename, first_line)) for a, t, loc in u["messages"]]
        out.append(runtime.Unit(u["key"], [runtime.task_function(a) for a in _loaded[u["key"]]], u["kinds"],
                                u["reduces"], u["tmp_bytes"], messages))
    return out


def _loc(loc: SourceLoc | None, first_line: int) -> list | None:
    return [loc.kernel, loc.lineno - first_line, loc.col, loc.source_line] if loc else None


def _unloc(loc: list | None, filename: str, first_line: int) -> SourceLoc | None:
    if loc is None:
        return None
    kernel, offset, col, text = loc
    return SourceLoc(kernel, filename, first_line + offset, col, text)


def _function(kernel_fn: object, owner_path: str) -> object | None:
    """The function a dependency was read in: the kernel, or a @qd.func reached from it by `owner_path`."""
    from qdlab.kernel import Func
    fn = kernel_fn
    for step in owner_path.split("/") if owner_path else ():
        value = _resolve(fn, step)
        if not isinstance(value, Func):
            return None
        fn = value.fn
    return fn


def _resolve(fn: object, dotted: str) -> object:
    head, *attrs = dotted.split(".")
    value = resolve_name(fn, head)
    for a in attrs:
        value = getattr(value, a, MISSING) if value is not MISSING else MISSING
    return value


def _lookup_fingerprint(fn: object, name: str) -> str:
    if name == "<source>":
        return "func:" + hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:32]  # type: ignore[arg-type]
    value = _resolve(fn, name)
    return "missing" if value is MISSING else fingerprint(value)
