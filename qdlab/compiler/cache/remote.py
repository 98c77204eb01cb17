"""The team cache: a tier behind the disk tier, on a Redis server a team shares, holding construct
binaries and manifests under the same content keys as the local tiers.

A shared store of native code is remote code execution for whoever can write to it, so every entry
is signed: an HMAC-SHA256 under a team secret over the entry's key and payload, beside the secret's
id (`key_id`: an HMAC of a constant, which tells secrets apart and reveals nothing of them). An
entry with a missing or wrong signature, or one stored under another key, or cut short, is refused
(logged once) and compiled here instead. Without a secret the tier stays off, and says so once. The
secret never leaves this process: it is read from `QDLAB_CACHE_SECRET` or from the file
`QDLAB_CACHE_SECRET_FILE` names (mode 0600, owned by this user), and is never written to a log, a
report, `%qdlab cache` or an exception; neither is the URL's password.

Entries are written once (`SET ... NX`): a sound entry is never overwritten. A damaged one (not an
entry, cut short, stored under another key, or under this secret's id with a wrong signature) is
replaced by the process that refused it, with the object it compiled instead: in one step on the
store (`_REPLACE`), and only if the entry is still the one it refused, so a sound entry another
machine wrote meanwhile stays. An entry under another secret's id is refused and left alone: a
process with a wrong secret never overwrites the team's entries. The store being
down, slow or dropping the connection never stops a kernel: the tier warns once, naming the store,
and stays quiet for a minute before it tries again, so a dead store costs at most one short timeout
per minute per process. A store that answers with an error (out of memory, wrong password) counts
the error and goes on."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import stat
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

log = logging.getLogger("qdlab")

MAGIC = b"QDLABTEAM2"
_FIELDS = struct.Struct("<10s8s64sQ32s")
"""magic, the secret's id, key, payload length, HMAC-SHA256(secret, key + payload)."""
_REPLACE = """
local v = redis.call('GET', KEYS[1])
if v and redis.sha1hex(v) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
"""
"""Set KEYS[1] to ARGV[2] if it holds what has SHA-1 ARGV[1] (or nothing), in one step."""
CONNECT_TIMEOUT_S = 0.1
OPERATION_TIMEOUT_S = 2.0
BACKOFF_S = 60.0
"""After the store fails to answer, how long the tier leaves it alone."""
FAILED = object()
"""What `RedisTier.call` gives when the operation failed."""


@dataclass
class RemoteStats:
    """What `qd.cache_stats().remote` and `%qdlab cache` report of the team cache."""

    store: str
    """The store's URL, password left out, and the key prefix."""
    enabled: bool
    note: str
    """Why the tier is off, or what went wrong last; empty when all is well."""
    hits: int = 0
    misses: int = 0
    refused: int = 0
    """Entries that failed their signature, key or length check."""
    replaced: int = 0
    """Damaged entries this process replaced with what it compiled."""
    errors: int = 0
    bytes_in: int = 0
    bytes_out: int = 0


def sign(secret: bytes, key: str, payload: bytes) -> bytes:
    return hmac.new(secret, key.encode() + b"\0" + payload, hashlib.sha256).digest()


def key_id(secret: bytes) -> bytes:
    """What tells entries signed under `secret` from others', and nothing about it."""
    return hmac.new(secret, b"qdlab team-cache key id", hashlib.sha256).digest()[:8]


def encode(secret: bytes, key: str, payload: bytes) -> bytes:
    mac = sign(secret, key, payload)
    return _FIELDS.pack(MAGIC, key_id(secret), key.encode(), len(payload), mac) + payload


class Foreign(ValueError):
    """An entry signed under another secret: refused, and left as it is."""


def decode(secret: bytes, key: str, data: bytes) -> bytes:
    """The payload of a signed entry stored under `key`; ValueError says which check failed
    (`Foreign`: it is another secret's)."""
    if len(data) < _FIELDS.size:
        raise ValueError("truncated header")
    magic, signer, stored_key, length, mac = _FIELDS.unpack_from(data)
    if magic != MAGIC:
        raise ValueError("not a qdlab team-cache entry")
    if signer != key_id(secret):
        raise Foreign("signed under another secret")
    if stored_key != key.encode():
        raise ValueError("entry stored under another key")
    payload = data[_FIELDS.size :]
    if len(payload) != length:
        raise ValueError(f"payload is {len(payload)} bytes, header says {length}")
    if not hmac.compare_digest(mac, sign(secret, key, payload)):
        raise ValueError("bad signature")
    return payload


