"""Launch words in parts (`Launcher.run_parts`): a kernel's own words are packed at every launch,
its struct members' and fields' only when they are another object than the launcher's buffer
holds. Launches that change members, alternate instances, use fields or do not fit their words
give what packing every word every time gives."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler import runtime


@dataclasses.dataclass
class Pair:
    a: qd.types.NDArray[qd.f32, 1]
    b: qd.types.NDArray[qd.f32, 1]
    k: qd.i32


def sequence() -> list[np.ndarray]:
    """Launches with members changed, reassigned and alternated; a field among the parameters."""
    qd.init(arch=qd.cpu)
    f = qd.field(qd.f32, shape=4)

    @qd.kernel
    def step(s: Pair, x: qd.f32):
        for i in range(4):
            s.b[i] = s.a[i] * x + s.k + f[i]
            f[i] += 1.0

    def nd(values: list[float]) -> qd.Ndarray:
        out = qd.ndarray(qd.f32, (4,))
        out.from_numpy(np.array(values, np.float32))
        return out

    p = Pair(nd([1, 2, 3, 4]), nd([0, 0, 0, 0]), 1)
    q = Pair(nd([5, 6, 7, 8]), nd([0, 0, 0, 0]), -2)
    seen = []
    for x, s in ((1.0, p), (2.0, p), (1.0, q), (3.0, p), (1.0, q)):
        step(s, x)
        seen.append(s.b.to_numpy().copy())
    p.k = 10  # a scalar member: new member words
    step(p, 1.0)
    seen.append(p.b.to_numpy().copy())
    p.b = nd([0, 0, 0, 0])  # a reassigned member: written through its new words
    step(p, 1.0)
    seen += [p.b.to_numpy().copy(), f.to_numpy().copy()]
    p.k = 2**40  # more than its word holds: converted the slow way, nothing stale after it
    step(p, 1.0)
    seen.append(p.b.to_numpy().copy())
    p.k = 0
    step(p, 1.0)
    seen.append(p.b.to_numpy().copy())
    return seen


def test_parts_equal_packing_every_word(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = sequence()
    assert parts[0].tolist() == [2.0, 3.0, 4.0, 5.0]  # a*1 + 1 + f (0)
    assert parts[1].tolist() == [4.0, 6.0, 8.0, 10.0]  # a*2 + 1 + f (1)
    assert parts[2].tolist() == [5.0, 6.0, 7.0, 8.0]  # q: a*1 - 2 + f (2)
    assert parts[5].tolist() == [16.0, 17.0, 18.0, 19.0]  # k = 10, f (5)

    def every_word(self: runtime.Launcher, parts: tuple, cuts: tuple, seed: int) -> object:
        return self.run([w for part in parts for w in part], seed)

    monkeypatch.setattr(runtime.Launcher, "run_parts", every_word)
    whole = sequence()
    for got, want in zip(parts, whole, strict=True):
        np.testing.assert_array_equal(got, want)


def test_segments_cover_the_words() -> None:
    from qdlab.compiler import ir
    from qdlab.core import abi
    from qdlab.core.types import ArrayType, f32, i32

    params = [
        ir.Param("x", f32),
        ir.Param("s.a", ArrayType(f32, 2)),
        ir.Param("s.k", i32),
        ir.Param("f", ArrayType(f32, 1)),
    ]
    segments = abi.segment_structs(params, (1, 3))
    assert [off for _, off in segments] == [0, 8, 8 * 6]
    assert [s.size for s, _ in segments] == [8, 8 * 5, 8 * 3]
    assert sum(s.size for s, _ in segments) == abi.words_struct(params).size
