"""The source-level first tier of the cache: a fresh process reaches a kernel's first result without
lowering it.

A manifest is keyed (`keys.manifest_key`) on what decides the whole compile (the kernel's source,
its argument signature, the settings, the target, the compiler version) and lists the construct keys
it produced, how to launch them, and the compile-time facts the source alone does not show: every
Python global, closure value and `@qd.func` the frontend read, with a fingerprint of its value's
content (see `fingerprint`), and every compile-time expression that calls a function, with its
result's (see `evaluations`). On load every fingerprint is checked again (each such expression
evaluated again); any mismatch, or any construct missing from the cache, means a normal compile
(whose constructs are then mostly cache hits). A kernel that read a value with no faithful
fingerprint gets no manifest: it is always compiled. A hit skips the frontend, so
`per_offload_cache_observations` reports -1 for it, as the reference does for its fastcache.

What a fingerprint describes is the value as it is now, never the file it came from: a global by
what it holds, a helper function by its code, defaults, closure and the globals it names, a class
by its namespace (a module file's class by its definition as this process first met it, checked
by the identity of what each of its names holds, and by everything else it holds now), a
`@qd.func` by its source. Within one check (`deps_hold`) an object looked up by several
dependencies (a struct type that thirty functions annotate) is described once, and the function
each dependency was read in is found once, until an evaluation runs the user's code.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from qdlab.core import decompositions
from qdlab.core.fields import FieldBase, StructFieldBase, TensorBase
from qdlab.core.language import BoundFunc, Builtin, Func

from ...core.errors import SourceLoc
from .. import runtime
from ..frontend import evaluations
from ..frontend.fields import dep_fingerprint
from ..frontend.fingerprint import UNKNOWN, fingerprint, func_fingerprint
from ..frontend.inlining import resolve_module_step
from ..frontend.source import MISSING, resolve_dotted
from ..frontend.structs import (
    FROM_TEMPLATE,
    ITEMS,
    METHOD,
    PARAM,
    STRUCT,
    TEMPLATE,
    StructRef,
    follow,
    path_steps,
    path_text,
)
from . import BinaryCache, persist

__all__ = ["UNKNOWN", "UnitRecord", "deps_hold", "fields", "fingerprint", "load", "save", "units"]
"""`fingerprint` and `UNKNOWN` are read from here by the kernel launcher."""


@dataclass(frozen=True)
class UnitRecord:
    """What a manifest says of one unit: everything the launcher needs but its loaded task
    functions."""

    key: str
    kinds: list[str]
    reduces: list[bool]
    tmp_bytes: int
    messages: list[runtime.Message]
    block_dims: list[int]


def save(
    cache: BinaryCache,
    manifest_key: str,
    units: list[runtime.Unit],
    alias_pairs: list,
    written: set[int],
    deps: list[tuple[str, str, str]],
    first_line: int,
    members: dict[tuple[str, tuple[str, ...]], str] | None = None,
    fields: list[tuple[str, str]] | None = None,
) -> None:
    """Store the manifest, unless a dependency is UNKNOWN: that kernel is always compiled (its
    constructs are found by the content of their IR, which is always right); likewise when a field
    it uses cannot be found again by name (`fields` None: a quantised field's words)."""
    if any(fp == UNKNOWN for _, _, fp in deps) or fields is None:
        return
    doc = {
        "units": [
            {
                "key": u.key,
                "kinds": u.kinds,
                "reduces": u.reduces,
                "tmp_bytes": u.tmp_bytes,
                "block_dims": u.block_dims,
                "messages": [[m.array, m.text, _loc(m.loc, first_line)] for m in u.messages],
            }
            for u in units
        ],
        "alias_pairs": [list(p) for p in alias_pairs],
        "written": sorted(written),
        "deps": [list(d) for d in deps],
        "members": [[root, list(path), kind] for (root, path), kind in (members or {}).items()],
        "fields": [list(f) for f in fields or []],
    }
    kept = [v for v in _variants(_stored(cache, manifest_key)) if v.get("deps") != doc["deps"]]
    variants = [doc, *kept][:VARIANTS]
    payload = json.dumps(variants).encode()
    if cache.kernels is not None:  # on disk as the kernel's record, when the program ends
        cache.kernels.put(manifest_key, payload)
        cache.put(manifest_key, payload, persist.later, disk=False)
    else:
        cache.put(manifest_key, payload, persist.later)  # on disk after it


def _stored(cache: BinaryCache, manifest_key: str) -> bytes | None:
    """The manifests under a key: the kernel's record, else the construct cache's entry (memory,
    the team cache, or a disk entry an older qdlab wrote)."""
    if cache.kernels is not None:
        data = cache.kernels.get(manifest_key)
        if data is not None:
            return data
    return cache.get(manifest_key)


VARIANTS = 8
"""Manifests kept under one key, newest first: the same kernel source and signature compiled with
different `@qd.func`s or globals (an edit, then its undo) each keep theirs, so undoing an edit
serves the kernel again without lowering it."""


def _variants(data: bytes | None) -> list[dict]:
    """The manifests stored under a key (one document, as older caches hold, or a list)."""
    if data is None:
        return []
    try:
        doc = json.loads(data)
    except ValueError:
        return []
    docs = doc if isinstance(doc, list) else [doc]
    return [d for d in docs if isinstance(d, dict)]


MEMBER = "<member>"
"""A member of a struct argument the manifest checks member by member: `<member>kind:root.path`."""


def member_deps(
    members: dict[tuple[str, tuple[str, ...]], str], templates: dict, by_members: frozenset
) -> list[tuple[str, str, str]]:
    """What a manifest records of the template arguments its key names only by type
    (`KernelSpec.by_members`): a field by its type and shape, and for a struct every member path
    the compile read, by what it is (a parameter, a nested struct, a method, a compile-time value)
    with its fingerprint, so a process serves the kernel only when each is what it was."""
    out = []
    for root in sorted(by_members):
        if not isinstance(templates.get(root), StructRef):
            out.append((TEMPLATE, root, dep_fingerprint(templates.get(root))))
    for (root, path), kind in sorted(members.items()):
        if root in by_members:
            name = f"{MEMBER}{kind}:{path_text(root, path)}"
            out.append((TEMPLATE, name, _member_fingerprint(name, templates)))
    return out


def _member_fingerprint(name: str, templates: dict | None) -> str:
    """The fingerprint of the struct member a `<member>` dependency names, as it is now."""
    kind, dotted = name[len(MEMBER) :].split(":", 1)
    root, *path = path_steps(dotted)
    owner, value = None, _template(templates, str(root))
    for step in path:
        owner, value = value, _held(follow(value, [step], MISSING))
    if value is MISSING:
        return "missing"
    if kind == ITEMS:  # each item's members are dependencies of their own
        if not isinstance(value, (list, tuple)):
            return "not-items"
        return f"items:{type(value).__name__}:{len(value)}"
    if kind == PARAM:  # its type is in the key's signature; that it is still a parameter here
        return f"param:{type(value).__module__}.{type(value).__qualname__}"
    if kind == STRUCT:  # what it holds is read member by member
        return f"struct:{type(value).__module__}.{type(value).__qualname__}"
    if kind == METHOD:  # `self.f`: a func of its class, bound to this object
        if isinstance(value, BoundFunc) and value.__self__ is owner:
            return "method:" + dep_fingerprint(value.func)
        return "not-a-method"
    return dep_fingerprint(value)


def _held(value: object) -> object:
    """A member as the kernel read it: a `qd.Tensor` is the ndarray or field it holds."""
    return value.held() if isinstance(value, TensorBase) else value


def _template(templates: dict | None, name: str) -> object:
    """Template argument `name` as the kernel's code sees it (a struct's object)."""
    value = (templates or {}).get(name, MISSING)
    return value.value if isinstance(value, StructRef) else value


def load(
    cache: BinaryCache, manifest_key: str, fn: object, templates: dict | None = None
) -> dict | None:
    """The manifest under `manifest_key` (the newest of its variants) whose every recorded
    dependency still has the same fingerprint (`templates`: the kernel's template arguments,
    which an evaluation may name)."""
    for doc in _variants(_stored(cache, manifest_key)):
        if deps_hold(fn, doc.get("deps"), templates):
            return doc
    return None


def deps_hold(
    fn: object, deps: Iterable[tuple[str, str, object]] | None, templates: dict | None = None
) -> bool:
    """Whether every (owner path, name, fingerprint) recorded while lowering `fn` still has that
    fingerprint (the manifest's check, and the statement memo's): a name or attribute chain is
    looked up again, an evaluation (`evaluations.py`) evaluated again."""
    if deps is None:  # a document without its reads
        return False
    owners: dict[str, object | None] = {}  # owner path -> its function, until code runs
    seen: dict[int, tuple[object, str]] = {}  # id -> (value, fingerprint), until code runs
    try:
        for owner_path, name, fp in deps:
            if owner_path == TEMPLATE:  # a template argument, or a struct member
                if fp == UNKNOWN:
                    return False
                now = (
                    _member_fingerprint(name, templates)
                    if name.startswith(MEMBER)
                    else dep_fingerprint(_template(templates, name))
                )
                if now != fp:
                    return False
                continue
            owner = owners.get(owner_path, MISSING)
            if owner is MISSING:
                owner = owners[owner_path] = function(fn, owner_path, templates)
            if fp == UNKNOWN or owner is None:
                return False
            if name.startswith(evaluations.PREFIX):
                now = evaluations.fingerprint_now(owner, name, None if owner_path else templates)
                owners.clear()  # the evaluation ran the user's code, which may rebind anything
                seen.clear()  # or change any object
            else:
                now = _lookup_fingerprint(owner, name, seen)
            if now != fp:
                return False
    except Exception:  # noqa: BLE001 - a property that raises, a source that cannot be read: compile
        return False
    return True


def members(doc: dict) -> dict[tuple[str, tuple[str, ...]], str]:
    """The struct members the kernel read (`Compiled.members`)."""
    return {(root, tuple(path)): kind for root, path, kind in doc.get("members", [])}


def units(doc: dict, filename: str, first_line: int) -> list[UnitRecord]:
    """The manifest's units, their error locations rebased onto where the kernel sits now."""
    return [
        UnitRecord(
            u["key"],
            u["kinds"],
            u["reduces"],
            u["tmp_bytes"],
            [
                runtime.Message(a, t, _unloc(loc, filename, first_line))
                for a, t, loc in u["messages"]
            ],
            u["block_dims"],
        )
        for u in doc["units"]
    ]


def _loc(loc: SourceLoc | None, first_line: int) -> list | None:
    return [loc.kernel, loc.lineno - first_line, loc.col, loc.source_line] if loc else None


def _unloc(loc: list | None, filename: str, first_line: int) -> SourceLoc | None:
    if loc is None:
        return None
    kernel, offset, col, text = loc
    return SourceLoc(kernel, filename, first_line + offset, col, text)


def function(kernel_fn: object, owner_path: str, templates: dict | None = None) -> object | None:
    """The function a dependency was read in: the kernel, or a @qd.func reached from it by
    `owner_path` (its first step may start at a template argument: `self.f`)."""
    fn = kernel_fn
    for k, step in enumerate(owner_path.split("/") if owner_path else ()):
        text = step.removeprefix(FROM_TEMPLATE)  # `self.update[2]`: a func held in a list
        if ":" in text:  # `module:qualname`, wherever it is called
            value = resolve_module_step(text)
            if isinstance(value, Func):
                fn = value.fn
                continue
            return None
        try:
            head, *steps = path_steps(text)
        except ValueError:
            return None
        if (k == 0 or step.startswith(FROM_TEMPLATE)) and templates and head in templates:
            value = follow(_template(templates, str(head)), steps, MISSING)
        else:  # a global or closure name, maybe dotted (`mod.f`), then the items it indexes
            dotted, _, _ = text.partition("[")
            n = dotted.count(".") + 1
            value = follow(resolve_dotted(fn, dotted), steps[n - 1 :], MISSING)
        if isinstance(value, Builtin):  # `qd.svd`: a builtin the frontend inlines as a func
            value = getattr(decompositions, value.name, MISSING)
        if isinstance(value, BoundFunc):  # `obj.f`: the func, whose globals its reads name
            value = value.func
        if not isinstance(value, Func):
            return None
        fn = value.fn
    return fn


def fields(doc: dict, kernel_fn: object, templates: dict | None = None) -> list[FieldBase] | None:
    """The fields a manifest's kernel uses, found again by the names it reached them by (in the
    order of their hidden parameters); None if one is gone or cannot be used."""
    out = []
    for owner_path, name in doc.get("fields", []):
        if owner_path == TEMPLATE:  # a template argument, or a member of one (`self.x`)
            root, *path = path_steps(name)
            value = _template(templates, str(root))
            for step in path:  # a struct field's member by its name in the struct
                held = value.members if isinstance(value, StructFieldBase) else {}
                value = held[step] if step in held else _held(follow(value, [step], MISSING))
            if not isinstance(value, FieldBase):
                return None
            f = value.primal or value
            if f._unusable() is not None:
                return None
            out.append(f)
            continue
        owner = function(kernel_fn, owner_path, templates)
        value = resolve_dotted(owner, name) if owner is not None else MISSING
        if not isinstance(value, FieldBase):
            return None
        f = value.primal or value
        if f._unusable() is not None:
            return None
        out.append(f)
    return out


def _lookup_fingerprint(fn: object, name: str, seen: dict[int, tuple[object, str]]) -> str:
    """The fingerprint of what `name` means in `fn` now; one already taken in this check is
    reused for the same object (`seen`: attribute reads are trusted not to change objects, as
    `evaluations` trusts them)."""
    if name == "<source>":
        return func_fingerprint(fn)
    value = resolve_dotted(fn, name)
    if value is MISSING:
        return "missing"
    got = seen.get(id(value))
    if got is None or got[0] is not value:
        got = seen[id(value)] = (value, dep_fingerprint(value))
    return got[1]