def redacted(url: str) -> str:
    """The URL without its password (and user name)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def read_secret() -> tuple[bytes | None, str]:
    """The team secret, or None and why there is none."""
    value = os.environ.get("QDLAB_CACHE_SECRET")
    if value:
        return value.encode(), ""
    path = os.environ.get("QDLAB_CACHE_SECRET_FILE")
    if not path:
        return (
            None,
            "no secret (set QDLAB_CACHE_SECRET, or QDLAB_CACHE_SECRET_FILE to a 0600 key file)",
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
                return None, f"the key file {path} must be a file of this user's with mode 0600"
            secret = os.read(fd, 1 << 16).strip()
        finally:
            os.close(fd)
    except OSError as e:
        return None, f"cannot read the key file {path} ({e.strerror})"
    return (secret, "") if secret else (None, f"the key file {path} is empty")


class RedisTier:
    """Signed entries on a Redis server, under `<prefix>:<key>`."""

    def __init__(self, url: str, prefix: str = "qdlab") -> None:
        self.url, self.prefix = url, prefix
        self.stats = RemoteStats(f"{redacted(url)} (prefix {prefix})", False, "")
        self.secret, why = read_secret()
        self.client: Any = None
        """A `redis.Redis` (untyped: redis is an optional wheel), once the store is usable."""
        self.down_until = 0.0
        self.warned: set[str] = set()
        self.lock = threading.Lock()
        self.damaged: dict[str, str] = {}
        """Key -> SHA-1 of the damaged entry this process refused there (`put` replaces it)."""
        if self.secret is None:
            self.stats.note = why
            self.warn("off", f"qdlab team cache at {self.stats.store} is off: {why}")
            return
        try:
            redis = client_module()
            self.client = redis.Redis.from_url(
                url,
                socket_connect_timeout=CONNECT_TIMEOUT_S,
                socket_timeout=OPERATION_TIMEOUT_S,
                retry_on_timeout=False,
            )
            self.errors = (redis.ConnectionError, redis.TimeoutError, OSError)
            self.answered = redis.RedisError
        except (ImportError, ValueError) as e:
            self.stats.note = f"cannot use {self.stats.store} ({type(e).__name__})"
            self.warn("off", f"qdlab team cache is off: {self.stats.note}")
            return
        self.stats.enabled = True

    def warn(self, what: str, message: str) -> None:
        if what not in self.warned:
            self.warned.add(what)
            log.warning("%s", message)

    def available(self) -> bool:
        return self.client is not None and time.monotonic() >= self.down_until

    def get(self, key: str) -> bytes | None:
        if not self.available():
            return None
        data = self.call(lambda: self.client.get(f"{self.prefix}:{key}"))
        return None if data is FAILED else self.check(key, data)

    def check(self, key: str, data: object) -> bytes | None:
        """The payload of what the store holds under `key`, if its signature and key are right."""
        if data is None:
            with self.lock:
                self.stats.misses += 1
            return None
        assert isinstance(data, bytes) and self.secret is not None  # what a usable store gives
        try:
            payload = decode(self.secret, key, data)
        except ValueError as e:
            with self.lock:
                self.stats.refused += 1
                if not isinstance(e, Foreign):
                    self.damaged[key] = hashlib.sha1(data).hexdigest()
            self.warn(
                "refused",
                f"qdlab team cache at {self.stats.store}: refused an entry ({e}); compiling "
                "it here instead"
                + (", and leaving it" if isinstance(e, Foreign) else ", and replacing it"),
            )
            return None
        with self.lock:
            self.stats.hits += 1
            self.stats.bytes_in += len(data)
        return payload

    def get_many(self, keys: list[str]) -> list[bytes | None]:
        """`get` for several keys in one round trip (MGET)."""
        if not self.available() or not keys:
            return [None] * len(keys)
        values = self.call(lambda: self.client.mget([f"{self.prefix}:{k}" for k in keys]))
        if values is FAILED:
            return [None] * len(keys)
        assert isinstance(values, list)
        return [self.check(k, v) for k, v in zip(keys, values)]

    def put(self, key: str, payload: bytes) -> None:
        if not self.available():
            return
        assert self.secret is not None  # a store without one is never usable
        data = encode(self.secret, key, payload)
        name = f"{self.prefix}:{key}"
        with self.lock:
            refused = self.damaged.pop(key, None)
        if refused is None:
            done = self.call(lambda: self.client.set(name, data, nx=True))
        else:  # replace the damaged entry, unless someone else has since
            done = self.call(lambda: self.client.eval(_REPLACE, 1, name, refused, data)) == 1
        if done is True:
            with self.lock:
                self.stats.bytes_out += len(data)
                self.stats.replaced += refused is not None

    def call(self, operation: Callable[[], object]) -> object:
        """Run one store operation; a store that does not answer is left alone for BACKOFF_S."""
        try:
            return operation()
        except self.errors as e:
            self.down_until = time.monotonic() + BACKOFF_S
            self.stats.note = f"{type(e).__name__}: the store did not answer"
            self.warn(
                "down",
                f"qdlab team cache at {self.stats.store} did not answer ({type(e).__name__}); "
                f"compiling here, and trying it again in {BACKOFF_S:.0f} s",
            )
        except self.answered as e:
            self.stats.note = _first_word(e)
            self.warn(self.stats.note, f"qdlab team cache at {self.stats.store}: {self.stats.note}")
        with self.lock:
            self.stats.errors += 1
        return FAILED


def _first_word(e: Exception) -> str:
    """What a store's error reply says, without anything that could echo a credential."""
    text = str(e).split("\n")[0]
    return (
        (type(e).__name__ + ": " + text)[:120]
        if "pass" not in text.lower()
        else f"{type(e).__name__}: authentication failed"
    )


_tiers: dict[tuple[str, str], RedisTier] = {}
_import: threading.Thread | None = None


def prefetch() -> None:
    """Start importing the Redis client in the background (it takes ~100 ms, most of it asyncio's),
    so a program that configures a team cache in `qd.init` has it by its first kernel call."""
    global _import
    if _import is None:
        _import = threading.Thread(target=_import_client, name="qdlab-redis-import", daemon=True)
        _import.start()


def _import_client() -> None:
    try:
        import redis  # noqa: F401  # lazy: the client, only where a team cache is configured
    except ImportError:
        pass


def client_module() -> Any:
    """The `redis` package (ImportError when it is not installed); untyped: an optional wheel."""
    if _import is not None:
        _import.join()
    import redis  # lazy: the client, only where a team cache is configured

    return redis


def tier(url: str, prefix: str) -> RedisTier:
    """The process's one tier for this store and prefix: its warnings and back-off outlive
    `qd.init`."""
    if (url, prefix) not in _tiers:
        _tiers[url, prefix] = RedisTier(url, prefix)
    return _tiers[url, prefix]
