"""Binary cache for compiled constructs, so an unchanged loop is loaded in milliseconds, not
rebuilt.

The compiler asks this cache for a construct's payload (object file plus metadata, opaque here) by
content key before compiling it. Two tiers: a bounded in-process LRU dict, and one file per key on
disk, shared by all of a user's processes; a third, the team cache (`remote.py`), can stand behind
them. A disk entry is never trusted blindly: it is opened without following links, read only if it
is a regular file, and no further than its header (magic, format version, qdlab version, key,
length) declares; the header and a SHA-256 over key and payload are checked. An entry that fails, or
cannot be opened or read, is deleted and counts as a miss. Entries are written to a temporary name
and renamed into place, so other processes see a whole entry or none. A directory another user owns
or can write to is not read, and a write error (read-only, disk full) turns the disk tier off for
the process: the compiler then compiles, which is always correct."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
import re
import shutil
import stat
import struct
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ...core import __version__
from .remote import RedisTier, RemoteStats

if TYPE_CHECKING:
    from .kernel_records import KernelRecords

log = logging.getLogger("qdlab")

MAGIC = b"QDLABOBJ"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sHH")  # magic, format version, length of the qdlab version string
_FIELDS = struct.Struct("<64sQ32s")  # key, payload length, sha256(key + payload)
_KEY = re.compile(r"[0-9a-f]{64}")
_SUFFIX = ".qdo"


QDLAB_VERSION = __version__


def _current_uid() -> int:
    return os.getuid()


def default_cache_dir() -> Path:
    """`QDLAB_CACHE_DIR` if set, else the per-user cache directory for qdlab."""
    env = os.environ.get("QDLAB_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs  # lazy: only when the default cache directory is needed

    return Path(platformdirs.user_cache_dir("qdlab"))


def encode_entry(key: str, payload: bytes) -> bytes:
    """The bytes of a disk entry for `key` holding `payload`."""
    version = QDLAB_VERSION.encode()
    digest = hashlib.sha256(key.encode() + payload).digest()
    return (
        _PREFIX.pack(MAGIC, FORMAT_VERSION, len(version))
        + version
        + _FIELDS.pack(key.encode(), len(payload), digest)
        + payload
    )


def read_entry(f: BinaryIO, key: str, max_bytes: int) -> bytes:
    """The payload of the entry `f` holds for `key`, reading no more than its header declares (and
    nothing past `max_bytes`); raises ValueError saying which check failed."""

    def take(n: int, what: str) -> bytes:
        data = f.read(n)
        if len(data) != n:
            raise ValueError(
                f"{what} is {len(data)} bytes, header says {n}"
                if what == "payload"
                else f"truncated header ({len(data)} of {n} bytes)"
            )
        return data

    magic, fmt, version_len = _PREFIX.unpack(take(_PREFIX.size, "header"))
    if magic != MAGIC:
        raise ValueError("bad magic")
    if fmt != FORMAT_VERSION:
        raise ValueError(f"format version {fmt}, expected {FORMAT_VERSION}")
    version = take(version_len, "header").decode(errors="replace")
    if version != QDLAB_VERSION:
        raise ValueError(f"written by qdlab {version}, this is {QDLAB_VERSION}")
    stored_key, length, digest = _FIELDS.unpack(take(_FIELDS.size, "header"))
    if stored_key != key.encode():
        raise ValueError("entry holds a different key")
    if length > max_bytes:
        raise ValueError(f"header says {length} bytes, over the size limit")
    payload = take(length, "payload")
    if f.read(1):
        raise ValueError(f"payload is longer than the {length} bytes the header says")
    if hashlib.sha256(stored_key + payload).digest() != digest:
        raise ValueError("checksum mismatch")
    return payload


@dataclass
class CacheStats:
    entries: int
    """Entries in the disk tier, or in memory when the disk tier is off."""
    bytes: int
    """Total size of those entries, headers included on disk."""
    hits: int
    misses: int
    evictions: int
    """Entries dropped to stay under the size limit (disk tier, or memory when the disk is off)."""
    directory: str | None
    """The cache directory; None when the cache was made memory-only."""
    disk_enabled: bool
    remote: RemoteStats | None = None
    """The team cache behind the disk tier, when one is configured."""


class BinaryCache:
    """Key (64-hex SHA-256) to payload bytes, in memory, on disk, and in the team cache when one is
    given (`remote`: looked up after the disk; a remote hit is written to the disk tier; a put goes
    to both)."""

    def __init__(
        self,
        directory: str | os.PathLike | None,
        *,
        disk: bool = True,
        max_size_mb: float = 1024.0,
        remote: RedisTier | None = None,
    ) -> None:
        self._root = Path(directory) if directory is not None else default_cache_dir()
        self._dir = self._root / f"v{FORMAT_VERSION}"
        self._configured_disk = disk
        self._disk = disk
        self._max_bytes = int(max_size_mb * 1024 * 1024)
        self._memory: OrderedDict[str, bytes] = OrderedDict()
        self._memory_bytes = 0
        self._disk_bytes = 0
        self._hits = self._misses = self._evictions = 0
        self._remote = remote
        self._origin: dict[str, str] = {}
        self._lock = threading.Lock()
        self.kernels: KernelRecords | None = None
        """Where the kernels' manifests live on disk (`kernel_records.py`), when the disk tier is
        on and the program's settings ask for it (`qdlab.host.state.cache`)."""
        if self._disk:
            self._open_directory()

    @property
    def root(self) -> Path:
        """The cache's folder (`offline_cache_file_path`, else the user's qdlab cache)."""
        return self._root

    @property
    def persistent(self) -> bool:
        """Whether entries outlive this process (the disk tier is on)."""
        return self._disk

    def get(self, key: str) -> bytes | None:
        _check_key(key)
        with self._lock:
            payload = self._memory.get(key)
            if payload is not None:
                self._memory.move_to_end(key)
            elif self._disk and (payload := self._read(key)) is not None:
                self._remember(key, payload)
                self._origin[key] = "disk"
            elif self._remote is not None and (payload := self._remote.get(key)) is not None:
                self._remember(key, payload)
                self._origin[key] = "team cache"
                if self._disk:
                    self._write(key, payload)
            self._hits += payload is not None
            self._misses += payload is None
            return payload

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        """`get` for several keys, asking the team cache for all the local tiers miss in one round
        trip."""
        if self._remote is None:
            return [self.get(k) for k in keys]
        local = [self._get_local(k) for k in keys]
        missing = [k for k, v in zip(keys, local) if v is None]
        fetched = dict(zip(missing, self._remote.get_many(missing))) if missing else {}
        out = []
        with self._lock:
            for k, v in zip(keys, local):
                got = fetched.get(k) if v is None else None
                if got is not None:
                    v = got
                    self._remember(k, v)
                    self._origin[k] = "team cache"
                    if self._disk:
                        self._write(k, v)
                self._hits += v is not None
                self._misses += v is None
                out.append(v)
        return out

    def _get_local(self, key: str) -> bytes | None:
        _check_key(key)
        with self._lock:
            payload = self._memory.get(key)
            if payload is None and self._disk and (payload := self._read(key)) is not None:
                self._remember(key, payload)
                self._origin[key] = "disk"
            return payload

    def put(
        self,
        key: str,
        payload: bytes,
        later: Callable[[Callable[[], None]], None] | None = None,
        *,
        disk: bool = True,
    ) -> None:
        """Store `payload` in every tier; with `later`, only in memory now, and on disk and in
        the team cache by the job handed to `later` (`persist.later`: after the compile); with
        `disk=False`, in memory and the team cache only (a kernel record holds it on disk)."""
        _check_key(key)
        payload = bytes(payload)
        with self._lock:
            self._remember(key, payload)
        if later is None:
            self._store(key, payload, disk)
        else:
            later(lambda: self._store(key, payload, disk))

    def _store(self, key: str, payload: bytes, disk: bool = True) -> None:
        if self._disk and disk:
            self._measure()
            with self._lock:
                self._write(key, payload)
        if self._remote is not None:
            self._remote.put(key, payload)

    def get_own(self, key: str) -> bytes | None:
        """A payload from this user's own disk tier only, neither kept in memory nor counted: the
        compiler's memos (`stmt_memo`, `construct_memo`), pickles, are never read from a team
        cache."""
        _check_key(key)
        if not self._disk:
            return None
        with self._lock:
            return self._read(key)

    def put_own(self, key: str, payload: bytes) -> None:
        """Store a payload `get_own` reads: on the disk tier only."""
        _check_key(key)
        if self._disk:
            self._measure()
            with self._lock:
                self._write(key, payload)

    def _measure(self) -> None:
        """The disk tier's size, listed before the first write (which keeps it up to date) without
        holding the lock: a new process's first write is its memos' after the first compile, in
        their writer thread, while that compile reads the tier (a Genesis cache lists ~4,000
        entries: 20-30 ms it waited)."""
        if self._disk_bytes < 0:
            size = sum(s for _, s, _ in self._scan())
            with self._lock:
                if self._disk_bytes < 0:
                    self._disk_bytes = size

    def origin(self, key: str) -> str | None:
        """Where the last `get` of `key` found it first: "disk" or "team cache" (None: memory or not
        found)."""
        return self._origin.get(key)

    def clear(self) -> None:
        with self._lock:
            self._memory.clear()
            self._memory_bytes = 0
            if self._disk:
                for path in self._dir.glob(f"*/*{_SUFFIX}"):
                    _remove(path)
                self._disk_bytes = 0
        if self.kernels is not None:
            self.kernels.clear()

    def stats(self) -> CacheStats:
        with self._lock:
            if self._disk:
                files = self._scan()
                entries, size = len(files), sum(s for _, s, _ in files)
            else:
                entries, size = len(self._memory), self._memory_bytes
            return CacheStats(
                entries=entries,
                bytes=size,
                hits=self._hits,
                misses=self._misses,
                evictions=self._evictions,
                directory=str(self._root) if self._configured_disk else None,
                disk_enabled=self._disk,
                remote=self._remote.stats if self._remote is not None else None,
            )

    def _open_directory(self) -> None:
        try:
            self._root.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._dir.mkdir(mode=0o700, exist_ok=True)
        except OSError as e:
            self._disable_disk(f"cannot create it ({e.strerror})")
            return
        for path in (self._root, self._dir):
            st = path.stat()
            if st.st_uid != _current_uid():
                self._disable_disk(f"{path} is owned by uid {st.st_uid}, not by this user")
                return
            if st.st_mode & 0o022:
                self._disable_disk(
                    f"{path} is writable by other users (mode {st.st_mode & 0o777:o})"
                )
                return
        self._disk_bytes = (
            -1
        )  # measured at the first write, so a run of cache hits never lists the folder

    def _disable_disk(self, reason: str) -> None:
        if self._disk:
            self._disk = False
            log.warning("qdlab cache: not using %s: %s; caching in memory only", self._root, reason)

    def _path(self, key: str) -> Path:
        return self._dir / key[:2] / (key + _SUFFIX)

    def _remember(self, key: str, payload: bytes) -> None:
        self._memory_bytes -= len(self._memory.pop(key, b""))
        self._memory[key] = payload
        self._memory_bytes += len(payload)
        while self._memory_bytes > self._max_bytes and self._memory:
            _, dropped = self._memory.popitem(last=False)
            self._memory_bytes -= len(dropped)
            if not self._disk:
                self._evictions += 1

    def _read(self, key: str) -> bytes | None:
        """The entry's payload, or None. Links are never followed and only regular files are read:
        anything else under the entry's name, or an entry that fails to open or read, is removed and
        is a miss."""
        path = self._path(key)
        try:
            if not stat.S_ISDIR(os.lstat(path.parent).st_mode):
                self._drop(path.parent, "a shard that is not a folder")
                return None
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as e:  # ELOOP: a link; EACCES; ENXIO: a socket
            if e.errno not in (
                errno.EMFILE,
                errno.ENFILE,
                errno.ENOMEM,
            ):  # those are this process's fault
                self._drop(path, e.strerror or str(e))
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ValueError("not a regular file")
                payload = read_entry(f, key, self._max_bytes)
                with contextlib.suppress(OSError):  # marks it recently used for the LRU
                    os.utime(fd)
        except (OSError, ValueError) as e:
            self._drop(path, getattr(e, "strerror", None) or str(e))
            return None
        return payload

    def _drop(self, path: Path, reason: str) -> None:
        log.warning("qdlab cache: deleting bad entry %s: %s", path, reason)
        _remove(path)

    def _write(self, key: str, payload: bytes) -> None:
        path = self._path(key)
        data = encode_entry(key, payload)
        tmp = None
        try:
            for p in (
                path.parent,
                path,
            ):  # whatever sits where the shard folder or the entry file belongs
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_IFMT(os.lstat(p).st_mode) != (
                        stat.S_IFDIR if p != path else stat.S_IFREG
                    ):
                        _remove(p)
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
        except OSError as e:
            reason = "disk full" if e.errno == errno.ENOSPC else e.strerror or str(e)
            self._disable_disk(f"cannot write {path.name} ({reason})")
            return
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
        if self._disk_bytes < 0:
            self._disk_bytes = sum(s for _, s, _ in self._scan())
        else:
            self._disk_bytes += len(data)
        if self._disk_bytes > self._max_bytes:
            self._evict()

    def _evict(self) -> None:
        files = sorted(self._scan(), key=lambda f: f[2])
        total = sum(s for _, s, _ in files)
        for path, size, _ in files:
            if total <= self._max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= size
            self._evictions += 1
        self._disk_bytes = total

    def _scan(self) -> list[tuple[Path, int, int]]:
        """(path, size, mtime_ns) of every complete entry on disk. Shard folders are never
        removed."""
        found = []
        with contextlib.suppress(OSError), os.scandir(self._dir) as shards:
            for shard in shards:
                if not shard.is_dir(follow_symlinks=False):
                    continue
                with contextlib.suppress(OSError), os.scandir(shard.path) as entries:
                    for e in entries:
                        if not e.name.endswith(_SUFFIX) or not e.is_file(follow_symlinks=False):
                            continue
                        try:
                            st = e.stat(follow_symlinks=False)
                        except OSError:
                            continue  # evicted by another process since the listing
                        found.append((Path(e.path), st.st_size, st.st_mtime_ns))
        return found


def _remove(path: Path) -> None:
    """Remove a file, link or folder (not what a link points to); a failure leaves it in place."""
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(path).st_mode):
            shutil.rmtree(path)
        else:
            path.unlink()


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise ValueError(f"cache key must be 64 lowercase hex digits, got {key!r}")
