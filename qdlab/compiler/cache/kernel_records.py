"""Kernel records: Quadrants' offline cache as a user sees it, holding qdlab's per-kernel records.

Quadrants keeps one file per compiled kernel variant in `<offline_cache_file_path>/
kernel_compilation_manager/` (`T<key>.qdc`) with a metadata file (`qdcache.qdb`), writes them when
the program ends (`qd.init`, `qd.reset`, exit) rather than as it compiles, and then cleans them by
`offline_cache_cleaning_policy` when they pass `offline_cache_max_size_of_files`. qdlab's
per-kernel record is the kernel's manifest (`manifest.py`: keyed on its source, argument signature,
settings, target and compiler version, it lists the construct binaries and how to launch them), so
that is what a `.qdc` file holds, in the construct cache's checked entry format (`encode_entry`:
magic, versions, key, SHA-256); the construct binaries stay in the construct cache beside it. A
manifest is read from here first (a fresh process, or after `qd.init`), kept in memory until the
program ends, then written; a record that fails its checks is removed and is a miss.

`qdcache.qdb` is JSON: qdlab's version, the records' total size, and per record its size and when
it was made and last used (nanoseconds). At the end of a program, with the records over the size
limit: "never" keeps them; "version" (and "lru" / "fifo") removes every record when the metadata is
another qdlab version's or unreadable; "lru" / "fifo" remove `int(factor * count)` records, least
recently used or oldest first; with none left the metadata goes too, as in Quadrants.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import tempfile
import time
from pathlib import Path

from . import QDLAB_VERSION, encode_entry, read_entry

log = logging.getLogger("qdlab")

FOLDER = "kernel_compilation_manager"
METADATA = "qdcache.qdb"
SUFFIX = ".qdc"
POLICIES = ("never", "version", "lru", "fifo")
MAX_RECORD_BYTES = 64 << 20


class KernelRecords:
    """The kernel records of one program (from `qd.init` to the next `qd.init` / `qd.reset`)."""

    def __init__(self, root: Path, max_bytes: int, policy: str, factor: float) -> None:
        self.dir = root / FOLDER
        self.max_bytes = max_bytes
        self.policy = policy if policy in POLICIES else "never"
        self.factor = factor
        self.pending: dict[str, bytes] = {}
        """Records made by this program, written when it ends."""
        self.used: set[str] = set()
        """Records on disk this program read (their last use moves to now)."""

    def path(self, key: str) -> Path:
        return self.dir / f"T{key}{SUFFIX}"

    def get(self, key: str) -> bytes | None:
        if key in self.pending:
            return self.pending[key]
        path = self.path(key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                    raise ValueError("not a regular file")
                payload = read_entry(f, key, MAX_RECORD_BYTES)
        except (OSError, ValueError) as e:
            log.debug("qdlab cache: dropping kernel record %s (%s)", path.name, e)
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        self.used.add(key)
        return payload

    def put(self, key: str, payload: bytes) -> None:
        self.pending[key] = payload

    # -- the end of the program --------------------------------------------------------------------
    def finish(self) -> None:
        """Write this program's records and the metadata, then clean by the policy (at the end of
        every program, as Quadrants cleans)."""
        if not self.pending and not self.dir.is_dir():
            return  # nothing made, nothing to clean
        try:
            self.dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self.dir.stat()
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                log.warning("qdlab cache: not writing kernel records to %s (not private)", self.dir)
                return
            meta = self.read_metadata()
            if meta is None:  # another version's, or unreadable
                if self.policy != "never":
                    self.remove_all()
                meta = {}
            now = time.time_ns()
            for key, payload in self.pending.items():
                data = encode_entry(key, payload)
                self.write(self.path(key), data)
                old = meta.get(key, {})
                meta[key] = {"size": len(data), "created": old.get("created", now), "used": now}
            for key in self.used - set(self.pending):
                if key in meta:
                    meta[key]["used"] = now
            self.pending.clear()
            self.used.clear()
            self.clean(meta)
        except OSError as e:
            log.warning("qdlab cache: cannot write kernel records to %s (%s)", self.dir, e)

    def read_metadata(self) -> dict[str, dict] | None:
        """The records' metadata; {} when there is none, None when it is another version's or
        cannot be read."""
        try:
            doc = json.loads((self.dir / METADATA).read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return None
        if not isinstance(doc, dict) or doc.get("version") != QDLAB_VERSION:
            return None
        kernels = doc.get("kernels")
        if not isinstance(kernels, dict):
            return None
        meta = {k: v for k, v in kernels.items() if isinstance(v, dict) and self.path(k).is_file()}
        for p in self.dir.glob(f"T*{SUFFIX}"):  # written by a program that ended meanwhile
            key = p.name[1 : -len(SUFFIX)]
            if key not in meta:
                st = p.stat()
                meta[key] = {"size": st.st_size, "created": st.st_mtime_ns, "used": st.st_mtime_ns}
        return meta

    def clean(self, meta: dict[str, dict]) -> None:
        total = sum(int(m.get("size", 0)) for m in meta.values())
        count = int(self.factor * len(meta))
        if self.policy in ("lru", "fifo") and total >= self.max_bytes and count > 0:
            order = "used" if self.policy == "lru" else "created"
            for key in sorted(meta, key=lambda k: meta[k].get(order, 0))[:count]:
                with contextlib.suppress(OSError):
                    self.path(key).unlink()
                del meta[key]
        if not meta:
            with contextlib.suppress(OSError):
                (self.dir / METADATA).unlink()
            return
        total = sum(int(m.get("size", 0)) for m in meta.values())
        doc = {"version": QDLAB_VERSION, "size": total, "kernels": meta}
        self.write(self.dir / METADATA, json.dumps(doc, sort_keys=True).encode())

    def clear(self) -> None:
        """Forget every record, this program's and those on disk (`qd.clear_cache()`)."""
        self.pending.clear()
        self.used.clear()
        self.remove_all()

    def remove_all(self) -> None:
        for p in self.dir.glob(f"T*{SUFFIX}"):
            with contextlib.suppress(OSError):
                p.unlink()
        with contextlib.suppress(OSError):
            (self.dir / METADATA).unlink()

    def write(self, path: Path, data: bytes) -> None:
        """Write to a temporary name and rename into place: a reader sees a whole file or none."""
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
