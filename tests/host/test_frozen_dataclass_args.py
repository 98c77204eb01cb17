"""A frozen dataclass argument: its members are read once and kept on the instance
(`_qd_dc_unwrapped`), each kernel variant records the members it reads (`frozen_plan`), and
`qd.reset` drops those plans; launches stay right across instances, kernels and resets."""

from __future__ import annotations

import dataclasses

import numpy as np

import qdlab as qd
from qdlab.host import struct_args


@dataclasses.dataclass(frozen=True)
class State:
    a: qd.types.NDArray[qd.i32, 1]
    b: qd.types.NDArray[qd.i32, 1]
    k: qd.i32


def test_frozen_members_cached_and_plans_recorded() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def fill(s: State):
        for i in range(4):
            s.a[i] = s.k + i

    a, b = qd.ndarray(qd.i32, (4,)), qd.ndarray(qd.i32, (4,))
    s = State(a=a, b=b, k=10)
    fill(s)
    fill(s)
    np.testing.assert_array_equal(a.to_numpy(), [10, 11, 12, 13])
    assert s._qd_dc_unwrapped == {"a": a, "b": b, "k": 10}
    plans = [plan for _, plan in struct_args.frozen_plans.values()]
    assert (("a", "__qd_s__qd_a", State.__annotations__["a"]),) in [p[:1] for p in plans]
    assert all("__qd_s__qd_b" not in {e[1] for e in p} for p in plans)  # b is never read
    fill(State(a=b, b=a, k=-1))  # another instance: its own members
    np.testing.assert_array_equal(b.to_numpy(), [-1, 0, 1, 2])
    qd.reset()
    assert not struct_args.frozen_plans


def test_frozen_plan_serves_only_its_own_set() -> None:
    fields = {f.name: f for f in dataclasses.fields(State)}
    used = {struct_args.flat_name("S", "b"), "__qd_S__qd_zz"}
    plan = struct_args.frozen_plan(used, State, "S", fields)
    assert [e[:2] for e in plan] == [("b", "__qd_S__qd_b")]
    assert struct_args.frozen_plan(used, State, "S", fields) is plan
    assert struct_args.frozen_plan({"__qd_S__qd_a"}, State, "S", fields)[0][0] == "a"
    assert struct_args.flat_name("__qd_S__qd_b", "c") == "__qd_S__qd_b__qd_c"
    qd.reset()
