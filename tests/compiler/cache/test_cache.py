"""The construct binary cache: disk format checks, security, degradation, LRU eviction,
concurrency."""

from __future__ import annotations

import errno
import hashlib
import logging
import multiprocessing
import os
import random
import stat
import threading
import tracemalloc
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


def test_a_new_process_lists_its_disk_tier_without_holding_the_lock(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tier's size is listed at a process's first write, which its memos' writer thread makes
    while a compile reads the tier: the listing must not keep those reads waiting."""
    keys = [key_of(n) for n in "abc"]
    BinaryCache(cache_dir).put(keys[0], payload_of(keys[0]))
    c = BinaryCache(cache_dir)
    held: list[bool] = []
    listed = c._scan
    monkeypatch.setattr(c, "_scan", lambda: held.append(c._lock.locked()) or listed())
    for k in keys[1:]:
        c.put(k, payload_of(k))
    assert held == [False]  # listed once, before the first write, the lock free
    assert c._disk_bytes == sum(len(encode_entry(k, payload_of(k))) for k in keys)


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
    """Worker: put and get a few shared keys through fresh caches; returns (disk hits, bad
    reads)."""
    directory, seed = args
    keys = [key_of(str(i)) for i in range(6)]
    hits = bad = 0
    order = random.Random(
        seed
    )  # random access: a cyclic order over more keys than fit is LRU's worst case
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
    ctx = multiprocessing.get_context(
        "fork"
    )  # independent processes; spawn needs a real __main__, which an IPython shell replaces
    with ctx.Pool(3) as pool:
        results = pool.map(hammer, [(str(tmp_path), seed) for seed in range(3)])
    assert sum(bad for _, bad in results) == 0
    assert sum(hits for hits, _ in results) > 0
    final = BinaryCache(tmp_path)
    assert final.stats().entries <= 4
    assert list(tmp_path.rglob("*.tmp")) == []


def _planted(cache_dir: Path, key: str) -> tuple[BinaryCache, Path]:
    """A cache whose disk tier is on, and the path where `key`'s entry goes (its shard folder
    made)."""
    c = BinaryCache(cache_dir)
    entry_path(cache_dir, key).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return c, entry_path(cache_dir, key)


def _still_on(c: BinaryCache, cache_dir: Path) -> None:
    """The disk tier is on: an entry put now is read back from disk by another instance."""
    k = key_of("later")
    c.put(k, b"later")
    assert c.stats().disk_enabled and BinaryCache(cache_dir).get(k) == b"later"
    assert entry_path(cache_dir, k).is_file()


def test_symlinked_entry_is_not_followed(cache_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    k = key_of("link")
    c, path = _planted(cache_dir, k)
    target = cache_dir.parent / "elsewhere.qdo"
    target.write_bytes(encode_entry(k, b"valid, but not ours to read"))
    path.symlink_to(target)
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        assert c.get(k) is None
    assert not path.is_symlink() and target.exists()
    assert len(warnings_in(caplog)) == 1 and "bad entry" in warnings_in(caplog)[0]
    _still_on(c, cache_dir)


def test_entry_linked_to_dev_zero_is_not_read(cache_dir: Path) -> None:
    k = key_of("zero")
    c, path = _planted(cache_dir, k)
    path.symlink_to("/dev/zero")
    assert c.get(k) is None and not path.is_symlink()
    _still_on(c, cache_dir)


def test_symlinked_shard_folder_is_not_followed(cache_dir: Path) -> None:
    k = key_of("shard link")
    elsewhere = cache_dir.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / f"{k}.qdo").write_bytes(encode_entry(k, b"planted"))
    c = BinaryCache(cache_dir)
    shard = entry_path(cache_dir, k).parent
    shard.symlink_to(elsewhere, target_is_directory=True)
    assert c.get(k) is None and not shard.is_symlink()
    c.put(k, b"mine")
    assert (elsewhere / f"{k}.qdo").read_bytes().endswith(b"planted")
    assert BinaryCache(cache_dir).get(k) == b"mine"


def test_directory_in_place_of_an_entry_is_removed_and_disk_stays_on(
    cache_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    k = key_of("dir")
    c, path = _planted(cache_dir, k)
    path.mkdir()
    (path / "inside").write_bytes(b"x")
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        assert c.get(k) is None
        assert BinaryCache(cache_dir).stats().entries == 0
    assert not path.exists() and c.stats().disk_enabled and c.stats().misses == 1
    assert len(warnings_in(caplog)) == 1 and "bad entry" in warnings_in(caplog)[0]
    c.put(k, b"now a file")
    assert BinaryCache(cache_dir).get(k) == b"now a file"
    _still_on(c, cache_dir)


def test_directory_in_place_of_an_entry_does_not_stop_a_put(cache_dir: Path) -> None:
    k = key_of("dir put")
    c, path = _planted(cache_dir, k)
    path.mkdir()
    (path / "inside").write_bytes(b"x")
    c.put(k, b"written over it")
    assert c.stats().disk_enabled and BinaryCache(cache_dir).get(k) == b"written over it"


def test_fifo_in_place_of_an_entry_does_not_hang(cache_dir: Path) -> None:
    k = key_of("fifo")
    c, path = _planted(cache_dir, k)
    os.mkfifo(path)
    got: list[object] = []
    reader = threading.Thread(target=lambda: got.append(c.get(k)), daemon=True)
    reader.start()
    reader.join(10)
    if reader.is_alive():  # release the blocked reader before failing
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
        pytest.fail("reading a FIFO entry blocked")
    assert got == [None] and not path.exists()
    _still_on(c, cache_dir)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permission bits")
def test_unreadable_entry_is_removed_and_disk_stays_on(cache_dir: Path) -> None:
    k = key_of("000")
    c = BinaryCache(cache_dir)
    c.put(k, b"x")
    entry_path(cache_dir, k).chmod(0)
    fresh = BinaryCache(cache_dir)
    assert fresh.get(k) is None and not entry_path(cache_dir, k).exists()
    _still_on(fresh, cache_dir)


def test_entry_that_cannot_be_opened_is_removed_and_disk_stays_on(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EACCES as a non-root user sees for a mode-000 entry (root reads it anyway, so it is
    simulated)."""
    k = key_of("eacces")
    BinaryCache(cache_dir).put(k, b"x")
    real_open = os.open

    def denied(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith(f"{k}.qdo"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cache_mod.os, "open", denied)
    c = BinaryCache(cache_dir)
    assert c.get(k) is None and not entry_path(cache_dir, k).exists()
    monkeypatch.undo()
    _still_on(c, cache_dir)


def _with_length(key: str, payload: bytes, length: int) -> bytes:
    """An entry for `key` whose header declares `length` payload bytes."""
    data = encode_entry(key, payload)
    at = len(data) - len(payload) - cache_mod._FIELDS.size + 64
    return data[:at] + length.to_bytes(8, "little") + data[at + 8 :]


@pytest.mark.parametrize("declared", [0, 999, 1001, 2**63])
def test_header_length_that_disagrees_with_the_payload_is_a_bad_entry(
    cache_dir: Path, caplog: pytest.LogCaptureFixture, declared: int
) -> None:
    k = key_of(f"length {declared}")
    c, path = _planted(cache_dir, k)
    path.write_bytes(_with_length(k, payload_of(k), declared))
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        assert c.get(k) is None
    assert not path.exists() and len(warnings_in(caplog)) == 1
    _still_on(c, cache_dir)


def test_reads_are_bounded_by_the_header_and_the_size_limit(cache_dir: Path) -> None:
    """A huge file (sparse here) is refused after its header: neither its declared length nor its
    real size is read into memory."""
    big = 256 * 2**20
    c = BinaryCache(cache_dir, max_size_mb=1)
    for name, declared in (("declared big", big), ("declared small", 1000)):
        k = key_of(name)
        path = entry_path(cache_dir, k)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(path, "wb") as f:
            f.write(_with_length(k, payload_of(k), declared))
            f.truncate(big)
        tracemalloc.start()
        try:
            assert c.get(k) is None
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 * 2**20 and not path.exists()
    _still_on(c, cache_dir)
