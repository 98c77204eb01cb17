"""The construct binary cache: disk format checks, security, degradation, LRU eviction, concurrency."""

from __future__ import annotations

import errno
import hashlib
import logging
import multiprocessing
import random
import os
import stat
from pathlib import Path

import pytest

from qdlab.compiler import cache as cache_mod
from qdlab.compiler.cache import BinaryCache, default_cache_dir, encode_entry


def key_of(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def payload_of(key: str, size: int = 1000) -> bytes:
    return (bytes.fromhex(key) * (size // 32 + 1))[:size]


def entry_path(directory: Path, key: str) -> Path:
    return directory / "v1" / key[:2] / f"{key}.qdo"


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == "qdlab" and r.levelno == logging.WARNING
    ]


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "qdcache"


def test_put_get_roundtrip_across_instances(cache_dir: Path) -> None:
    k = key_of("a")
    first = BinaryCache(cache_dir)
    assert first.get(k) is None
    first.put(k, b"object-bytes")
    assert first.get(k) == b"object-bytes"
    second = BinaryCache(cache_dir)
    assert second.get(k) == b"object-bytes"
    s = second.stats()
    assert (s.hits, s.misses, s.entries, s.disk_enabled) == (1, 0, 1, True)
    assert s.bytes == len(encode_entry(k, b"object-bytes"))
    assert first.stats().misses == 1


def test_directory_is_private_and_entry_layout(cache_dir: Path) -> None:
    k = key_of("layout")
    BinaryCache(cache_dir).put(k, b"x")
    assert stat.S_IMODE(cache_dir.stat().st_mode) == 0o700
    data = entry_path(cache_dir, k).read_bytes()
    assert data.startswith(cache_mod.MAGIC)
    assert k.encode() in data and data.endswith(b"x")
    assert [p.name for p in entry_path(cache_dir, k).parent.iterdir()] == [f"{k}.qdo"]


def test_default_dir_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("QDLAB_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir() == tmp_path / "env"
    assert BinaryCache(None).stats().directory == str(tmp_path / "env")
    monkeypatch.delenv("QDLAB_CACHE_DIR")
    assert default_cache_dir().name == "qdlab"


def test_rejects_malformed_keys(cache_dir: Path) -> None:
    c = BinaryCache(cache_dir)
    for bad in ["../../etc/passwd", key_of("a").upper(), key_of("a")[:-1]]:
        with pytest.raises(ValueError):
            c.put(bad, b"x")


def _truncate(data: bytes) -> bytes:
    return data[:-10]


def _flip_payload_bit(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


def _empty(data: bytes) -> bytes:
    return b""


def _wrong_format_version(data: bytes) -> bytes:
    return data[:8] + (99).to_bytes(2, "little") + data[10:]


def _wrong_magic(data: bytes) -> bytes:
    return b"NOTQDLAB" + data[8:]


def _extra_bytes(data: bytes) -> bytes:
    return data + b"\0"


@pytest.mark.parametrize(
    "damage",
    [_truncate, _flip_payload_bit, _empty, _wrong_format_version, _wrong_magic, _extra_bytes],
)
def test_damaged_entry_is_deleted_and_missed(
    cache_dir: Path, caplog: pytest.LogCaptureFixture, damage: object
) -> None:
    k = key_of("damaged")
    BinaryCache(cache_dir).put(k, payload_of(k))
    path = entry_path(cache_dir, k)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    c = BinaryCache(cache_dir)
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        assert c.get(k) is None
    assert not path.exists()
    assert len(warnings_in(caplog)) == 1 and "bad entry" in warnings_in(caplog)[0]
    assert c.stats().misses == 1 and c.stats().disk_enabled


def test_entry_for_another_key_is_rejected(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = key_of("a"), key_of("b")
    BinaryCache(cache_dir).put(a, b"payload of a")
    entry_path(cache_dir, b).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    entry_path(cache_dir, a).rename(entry_path(cache_dir, b))
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        assert BinaryCache(cache_dir).get(b) is None
    assert "different key" in warnings_in(caplog)[0]
    assert not entry_path(cache_dir, b).exists()


def test_entry_from_another_qdlab_version_is_rejected(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = key_of("old")
    monkeypatch.setattr(cache_mod, "QDLAB_VERSION", "0.0.1")
    BinaryCache(cache_dir).put(k, b"old object")
    monkeypatch.undo()
    assert BinaryCache(cache_dir).get(k) is None


def test_group_writable_directory_is_not_used(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    k = key_of("shared")
    BinaryCache(cache_dir).put(k, b"planted")
    cache_dir.chmod(0o777)
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        c = BinaryCache(cache_dir)
        assert c.get(k) is None
        c.put(k, b"mine")
        assert c.get(k) == b"mine"
    assert not c.stats().disk_enabled
    assert len(warnings_in(caplog)) == 1 and "writable by other users" in warnings_in(caplog)[0]
    assert entry_path(cache_dir, k).read_bytes().endswith(b"planted")


def test_foreign_owned_directory_is_not_used(
    cache_dir: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    k = key_of("foreign")
    BinaryCache(cache_dir).put(k, b"planted")
    monkeypatch.setattr(cache_mod, "_current_uid", lambda: os.getuid() + 1)
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        c = BinaryCache(cache_dir)
        assert c.get(k) is None
    assert not c.stats().disk_enabled
    assert len(warnings_in(caplog)) == 1 and "owned by uid" in warnings_in(caplog)[0]


def test_uncreatable_directory_degrades_to_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        c = BinaryCache(blocker / "cache")
    c.put(key_of("m"), b"mem")
    assert c.get(key_of("m")) == b"mem"
    assert not c.stats().disk_enabled and len(warnings_in(caplog)) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_read_only_directory_degrades_to_memory(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    c = BinaryCache(cache_dir)
    (cache_dir / "v1").chmod(0o500)
    try:
        with caplog.at_level(logging.WARNING, logger="qdlab"):
            c.put(key_of("ro"), b"x")
            c.put(key_of("ro2"), b"y")
        assert c.get(key_of("ro")) == b"x" and not c.stats().disk_enabled
        assert len(warnings_in(caplog)) == 1
    finally:
        (cache_dir / "v1").chmod(0o700)


def test_full_disk_degrades_to_memory_once(
    cache_dir: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_space(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    c = BinaryCache(cache_dir)
    monkeypatch.setattr(cache_mod.os, "replace", no_space)
    keys = [key_of(str(i)) for i in range(3)]
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        for k in keys:
            c.put(k, payload_of(k))
    assert [c.get(k) for k in keys] == [payload_of(k) for k in keys]
    assert len(warnings_in(caplog)) == 1 and "disk full" in warnings_in(caplog)[0]
    s = c.stats()
    assert not s.disk_enabled and s.entries == 3 and s.hits == 3
    assert list(cache_dir.rglob("*.tmp")) == [] and list(cache_dir.rglob("*.qdo")) == []


def test_disk_lru_eviction_by_access_time(cache_dir: Path) -> None:
    a, b, c, d = (key_of(n) for n in "abcd")
    entry_size = len(encode_entry(a, payload_of(a)))
    limit_mb = 3.5 * entry_size / 2**20
    writer = BinaryCache(cache_dir, max_size_mb=limit_mb)
    for i, k in enumerate([a, b, c]):
        writer.put(k, payload_of(k))
        os.utime(entry_path(cache_dir, k), ns=(10**18 + i, 10**18 + i))
    reader = BinaryCache(cache_dir, max_size_mb=limit_mb)
    assert reader.get(a) == payload_of(a)  # a disk hit makes `a` the most recent
    reader.put(d, payload_of(d))
    assert not entry_path(cache_dir, b).exists()
    assert all(entry_path(cache_dir, k).exists() for k in (a, c, d))
    s = reader.stats()
    assert (s.evictions, s.entries, s.bytes) == (1, 3, 3 * entry_size)


def test_memory_tier_is_bounded(tmp_path: Path) -> None:
    keys = [key_of(str(i)) for i in range(4)]
    c = BinaryCache(tmp_path, disk=False, max_size_mb=2.5 * 1000 / 2**20)
    for k in keys[:2]:
        c.put(k, payload_of(k))
    assert c.get(keys[0]) is not None  # keys[1] is now the least recent
    c.put(keys[2], payload_of(keys[2]))
    assert c.get(keys[1]) is None and c.get(keys[0]) is not None
    s = c.stats()
    assert (s.entries, s.bytes, s.evictions, s.directory, s.disk_enabled) == (
        2,
        2000,
        1,
        None,
        False,
    )
    assert not tmp_path.joinpath("v1").exists()


def test_clear_removes_memory_and_disk(cache_dir: Path) -> None:
    c = BinaryCache(cache_dir)
    keys = [key_of(str(i)) for i in range(5)]
    for k in keys:
        c.put(k, payload_of(k))
    c.clear()
    assert c.stats().entries == 0 and c.stats().bytes == 0
    assert all(c.get(k) is None for k in keys)
    assert list(cache_dir.rglob("*.qdo")) == []


def hammer(args: tuple[str, int]) -> tuple[int, int]:
    """Worker: put and get a few shared keys through fresh caches; returns (disk hits, bad reads)."""
    directory, seed = args
    keys = [key_of(str(i)) for i in range(6)]
    hits = bad = 0
    order = random.Random(seed)  # random access: a cyclic order over more keys than fit is LRU's worst case
    for _ in range(60):
        k = order.choice(keys)
        c = BinaryCache(directory, max_size_mb=4.5 * 4200 / 2**20)
        got = c.get(k)
        if got is not None:
            hits += 1
            bad += got != payload_of(k, 4000)
        c.put(k, payload_of(k, 4000))
    return hits, bad


def test_concurrent_processes_never_read_corrupt_entries(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")  # independent processes; spawn needs a real __main__, which an IPython shell replaces
    with ctx.Pool(3) as pool:
        results = pool.map(hammer, [(str(tmp_path), seed) for seed in range(3)])
    assert sum(bad for _, bad in results) == 0
    assert sum(hits for hits, _ in results) > 0
    final = BinaryCache(tmp_path)
    assert final.stats().entries <= 4
    assert list(tmp_path.rglob("*.tmp")) == []
