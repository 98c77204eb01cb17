"""Kernel records: Quadrants' offline cache layout (`kernel_compilation_manager/T<key>.qdc` and
`qdcache.qdb`) holding qdlab's manifests, written when a program ends, read back by the next one
(a hit skips the frontend: `frontend_constructs_total` is -1), checked, and cleaned by
`offline_cache_cleaning_policy` as Quadrants cleans."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import qdlab as qd


def total(k) -> int:
    return k._primal.per_offload_cache_observations.frontend_constructs_total


def kernels() -> list:
    """Four kernels, defined anew at each call (as a new process or a re-run cell defines them)."""

    @qd.kernel
    def k0(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = i

    @qd.kernel
    def k1(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = 2 * i

    @qd.kernel
    def k2(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = 3 * i

    @qd.kernel
    def k3(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = 4 * i

    return [k0, k1, k2, k3]


def run(ks: list, which: list[int]) -> list[int]:
    """Run the chosen kernels, checking their results; each one's `frontend_constructs_total`."""
    out = []
    for n in which:
        a = np.zeros(5, np.float32)
        ks[n](a)
        assert np.array_equal(a, (n + 1) * np.arange(5, dtype=np.float32))
        out.append(total(ks[n]))
    return out


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*")) if folder.exists() else []


def init(path: Path, **options: object) -> None:
    qd.init(arch=qd.cpu, offline_cache_file_path=str(path), **options)


def test_written_at_the_end_of_a_program_and_read_back(tmp_path: Path) -> None:
    folder = tmp_path / "kernel_compilation_manager"
    init(tmp_path)
    assert run(kernels(), [0, 1]) == [1, 1]  # compiled
    assert files(folder) == []  # nothing yet: the program has not ended
    init(tmp_path)
    names = files(folder)
    assert len(names) == 3 and "qdcache.qdb" in names
    assert all(n.startswith("T") and n.endswith(".qdc") for n in names if n != "qdcache.qdb")
    assert run(kernels(), [0, 1, 2]) == [-1, -1, 1]  # two served by their records
    qd.reset()
    meta = json.loads((folder / "qdcache.qdb").read_bytes())
    assert len(meta["kernels"]) == 3 and meta["size"] == sum(
        (folder / f"T{k}.qdc").stat().st_size for k in meta["kernels"]
    )
    for record in folder.glob("T*.qdc"):  # a damaged record is dropped and the kernel compiled
        record.write_bytes(b"not a record")
    init(tmp_path)
    assert run(kernels(), [0]) == [1]
    qd.reset()
    init(tmp_path)
    assert run(kernels(), [0]) == [-1]  # written again


def test_no_records_without_the_offline_cache(tmp_path: Path) -> None:
    init(tmp_path, offline_cache=False)
    run(kernels(), [0])
    qd.reset()
    assert files(tmp_path / "kernel_compilation_manager") == []


@pytest.mark.parametrize(
    "policy, factor, kept",
    [
        ("never", 0.5, [0, 1, 2, 3]),
        ("version", 0.5, [0, 1, 2, 3]),
        ("lru", 0.5, [0, 3]),  # 1 and 2 were used least recently
        ("fifo", 0.5, [2, 3]),  # 0 and 1 were made first
        ("lru", 0.2, [0, 1, 2, 3]),  # int(0.2 * 4) = 0: nothing
        ("fifo", 1.0, []),
    ],
)
def test_cleaning_by_policy(tmp_path: Path, policy: str, factor: float, kept: list[int]) -> None:
    folder = tmp_path / "kernel_compilation_manager"
    for first in ([0, 1], [2, 3]):  # 0 and 1 made first
        init(tmp_path)
        run(kernels(), first)
        qd.reset()
    init(tmp_path)
    assert run(kernels(), [3, 0]) == [-1, -1]  # 3 and 0 used last
    qd.reset()
    init(
        tmp_path,
        offline_cache_cleaning_policy=policy,
        offline_cache_cleaning_factor=factor,
        offline_cache_max_size_of_files=1,
    )
    qd.reset()  # no compile: the end of the program cleans
    assert len(list(folder.glob("T*.qdc"))) == len(kept)
    assert (folder / "qdcache.qdb").exists() == bool(kept)
    init(tmp_path)
    hits = run(kernels(), [0, 1, 2, 3])
    assert [n for n in range(4) if hits[n] == -1] == kept
