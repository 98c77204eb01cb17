"""`ir.Eraser`: the passes that erase many ops (promote-locals, CSE, DCE) take them out of their
blocks in one sweep; what it leaves must be what erasing them one by one leaves."""

from __future__ import annotations

import random

from qdlab.compiler import ir
from qdlab.core.types import f32


def chain(n: int) -> ir.Block:
    block = ir.Block()
    v = block.append(ir.Const([], f32, {"value": 1.0})).out
    for k in range(n):
        v = block.append(ir.BinOp([v, v], f32, {"op": "add"}, None, None, f"v{k}")).out
    return block


def test_erasing_in_one_sweep_leaves_what_erasing_one_by_one_leaves() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        one, swept = chain(40), chain(40)
        picks = rng.sample(range(1, 41), 12)
        eraser = ir.Eraser()
        for k in sorted(picks, reverse=True):
            ir.erase(one.ops[k])
            eraser.erase(swept.ops[k])
            assert swept.ops[k].parent is None  # out of its block at once, as `erase` leaves it
        assert len(swept.ops) == 41  # still listed until `done`
        eraser.done()
        assert [op.result.name for op in swept.ops] == [op.result.name for op in one.ops]
        for a, b in zip(one.ops, swept.ops):
            assert [u.result.name for u in a.out.users] == [u.result.name for u in b.out.users]
            assert all(u.parent is swept for u in b.out.users)  # no erased op is a user
